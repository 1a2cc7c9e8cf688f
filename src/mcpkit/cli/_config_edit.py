"""Editing a client's JSON config for ``mcpkit install``: the change planned (the file's
own indentation kept), shown before it is made, applied with a backup of what was there."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcpkit.cli._errors import CliError


@dataclass(frozen=True, slots=True)
class Change:
    """The file to write (symlinks followed), what it held (None: no file yet), what it
    will hold, and whether an entry of the same name is replaced (or removed), and that
    entry."""

    path: Path
    old_text: str | None
    new_text: str
    replaced: bool
    previous: Any = None


def _indent_of(text: str) -> int | str:
    """The indentation of a JSON text: of its first indented line (2 when none)."""
    for line in text.splitlines()[1:]:
        stripped = line.lstrip(" \t")
        if stripped and len(stripped) < len(line):
            lead = line[: len(line) - len(stripped)]
            if "\t" in lead:
                return "\t"
            return len(lead) if len(lead) <= 8 else 2
    return 2


def read_config_text(path: Path) -> tuple[Path, str | None]:
    """The file to write (symlinks followed) and its text (None: no file yet)."""
    real = path.resolve() if path.is_symlink() else path
    try:
        return real, real.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        return real, None
    except (OSError, UnicodeDecodeError) as exc:
        raise CliError(f"cannot read {path}: {exc}") from None


def plan_change(
    path: Path, servers_key: str, name: str, entry: dict[str, Any] | None, *, by_hand: str
) -> Change:
    """The file ``path`` with ``entry`` under ``servers_key``/``name`` (None: without the
    entry of that name, which must be there); a file that does not hold a JSON object is
    refused (``by_hand``: the command printing the entry instead)."""
    real, old_text = read_config_text(path)
    hint = (
        f"fix or move it and run this again, or add the entry by hand: {by_hand}"
        if entry is not None
        else "fix or move it and run this again, or remove the entry by hand"
    )
    data: Any = {}
    indent: int | str = 2
    if old_text is not None and old_text.strip():
        try:
            data = json.loads(old_text)
        except json.JSONDecodeError as exc:
            raise CliError(
                f"{path} is not valid JSON ({exc.msg} at line {exc.lineno}, column"
                f" {exc.colno}; comments and trailing commas are not JSON); it was left as it is",
                hint,
            ) from None
        if not isinstance(data, dict):
            raise CliError(f"{path} does not hold a JSON object; it was left as it is", hint)
        indent = _indent_of(old_text)
    servers = data.get(servers_key)
    if servers is None:
        servers = data[servers_key] = {}
    elif not isinstance(servers, dict):
        raise CliError(f"{path}: {servers_key!r} is not a JSON object; it was left as it is", hint)
    replaced = name in servers
    previous = servers.get(name)
    if entry is not None:
        servers[name] = entry
    elif replaced:
        del servers[name]
    else:
        names = ", ".join(repr(key) for key in servers) or "none"
        raise CliError(f"{path} has no server named {name!r}", f"its servers: {names}")
    new_text = json.dumps(data, indent=indent, ensure_ascii=False) + "\n"
    if old_text is not None and "\r\n" in old_text:
        new_text = new_text.replace("\n", "\r\n")
    return Change(real, old_text, new_text, replaced, previous)


def backup_path(path: Path, now: float | None = None) -> Path:
    """``FILE.YYYYMMDD-HHMMSS.bak`` beside ``path`` (``-2``, ``-3``… when taken)."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now))
    candidate = path.with_name(f"{path.name}.{stamp}.bak")
    count = 1
    while candidate.exists():
        count += 1
        candidate = path.with_name(f"{path.name}.{stamp}-{count}.bak")
    return candidate


def apply_change(change: Change) -> Path | None:
    """Write the change (back up the old file first; replace it in one step); the backup."""
    import tempfile

    path = change.path
    backup: Path | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if change.old_text is not None:
            backup = backup_path(path)
            shutil.copy2(path, backup)
        descriptor, temporary = tempfile.mkstemp(
            dir=path.parent, prefix=f".{path.name}.", suffix=".tmp"
        )
        try:
            with os.fdopen(descriptor, "w", encoding="utf-8", newline="") as stream:
                stream.write(change.new_text)
                stream.flush()
                os.fsync(stream.fileno())
            if change.old_text is not None:
                shutil.copymode(path, temporary)
            else:
                umask = os.umask(0)
                os.umask(umask)
                os.chmod(temporary, 0o666 & ~umask)
            os.replace(temporary, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
    except OSError as exc:
        raise CliError(f"cannot write {path}: {exc.strerror or exc}") from exc
    return backup


def render_change(change: Change, shown: str) -> str:
    """What ``--dry-run`` prints: a unified diff, or the whole file when there is none."""
    if change.old_text is None:
        return change.new_text
    import difflib

    return "".join(
        difflib.unified_diff(
            change.old_text.splitlines(keepends=True),
            change.new_text.splitlines(keepends=True),
            fromfile=shown,
            tofile=f"{shown} (after)",
        )
    )
