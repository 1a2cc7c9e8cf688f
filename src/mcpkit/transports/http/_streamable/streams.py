"""One logical SSE stream (a POST's response stream, or a session's standalone GET stream):
events are numbered and kept for resumption, and written to whichever HTTP response is
attached at the moment (none while the client is away).

When sessions are shared between instances, a stream may be written on one instance and
read on another: a *relayed* stream only stores its events, and the ``StreamRelay`` of
the GET that holds the client (on any instance) writes them out, fed by the event store.

Whoever writes an event (a tool sending a notification, say) never waits on the client:
each HTTP response is an ``SseResponse``, a bounded queue its own task drains. A client
that stops reading has its response *dropped* (ended; the stream goes on, its events kept
for a resumption). Every response, however it ends, ends with its end of body.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from mcpkit._exceptions import StoreUnavailableError
from mcpkit.protocol._jsonrpc import encode_json
from mcpkit.protocol._sse import encode_comment, encode_event, json_event_chunks
from mcpkit.stores._events import EventStore, StoredEvent
from mcpkit.transports.http._asgi import Send, send_chunk
from mcpkit.transports.http._options import DEFAULT_MAX_QUEUED_MESSAGES, DEFAULT_SSE_WRITE_TIMEOUT

logger = logging.getLogger("mcpkit.http")

_KEEP_ALIVE = encode_comment("keep-alive")


def message_event(message: dict[str, Any], event_id: str | None) -> tuple[bytes, ...]:
    """The chunks of one message's SSE event (``json_event_chunks``: a large one unjoined)."""
    return json_event_chunks(encode_json(message), event="message", id=event_id)


def _bound(seconds: float) -> float | None:
    """A timeout for ``asyncio.timeout``: zero or less means none."""
    return seconds if seconds > 0 else None


