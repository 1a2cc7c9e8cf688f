"""``mcpkit run``: what it does, and the short way to its command line.

``parse_fast`` reads a plain ``run`` command line (the target and the few options below,
each well formed) without building the typer app, whose import and build cost more than
the rest of start-up; anything else (``--help``, an unknown option, a value it does not
take as is) returns None, and the typer app parses it and reports what is wrong. The
options' names and defaults live here once; the typer command is built from them
(``mcpkit.cli._commands.run``), and a test checks that the two accept the same options.
"""

from __future__ import annotations

import os
import sys
from typing import Any

TRANSPORTS = ("stdio", "http", "sse", "ws")

DEFAULTS: dict[str, Any] = {
    "transport": "stdio",
    "host": "127.0.0.1",
    "port": 3001,
    "endpoint": "/mcp",
    "stateless": False,
    "redis_url": None,
    "shutdown_grace": None,
    "json_output": False,
}

#: option -> parameter, for the options that take a value
VALUE_OPTIONS = {
    "--transport": "transport",
    "-t": "transport",
    "--host": "host",
    "--port": "port",
    "--endpoint": "endpoint",
    "--redis-url": "redis_url",
    "--shutdown-grace": "shutdown_grace",
}
#: flag -> (parameter, value)
FLAGS = {
    "--stateless": ("stateless", True),
    "--no-stateless": ("stateless", False),
    "--json": ("json_output", True),
}
#: the global options that may stand before the command name
GLOBAL_FLAGS = ("--debug",)


def parse_fast(argv: list[str]) -> dict[str, Any] | None:
    """``run_server``'s arguments for a plain ``[--debug] run TARGET [OPTIONS]``, else None."""
    start = 0
    while start < len(argv) and argv[start] in GLOBAL_FLAGS:
        start += 1
    if start >= len(argv) or argv[start] != "run":
        return None
    values = dict(DEFAULTS)
    given: set[str] = set()  # set on the command line: these win over MCPKIT_* variables
    target: str | None = None
    rest = argv[start + 1 :]
    index = 0
    positional_only = False
    while index < len(rest):
        arg = rest[index]
        index += 1
        if positional_only or not arg.startswith("-") or arg == "-":
            if target is not None:
                return None
            target = arg
        elif arg == "--":
            positional_only = True
        elif arg in FLAGS:
            name, flag = FLAGS[arg]
            values[name] = flag
            given.add(name)
        else:
            if arg.startswith("--"):  # --port 3001, --port=3001
                option, has_value, value = arg.partition("=")
            else:  # -t http, -thttp
                option, value = arg[:2], arg[2:]
                has_value = "=" if value else ""
            if option not in VALUE_OPTIONS or value.startswith("="):
                return None
            if not has_value:
                if index >= len(rest):
                    return None
                value = rest[index]
                index += 1
            if value.startswith("-"):
                return None
            values[VALUE_OPTIONS[option]] = value
            given.add(VALUE_OPTIONS[option])
    if target is None or values["transport"] not in TRANSPORTS:
        return None
    port = values["port"]
    if isinstance(port, str):
        if not (port.isascii() and port.isdigit()):
            return None
        values["port"] = int(port)
    grace = values["shutdown_grace"]
    if isinstance(grace, str):
        try:
            values["shutdown_grace"] = float(grace)
        except ValueError:
            return None
        if not values["shutdown_grace"] >= 0:  # NaN too
            return None
    if any(name.startswith("MCPKIT_") for name in os.environ):
        from mcpkit.cli._settings import with_env

        values = with_env(values, given)
    return {"target": target, **values}


def run_server(
    target: str,
    transport: str = DEFAULTS["transport"],
    host: str = DEFAULTS["host"],
    port: int = DEFAULTS["port"],
    endpoint: str = DEFAULTS["endpoint"],
    stateless: bool = DEFAULTS["stateless"],
    redis_url: str | None = DEFAULTS["redis_url"],
    shutdown_grace: float | None = DEFAULTS["shutdown_grace"],
    json_output: bool = DEFAULTS["json_output"],
) -> int:
    """Serve the app of ``target`` until stdin closes (stdio) or until interrupted (HTTP:
    Streamable HTTP at ENDPOINT, legacy SSE at ENDPOINT/sse, WebSocket at ENDPOINT/ws).

    Either way it shuts down gracefully and exits 0: calls still running get
    ``shutdown_grace`` seconds (None: the app's own, 5 by default) to finish, then are
    cancelled, each answered with a JSON-RPC error. ``json_output``: the HTTP banner is one
    JSON line on stdout (``{"event": "serving", "server": ..., "url": ...}``); the other
    ``StreamableHttpServerOptions`` fields come from ``MCPKIT_*`` variables (docs/settings.md)."""
    from mcpkit.cli._loader import load_app

    if transport != "stdio" and not 0 <= port <= 65535:
        from mcpkit.cli._errors import EXIT_USAGE, CliError

        raise CliError(
            f"port {port} is out of range",
            "a port is 0 to 65535 (0: any free one)",
            code=EXIT_USAGE,
        )
    server = load_app(target)
    if shutdown_grace is not None:
        server.shutdown_grace = shutdown_grace
    if transport == "stdio":
        from mcpkit.transports._stdio import serve_stdio

        run_async(serve_stdio(server))
        return 0
    from mcpkit.cli._errors import bind_error
    from mcpkit.cli._settings import server_options
    from mcpkit.transports.http._app import bind_http_socket, run_http_server

    shared: dict[str, Any] = {}
    if redis_url:
        from mcpkit.stores import RedisHub, RedisTaskStore, redis_options

        hub = RedisHub(redis_url)
        shared = redis_options(hub)
        server.tasks.store = RedisTaskStore(hub)
    options = server_options(host=host, port=port, endpoint=endpoint, stateless=stateless, **shared)
    try:
        sock = bind_http_socket(host, port)
    except OSError as exc:
        raise bind_error(host, port, exc) from exc

    def banner() -> None:
        bound_port = sock.getsockname()[1]
        shown = f"[{host}]" if ":" in host else host
        url = f"http://{shown}:{bound_port}{endpoint}"
        if json_output:
            import json

            line = {"event": "serving", "server": server.name, "url": url}
            sys.stdout.write(json.dumps(line) + "\n")
            sys.stdout.flush()
            return
        sys.stderr.write(f"mcpkit: serving {server.name} on {url}\n")
        sys.stderr.flush()

    run_http_server(server, options, sock=sock, on_started=banner)
    return 0


def run_async(main: Any) -> Any:
    """Run a coroutine on uvloop when it is installed (``mcpkit[speed]``), else asyncio."""
    try:
        import uvloop
    except ImportError:
        import asyncio

        return asyncio.run(main)
    return uvloop.run(main)
