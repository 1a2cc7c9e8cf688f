"""The environment ``mcpkit install`` writes into a client's config: ``KEY=VALUE``
arguments and ``.env`` files, read as the common dotenv dialect does (quotes, escapes in
double quotes, ``export`` prefixes, comments)."""

from __future__ import annotations

import re
from pathlib import Path

from mcpkit.cli._errors import EXIT_USAGE, CliError

_ENV_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "$": "$"}


def parse_env_assignments(values: list[str]) -> dict[str, str]:
    """``--env KEY=VALUE`` values, in order (a later KEY wins)."""
    env: dict[str, str] = {}
    for value in values:
        key, has_value, text = value.partition("=")
        key = key.strip()
        if not has_value or not _ENV_KEY.match(key):
            raise CliError(
                f"--env {value!r} is not KEY=VALUE",
                "e.g. --env API_KEY=secret (a KEY is letters, digits and _, not starting with a digit)",
                code=EXIT_USAGE,
            )
        env[key] = text
    return env


def parse_dotenv(text: str, source: str = ".env") -> dict[str, str]:
    """The variables of a dotenv file: ``KEY=VALUE`` lines (``export KEY=VALUE`` too),
    blank lines and ``#`` comments; a value may be in single quotes (taken as it is) or
    double quotes (``\\n``, ``\\t``, ``\\"`` and ``\\\\`` escapes), either spanning lines;
    an unquoted value ends at `` #``. Nothing is interpolated: ``$OTHER`` stays as written."""
    env: dict[str, str] = {}
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        number = index + 1
        line = lines[index].strip()
        index += 1
        if not line or line.startswith("#"):
            continue
        if line.startswith("export") and line[6:7].isspace():
            line = line[6:].lstrip()
        key, has_value, rest = line.partition("=")
        key = key.strip()
        if not has_value or not _ENV_KEY.match(key):
            raise CliError(
                f"{source}:{number}: not a KEY=VALUE line",
                "each line is KEY=VALUE, export KEY=VALUE, a # comment or blank",
            )
        rest = rest.lstrip()
        quote = rest[:1]
        if quote not in ("'", '"'):
            env[key] = re.split(r"\s#", rest, maxsplit=1)[0].rstrip()
            continue
        body = rest[1:]
        while True:
            end = _closing_quote(body, quote)
            if end >= 0:
                break
            if index >= len(lines):
                raise CliError(
                    f"{source}:{number}: the {quote} quote of {key} is never closed",
                    f"end the value with {quote}",
                )
            body += "\n" + lines[index]
            index += 1
        after = body[end + 1 :].strip()
        if after and not after.startswith("#"):
            raise CliError(
                f"{source}:{number}: text after the quoted value of {key}",
                "put a comment after #, or quote the whole value",
            )
        value = body[:end]
        env[key] = _unescape(value) if quote == '"' else value
    return env


def _closing_quote(body: str, quote: str) -> int:
    position = 0
    while position < len(body):
        char = body[position]
        if char == "\\" and quote == '"':
            position += 2
            continue
        if char == quote:
            return position
        position += 1
    return -1


def _unescape(value: str) -> str:
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(0)), value)


def read_env_file(path: str) -> dict[str, str]:
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise CliError(f"no such env file: {path}", "--env-file takes a dotenv file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CliError(f"cannot read the env file {path}: {exc}") from None
    return parse_dotenv(text, path)
