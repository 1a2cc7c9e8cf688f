"""An mcpkit app served over an in-memory connection, for tests that need no sockets."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any, Self

from mcpkit import McpServerApp
from mcpkit.server import serve_stream
from mcpkit.transports import InMemoryTransport, MessageStream


@contextlib.asynccontextmanager
async def serving_in_memory(
    app: McpServerApp, **serve_options: Any
) -> AsyncIterator[MessageStream]:
    """Start ``app`` and serve one in-memory connection until the block ends (``serve_options``
    go to ``serve_stream``: ``auth=`` runs it as that identity); yields the client end.
    Closing is bounded: the server task is cancelled, the app stopped."""
    client_end, server_end = InMemoryTransport.pair()
    await app.start()
    server = asyncio.create_task(serve_stream(app, server_end, **serve_options))
    try:
        yield client_end
    finally:
        await server_end.aclose()
        server.cancel()
        await asyncio.gather(server, return_exceptions=True)
        await app.stop()


class InMemoryPeer:
    """The client end of one in-memory connection to ``app`` (not started: the engine's
    lifespan is not what these tests look at), for tests that speak raw frames. As an
    async context manager it closes the connection at the end of the block."""

    def __init__(self, app: McpServerApp, **serve_options: Any) -> None:
        self.client, server_end = InMemoryTransport.pair()
        self.task = asyncio.create_task(serve_stream(app, server_end, **serve_options))

    async def close(self) -> None:
        await self.client.aclose()
        self.task.cancel()
        await asyncio.gather(self.task, return_exceptions=True)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()
