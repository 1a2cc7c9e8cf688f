"""The requests of one endpoint while they are served, watched by one sweeper task per event
loop. The sweep does three things, each only where it applies:

- a body that has not arrived in full by its deadline has its read cancelled (answered 408):
  a client trickling its body would otherwise hold the request open for ever; so has the
  write of a large JSON answer whose client stopped reading (``write_in_pieces``): the server
  would otherwise hold the answer in memory until the client left;
- a call running longer than ``DISCONNECT_WATCH_DELAY`` gets a watcher for its client
  hanging up (quick calls never pay for one);
- the SSE answer of a call quiet for ``quiet_open`` seconds whose client accepts one is
  opened, so that its keep-alive comments reach a proxy before it drops a silent answer.

A request is registered once, for all three: a set insert and delete. No timer per request:
cancelled timers linger in the loop's heap, keep their requests alive and make the garbage
collector work hard. Kept per event loop: an app served by several loops (one per thread)
has each loop's requests swept by a task of that loop."""

from __future__ import annotations

import asyncio
from time import monotonic
from typing import Any, Protocol

import msgspec

from mcpkit.transports.http._asgi import (
    BodyTimeout,
    BodyTooLarge,
    Receive,
    Send,
    read_rest,
    whole_body,
)
from mcpkit.transports.http._options import DEFAULT_MAX_CONCURRENT_REQUESTS
from mcpkit.transports.http._per_loop import PerLoop


class WatchedCall(Protocol):
    """A POST's call as the watch sees it (``PostCall``): whether its answer is an SSE
    stream and whether that was opened; opened quietly, or told its client is gone."""

    sse: bool
    opened: bool

    async def open_quietly(self) -> None: ...

    def client_gone(self) -> None: ...


#: Seconds a call runs before we start watching for its client to disconnect; also the
#: time between sweeps (a body's deadline is kept to within it).
DISCONNECT_WATCH_DELAY = 0.05
#: Sweeps without any request in progress, or come since the sweep before, before the
#: sweeper ends (the next request starts it again): five seconds. Under load requests come
#: and go faster than a sweep, and a sweeper started (and ended) per request would cost more
#: than the request's HTTP handling.
SWEEPER_LINGER = 100


class WatchedRequest(msgspec.Struct, eq=False):
    """One request under watch: while ``deadline`` is set its body is being read (or its
    answer written); once ``call`` is set, its call is running. A msgspec Struct for the cost of making one, in C
    (one per request); hashed by identity."""

    loop_requests: _LoopRequests
    task: asyncio.Task[Any]
    receive: Receive
    started: float
    deadline: float | None
    #: Set by the sweep when it cancelled the body read (or answer write) for its deadline.
    expired: bool = False
    call: WatchedCall | None = None


class RequestsFull(Exception):
    """A request came while its loop already had ``RequestWatch.max_requests`` under watch:
    it is refused (503), never watched."""


class RequestWatch:
    """The requests of one endpoint (a handler owns one; never shared by apps)."""

    __slots__ = ("_loops", "max_requests", "quiet_open")

    def __init__(
        self, quiet_open: float = 0.0, max_requests: int = DEFAULT_MAX_CONCURRENT_REQUESTS
    ) -> None:
        if max_requests < 1:
            raise ValueError(f"max_concurrent_requests must be at least 1, not {max_requests}")
        #: Seconds a call accepting SSE may stay quiet before its SSE answer is opened (0:
        #: never).
        self.quiet_open = quiet_open
        #: Requests under watch at once per loop (``max_concurrent_requests``); ``enter``
        #: refuses one more with ``RequestsFull``.
        self.max_requests = max_requests
        self._loops: PerLoop[_LoopRequests] = PerLoop(lambda: _LoopRequests(self))

    def enter(self, receive: Receive, body_timeout: float | None) -> WatchedRequest:
        """Watch the request served by the current task, whose body must arrive within
        ``body_timeout`` seconds (None: no bound). Pair with ``leave``. Raises
        ``RequestsFull`` when the loop already has ``max_requests`` under watch."""
        task = asyncio.current_task()
        assert task is not None, "a request is served inside a task"
        loop_requests = self._loops.get(task.get_loop())
        now = monotonic()
        request = WatchedRequest(
            loop_requests, task, receive, now, None if body_timeout is None else now + body_timeout
        )
        loop_requests.add(request)
        return request

    @staticmethod
    def leave(request: WatchedRequest) -> None:
        request.loop_requests.leave(request)

    async def read_body(self, receive: Receive, limit: int, timeout: float | None) -> bytes:
        """The whole body of a request that is watched only while it is read."""
        request = self.enter(receive, timeout)
        try:
            return await read_body(receive, limit, request)
        finally:
            self.leave(request)

    def close(self) -> None:
        """Its endpoint is closing: every loop's sweeper ends once its requests are done."""
        for loop_requests in self._loops.values():
            loop_requests.close()

    def of(self, loop: asyncio.AbstractEventLoop) -> _LoopRequests:
        """The requests of ``loop`` (touched only from its own thread)."""
        return self._loops.get(loop)

    def __len__(self) -> int:
        """The loops that have (or had, until collected) requests here."""
        return len(self._loops)


