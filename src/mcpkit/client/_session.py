"""The client side of one connection: request/response matching, cancellation, progress,
and answering the server's own requests (sampling, elicitation, roots, ping).

Owns no typed API (``McpClient`` does) and no I/O (a ``MessageStream`` does).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from mcpkit._exceptions import (
    ConnectionClosedError,
    McpCallError,
    MessageTooLargeError,
    ProtocolError,
    RequestTimeoutError,
)
from mcpkit.client._errors import SessionExpiredError
from mcpkit.client._inbound import (
    DEFAULT_MAX_NOTIFICATION_CALLBACKS,
    DEFAULT_MAX_SERVER_REQUESTS,
    NotificationCallbacks,
    ServerRequests,
)
from mcpkit.protocol._jsonrpc import (
    JsonRpcErrorResponse,
    JsonRpcNotification,
    JsonRpcRequest,
    JsonRpcResponse,
    RequestId,
    decode_message,
    encode_message,
)
from mcpkit.protocol._stream import MessageStream

logger = logging.getLogger("mcpkit.client")

#: Seconds a request waits for its response unless the call says otherwise.
DEFAULT_REQUEST_TIMEOUT = 60.0
#: Requests one client may have outstanding at once.
DEFAULT_MAX_PENDING_REQUESTS = 1024

ProgressCallback = Callable[[float, "float | None", "str | None"], Any]
NotificationCallback = Callable[[str, dict[str, Any]], Any]
RequestCallback = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]


#: How much of an unreadable message a warning shows.
UNREADABLE_SHOWN = 200


class _Expired(Exception):
    """Internal: a request's timer fired before its response arrived."""


_NOT_CONNECTED = (
    "the client is not connected: use it inside `async with client:`, or call"
    " `await client.connect()` first"
)


def _expire(future: asyncio.Future[Any]) -> None:
    if not future.done():
        future.set_exception(_Expired())


@dataclass(slots=True)
class _Pending:
    future: asyncio.Future[Any]
    progress: ProgressCallback | None


