"""``StreamRelay``: a GET's view of a session stream written on another instance, fed from
the shared event store (the cluster's relay), with its own bounds and end."""

from __future__ import annotations

import asyncio
import logging
import secrets
from typing import Any

from mcpkit._exceptions import StoreUnavailableError
from mcpkit.protocol._sse import encode_event
from mcpkit.stores._events import EventStore, StoredEvent, event_seq
from mcpkit.transports.http._asgi import Receive, Send, send_chunk
from mcpkit.transports.http._options import DEFAULT_SSE_WRITE_TIMEOUT
from mcpkit.transports.http._streamable.streams import _KEEP_ALIVE, _STOP, _bound, message_event

logger = logging.getLogger("mcpkit.http")


def _is_response(message: dict[str, Any] | None) -> bool:
    return (
        message is not None
        and "method" not in message
        and ("result" in message or "error" in message)
    )


class StreamRelay:
    """Writes one logical stream to one HTTP response (a GET) from the event store's live
    feed, whichever instance stored the events: in id order, each once. When the feed was
    interrupted (Redis reconnected) the gap is read back from the store; when the client
    is too slow for ``max_queued`` events, or one write stays blocked ``write_timeout``
    seconds, the response ends and the client resumes.
    """

    def __init__(
        self,
        send: Send,
        session_id: str,
        store: EventStore,
        retry_ms: int,
        *,
        max_queued: int,
        write_timeout: float = DEFAULT_SSE_WRITE_TIMEOUT,
    ) -> None:
        self.send = send
        self.write_timeout = write_timeout
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
        if (
            self._stopped
            or event.stream_id != self.stream_id
            or seq <= self.last_seq
            or self.answered
        ):
            return
        if event.message is not None:
            chunks = message_event(event.message, event.event_id)
        elif seq == self.prime_seq:
            chunks = (encode_event("", id=event.event_id, retry=self.retry_ms),)
        else:
            return  # another stream's priming event
        for chunk in chunks:
            if not await self._send(chunk):
                return
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
        while not self._stopped:
            await asyncio.sleep(interval)
            await self._send(_KEEP_ALIVE)

    async def _send(self, data: bytes) -> bool:
        """Write one chunk; False (and the relay stops) when the client stopped reading."""
        try:
            async with asyncio.timeout(_bound(self.write_timeout)):
                await send_chunk(self.send, data)
        except TimeoutError:
            logger.warning(
                "SSE client of session %s not reading for %s s; ending its stream",
                self.session_id,
                self.write_timeout,
            )
            self.close()
            return False
        return True

    async def end_response(self) -> None:
        """The end of body, given ``write_timeout`` too."""
        try:
            async with asyncio.timeout(_bound(self.write_timeout)):
                await send_chunk(self.send, b"", more=False)
        except Exception:
            logger.debug("could not end the SSE response of session %s", self.session_id)
