"""One process serving an app over HTTP: uvicorn, shut down gracefully on SIGTERM/SIGINT.
``run_http_server`` runs it, and so does each worker ``workers=N`` starts. Where mcpkit is
the program, its request headers are bounded and the command's ``after_start`` runs once
the app has started."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import signal
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from mcpkit._runtime import AsTheProgram
from mcpkit.server._engine.engine import engine_of
from mcpkit.server._engine.shutdown import ABORT_SETTLE
from mcpkit.transports.http._app import McpAsgiApp
from mcpkit.transports.http._options import StreamableHttpServerOptions
from mcpkit.transports.http._server.protocol import uvicorn_http_protocol

if TYPE_CHECKING:
    from mcpkit.server._engine.engine import McpEngine, ServesAnEngine

#: The signals ``mcpkit run`` shuts down on, gracefully (a second one ends the grace).
_EXIT_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def _logs_info(level: str | int | None) -> bool:
    """Whether uvicorn's ``log_level`` shows INFO lines, its access log's (read with
    uvicorn's own table of level names, "trace" among them)."""
    from uvicorn.config import LOG_LEVELS

    if isinstance(level, str):
        level = LOG_LEVELS.get(level)
    return isinstance(level, int) and level <= logging.INFO


def _backstop(grace: float) -> float | None:
    """uvicorn's ``timeout_graceful_shutdown`` for a grace: the calls are answered at the
    grace, and their answers get ``ABORT_SETTLE`` seconds to go out."""
    return None if math.isinf(grace) else grace + ABORT_SETTLE


#: uvicorn options under which uvicorn opens the socket itself


def tcp_socket(family: int) -> Any:
    """A stream socket that names its protocol: asyncio turns Nagle's algorithm off
    (``TCP_NODELAY``) only on connections accepted from a socket whose protocol is
    ``IPPROTO_TCP``, and a socket made without it says 0. With Nagle on, an answer
    written in two pieces waits for the client's delayed ACK, ~40 ms a request on Linux."""
    import socket

    return socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)


def bind_http_socket(host: str, port: int) -> Any:
    """A TCP socket (``socket.socket``) bound to ``host:port``, IPv6 when ``host`` holds a
    colon; ``OSError`` when the port is taken or the address is not this machine's."""
    import socket

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = tcp_socket(family)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except BaseException:
        sock.close()
        raise
    return sock


def serve_in_this_process(
    app: McpEngine | ServesAnEngine,
    options: StreamableHttpServerOptions,
    *,
    sock: Any = None,
    on_started: Any = None,
    program: AsTheProgram | None = None,
    **uvicorn_options: Any,
) -> None:
    """``run_http_server`` in one process: uvicorn serving ``McpAsgiApp(app, options)``
    with the graceful shutdown it describes; what each worker of ``workers=N`` runs.

    ``program`` (from ``mcpkit run`` and ``mcpkit proxy`` alone) is what mcpkit does to the
    process as its program: its request headers bounded in time and size, unless
    ``uvicorn_options`` name their own ``http`` protocol, and its ``after_start`` run once
    the app has started. Without it, uvicorn serves with the protocol it picks."""
    try:
        import uvicorn
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("serving HTTP needs uvicorn: pip install 'mcpkit[http]'") from exc
    config: dict[str, Any] = {
        "host": options.host or "0.0.0.0",
        "port": options.port,
        "log_level": "warning",
        "lifespan": "on",
        "timeout_graceful_shutdown": _backstop(engine_of(app).shutdown_grace),
        # No "server: uvicorn" on every answer: it names the stack to whoever asks, and
        # uvicorn checks and writes it per response.
        "server_header": False,
    }
    if program is not None:
        config.update(uvicorn_http_protocol(options))
    config.update(uvicorn_options)
    if "access_log" not in uvicorn_options:
        # uvicorn builds each request's access line arguments even when its log level hides
        # the line: at "warning" that is work for nothing on every request.
        config["access_log"] = _logs_info(config["log_level"])
    asgi_app = McpAsgiApp(app, options)
    if "reload" in uvicorn_options:  # uvicorn refuses an app object there, and says why
        uvicorn.run(asgi_app, **config)
        return

    grace = asgi_app.engine.shutdown_grace
    after_start = program.after_start if program is not None else None
    hurry = asyncio.Event()  # a second signal: end the grace now (the calls still answered)

    class Server(uvicorn.Server):
        loop: asyncio.AbstractEventLoop | None = None

        async def startup(self, sockets: Any = None) -> None:
            self.loop = asyncio.get_running_loop()
            try:
                await super().startup(sockets=sockets)
            except SystemExit:  # newer uvicorns exit when the lifespan start-up fails
                if not asgi_app.startup_abandoned:
                    raise
                return  # a signal stopped it: handle_exit has set should_exit
            if self.started and after_start is not None:
                after_start()  # mcpkit is the program: the command's own tuning

        async def main_loop(self) -> None:
            # Announced here, once start-up is over: a signal that comes after the banner
            # then always takes the way of a graceful shutdown (one during start-up makes
            # uvicorn return without it).
            if on_started is not None:
                on_started()
            await super().main_loop()

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            # mcpkit run is the program: SIGINT and SIGTERM shut it down gracefully, and it
            # then exits 0 (uvicorn raises the signal again once it has shut down).
            if threading.current_thread() is not threading.main_thread():
                yield
                return
            previous = {sig: signal.signal(sig, self.handle_exit) for sig in _EXIT_SIGNALS}
            try:
                yield
            finally:
                for sig, handler in previous.items():
                    signal.signal(sig, handler)

        def handle_exit(self, sig: int, frame: Any) -> None:
            if not self.started and self.loop is not None:  # a start-up may wait long
                self.loop.call_soon_threadsafe(asgi_app.abandon_startup)
            if self.should_exit and self.loop is not None and not self.force_exit:
                if not hurry.is_set():  # the second signal; a third one forces the exit
                    self.loop.call_soon_threadsafe(hurry.set)
                    return
            super().handle_exit(sig, frame)

        async def shutdown(self, sockets: Any = None) -> None:
            for listener in self.servers:  # stop accepting while the calls end
                listener.close()
            asgi_app.end_streams()  # else shutdown waits for every SSE client to leave
            ending = asyncio.ensure_future(asgi_app.end_calls(grace, hurry))
            try:
                await asgi_app.answer_connections(grace, hurry)
                asgi_app.end_legacy_streams()
                await super().shutdown(sockets=sockets)
            finally:
                ending.cancel()

    server = Server(uvicorn.Config(asgi_app, **config))
    sockets = None if sock is None else [sock]
    if hasattr(uvicorn.Config, "get_loop_factory"):  # uvicorn 0.36 on: a loop of its own
        server.run(sockets=sockets)
    else:
        # Older uvicorns set the process's event loop policy to serve (uvloop's): the
        # caller's is put back once it returns, as its signal handlers are.
        policy = asyncio.get_event_loop_policy()
        try:
            server.run(sockets=sockets)
        finally:
            asyncio.set_event_loop_policy(policy)
    if not server.started and not asgi_app.startup_abandoned:
        raise SystemExit(3)  # as uvicorn.run: the app's start-up failed
