"""One logical SSE stream (a POST's response stream, or a session's standalone GET stream):
events are numbered and kept for resumption, and written to whichever HTTP response is
attached at the moment (none while the client is away)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from mcpkit.protocol._jsonrpc import encode_json
from mcpkit.protocol._sse import encode_comment, encode_event
from mcpkit.stores._events import EventStore, StoredEvent
from mcpkit.transports.http._asgi import Send, send_chunk

logger = logging.getLogger("mcpkit.http")


class SseStream:
    """Numbered, resumable events over a replaceable HTTP response."""

    __slots__ = ("stream_id", "session_id", "store", "retry_ms", "_writer", "_finished", "closed", "lock")

    def __init__(self, stream_id: str, session_id: str | None, store: EventStore | None, retry_ms: int) -> None:
        self.stream_id = stream_id
        self.session_id = session_id
        self.store = store if session_id is not None else None
        self.retry_ms = retry_ms
        self._writer: Send | None = None
        self._finished: asyncio.Event | None = None  # made on first use: sessions are many
        self.closed = False
        # Held while an event is stored and written, and while a resuming client replays
        # and attaches, so no event falls between the replay and the live feed.
        self.lock = asyncio.Lock()

    @property
    def finished(self) -> asyncio.Event:
        """Set when the stream is over (its call answered, or its session closed)."""
        if self._finished is None:
            self._finished = asyncio.Event()
        return self._finished

    @property
    def attached(self) -> bool:
        return self._writer is not None

    @property
    def resumable(self) -> bool:
        return self.store is not None

    def attach(self, writer: Send) -> None:
        self._writer = writer

    def detach(self, writer: Send | None = None) -> None:
        """Drop the attached response (only if it is still ``writer``, when given)."""
        if writer is not None and self._writer is not writer:
            return
        self._writer = None

    async def prime(self) -> None:
        """SEP-1699 priming event: an id with empty data, and the reconnect delay."""
        if self.store is None or self._writer is None:
            return
        event_id = await self.store.store_event(self.session_id or "", self.stream_id, None)
        await self._emit(encode_event("", id=event_id, retry=self.retry_ms))

    async def write(self, message: dict[str, Any]) -> None:
        """Send one JSON-RPC message as an SSE event (kept for replay when resumable)."""
        async with self.lock:
            event_id = None
            if self.store is not None:
                event_id = await self.store.store_event(self.session_id or "", self.stream_id, message)
            if self._writer is not None:
                await self._emit(encode_event(encode_json(message), event="message", id=event_id))

    async def replay(self, event: StoredEvent) -> None:
        if self._writer is not None and event.message is not None:
            await self._emit(encode_event(encode_json(event.message), event="message", id=event.event_id))

    async def keep_alive(self) -> None:
        if self._writer is not None:
            await self._emit(encode_comment("keep-alive"))

    async def end_response(self) -> None:
        """Close the attached HTTP response (the stream itself may go on elsewhere)."""
        writer, self._writer = self._writer, None
        if writer is not None:
            try:
                await send_chunk(writer, b"", more=False)
            except Exception:
                pass

    async def _emit(self, data: bytes) -> None:
        writer = self._writer
        if writer is None:
            return
        try:
            await send_chunk(writer, data)
        except Exception:
            logger.debug("SSE client went away on stream %s", self.stream_id, exc_info=True)
            self.detach()

    def close(self) -> None:
        self.closed = True
        self.finished.set()
        self.detach()
