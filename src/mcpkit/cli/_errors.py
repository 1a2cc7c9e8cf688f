"""How the ``mcpkit`` command says what went wrong: one ``error:`` line, a ``hint:`` line
where one helps, and an exit code: 1 when what was asked failed, 2 when the command line
itself is wrong, 130 when interrupted (quietly). The traceback is shown only with the
global ``--debug`` option or ``MCPKIT_DEBUG=1``.

Every exception the command can meet is mapped here, in ``describe``; the call sites that
know more (the URL, the port, the tool name) build the ``CliError`` themselves with the
helpers below. Imports stay lazy: this module is on the cold path of ``mcpkit run``."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

#: Longest error or hint line printed; longer ones are cut with an ellipsis.
MAX_LINE = 400

DEBUG_HINT = "run with --debug (or MCPKIT_DEBUG=1) for the traceback"


class CliError(Exception):
    """An error the command reports as one line, with an optional hint line;
    ``suggest_debug`` adds "run with --debug" to the hint (unless debugging already)."""

    def __init__(
        self,
        message: str,
        hint: str | None = None,
        *,
        code: int = EXIT_FAILURE,
        suggest_debug: bool = False,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.code = code
        self.suggest_debug = suggest_debug


#: This command runs with ``--debug`` or ``MCPKIT_DEBUG`` (``main`` sets it): commands that
#: print a traceback of their own (``call``) read it.
debugging = False


def debug_requested(argv: list[str]) -> bool:
    """``MCPKIT_DEBUG`` is set (not 0/false/no/off), or ``--debug`` is among the global
    options (those before the command name)."""
    if os.environ.get("MCPKIT_DEBUG", "").strip().lower() not in ("", "0", "false", "no", "off"):
        return True
    for arg in argv:
        if arg == "--debug":
            return True
        if not arg.startswith("-") or arg == "--":
            return False
    return False


def one_line(text: str) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= MAX_LINE else line[: MAX_LINE - 1] + "…"


def json_requested(argv: list[str]) -> bool:
    """``--json`` is on the command line (before any ``--``), or ``MCPKIT_JSON`` is on."""
    if os.environ.get("MCPKIT_JSON", "").strip().lower() in ("1", "true", "yes", "on"):
        return True
    for arg in argv:
        if arg == "--":
            return False
        if arg == "--json":
            return True
    return False


def report(exc: BaseException, *, debug: bool, as_json: bool = False) -> int:
    """Print ``exc`` the command's way; the exit code. ``as_json``: one JSON line on stderr,
    ``{"error": MESSAGE, "hint": HINT or null, "exit_code": CODE}``."""
    if isinstance(exc, KeyboardInterrupt):
        return EXIT_INTERRUPTED
    if isinstance(exc, BrokenPipeError):  # ``mcpkit inspect x | head``: the reader is done
        _silence_stdout()
        return EXIT_FAILURE
    error = describe(exc)
    if debug:
        import traceback

        traceback.print_exception(exc)
    hint = error.hint
    if error.suggest_debug and not debug:
        hint = f"{hint}; {DEBUG_HINT}" if hint else DEBUG_HINT
    stderr = sys.stderr
    try:
        if as_json:
            import json

            line = {
                "error": one_line(error.message),
                "hint": one_line(hint) if hint else None,
                "exit_code": error.code,
            }
            stderr.write(json.dumps(line) + "\n")
            stderr.flush()
            return error.code
        stderr.write(f"error: {one_line(error.message)}\n")
        if hint:
            stderr.write(f"hint: {one_line(hint)}\n")
        stderr.flush()
    except (OSError, ValueError):  # stderr is gone: the exit code still tells
        pass
    return error.code


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's last flush finds no broken pipe."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def describe(exc: BaseException) -> CliError:
    """The ``CliError`` for anything raised while the command ran."""
    if isinstance(exc, CliError):
        return exc
    from mcpkit.cli._loader import AppNotFoundError, TargetNotFoundError, UserCodeError

    if isinstance(exc, TargetNotFoundError):
        return CliError(str(exc), f"looked for {exc.tried}")
    if isinstance(exc, AppNotFoundError):
        return app_not_found(exc)
    if isinstance(exc, UserCodeError):
        return user_code_error(exc.path, exc.error)
    if isinstance(exc, ImportError) and "pip install" in str(exc):
        # mcpkit's own "this needs an extra" errors: "... needs X: pip install 'mcpkit[x]'"
        message, _, install = str(exc).partition("pip install")
        return CliError(message.rstrip(" :;,"), f"pip install{install}")
    from mcpkit._exceptions import McpCallError, MCPError, TransportError

    if isinstance(exc, McpCallError):
        return CliError(f"the server answered: {exc.message} (code {exc.code})")
    if isinstance(exc, TransportError):
        return transport_error(None, exc)
    if isinstance(exc, MCPError):
        return CliError(str(exc) or type(exc).__name__)
    return CliError(
        f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__, suggest_debug=True
    )


# --------------------------------------------------------------------------- loading a file


def _shown(path: str | Path) -> str:
    """A path as the user would type it: relative to the working directory when inside it."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd()))
    except (ValueError, OSError):
        return str(path)


