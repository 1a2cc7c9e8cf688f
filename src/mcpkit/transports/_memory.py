"""In-process transport: two connected ``MessageStream`` ends, for tests and embedding."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from mcpkit._exceptions import ConnectionClosedError

#: Frames one end may queue before ``send`` waits for the other end to read.
DEFAULT_MAX_QUEUED_FRAMES = 1024

_EOF = None


class InMemoryTransport:
    """One end of an in-memory pipe. Build a connected pair with ``InMemoryTransport.pair()``."""

    def __init__(
        self, inbox: asyncio.Queue[bytes | None], outbox: asyncio.Queue[bytes | None]
    ) -> None:
        self._inbox = inbox
        self._outbox = outbox
        self._closed = False

    @classmethod
    def pair(
        cls, *, max_queued_frames: int = DEFAULT_MAX_QUEUED_FRAMES
    ) -> tuple[InMemoryTransport, InMemoryTransport]:
        """(client end, server end)."""
        a: asyncio.Queue[bytes | None] = asyncio.Queue(max_queued_frames)
        b: asyncio.Queue[bytes | None] = asyncio.Queue(max_queued_frames)
        return cls(a, b), cls(b, a)

    async def send(self, frame: bytes) -> None:
        """Queue one frame for the other end (waits while its queue is full)."""
        if self._closed:
            raise ConnectionClosedError("in-memory transport is closed")
        await self._outbox.put(bytes(frame))

    async def receive(self) -> bytes | None:
        """The next frame from the other end, or None once closed and drained."""
        if self._closed and self._inbox.empty():
            return None
        return await self._inbox.get()

    async def aclose(self) -> None:
        """Close both directions; the other end's ``receive`` then returns None."""
        if not self._closed:
            self._closed = True
            try:
                self._outbox.put_nowait(_EOF)
            except asyncio.QueueFull:
                pass
            try:
                self._inbox.put_nowait(_EOF)
            except asyncio.QueueFull:
                pass


async def serve_in_memory(app: Any, server_end: InMemoryTransport) -> Callable[[], Awaitable[None]]:
    """Start ``app`` and serve it on ``server_end`` in a task; returns what stops it (the
    in-memory client's side of ``McpClient.in_memory``, which must not import the engine).
    An app it started is stopped again when the last such client closes (its engine
    counts them: ``in_memory_clients``); an app someone else started is theirs to stop."""
    from mcpkit.server._engine.connection import serve_stream
    from mcpkit.server._engine.engine import engine_of

    engine = engine_of(app)
    ours = engine.in_memory_clients > 0 or not engine.started
    await engine.start()
    if ours:
        engine.in_memory_clients += 1
    task = asyncio.create_task(serve_stream(engine, server_end))

    async def stop() -> None:
        await server_end.aclose()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        if ours:
            engine.in_memory_clients -= 1
            if engine.in_memory_clients <= 0:
                engine.in_memory_clients = 0
                await engine.stop()

    return stop