class ClientSession:
    """Multiplexes requests over one stream and routes what the server sends."""

    def __init__(
        self,
        stream: MessageStream,
        *,
        on_request: RequestCallback | None = None,
        on_notification: NotificationCallback | None = None,
        request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
        max_pending_requests: int = DEFAULT_MAX_PENDING_REQUESTS,
        max_server_requests: int = DEFAULT_MAX_SERVER_REQUESTS,
        max_notification_callbacks: int = DEFAULT_MAX_NOTIFICATION_CALLBACKS,
    ) -> None:
        self.stream = stream
        self.on_request = on_request
        self.on_notification = on_notification
        self.request_timeout = request_timeout
        self.max_pending_requests = max_pending_requests
        #: The server's requests answered at once; past it one is refused (``ServerRequests``).
        self.max_server_requests = max_server_requests
        #: Notification callbacks run at once; past it a notification is dropped.
        self.max_notification_callbacks = max_notification_callbacks
        self._server_requests = ServerRequests(self, self._spawn)
        self._callbacks = NotificationCallbacks(self, self._spawn)
        self._pending: dict[RequestId, _Pending] = {}
        self._progress: dict[RequestId, ProgressCallback] = {}
        self._ids = itertools.count(1)
        self._reader: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._closed: BaseException | None = None
        self._started = False
        #: What traces and measures each request (``mcpkit.otel.instrument_client``): it
        #: wraps ``request``; None, the default, costs one check.
        self.telemetry: Any = None

    @property
    def started(self) -> bool:
        """``start`` was called: the session routes (or routed, once closed) inbound frames."""
        return self._started

    def start(self) -> None:
        """Begin routing inbound frames: pushed by the stream when it offers ``bind``,
        else read in a loop."""
        self._started = True
        bind = getattr(self.stream, "bind", None)
        if bind is not None:
            bind(self.feed, self._stream_closed)
        elif self._reader is None:
            self._reader = asyncio.create_task(self._read_loop())

    # outbound ---------------------------------------------------------------------------

    async def send(self, message: dict[str, Any]) -> None:
        """Write one message to the server (``ConnectionClosedError`` once closed)."""
        if self._closed is not None:
            if isinstance(self._closed, SessionExpiredError):
                raise self._closed.renewed() from self._closed
            raise ConnectionClosedError("connection is closed") from self._closed
        await self.stream.send(encode_message(message))

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Send a notification."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)

    async def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        progress: ProgressCallback | None = None,
        request_id: RequestId | None = None,
    ) -> Any:
        """Send a request and wait for its result.

        A ``progress`` callback adds a progressToken and receives ``(progress, total, message)``.
        Cancelling the caller or hitting the timeout sends ``notifications/cancelled``.
        ``timeout=math.inf`` waits as long as it takes (a long-lived request);
        ``request_id`` is one ``new_request_id()`` reserved, for a caller that must know
        the id before the request goes out.
        """
        telemetry = self.telemetry
        if telemetry is not None:
            return await telemetry.around_request(
                self._request, method, params, timeout, progress, request_id
            )
        return await self._request(method, params, timeout, progress, request_id)

    async def _request(
        self,
        method: str,
        params: dict[str, Any] | None,
        timeout: float | None,
        progress: ProgressCallback | None,
        request_id: RequestId | None,
    ) -> Any:
        if len(self._pending) >= self.max_pending_requests:
            raise McpCallError("too many requests in flight", -32603)
        if not self._started:  # else it would wait its whole timeout for an answer nothing reads
            raise ConnectionClosedError(_NOT_CONNECTED)
        if request_id is None:
            request_id = next(self._ids)
        if progress is not None:
            params = dict(params or {})
            params["_meta"] = {**(params.get("_meta") or {}), "progressToken": request_id}
            self._progress[request_id] = progress
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        self._pending[request_id] = _Pending(future, progress)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        # A timer handle is cheaper than asyncio.timeout() on this hot path.
        delay = timeout if timeout is not None else self.request_timeout
        timer = loop.call_later(delay, _expire, future) if delay != math.inf else None
        try:
            await self.send(message)
            return await future
        except _Expired:
            await self._cancel_remote(request_id, "timed out")
            raise RequestTimeoutError(
                f"{method} got no response in {delay:g} s (the client's request_timeout,"
                " or the call's own timeout)"
            ) from None
        except asyncio.CancelledError:
            await asyncio.shield(self._cancel_remote(request_id, "cancelled by the caller"))
            raise
        finally:
            if timer is not None:
                timer.cancel()
            self._pending.pop(request_id, None)
            if progress is not None:
                self._progress.pop(request_id, None)

    def new_request_id(self) -> RequestId:
        """An id no other request of this session uses (for ``request(request_id=...)``)."""
        return next(self._ids)

    async def _cancel_remote(self, request_id: RequestId, reason: str) -> None:
        if self._closed is None and request_id in self._pending:
            try:
                await self.notify(
                    "notifications/cancelled", {"requestId": request_id, "reason": reason}
                )
            except Exception:
                pass

    # inbound ----------------------------------------------------------------------------

    async def _read_loop(self) -> None:
        error: BaseException | None = None
        try:
            while True:
                try:
                    frame = await self.stream.receive()
                except MessageTooLargeError:
                    logger.warning("dropped an oversized message from the server")
                    continue
                if frame is None:
                    break
                self.feed(frame)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            error = exc
        finally:
            self._fail_all(error or ConnectionClosedError("server closed the connection"))

    def feed(self, frame: bytes | str) -> None:
        """Route one inbound frame."""
        # The client chose this server: no size or depth bound of its own beyond what the
        # decoder can take, and a reply it cannot read fails its request instead of hanging.
        try:
            decoded = decode_message(frame, max_bytes=None, max_depth=None, requests_first=False)
        except ProtocolError as exc:
            request_id = getattr(exc, "request_id", None)
            # The line itself says most (a server's stray print() on stdio): its start shown.
            shown = frame[:UNREADABLE_SHOWN]
            more = "..." if len(frame) > UNREADABLE_SHOWN else ""
            logger.warning("server sent an unreadable message: %s: %r%s", exc.message, shown, more)
            if request_id is not None:
                self._resolve(request_id, None, exc)
            return
        for message in decoded if isinstance(decoded, list) else (decoded,):
            self._route(message)

    def _route(self, message: Any) -> None:
        if isinstance(message, JsonRpcResponse):
            self._resolve(message.id, message.result, None)
        elif isinstance(message, JsonRpcErrorResponse):
            err = message.error
            exc = McpCallError(str(err.get("message", "")), message.code, err.get("data"))
            self._resolve(message.id, None, exc)
        elif isinstance(message, JsonRpcNotification):
            self._notified(message)
        elif isinstance(message, JsonRpcRequest):
            self._server_requests.take(message)

    def _resolve(self, request_id: Any, result: Any, exc: BaseException | None) -> None:
        pending = self._pending.get(request_id)
        if pending is None or pending.future.done():
            return
        if exc is not None:
            pending.future.set_exception(exc)
        else:
            pending.future.set_result(result)

    def _notified(self, note: JsonRpcNotification) -> None:
        params = note.params or {}
        if note.method == "notifications/cancelled":
            self._server_requests.cancel(params.get("requestId"))
        if note.method == "notifications/progress":
            callback = self._progress.get(params.get("progressToken"))  # type: ignore[arg-type]
            if callback is not None:
                self._callbacks.run(
                    note.method,
                    callback,
                    params.get("progress", 0),
                    params.get("total"),
                    params.get("message"),
                )
                return
        if self.on_notification is not None:
            self._callbacks.run(note.method, self.on_notification, note.method, params)

    def _spawn(self, coro: Awaitable[Any]) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def _stream_closed(self, reason: BaseException | None = None) -> None:
        """A push-style stream ended; ``reason`` says why when the transport knows."""
        self._fail_all(reason or ConnectionClosedError("server closed the connection"))

    def _fail_all(self, exc: BaseException) -> None:
        if self._closed is None:
            self._closed = exc
        for pending in self._pending.values():
            if not pending.future.done():
                pending.future.set_exception(
                    exc.renewed()
                    if isinstance(exc, SessionExpiredError)
                    else ConnectionClosedError(str(exc))
                )

    @property
    def closed(self) -> bool:
        """Whether the session has ended."""
        return self._closed is not None

    async def aclose(self) -> None:
        """End the session: pending requests fail, the stream closes."""
        if self._closed is None:
            self._fail_all(ConnectionClosedError("client closed"))
        await self.stream.aclose()
        for task in [self._reader, *self._tasks]:
            if task is not None and not task.done():
                task.cancel()
        if self._reader is not None:
            await asyncio.gather(self._reader, return_exceptions=True)