def app_not_found(exc: Any) -> CliError:
    if exc.candidates:
        listed = ", ".join(exc.candidates[:8]) + (", …" if len(exc.candidates) > 8 else "")
        return CliError(exc.message, f"name one as {exc.file}:OBJECT; candidates: {listed}")
    return CliError(
        exc.message,
        "the file must define an McpServerApp (app = McpServerApp(MyServer)) or an @mcp_server class",
    )


def user_code_error(path: Path, error: BaseException) -> CliError:
    """``file:line: Type: message``, the line being the innermost frame in the user's file
    (for a SyntaxError: where the parser stopped, in whichever file that was)."""
    kind = type(error).__name__
    if isinstance(error, SyntaxError):
        where = _shown(error.filename) if error.filename else _shown(path)
        if error.lineno:
            where += f":{error.lineno}"
        text = (error.text or "").strip()
        return CliError(
            f"{where}: {kind}: {error.msg}", f"the line reads: {text}" if text else None
        )
    import traceback

    frames = traceback.extract_tb(error.__traceback__)
    target = str(path)
    mine = [
        frame for frame in frames if frame.filename == target or _same_file(frame.filename, path)
    ]
    where = _shown(path) + (f":{mine[-1].lineno}" if mine else "")
    message = f"{where}: {kind}: {error}" if str(error) else f"{where}: {kind}"
    if isinstance(error, ModuleNotFoundError) and error.name:
        return CliError(
            message, f"is {error.name.partition('.')[0]} installed for {sys.executable}?"
        )
    if frames and mine and frames[-1] is not mine[-1]:
        inner = frames[-1]
        return CliError(
            message,
            f"raised in {_shown(inner.filename)}:{inner.lineno} ({inner.name})",
            suggest_debug=True,
        )
    return CliError(message, suggest_debug=True)


def _same_file(name: str, path: Path) -> bool:
    try:
        return Path(name).resolve() == path
    except OSError:
        return False


# --------------------------------------------------------------------------- talking to a server


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and all(current is not e for e in seen):
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def transport_error(
    url: str | None, exc: BaseException, *, credentials_sent: bool = False
) -> CliError:
    """A connection that failed (refused, unknown host, timed out) or an HTTP error status."""
    import socket

    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        return http_status_error(url, status, str(exc), credentials_sent=credentials_sent)
    place = url or "the server"
    for cause in _chain(exc):
        if isinstance(cause, ConnectionRefusedError):
            return CliError(
                f"cannot connect to {place}: connection refused",
                "is a server listening there? (mcpkit run FILE -t http --port PORT)",
            )
        if isinstance(cause, socket.gaierror):
            host = _host_of(url)
            what = f"host {host} not found" if host else "host not found"
            return CliError(f"cannot connect to {place}: {what}", "check the host name in the URL")
        if isinstance(cause, TimeoutError) or type(cause).__name__ in (
            "ConnectTimeout",
            "ReadTimeout",
            "TimeoutException",
        ):
            return CliError(
                f"cannot reach {place}: timed out", "is the server up, and the address right?"
            )
    message = str(exc) or type(exc).__name__
    return CliError(f"{place}: {message}" if url and url not in message else message)


def http_status_error(
    url: str | None, status: int, message: str, *, credentials_sent: bool = False
) -> CliError:
    hints = {
        401: "the token sent was not accepted: check it, or get a new one"
        if credentials_sent
        else "the server requires authorization: log in with --auth oauth, or pass a token with --header 'Authorization: Bearer TOKEN'",
        403: "the server refused these credentials, or the token lacks a scope it requires",
        404: "is the endpoint path right? mcpkit serves Streamable HTTP at /mcp, legacy SSE at /mcp/sse",
        405: "is the endpoint path right? mcpkit serves Streamable HTTP at /mcp, legacy SSE at /mcp/sse",
    }
    return CliError(
        message if url is None or url in message else f"{url}: {message}", hints.get(status)
    )


def _host_of(url: str | None) -> str | None:
    if not url:
        return None
    from urllib.parse import urlsplit

    return urlsplit(url).hostname


