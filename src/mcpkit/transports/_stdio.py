"""stdio server transport: newline-delimited JSON-RPC on this process's stdin/stdout."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mcpkit._runtime import AsTheProgram
from mcpkit.protocol._jsonrpc import DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_MAX_MESSAGE_DEPTH
from mcpkit.server._engine.shutdown import check_grace
from mcpkit.transports._pipes import FramedPipes
from mcpkit.transports._starting import StartupAbandoned, start_unless_stopped

if TYPE_CHECKING:
    from mcpkit.server._engine.engine import McpEngine, ServesAnEngine


#: Seconds what is written at shutdown gets to reach a client that reads slowly.
FLUSH_TIMEOUT = 2.0


async def serve_stdio(
    app: McpEngine | ServesAnEngine,
    *,
    max_message_bytes: int | None = DEFAULT_MAX_MESSAGE_BYTES,
    shutdown_grace: float | None = None,
    max_message_depth: int | None = DEFAULT_MAX_MESSAGE_DEPTH,
) -> None:
    """Serve ``app`` on stdin/stdout until stdin closes, or SIGTERM or SIGINT arrives.

    It takes the process's stdin, stdout and signals while it serves, and gives them back
    when it returns; the rest of the process is its caller's (the garbage collector is left
    as it is). A signal during start-up stops the start-up at once (a proxy's backend may
    never answer).

    Then input stops; the requests still running get ``shutdown_grace`` seconds (None: the
    app's ``shutdown_grace``) to finish and answer, less if a second signal comes; what
    still runs is cancelled, each request answered -32000 "Server shutting down"; the app
    stops, and what was written is flushed (for ``FLUSH_TIMEOUT`` seconds at most)."""
    await serve_stdio_as(
        app,
        None,
        max_message_bytes=max_message_bytes,
        shutdown_grace=shutdown_grace,
        max_message_depth=max_message_depth,
    )


async def serve_stdio_as(
    app: McpEngine | ServesAnEngine,
    program: AsTheProgram | None,
    *,
    max_message_bytes: int | None = DEFAULT_MAX_MESSAGE_BYTES,
    shutdown_grace: float | None = None,
    max_message_depth: int | None = DEFAULT_MAX_MESSAGE_DEPTH,
) -> None:
    """``serve_stdio``, and, when ``program`` is given (``mcpkit run`` and ``mcpkit
    proxy`` are the program), what it says is done to the process once the app has
    started."""
    from mcpkit.server._engine.connection import ServerConnection
    from mcpkit.server._engine.engine import engine_of

    engine = engine_of(app)
    grace = engine.shutdown_grace if shutdown_grace is None else check_grace(shutdown_grace)
    stdin = os.fdopen(os.dup(sys.stdin.fileno()), "rb", buffering=0)
    stdout = os.fdopen(os.dup(sys.stdout.fileno()), "wb", buffering=0)
    # Anything user code prints must not corrupt the protocol stream (until this returns).
    printed_to = sys.stdout
    sys.stdout = sys.stderr
    connection: ServerConnection | None = None
    stop = asyncio.Event()  # input ended, or a signal: shut down
    hurry = asyncio.Event()  # a second signal: end the grace now

    def on_frame(frame: bytes) -> None:
        assert connection is not None
        connection.feed(frame)

    def on_oversized() -> None:
        assert connection is not None
        connection.feed_oversized()

    def on_signal() -> None:
        (hurry if stop.is_set() else stop).set()

    pipes = FramedPipes(on_frame, on_oversized=on_oversized, max_message_bytes=max_message_bytes)
    restore_signals = _catch_signals(on_signal)
    try:
        try:
            await start_unless_stopped(engine, stop)
        except BaseException as exc:
            stdin.close()
            stdout.close()
            if isinstance(exc, StartupAbandoned):
                return
            raise
        try:
            if program is not None and program.after_start is not None:
                program.after_start()
            connection = ServerConnection(
                engine,
                pipes.send,
                max_message_bytes=max_message_bytes,
                max_message_depth=max_message_depth,
            )
            try:
                await pipes.open(stdin, stdout)
                pipes.closed.add_done_callback(lambda _: stop.set())
                await stop.wait()
                pipes.stop_reading()
                engine.shutting_down.set()  # long-lived requests (subscriptions) end now
                # No grace when the output is gone: no answer could reach the client.
                await connection.drain(grace if pipes.can_write else 0, hurry)
                await connection.abort()
            finally:
                await connection.close()
                await pipes.aclose(FLUSH_TIMEOUT)
        finally:
            await engine.stop()
    finally:
        restore_signals()
        if sys.stdout is sys.stderr:  # unless the program has moved it since
            sys.stdout = printed_to


def _catch_signals(handler: Callable[[], None]) -> Callable[[], None]:
    """Route SIGTERM and SIGINT to ``handler`` on the running loop (main thread, POSIX);
    returns what puts the previous handlers back."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    loop = asyncio.get_running_loop()
    previous: dict[int, Any] = {}
    for sig in (signal.SIGTERM, signal.SIGINT):
        try:
            before = signal.getsignal(sig)
            loop.add_signal_handler(sig, handler)
        except (NotImplementedError, RuntimeError, ValueError):  # Windows, odd loops
            continue
        previous[sig] = before

    def restore() -> None:
        for sig, before in previous.items():
            loop.remove_signal_handler(sig)
            signal.signal(sig, before if before is not None else signal.SIG_DFL)

    return restore
