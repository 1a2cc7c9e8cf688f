"""``mcpkit run``: what it does, and the short way to its command line.

``parse_fast`` reads a plain ``run`` command line (the target and the few options below,
each well formed) without building the typer app, whose import and build cost more than
the rest of start-up; anything else (``--help``, an unknown option, a value it does not
take as is) returns None, and the typer app parses it and reports what is wrong. The
options' names and defaults live once in ``mcpkit.cli._run_options``; the typer command is
built from them (``mcpkit.cli._commands.run``), and a test checks that the two accept the
same options.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
from typing import Any

from mcpkit._runtime import run_async
from mcpkit.cli._program import as_the_program
from mcpkit.cli._run_options import (
    DEFAULTS,
    FLAGS,
    GLOBAL_FLAGS,
    TRANSPORTS,
    VALUE_OPTIONS,
)


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
    for name in ("port", "workers"):
        number = values[name]
        if isinstance(number, str):
            if not (number.isascii() and number.isdigit()):
                return None
            values[name] = int(number)
    if values["workers"] < 1:
        return None
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


def warn_of_unknown_variables() -> None:
    """One ``mcpkit: warning:`` line on stderr for each ``MCPKIT_*`` variable that is no
    setting. One pass over the environment; the settings are imported only when some
    ``MCPKIT_*`` variable is set (a plain start imports nothing more)."""
    names = [name for name in os.environ if name.startswith("MCPKIT_")]
    if not names:
        return
    from mcpkit.cli._settings import unknown_variable_warnings

    for warning in unknown_variable_warnings(names):
        sys.stderr.write(f"mcpkit: warning: {warning}\n")
    sys.stderr.flush()


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
    workers: int = DEFAULTS["workers"],
    auth: str | None = DEFAULTS["auth"],
) -> int:
    """Serve the app of ``target`` until stdin closes (stdio) or until interrupted (HTTP:
    Streamable HTTP at ENDPOINT, legacy SSE at ENDPOINT/sse, WebSocket at ENDPOINT/ws).

    Either way it shuts down gracefully and exits 0: calls still running get
    ``shutdown_grace`` seconds (None: the app's own, 5 by default) to finish, then are
    cancelled, each answered with a JSON-RPC error. ``json_output``: the HTTP banner is one
    JSON line on stdout (``{"event": "serving", "server": ..., "url": ...}``); the other
    ``StreamableHttpServerOptions`` fields come from ``MCPKIT_*`` variables (docs/settings.md).

    ``workers`` > 1 (HTTP only) serves with that many processes on one port, each loading
    ``target`` itself; refused (exit 2) when sessions would each live in one worker.

    ``auth`` (HTTP only): sign users in through an ``OAuthProxy`` in front of that provider,
    built from the ``MCPKIT_AUTH_*`` settings (``mcpkit.cli._auth``)."""
    from mcpkit.cli._errors import EXIT_USAGE, CliError

    warn_of_unknown_variables()
    if transport != "stdio" and not 0 <= port <= 65535:
        raise CliError(
            f"port {port} is out of range",
            "a port is 0 to 65535 (0: any free one)",
            code=EXIT_USAGE,
        )
    if workers < 1 or (workers > 1 and transport == "stdio"):
        raise CliError(
            f"--workers {workers}: "
            + ("at least 1" if workers < 1 else "several workers need an HTTP transport"),
            "--workers N serves one port with N processes: -t http --workers 2",
            code=EXIT_USAGE,
        )
    if auth is not None and transport == "stdio":
        raise CliError(f"--auth {auth} needs an HTTP transport: -t http", code=EXIT_USAGE)
    if auth is not None and workers > 1:
        from mcpkit.cli._auth import workers_refusal as auth_refusal

        refused = auth_refusal(auth, workers, os.environ)
        if refused is not None:
            raise CliError(
                refused,
                "MCPKIT_AUTH_STORE=oauth.db (or a redis:// URL) and"
                " MCPKIT_AUTH_SIGNING_KEY_FILE=key.pem: docs/auth.md",
                code=EXIT_USAGE,
            )
    if transport == "ws":
        require_websocket_library()
    if transport == "stdio":
        from mcpkit.cli._loader import load_app
        from mcpkit.transports._announce import announce_stdio
        from mcpkit.transports._stdio import serve_stdio_as

        program = as_the_program()
        # stdout is the protocol's: a print() while the file is imported would reach the
        # client as a malformed message.
        with contextlib.redirect_stdout(sys.stderr):
            server = load_app(target)
        if shutdown_grace is not None:
            server.shutdown_grace = shutdown_grace
        announce_stdio(server.name)
        run_async(serve_stdio_as(server, program))
        return 0
    from mcpkit.cli._errors import bind_error
    from mcpkit.transports._announce import announce_http, http_url
    from mcpkit.transports.http._server.process import serve_in_this_process
    from mcpkit.transports.http._server.serve import bind_http_socket

    program = as_the_program()
    build = functools.partial(
        http_server_for,
        target,
        host,
        port,
        endpoint,
        stateless,
        redis_url,
        shutdown_grace,
        workers,
        auth=auth,
    )
    server, options = build()
    if workers > 1:
        from mcpkit.transports.http._server.workers import state_lost_across_workers

        lost = state_lost_across_workers(options)
        if lost:
            raise CliError(workers_refusal(workers, lost), code=EXIT_USAGE)
        if stateless and not redis_url and not options.enable_legacy_sse:
            sys.stderr.write(
                "mcpkit: legacy SSE is off: with --workers its sessions would each live in"
                " one worker (--redis-url serves it)\n"
            )
    try:
        if workers > 1:
            from mcpkit.transports.http._server.workers import bind_worker_sockets

            sockets = bind_worker_sockets(host, port, workers)
            sock = sockets[0]
        else:
            sock = bind_http_socket(host, port)
    except OSError as exc:
        raise bind_error(host, port, exc) from exc

    def banner() -> None:
        url = http_url(host, sock.getsockname()[1], endpoint)
        if json_output:
            import json

            line: dict[str, Any] = {"event": "serving", "server": server.name, "url": url}
            if workers > 1:
                line["workers"] = workers
            sys.stdout.write(json.dumps(line) + "\n")
            sys.stdout.flush()
            return
        announce_http(server.name, url, workers)

    if workers > 1:
        from mcpkit.transports.http._server.workers import WorkerSupervisor

        WorkerSupervisor(
            functools.partial(build, warn=False),  # each worker loads the file: warned once
            workers,
            sockets,
            on_started=banner,
            shutdown_grace=server.shutdown_grace,
            program=program,
        ).run()
        return 0
    serve_in_this_process(server, options, sock=sock, on_started=banner, program=program)
    return 0


#: The libraries uvicorn upgrades WebSocket connections with; without one, each gets a 404.
WEBSOCKET_LIBRARIES = ("websockets", "wsproto")


def require_websocket_library() -> None:
    """Refuse the ws transport up front when no WebSocket library is installed."""
    import importlib.util

    from mcpkit.cli._errors import CliError

    if not any(importlib.util.find_spec(name) for name in WEBSOCKET_LIBRARIES):
        raise CliError(
            "the WebSocket transport needs a WebSocket library (websockets or wsproto)",
            "pip install 'mcpkit[ws]'",
        )


def http_server_for(
    target: str,
    host: str,
    port: int,
    endpoint: str,
    stateless: bool,
    redis_url: str | None,
    shutdown_grace: float | None,
    workers: int = 1,
    warn: bool = True,
    auth: str | None = None,
) -> tuple[Any, Any]:
    """The app of ``target`` and its HTTP options as ``mcpkit run`` serves them (``MCPKIT_*``
    variables read, Redis stores when ``redis_url``): what each ``--workers`` process builds.

    Several stateless workers without Redis serve no legacy SSE (its sessions are state)
    unless ``MCPKIT_ENABLE_LEGACY_SSE`` asks for it, which the start then refuses. ``auth``:
    the ``auth_server`` ``--auth`` builds (``MCPKIT_AUTH_SERVER`` set too is refused)."""
    from mcpkit.cli._loader import load_app
    from mcpkit.cli._settings import server_options

    server = load_app(target, warn=warn)
    if shutdown_grace is not None:
        server.shutdown_grace = shutdown_grace
    shared: dict[str, Any] = {}
    if redis_url:
        from mcpkit.stores import RedisHub, RedisTaskStore, RedisUsedRequestStates, redis_options

        hub = RedisHub(redis_url)
        shared = redis_options(hub)
        server.tasks.store = RedisTaskStore(hub)
        # A requestState is accepted once across the instances, not once by each.
        server.dispatcher.modern.request_states.shared = RedisUsedRequestStates(hub)
    if workers > 1 and stateless and not redis_url and "MCPKIT_ENABLE_LEGACY_SSE" not in os.environ:
        shared["enable_legacy_sse"] = False
    if auth is not None:
        from mcpkit.cli._auth import auth_server_for
        from mcpkit.cli._errors import EXIT_USAGE, CliError

        if os.environ.get("MCPKIT_AUTH_SERVER", "").strip():
            raise CliError(
                f"--auth {auth} and MCPKIT_AUTH_SERVER both name an authorization server",
                "keep one of them",
                code=EXIT_USAGE,
            )
        shared["auth_server"] = auth_server_for(auth, host, port, endpoint)
    options = server_options(host=host, port=port, endpoint=endpoint, stateless=stateless, **shared)
    return server, options


def workers_refusal(workers: int, lost: tuple[str, ...]) -> str:
    """The one line refusing ``--workers`` when ``lost`` would be lost (``mcpkit run``'s
    names for the fixes)."""
    return (
        f"--workers {workers} would lose sessions: {' and '.join(lost)} live in one worker"
        " each; pass --redis-url to share them, or serve none with --stateless"
        " (and MCPKIT_ENABLE_LEGACY_SSE unset or false)"
    )
