"""``mcpkit proxy TARGET``: serve a backend (a command, a URL, or an ``mcpServers`` config
file) with ``mcpkit run``'s serving options."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Any

from mcpkit.server._app import McpServerApp


def proxy_app(target: list[str], headers: list[str], backend_transport: str) -> McpServerApp:
    """The app for ``target``: a config file (``*.json``), a URL, or a command line."""
    from mcpkit.proxy._backend import HttpBackend
    from mcpkit.proxy._config import proxy_servers
    from mcpkit.proxy._proxy import McpProxy

    if len(target) == 1 and target[0].endswith(".json") and Path(target[0]).is_file():
        return proxy_servers(target[0])
    if len(target) == 1 and target[0].startswith(("http://", "https://", "ws://", "wss://")):
        parsed: dict[str, str] = {}
        for header in headers:
            name, sep, value = header.partition(":")
            if not sep or not name.strip():
                raise ValueError(f"a header is 'Name: value', not {header!r}")
            parsed[name.strip()] = value.strip()
        return McpProxy(HttpBackend(target[0], parsed, backend_transport)).app
    _check_command(target)
    command = shlex.split(target[0]) if len(target) == 1 else list(target)
    return McpProxy(command).app


def _check_command(target: list[str]) -> None:
    """Refuse the targets that would fail only once run, with what was meant instead."""
    import os

    first = target[0]
    if len(target) == 1 and first.endswith(".json") and not Path(first).exists():
        raise ValueError(f"no such servers file: {first}")
    if len(target) > 1 and " " in first.strip() and not Path(first).exists():
        # `mcpkit proxy "python server.py" --transport http`: no program has that name.
        rest = shlex.join(target[1:])
        raise ValueError(
            f"{first!r} is a whole command line in one word, followed by {rest}; mcpkit "
            f"proxy's options come before the target: mcpkit proxy {rest} {shlex.quote(first)}"
        )
    if (
        len(target) == 1
        and first.endswith(".py")
        and Path(first).is_file()
        and not os.access(first, os.X_OK)
    ):
        raise ValueError(
            f"{first} is a Python file, not a command: mcpkit proxy python {first} "
            f"(or serve it directly: mcpkit run {first})"
        )


def run_proxy(
    target: list[str],
    *,
    headers: list[str],
    backend_transport: str,
    transport: str,
    host: str,
    port: int,
    endpoint: str,
    stateless: bool,
    json_output: bool,
) -> int:
    """Serve the proxy until stdin closes (stdio) or until interrupted (HTTP)."""
    from mcpkit._runtime import run_async
    from mcpkit.cli._errors import EXIT_USAGE, CliError
    from mcpkit.cli._program import as_the_program
    from mcpkit.cli._run import require_websocket_library, warn_of_unknown_variables
    from mcpkit.transports._announce import announce_stdio, http_url

    warn_of_unknown_variables()
    try:
        server = proxy_app(target, headers, backend_transport)
    except ValueError as exc:
        raise CliError(str(exc), "see 'mcpkit proxy --help'", code=EXIT_USAGE) from exc
    if transport == "ws":
        require_websocket_library()
    program = as_the_program()
    if transport == "stdio":
        from mcpkit.transports._stdio import serve_stdio_as

        announce_stdio(server.name)
        run_async(serve_stdio_as(server, program))
        return 0
    from mcpkit.cli._errors import bind_error
    from mcpkit.cli._settings import server_options
    from mcpkit.transports.http._server.process import serve_in_this_process
    from mcpkit.transports.http._server.serve import bind_http_socket

    options: Any = server_options(host=host, port=port, endpoint=endpoint, stateless=stateless)
    try:
        sock = bind_http_socket(host, port)
    except OSError as exc:
        raise bind_error(host, port, exc) from exc

    def banner() -> None:
        url = http_url(host, sock.getsockname()[1], endpoint)
        if json_output:
            import json

            sys.stdout.write(
                json.dumps({"event": "serving", "server": server.name, "url": url}) + "\n"
            )
            sys.stdout.flush()
        else:
            sys.stderr.write(f"mcpkit: proxying {server.name} on {url}\n")
            sys.stderr.flush()

    serve_in_this_process(server, options, sock=sock, on_started=banner, program=program)
    return 0