def bind_error(host: str, port: int, exc: OSError) -> CliError:
    """The one line for a port that cannot be bound."""
    import errno

    if exc.errno == errno.EADDRINUSE:
        return CliError(
            f"port {port} on {host} is in use",
            f"choose another with --port, or stop what listens on {port}",
        )
    if exc.errno == errno.EACCES:
        return CliError(
            f"no permission to bind port {port} on {host}",
            "ports below 1024 need privileges: choose another with --port",
        )
    if exc.errno == errno.EADDRNOTAVAIL:
        return CliError(
            f"cannot bind {host}: no such address on this machine",
            "choose another with --host (127.0.0.1, or 0.0.0.0 for every interface)",
        )
    import socket

    if isinstance(exc, socket.gaierror):
        return CliError(
            f"cannot bind {host}: host not found",
            "choose another with --host (127.0.0.1, or 0.0.0.0 for every interface)",
        )
    return CliError(f"cannot bind {host}:{port}: {exc.strerror or exc}")


# --------------------------------------------------------------------------- mcpkit call


#: The example of ``mcpkit call``'s arguments when the tool's own schema gives none.
ARGUMENTS_EXAMPLE = """'{"city": "Oslo"}'"""

#: A placeholder value for each JSON Schema type, for an example of a tool's arguments.
_PLACEHOLDERS: dict[str, Any] = {
    "string": "text",
    "integer": 1,
    "number": 1,
    "boolean": True,
    "array": [],
    "object": {},
}


def parse_arguments(text: str | None, example: str = ARGUMENTS_EXAMPLE) -> dict[str, Any]:
    """The tool arguments of ``mcpkit call``: a JSON object; ``example`` shows one in the
    hint when they are not."""
    if not text:
        return {}
    import json

    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CliError(
            f"arguments are not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}",
            f"pass one JSON object in single quotes, e.g. {example}",
            code=EXIT_USAGE,
        ) from None
    if not isinstance(value, dict):
        kind = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
            type(value), "a number"
        )
        raise CliError(
            f"arguments must be a JSON object, not {kind}", f"e.g. {example}", code=EXIT_USAGE
        )
    return value


def arguments_example(input_schema: Any) -> str | None:
    """An example of a tool's arguments, in shell quotes, from its ``inputSchema``: its first
    one or two parameters (the required ones first), each with a placeholder of its type;
    None when the schema names no parameter."""
    import json

    properties = input_schema.get("properties") if isinstance(input_schema, dict) else None
    if not isinstance(properties, dict) or not properties:
        return None
    required = input_schema.get("required") or []
    names = sorted(properties, key=lambda name: name not in required)[:2]
    example = {name: _placeholder(properties[name]) for name in names}
    return f"'{json.dumps(example)}'"


def _placeholder(schema: Any) -> Any:
    """A value of the type ``schema`` names ("text" when it names none)."""
    if not isinstance(schema, dict):
        return "text"
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    kinds += [option.get("type") for option in schema.get("anyOf", []) if isinstance(option, dict)]
    for name in kinds:
        if name in _PLACEHOLDERS:
            return _PLACEHOLDERS[name]
    return "text"


def unknown_tool(tool: str, names: list[str], unserved: str | None = None) -> CliError:
    """An unknown tool, with the close matches among the server's tools; ``unserved``: the
    file's function by that name the app does not serve, said as the loader warned of it."""
    import difflib

    if unserved:
        return CliError(f"no tool named {tool!r}", unserved)
    close = difflib.get_close_matches(tool, names, n=3, cutoff=0.6)
    if close:
        hint = "did you mean " + " or ".join(repr(name) for name in close) + "?"
        if len(names) <= 10:
            hint += f" (tools: {', '.join(names)})"
    elif not names:
        hint = "the server has no tools"
    elif len(names) <= 10:
        hint = f"tools: {', '.join(names)}"
    else:
        hint = f"{len(names)} tools: see them with mcpkit inspect"
    return CliError(f"no tool named {tool!r}", hint)


def unknown_arguments(tool: str, input_schema: Any, arguments: dict[str, Any]) -> list[str]:
    """A warning for each argument whose name is not among the tool's parameters (the
    server may drop it silently); none when the schema has no ``properties`` or allows
    other names (``additionalProperties``)."""
    import difflib

    if not isinstance(input_schema, dict) or input_schema.get("additionalProperties"):
        return []
    properties = input_schema.get("properties")
    if not isinstance(properties, dict):
        return []
    names = list(properties)
    known = f"arguments: {', '.join(names)}" if names else "it takes none"
    warnings = []
    for name in arguments:
        if name in properties:
            continue
        close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
        guess = f" (did you mean {close[0]!r}?)" if close else ""
        warnings.append(f"{tool} has no argument {name!r}{guess}; {known}")
    return warnings


def invalid_arguments(tool: str, message: str) -> CliError:
    return CliError(
        f"invalid arguments for {tool!r}: {message}",
        "see the tool's inputSchema with mcpkit inspect",
    )