class _LoopRequests:
    """One loop's requests of a ``RequestWatch``, and its sweeper while there are any."""

    __slots__ = ("_arrived", "_closing", "_opening", "_requests", "_sweeper", "_watchers", "watch")

    def __init__(self, watch: RequestWatch) -> None:
        self.watch = watch
        self._requests: set[WatchedRequest] = set()
        #: The disconnect watchers started, by request.
        self._watchers: dict[WatchedRequest, asyncio.Task[None]] = {}
        # The early openings under way (a task must be referenced while it runs).
        self._opening: set[asyncio.Task[None]] = set()
        self._sweeper: asyncio.Task[None] | None = None
        #: Whether a request came since the last sweep: quick ones, begun and done between
        #: two sweeps, keep the sweeper too.
        self._arrived = False
        #: The endpoint is closing: the sweeper ends once no request is left, not lingering
        #: (an app started again after it lingers as before).
        self._closing = False

    def add(self, request: WatchedRequest) -> None:
        limit = self.watch.max_requests
        if len(self._requests) >= limit:
            raise RequestsFull(f"Server busy: {limit} requests in progress; try again later")
        self._requests.add(request)
        self._arrived = True
        if self._sweeper is None:
            self._sweeper = request.task.get_loop().create_task(self._sweep())

    def leave(self, request: WatchedRequest) -> None:
        self._requests.discard(request)
        if self._watchers:
            watcher = self._watchers.pop(request, None)
            if watcher is not None:
                watcher.cancel()

    @property
    def sweeper(self) -> asyncio.Task[None] | None:
        return self._sweeper

    def close(self) -> None:
        """The endpoint is closing (its app shuts down): the sweeper ends now when no request
        is in progress, else once the last one is done; a host's loop keeps no task of it."""
        self._closing = True
        sweeper = self._sweeper
        if sweeper is None or self._requests or sweeper.done():
            return
        loop = sweeper.get_loop()
        if loop.is_closed():
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            sweeper.cancel()
        else:  # another thread's loop: cancelled there
            loop.call_soon_threadsafe(sweeper.cancel)

    async def _sweep(self) -> None:
        loop = asyncio.get_running_loop()
        idle = 0
        try:
            while idle < SWEEPER_LINGER:
                await asyncio.sleep(DISCONNECT_WATCH_DELAY)
                arrived, self._arrived = self._arrived, False
                if not self._requests:
                    if self._closing:
                        break
                    idle = 0 if arrived else idle + 1
                    continue
                idle = 0
                self._sweep_once(loop)
        finally:
            self._sweeper = None  # the next request starts another, which lingers again
            self._closing = False

    def _sweep_once(self, loop: asyncio.AbstractEventLoop) -> None:
        now = monotonic()
        cutoff = now - DISCONNECT_WATCH_DELAY
        quiet_open = self.watch.quiet_open
        quiet = now - quiet_open if quiet_open > 0 else None
        for request in list(self._requests):
            deadline = request.deadline
            if deadline is not None:  # its body is being read, or its answer written
                if deadline <= now and not request.expired and not request.task.done():
                    request.expired = True
                    request.task.cancel()
                continue
            call = request.call
            if call is None:
                continue
            if request.started <= cutoff and request not in self._watchers:
                self._watchers[request] = loop.create_task(_watch(request.receive, call))
            if quiet is not None and call.sse and not call.opened and request.started <= quiet:
                opening = loop.create_task(call.open_quietly())
                self._opening.add(opening)
                opening.add_done_callback(self._opening.discard)


async def _watch(receive: Receive, call: WatchedCall) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
    call.client_gone()


async def read_body(receive: Receive, limit: int, request: WatchedRequest | None = None) -> bytes:
    """The whole request body; raises ``BodyTooLarge`` past ``limit`` bytes, and
    ``BodyTimeout`` when ``request`` (watched with a body deadline) passed its deadline
    before the body all arrived. The server usually has the body already: the deadline
    costs nothing more than the request's registration."""
    if request is None or request.deadline is None:
        message = await receive()
        if message.get("more_body"):
            return await read_rest(receive, message, limit)
        return whole_body(message, limit)
    try:
        message = await receive()
        if message.get("more_body"):
            return await read_rest(receive, message, limit)
    except asyncio.CancelledError:
        if request.expired and request.task.uncancel() == 0:
            raise BodyTimeout from None
        raise
    finally:
        request.deadline = None  # read: the sweep leaves it to its call now
    body = message.get("body", b"")  # whole_body(), inline: every request
    if len(body) > limit:
        raise BodyTooLarge
    return body if type(body) is bytes else bytes(body)


#: Bytes of a JSON answer sent in one message; a larger answer goes in pieces of this size,
#: so that a client that stops reading blocks a piece (the server takes whatever it is
#: given into its buffer: one message of any size never waits).
ANSWER_PIECE_BYTES = 1024 * 1024


async def write_in_pieces(
    send: Send, body: bytes, request: WatchedRequest, write_timeout: float | None
) -> bool:
    """Send a large JSON answer's ``body`` (its start sent) in pieces, each of which its
    client must take within ``write_timeout`` seconds (0 or None: no bound). False when it
    did not: the answer is left unfinished, and the server closes the connection (freeing
    what it held)."""
    if not write_timeout:
        await send({"type": "http.response.body", "body": body})
        return True
    try:
        for offset in range(0, len(body), ANSWER_PIECE_BYTES):
            request.deadline = monotonic() + write_timeout
            piece = body[offset : offset + ANSWER_PIECE_BYTES]
            more = offset + ANSWER_PIECE_BYTES < len(body)
            await send({"type": "http.response.body", "body": piece, "more_body": more})
    except asyncio.CancelledError:
        if request.expired and request.task.uncancel() == 0:
            return False
        raise
    finally:
        request.deadline = None
    return True