class SseResponse:
    """One SSE HTTP response (its start already sent), written from a queue of at most
    ``max_queued`` chunks by a writer task that exists only while there is something to
    write, so a writer never waits on the client and an idle response costs no task.

    ``end()`` ends it once what is queued is written. It is *dropped* (``drop()``: what is
    queued is discarded, then it ends) when its client left, or stopped reading: the queue
    is full, or one write has stayed blocked ``write_timeout`` seconds (``stalled``). The
    end of body (an ``http.response.body`` with ``more_body`` false) is always sent, once,
    unless the client is still not reading ``write_timeout`` seconds after the end began:
    then the writer gives up (``task`` is cancelled) and the server closes the connection.

    ``keep_alive``: seconds of silence before a keep-alive comment (0: none). No timer per
    chunk: one timer per response, the keep-alive's while it runs, then the end's.
    """

    __slots__ = (
        "_blocked_since",
        "_chunks",
        "_done",
        "_last_write",
        "_loop",
        "_timer",
        "_writer",
        "dropped",
        "ending",
        "keep_alive",
        "label",
        "max_queued",
        "send",
        "write_timeout",
    )

    def __init__(
        self,
        send: Send,
        *,
        max_queued: int = DEFAULT_MAX_QUEUED_MESSAGES,
        write_timeout: float = DEFAULT_SSE_WRITE_TIMEOUT,
        keep_alive: float = 0.0,
        label: str = "",
    ) -> None:
        self.send = send
        self.max_queued = max(1, max_queued)
        self.write_timeout = write_timeout
        self.keep_alive = keep_alive
        #: Names the response in logs (its stream's id).
        self.label = label
        # A list, not a deque: an empty deque takes ~600 bytes, and the queue is short.
        self._chunks: list[bytes] = []
        #: Takes no more chunks: its end of body follows what is queued.
        self.ending = False
        #: Ended early: its client left or stopped reading.
        self.dropped = False
        #: When the write in progress began (0: none in progress), and the last one did.
        self._blocked_since = 0.0
        self._last_write = time.monotonic()
        loop = self._loop = asyncio.get_running_loop()
        self._timer: asyncio.TimerHandle | None = (
            loop.call_later(keep_alive, self._tick) if keep_alive > 0 else None
        )
        self._done: asyncio.Future[None] = loop.create_future()
        self._writer: asyncio.Task[None] | None = None

    @property
    def backlog(self) -> int:
        """Chunks queued, not written yet."""
        return len(self._chunks)

    @property
    def stalled(self) -> bool:
        """The write in progress has been blocked ``write_timeout`` seconds."""
        since = self._blocked_since
        return (
            since > 0 and self.write_timeout > 0 and time.monotonic() - since >= self.write_timeout
        )

    @property
    def task(self) -> asyncio.Future[None]:
        """Done once the response is complete; cancelled when the writer gave up on it."""
        return self._done

    def offer(self, data: bytes) -> bool:
        """Queue one chunk; never waits. False when the response takes no more: it is
        ending, or its client does not read (then it is dropped)."""
        if self.ending:
            return False
        if len(self._chunks) >= self.max_queued:
            self.drop(f"{self.max_queued} messages queued and the client is not reading")
            return False
        if self.stalled:
            self.drop(f"a write stayed blocked for {self.write_timeout} s")
            return False
        self._chunks.append(data)
        self._kick()
        return True

    def offer_all(self, chunks: tuple[bytes, ...]) -> bool:
        """``offer`` one event's chunks in order; False at the first the response refuses."""
        return all(self.offer(chunk) for chunk in chunks)

    def end(self) -> None:
        """End the response after what is queued."""
        if self.ending:
            return
        self.ending = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._kick()
        self._watch()

    def drop(self, reason: str | None = None) -> None:
        """End the response now, discarding what is queued (``reason``, when given, is
        logged: the client stopped reading)."""
        if self.dropped:
            return
        if reason is not None:
            logger.warning("SSE response of stream %s dropped: %s", self.label, reason)
        self.dropped = True
        self._chunks.clear()
        self.end()

    async def wait(self) -> None:
        """Until the response is complete; cancelled, this gives up on the response."""
        try:
            await asyncio.wait((self._done,))
        except asyncio.CancelledError:
            self._abandon()
            raise

    async def aclose(self) -> None:
        """``end()``, then wait until the response is complete."""
        self.end()
        await self.wait()

    def _kick(self) -> None:
        """Start the writer, unless it runs or the response is over."""
        if self._writer is None and not self._done.done():
            self._writer = self._loop.create_task(self._flush())

    async def _flush(self) -> None:
        """Write what is queued; after the end, the end of body. Then the task is over."""
        chunks = self._chunks
        try:
            while chunks:
                if not await self._write(chunks.pop(0), True):
                    break  # dropped: the end of body follows
            if self.ending:
                await self._write(b"", False)
                self._finish()
        except asyncio.CancelledError:
            self._finish(gave_up=True)
            raise
        finally:
            self._writer = None

    def _finish(self, gave_up: bool = False) -> None:
        """The response is complete (or given up on): nothing stays armed."""
        self.ending = True
        self._chunks.clear()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self._done.done():
            if gave_up:
                self._done.cancel()
            else:
                self._done.set_result(None)

    def _abandon(self) -> None:
        """Give up on the response now: cancel a write in progress."""
        if self._writer is not None:
            self._writer.cancel()
        self._finish(gave_up=True)

    async def _write(self, data: bytes, more: bool) -> bool:
        """Send one body message; False when the response cannot go on."""
        self._blocked_since = self._last_write = time.monotonic()
        try:
            await self.send({"type": "http.response.body", "body": data, "more_body": more})
        except Exception:
            logger.debug("SSE client of stream %s went away", self.label, exc_info=True)
            self.drop()
            return False
        finally:
            self._blocked_since = 0.0
        return True

    def _tick(self) -> None:
        """The keep-alive timer: a comment after ``keep_alive`` seconds without a write."""
        silent = time.monotonic() - self._last_write
        if silent >= self.keep_alive:
            if not self._chunks and not self._blocked_since:
                self._chunks.append(_KEEP_ALIVE)
                self._kick()
            delay = self.keep_alive
        else:
            delay = self.keep_alive - silent
        self._timer = self._loop.call_later(delay, self._tick)

    def _watch(self) -> None:
        """While ending: give up on a client that does not read (the writer is cancelled
        once one write has been blocked ``write_timeout`` seconds), so nobody waits on it."""
        if self.write_timeout > 0 and not self._done.done():
            self._timer = self._loop.call_later(self.write_timeout, self._check)

    def _check(self) -> None:
        self._timer = None
        if self._done.done():
            return
        if self.stalled:
            logger.warning(
                "SSE response of stream %s abandoned: its client is not reading", self.label
            )
            self._abandon()
        else:
            self._watch()  # still writing what was queued to a client that reads


class Replayer:
    """Writes replayed events to a resuming GET and remembers the last one sent.

    Until ``response`` is set (the replay before the GET joins the live stream, in the
    GET's own task) it writes to ``send`` itself, each write bounded by ``timeout``
    (``TimeoutError``); then it queues on ``response``, never waiting (the catch-up replay,
    made under the stream's lock)."""

    __slots__ = ("last_id", "response", "send", "timeout")

    def __init__(
        self, send: Send, last_id: str, timeout: float = DEFAULT_SSE_WRITE_TIMEOUT
    ) -> None:
        self.send = send
        self.last_id = last_id
        self.timeout = timeout
        self.response: SseResponse | None = None

    async def __call__(self, event: StoredEvent) -> None:
        if event.message is not None:
            chunks = message_event(event.message, event.event_id)
            response = self.response
            if response is None:
                async with asyncio.timeout(_bound(self.timeout)):
                    for chunk in chunks:
                        await send_chunk(self.send, chunk)
            elif not response.offer_all(chunks):
                return
        self.last_id = event.event_id


