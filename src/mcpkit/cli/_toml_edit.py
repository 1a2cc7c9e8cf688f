"""Editing a TOML config (Codex CLI's ``config.toml``) for ``mcpkit install``, without a
TOML writer: the file is read with ``tomllib``, and only the text of the one table
``[SERVERS.NAME]`` (with its sub-tables) is taken out or written at the end; everything
else, comments and layout included, stays as the user wrote it. The result is parsed
again and must hold exactly what was there plus (or minus) the entry, else nothing is
written."""

from __future__ import annotations

import copy
import re
import tomllib
from pathlib import Path
from typing import Any

from mcpkit.cli._config_edit import Change, plan_change, read_config_text
from mcpkit.cli._errors import CliError

#: A table header line, ``[a.b]`` (not ``[[a.b]]``, an array of tables): its key.
_HEADER = re.compile(r"^\s*\[(?!\[)(?P<key>[^\]\n]+)\]\s*(#.*)?$")
#: The line of any table header, array-of-tables ones too: where a table's text ends.
_ANY_HEADER = re.compile(r"^\s*\[")
_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def _string(text: str) -> str:
    """``text`` as a TOML basic string (the control characters escaped)."""
    out = []
    for char in text:
        if char in '"\\':
            out.append("\\" + char)
        elif char < " " or char == "\x7f":
            out.append({"\n": "\\n", "\t": "\\t", "\r": "\\r"}.get(char, f"\\u{ord(char):04x}"))
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def _key(name: str) -> str:
    return name if _BARE_KEY.match(name) else _string(name)


def _value(value: Any) -> str:
    """A string, a list of strings or a table of strings (what an entry holds) as TOML."""
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, list):
        return "[" + ", ".join(_value(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{_key(k)} = {_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"no TOML for {type(value).__name__}")


def table_text(servers_key: str, name: str, entry: dict[str, Any]) -> str:
    """``[SERVERS.NAME]`` and the entry's keys, one a line (``env`` an inline table)."""
    lines = [f"[{_key(servers_key)}.{_key(name)}]"]
    lines += [f"{_key(key)} = {_value(value)}" for key, value in entry.items()]
    return "\n".join(lines) + "\n"


def _header_path(line: str) -> list[str] | None:
    """The key path of a table header line (``[a."b c".d]``: a, b c, d), parsed by tomllib
    itself; None for a line that is no table header."""
    found = _HEADER.match(line)
    if found is None:
        return None
    try:
        table: Any = tomllib.loads(f"[{found['key']}]\n")
    except tomllib.TOMLDecodeError:
        return None
    path = []
    while isinstance(table, dict) and len(table) == 1:
        key = next(iter(table))
        path.append(key)
        table = table[key]
    return path


def _without_table(lines: list[str], prefix: list[str]) -> list[str]:
    """``lines`` without the tables whose path starts with ``prefix`` (each from its header
    to the next header)."""
    kept: list[str] = []
    dropping = False
    for line in lines:
        if _ANY_HEADER.match(line):
            path = _header_path(line)
            dropping = path is not None and path[: len(prefix)] == prefix
        if not dropping:
            kept.append(line)
    return kept


def _parse(path: Path, text: str, hint: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise CliError(f"{path} is not valid TOML ({exc}); it was left as it is", hint) from None


def _without_empty(data: dict[str, Any], servers_key: str) -> dict[str, Any]:
    """``data`` less an empty servers table (taking the last server out removes it)."""
    if data.get(servers_key) == {}:
        return {key: value for key, value in data.items() if key != servers_key}
    return data


def plan_toml_change(
    path: Path, servers_key: str, name: str, entry: dict[str, Any] | None, *, by_hand: str
) -> Change:
    """``plan_change`` for a TOML file: the file ``path`` with the table ``[SERVERS.NAME]``
    holding ``entry`` (None: without it, which must be there)."""
    real, old_text = read_config_text(path)
    hint = (
        f"fix or move it and run this again, or add the table by hand: {by_hand}"
        if entry is not None
        else "fix or move it and run this again, or remove the table by hand"
    )
    text = old_text or ""
    data = _parse(path, text, hint)
    servers = data.get(servers_key, {})
    if not isinstance(servers, dict):
        raise CliError(f"{path}: {servers_key!r} is not a table; it was left as it is", hint)
    previous = servers.get(name)
    if entry is None and previous is None:
        names = ", ".join(repr(key) for key in servers) or "none"
        raise CliError(f"{path} has no server named {name!r}", f"its servers: {names}")
    if entry is not None and previous == entry:
        return Change(real, old_text, text, True, previous)
    newline = "\r\n" if "\r\n" in text else "\n"
    lines = _without_table(text.splitlines(keepends=True), [servers_key, name])
    new_text = "".join(lines).rstrip() + newline if "".join(lines).strip() else ""
    if entry is not None:
        table = table_text(servers_key, name, entry).replace("\n", newline)
        new_text = f"{new_text}{newline}{table}" if new_text else table
    expected = copy.deepcopy(data)
    expected.setdefault(servers_key, {}).pop(name, None)
    if entry is not None:
        expected[servers_key][name] = entry
    try:
        after = tomllib.loads(new_text)
    except tomllib.TOMLDecodeError:
        after = None
    if after is None or _without_empty(after, servers_key) != _without_empty(expected, servers_key):
        raise CliError(
            f"{path} defines {servers_key}.{name} in a way mcpkit cannot edit (not as its own"
            f" [{servers_key}.{_key(name)}] table); it was left as it is",
            hint,
        )
    return Change(real, old_text, new_text, previous is not None, previous)


def plan_client_change(
    spec: Any, path: Path, name: str, entry: dict[str, Any] | None, *, by_hand: str
) -> Change:
    """The change to an AI client's file (``spec``: its ``ClientSpec``): TOML for Codex,
    else JSON (``_config_edit``)."""
    if spec.toml:
        return plan_toml_change(path, spec.servers_key, name, entry, by_hand=by_hand)
    return plan_change(path, spec.servers_key, name, entry, by_hand=by_hand)
