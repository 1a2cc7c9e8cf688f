"""One logical SSE stream (a POST's response stream, or a session's standalone GET stream):
events are numbered and kept for resumption, and written to whichever HTTP response is
attached at the moment (none while the client is away).

When sessions are shared between instances, a stream may be written on one instance and
read on another: a *relayed* stream only stores its events, and the ``StreamRelay`` of
the GET that holds the client (on any instance) writes them out, fed by the event store.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from typing import Any

from mcpkit._exceptions import StoreUnavailableError
from mcpkit.protocol._jsonrpc import encode_json
from mcpkit.protocol._sse import encode_comment, encode_event
from mcpkit.stores._events import EventStore, StoredEvent, event_seq
from mcpkit.transports.http._asgi import Receive, Send, send_chunk

logger = logging.getLogger("mcpkit.http")


class Replayer:
    """Writes replayed events to a resuming GET and remembers the last one sent."""

    __slots__ = ("last_id", "send")

    def __init__(self, send: Send, last_id: str) -> None:
        self.send = send
        self.last_id = last_id

    async def __call__(self, event: StoredEvent) -> None:
        if event.message is not None:
            await send_chunk(
                self.send,
                encode_event(encode_json(event.message), event="message", id=event.event_id),
            )
        self.last_id = event.event_id


class SseStream:
    """Numbered, resumable events over a replaceable HTTP response."""

    __slots__ = (
        "_finished",
        "_writer",
        "closed",
        "lock",
        "relayed",
        "remote_reader",
        "retry_ms",
        "session_id",
        "store",
        "stream_id",
    )

    def __init__(
        self,
        stream_id: str,
        session_id: str | None,
        store: EventStore | None,
        retry_ms: int,
        *,
        relayed: bool = False,
    ) -> None:
        self.stream_id = stream_id
        self.session_id = session_id
        self.store = store if session_id is not None else None
        self.retry_ms = retry_ms
        #: Events are only stored: a ``StreamRelay`` (on whichever instance holds the
        #: client's GET) writes them out.
        self.relayed = relayed and self.store is not None
        #: A GET on another instance resumed this stream (its events reach the client there).
        self.remote_reader = False
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
        try:
            event_id = await self.store.store_event(self.session_id or "", self.stream_id, None)
        except StoreUnavailableError:
            logger.warning("event store unavailable: stream %s is not resumable", self.stream_id)
            return
        if event_id is not None:
            await self._emit(encode_event("", id=event_id, retry=self.retry_ms))

    async def write(self, message: dict[str, Any]) -> None:
        """Send one JSON-RPC message as an SSE event (kept for replay when resumable).

        When the store is unavailable the event still goes out on an attached response,
        without an id; a relayed stream has no other way out, so a request (which would
        wait for an answer) raises ``StoreUnavailableError`` and a notification is dropped.
        """
        async with self.lock:
            event_id = None
            if self.store is not None:
                try:
                    event_id = await self.store.store_event(
                        self.session_id or "", self.stream_id, message
                    )
                except StoreUnavailableError:
                    if self.relayed and "id" in message:
                        raise
                    logger.warning(
                        "event store unavailable: %s on stream %s is not kept",
                        message.get("method", "a response"),
                        self.stream_id,
                    )
                else:
                    if event_id is None:
                        return  # this broadcast was already stored for the session
            if self._writer is not None and not self.relayed:
                await self._emit(encode_event(encode_json(message), event="message", id=event_id))

    async def replay(self, event: StoredEvent) -> None:
        if self._writer is not None and event.message is not None:
            await self._emit(
                encode_event(encode_json(event.message), event="message", id=event.event_id)
            )

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


def _is_response(message: dict[str, Any] | None) -> bool:
    return (
        message is not None
        and "method" not in message
        and ("result" in message or "error" in message)
    )


_STOP = object()


class StreamRelay:
    """Writes one logical stream to one HTTP response (a GET) from the event store's live
    feed, whichever instance stored the events: in id order, each once. When the feed was
    interrupted (Redis reconnected) the gap is read back from the store; when the client
    is too slow for ``max_queued`` events the response ends and the client resumes.
    """

    def __init__(
        self, send: Send, session_id: str, store: EventStore, retry_ms: int, *, max_queued: int
    ) -> None:
        self.send = send
        self.session_id = session_id
        self.store = store
        self.retry_ms = retry_ms
        self.token = secrets.token_hex(6)
        #: The stream relayed; None until a resumption's replay has named it.
        self.stream_id: str | None = None
        #: Id of the last event written (the client's position), and its sequence number.
        self.last_id: str | None = None
        self.last_seq = 0
        #: The sequence number of this GET's own priming event, written with ``retry``.
        self.prime_seq = 0
        #: A POST's stream (resumed here) carried its JSON-RPC response: the relay is done.
        self.answered = False
        self._queue: asyncio.Queue[Any] = asyncio.Queue(max_queued)
        self._stopped = False

    def feed(self, event: StoredEvent | None) -> None:
        """The event store's listener: queue one event (None: events may have been missed)."""
        if self._stopped:
            return
        try:
            self._queue.put_nowait(event)
        except asyncio.QueueFull:
            logger.warning("SSE client of session %s too slow; ending its stream", self.session_id)
            self.close()

    def close(self) -> None:
        """End the relay (the session closed, or another GET took the stream over)."""
        if not self._stopped:
            self._stopped = True
            try:
                self._queue.put_nowait(_STOP)
            except asyncio.QueueFull:
                pass  # run() checks _stopped before each event

    async def replayed(self, event: StoredEvent) -> None:
        """Write one replayed event (the ``send`` of ``EventStore.replay_events_after``)."""
        if self.stream_id is None:
            self.stream_id = event.stream_id
        await self.emit(event)

    async def emit(self, event: StoredEvent) -> None:
        seq = event_seq(event.event_id)
        if event.stream_id != self.stream_id or seq <= self.last_seq or self.answered:
            return
        if event.message is not None:
            data = encode_event(encode_json(event.message), event="message", id=event.event_id)
        elif seq == self.prime_seq:
            data = encode_event("", id=event.event_id, retry=self.retry_ms)
        else:
            return  # another stream's priming event
        await send_chunk(self.send, data)
        self.last_seq, self.last_id = seq, event.event_id
        if self.stream_id != "_get" and _is_response(event.message):
            self.answered = True  # a POST's stream ends with its answer

    async def run(self, receive: Receive) -> None:
        """Write events until the client leaves, the relay is closed, or (a POST's stream)
        the answer went out."""
        gone = asyncio.ensure_future(self._until_disconnect(receive))
        try:
            while not self._stopped and not self.answered:
                item = await self._queue.get()
                if item is _STOP or self._stopped:
                    break
                if item is None:
                    await self._catch_up()
                else:
                    await self.emit(item)
        finally:
            gone.cancel()

    async def _until_disconnect(self, receive: Receive) -> None:
        while (await receive())["type"] != "http.disconnect":
            pass
        self.close()

    async def _catch_up(self) -> None:
        if self.last_id is None:
            return
        try:
            await self.store.replay_events_after(self.session_id, self.last_id, self.emit)
        except StoreUnavailableError:
            logger.warning(
                "event store unavailable: stream of session %s may miss events", self.session_id
            )

    async def keep_alive(self, interval: float) -> None:
        if interval <= 0:
            return
        while True:
            await asyncio.sleep(interval)
            await send_chunk(self.send, encode_comment("keep-alive"))

    async def end_response(self) -> None:
        try:
            await send_chunk(self.send, b"", more=False)
        except Exception:
            pass