class SseStream:
    """Numbered, resumable events over a replaceable HTTP response (an ``SseResponse``)."""

    __slots__ = (
        "_finished",
        "_lock",
        "_writer",
        "closed",
        "keep_alive",
        "max_queued",
        "relayed",
        "remote_reader",
        "retry_ms",
        "session_id",
        "store",
        "stream_id",
        "write_timeout",
    )

    def __init__(
        self,
        stream_id: str,
        session_id: str | None,
        store: EventStore | None,
        retry_ms: int,
        *,
        relayed: bool = False,
        max_queued: int = DEFAULT_MAX_QUEUED_MESSAGES,
        write_timeout: float = DEFAULT_SSE_WRITE_TIMEOUT,
        keep_alive: float = 0.0,
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
        #: The bounds of a response made by ``attach`` from a bare ASGI ``send``.
        self.max_queued = max_queued
        self.write_timeout = write_timeout
        #: Seconds of silence before a keep-alive comment on a response made by ``attach``
        #: (0: none): a proxy in front would otherwise drop a quiet call's answer.
        self.keep_alive = keep_alive
        #: The response written to; kept while it ends, so ``end_response`` can wait for it.
        self._writer: SseResponse | None = None
        self._finished: asyncio.Event | None = None  # made on first use: sessions are many
        self.closed = False
        self._lock: asyncio.Lock | None = None  # made on first use, as _finished

    @property
    def lock(self) -> asyncio.Lock:
        """Held while an event is stored and queued, and while a resuming client replays
        and attaches, so no event falls between the replay and the live feed."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        return self._lock

    @property
    def finished(self) -> asyncio.Event:
        """Set when the stream is over (its call answered, or its session closed)."""
        if self._finished is None:
            self._finished = asyncio.Event()
            if self.closed:  # closed before anyone asked: see close()
                self._finished.set()
        return self._finished

    @property
    def attached(self) -> bool:
        """A response takes this stream's events now (and its client reads them)."""
        writer = self._writer
        return writer is not None and not writer.ending and not writer.stalled

    @property
    def resumable(self) -> bool:
        return self.store is not None

    def attach(self, writer: Send | SseResponse) -> SseResponse:
        """Write to ``writer`` from now on (a bare ASGI ``send``, whose response has started,
        becomes an ``SseResponse``). A response attached before is dropped: a resuming GET
        took the stream over. A stream already over ends the response at once."""
        response = (
            writer
            if isinstance(writer, SseResponse)
            else SseResponse(
                writer,
                max_queued=self.max_queued,
                write_timeout=self.write_timeout,
                keep_alive=self.keep_alive,
                label=self.stream_id,
            )
        )
        previous, self._writer = self._writer, response
        if previous is not None and previous is not response:
            previous.drop()
        if self.closed or (self._finished is not None and self._finished.is_set()):
            response.end()
        return response

    def detach(self, writer: Send | SseResponse | None = None) -> None:
        """Its client left: drop the attached response (only if it is still ``writer``, the
        response or its ASGI ``send``, when given)."""
        current = self._writer
        if current is None or (
            writer is not None and current is not writer and current.send is not writer
        ):
            return
        self._writer = None
        current.drop()

    async def prime(self) -> None:
        """SEP-1699 priming event: an id with empty data, and the reconnect delay."""
        if self.store is None or not self.attached:
            return
        try:
            event_id = await self.store.store_event(self.session_id or "", self.stream_id, None)
        except StoreUnavailableError:
            logger.warning("event store unavailable: stream %s is not resumable", self.stream_id)
            return
        if event_id is not None:
            self._emit(encode_event("", id=event_id, retry=self.retry_ms))

    async def write(self, message: dict[str, Any]) -> None:
        """Send one JSON-RPC message as an SSE event (kept for replay when resumable).

        Never waits on the client: the event is queued on the attached response, which is
        dropped when its client does not read (the event stays stored for the resumption).
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
            writer = self._writer
            if writer is None or self.relayed:
                return
            self._emit(*message_event(message, event_id))
        if writer.backlog * 2 >= writer.max_queued:
            # Let the response's writer run: a burst from a tool that never suspends would
            # otherwise fill the queue of a client that reads fine. Not a wait on the client.
            await asyncio.sleep(0)

    async def replay(self, event: StoredEvent) -> None:
        if event.message is not None:
            self._emit(*message_event(event.message, event.event_id))

    async def end_response(self) -> None:
        """End the attached HTTP response after what is queued for it, and wait until it
        is complete (the stream itself may go on elsewhere: a GET resumes it)."""
        writer = self._writer
        if writer is None:
            return
        try:
            await writer.aclose()
        finally:
            if self._writer is writer:
                self._writer = None

    def end_attached(self) -> None:
        """End the attached response after what is queued, without waiting; the stream
        goes on (a GET may attach again)."""
        if self._writer is not None:
            self._writer.end()

    def _emit(self, *chunks: bytes) -> None:
        writer = self._writer
        if writer is not None:
            writer.offer_all(chunks)  # False: dropped or ending; its owner sees to it

    def close(self) -> None:
        """The stream is over (its session closed): its response ends after what is queued
        (whoever serves that response waits for it)."""
        self.closed = True
        if self._finished is not None:  # else made already set when first asked for
            self._finished.set()
        if self._writer is not None:
            self._writer.end()


_STOP = object()
