"""Running the process that serves an app over HTTP: ``serve_http`` and
``run_http_server`` bind, start uvicorn, shut down
gracefully on SIGTERM/SIGINT and, with ``workers=N``, supervise N processes. Only a
process mcpkit runs goes through here; an ASGI host serves ``McpAsgiApp`` itself."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcpkit.server._engine.engine import engine_of
from mcpkit.transports.http._options import StreamableHttpServerOptions
from mcpkit.transports.http._server.process import bind_http_socket, serve_in_this_process

if TYPE_CHECKING:
    from mcpkit.server._engine.engine import McpEngine, ServesAnEngine


#: uvicorn options with which uvicorn binds (a Unix socket, a descriptor, the reloader).
_UVICORN_BINDS = frozenset({"uds", "fd", "reload"})


def serve_http(
    app: McpEngine | ServesAnEngine,
    options: StreamableHttpServerOptions | None = None,
    **uvicorn_options: Any,
) -> None:
    """Serve ``app`` with uvicorn until interrupted (SIGTERM, SIGINT: a graceful shutdown).

    The listening socket is bound first, so a taken port raises ``OSError``
    (``errno.EADDRINUSE``) here, before the app starts, instead of uvicorn logging it and
    exiting. ``workers=N`` serves with N processes (``run_http_server``). With ``uds``,
    ``fd`` or ``reload`` among ``uvicorn_options``, uvicorn binds."""
    options = options or StreamableHttpServerOptions()
    # several workers: run_http_server binds a socket for each
    if _UVICORN_BINDS.isdisjoint(uvicorn_options) and uvicorn_options.get("workers", 1) == 1:
        host = uvicorn_options.get("host", options.host or "0.0.0.0")
        sock = bind_http_socket(host, uvicorn_options.get("port", options.port))
        run_http_server(app, options, sock=sock, **uvicorn_options)
    else:
        run_http_server(app, options, **uvicorn_options)


def serve_announced(app: McpEngine | ServesAnEngine, options: StreamableHttpServerOptions) -> None:
    """``serve_http`` for ``app.run("http")``: the socket bound here, so the line written
    once connections are accepted (``mcpkit: serving NAME on URL``, as ``mcpkit run``
    writes it) names the port bound, ``port=0`` included."""
    from mcpkit.transports._announce import announce_http, http_url

    sock = bind_http_socket(options.host or "0.0.0.0", options.port)

    def started() -> None:
        url = http_url(options.host, sock.getsockname()[1], options.endpoint)
        announce_http(str(options.server_name or getattr(app, "name", "")), url)

    run_http_server(app, options, sock=sock, on_started=started)


def run_http_server(
    app: McpEngine | ServesAnEngine,
    options: StreamableHttpServerOptions | None = None,
    *,
    sock: Any = None,
    on_started: Any = None,
    workers: int = 1,
    **uvicorn_options: Any,
) -> None:
    """uvicorn serving ``McpAsgiApp(app, options)`` until interrupted: on ``sock`` (from
    ``bind_http_socket``) when given, else where ``uvicorn_options`` say. ``on_started()``
    (no arguments) is called once the app has started and connections are accepted.

    SIGTERM or SIGINT shuts it down gracefully: uvicorn stops listening; open SSE streams
    end; calls still running get ``app.shutdown_grace`` seconds to finish (a second signal
    ends the grace), then are cancelled, each answered with a -32000 error; the lifespan
    shutdown closes the sessions and stops the app (its stores); it returns (exit code 0).
    uvicorn's ``timeout_graceful_shutdown`` (default: the grace plus ``ABORT_SETTLE``)
    bounds whatever still holds a connection open after that.

    The process stays the caller's: uvicorn serves with the protocol it picks, the
    garbage collector is left as it is, and the signal handlers and event loop policy are
    the caller's again once it returns (uvicorn before 0.36 sets the policy to serve).
    Request headers are bounded in time and size (``header_read_timeout``,
    ``max_header_bytes``) only where mcpkit is the program (``mcpkit run``); put a reverse
    proxy in front for that (docs/deployment.md).

    ``workers=N`` (N > 1) serves with N processes on one port (``_workers.py``), each
    importing the app (a module-level name) and running the above: ``ValueError``
    (``WorkersNeedSharedStateError``) first when sessions would each live in one worker
    (docs/deployment.md), ``TypeError`` when the app or options cannot reach the workers."""
    options = options or StreamableHttpServerOptions()
    if workers != 1:
        from mcpkit.transports.http._server.workers import (
            WorkerSupervisor,
            bind_worker_sockets,
            check_workers,
            module_app,
        )

        check_workers(options, workers)
    if workers > 1:
        build = module_app(app, options)
        if sock is not None:
            sockets = [sock]
        else:
            sockets = bind_worker_sockets(
                uvicorn_options.pop("host", options.host or "0.0.0.0"),
                uvicorn_options.pop("port", options.port),
                workers,
            )
        supervisor = WorkerSupervisor(
            build,
            workers,
            sockets,
            on_started=on_started,
            shutdown_grace=engine_of(app).shutdown_grace,
            uvicorn_options=uvicorn_options,
        )
        supervisor.run()
        return
    serve_in_this_process(app, options, sock=sock, on_started=on_started, **uvicorn_options)


__all__ = ["bind_http_socket", "run_http_server", "serve_announced", "serve_http"]
