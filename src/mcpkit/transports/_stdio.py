"""stdio server transport: newline-delimited JSON-RPC on this process's stdin/stdout."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from mcpkit._runtime import freeze_startup_objects
from mcpkit.protocol._jsonrpc import DEFAULT_MAX_MESSAGE_BYTES
from mcpkit.transports._pipes import FramedPipes

if TYPE_CHECKING:
    from mcpkit.server._app import McpServerApp


#: Seconds requests still running at end of input get to finish and answer.
DEFAULT_DRAIN_TIMEOUT = 2.0


async def serve_stdio(
    app: McpServerApp, *, max_message_bytes: int | None = DEFAULT_MAX_MESSAGE_BYTES
) -> None:
    """Serve ``app`` on stdin/stdout until stdin closes."""
    from mcpkit.server._connection import ServerConnection

    stdin = os.fdopen(os.dup(sys.stdin.fileno()), "rb", buffering=0)
    stdout = os.fdopen(os.dup(sys.stdout.fileno()), "wb", buffering=0)
    # Anything user code prints must not corrupt the protocol stream.
    sys.stdout = sys.stderr
    connection: ServerConnection | None = None

    def on_frame(frame: bytes) -> None:
        assert connection is not None
        connection.feed(frame)

    def on_oversized() -> None:
        assert connection is not None
        connection.feed_oversized()

    pipes = FramedPipes(on_frame, on_oversized=on_oversized, max_message_bytes=max_message_bytes)
    async with app.running():
        freeze_startup_objects()
        connection = ServerConnection(app, pipes.send, max_message_bytes=max_message_bytes)
        await pipes.open(stdin, stdout)
        try:
            await pipes.closed
            # Input ended: answer what is still running (briefly), then stop.
            await connection.drain(DEFAULT_DRAIN_TIMEOUT)
        finally:
            await connection.close()
            pipes.close()
