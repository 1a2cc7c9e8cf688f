"""Streamable HTTP client transport (MCP 2025-03-26 and later).

Every outbound frame is its own POST to the MCP endpoint, and POSTs run concurrently: a long
call never holds up a ping. A request's POST answers with JSON (one frame or a batch) or with
an SSE stream whose ``message`` events are delivered as they arrive, so a server request
carried on that stream (sampling, elicitation) is answered, by another POST, while the
stream is still open. A stream that ends before the response arrived is resumed with
``GET`` + ``Last-Event-ID`` after the server's ``retry`` delay (SEP-1699), with backoff and
a bounded number of attempts. After ``notifications/initialized`` an optional GET "listen
stream" carries the server's unsolicited messages.

Failures of one request (an HTTP error status, a stream that cannot be resumed) come back to
that request as a JSON-RPC error response; a 404 on a request that carried the session id
means the session expired, which ends the transport: the engine's pending requests fail
with a ``ConnectionClosedError`` that says so.

A 2026-07-28 request (one whose ``_meta`` names a modern protocol version) is sent the
modern way, whatever else the transport has done: ``MCP-Protocol-Version`` mirrors the
``_meta`` version, ``Mcp-Method`` / ``Mcp-Name`` / ``Mcp-Param-*`` mirror the body (SEP-2243;
the ``x-mcp-header`` annotations come from ``tool_headers``, which the client fills from
``tools/list``), and no session id is sent. Its response stream is not resumable: a stream
that ends before the response fails the request with an error marked ``STREAM_BROKEN`` (the
client sends it again). Cancelling it closes its stream, as the modern transport wants,
instead of POSTing ``notifications/cancelled``.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Any, Coroutine, Union

import httpx
import msgspec

from mcpkit._codes import ErrorCode
from mcpkit._exceptions import (
    ConnectionClosedError,
    MessageTooLargeError,
    TransportError,
)
from mcpkit.client._eras import endpoint_key
from mcpkit.client._http_options import (
    FrameInbox,
    HttpClientTransportOptions,
    HttpRequester,
    HttpStatusError,
    backoff_delay,
    content_type,
    describe_status,
    error_body,
    new_http_client,
    read_body,
    retry_after,
    status_error,
)
from mcpkit.protocol._headers import request_headers
from mcpkit.protocol._jsonrpc import encode_json
from mcpkit.protocol._sse import SseDecoder
from mcpkit.protocol._versions import HANDSHAKE_VERSIONS
from mcpkit.server._modern import PROTOCOL_VERSION_KEY

logger = logging.getLogger("mcpkit.client.http")

__all__ = ["STREAM_BROKEN", "ListenStreamState", "StreamBrokenError", "StreamableHttpClientTransport"]

SSE = "text/event-stream"
JSON = "application/json"
SESSION_HEADER = "Mcp-Session-Id"
VERSION_HEADER = "MCP-Protocol-Version"
#: Requests one transport tracks at once (the client engine bounds them first).
MAX_INFLIGHT_REQUESTS = 4096
#: Seconds the DELETE that ends a session may take when the transport closes.
DELETE_TIMEOUT = 5.0
#: Seconds ``notifications/initialized`` waits for the listen stream's GET to be answered,
#: so the stream is there before the first request (and its messages are not missed).
LISTEN_READY_TIMEOUT = 2.0
#: Longest ``Retry-After`` honoured, in seconds.
MAX_RETRY_AFTER = 60.0


#: ``error.data`` key of the error a modern request gets when its response stream broke
#: before the response: the client sends the request again (new id), as 2026-07-28 wants.
STREAM_BROKEN = "mcpkit/streamBroken"


class StreamBrokenError(TransportError):
    """A 2026-07-28 response stream ended before its response (not resumable)."""


class ListenStreamState:
    """Where the GET listen stream is (``StreamableHttpClientTransport.listen_state``)."""

    OFF = "off"  # not opened (disabled, or before initialization)
    CONNECTING = "connecting"
    OPEN = "open"
    RECONNECTING = "reconnecting"
    UNSUPPORTED = "unsupported"  # the server does not offer one: given up silently
    FAILED = "failed"  # reconnects exhausted
    CLOSED = "closed"


def _reconnect_delay(failures: int, retry_ms: int | None, retry_after_s: float | None) -> float:
    """Seconds before reconnecting an SSE stream after ``failures`` consecutive failures.

    The server's ``retry`` is obeyed exactly for a reconnect after a stream that worked
    (SEP-1699: the client MUST wait that long); after failures the wait backs off, never
    below ``retry``. A ``Retry-After`` (408/429/5xx) sets the wait for the next attempt.
    """
    if retry_after_s is not None:
        return min(retry_after_s, MAX_RETRY_AFTER)
    if failures == 0:
        return retry_ms / 1000 if retry_ms is not None else backoff_delay(0)
    return max((retry_ms or 0) / 1000, backoff_delay(failures - 1))


# -- a cheap look at JSON-RPC frames --------------------------------------------------------


class _Peek(msgspec.Struct):
    id: Any = msgspec.UNSET
    method: Union[str, None] = None
    result: Union[msgspec.Raw, msgspec.UnsetType] = msgspec.UNSET
    error: Union[msgspec.Raw, msgspec.UnsetType] = msgspec.UNSET
    params: Union[msgspec.Raw, msgspec.UnsetType] = msgspec.UNSET

    @property
    def is_request(self) -> bool:
        return self.method is not None and isinstance(self.id, (int, str))

    @property
    def is_response(self) -> bool:
        """A response with an id this client could have used (never a list or an object)."""
        return (
            self.method is None
            and isinstance(self.id, (int, str))
            and (self.result is not msgspec.UNSET or self.error is not msgspec.UNSET)
        )


_peek_decoder = msgspec.json.Decoder(Union[_Peek, list[_Peek]])


def _peek(frame: bytes) -> list[_Peek]:
    try:
        decoded = _peek_decoder.decode(frame)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return []
    return decoded if isinstance(decoded, list) else [decoded]


def _raw_field(raw: Any, name: str) -> Any:
    if not isinstance(raw, msgspec.Raw):
        return None
    try:
        value = msgspec.json.decode(raw)
    except msgspec.DecodeError:
        return None
    return value.get(name) if isinstance(value, dict) else None


def _decoded(raw: Any) -> Any:
    if not isinstance(raw, msgspec.Raw):
        return None
    try:
        return msgspec.json.decode(raw)
    except msgspec.DecodeError:
        return None


#: (header name, property path) pairs of one tool's ``x-mcp-header`` annotations.
HeaderAnnotations = list[tuple[str, tuple[str, ...]]]


def _modern_version_of(params: Any) -> str | None:
    """The ``_meta`` protocol version of a 2026-07-28-or-later request, else None."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    version = meta.get(PROTOCOL_VERSION_KEY) if isinstance(meta, dict) else None
    if isinstance(version, str) and version and version not in HANDSHAKE_VERSIONS:
        return version
    return None


def _rpc_error_in(body: bytes) -> dict[str, Any] | None:
    """The JSON-RPC ``error`` object an HTTP error body carries, if it is one."""
    try:
        value = msgspec.json.decode(body)
    except msgspec.DecodeError:
        return None
    if isinstance(value, dict) and isinstance(value.get("error"), dict):
        error = value["error"]
        if isinstance(error.get("code"), int) and isinstance(error.get("message"), str):
            return error
    return None


@dataclass(slots=True)
class _Inflight:
    """A request whose response has not arrived yet."""

    answered: bool = False
    task: asyncio.Task[Any] | None = None
    ids: tuple[Any, ...] = field(default_factory=tuple)
    #: A 2026-07-28 request: its stream is not resumed, and cancelling it closes it.
    modern: bool = False


class StreamableHttpClientTransport:
    """A ``MessageStream`` over Streamable HTTP.

    The client engine reads it with ``receive()``; a failure that ends the transport (the
    session expired) is raised from there so pending requests fail with its reason.
    """

    def __init__(
        self, options: HttpClientTransportOptions, *, http_client: httpx.AsyncClient | None = None
    ) -> None:
        self.options = options
        self.endpoint = options.endpoint
        self._client = http_client
        self._owns_client = http_client is None
        self._requester: HttpRequester | None = None
        #: The session the server assigned (None until then, and always when stateless).
        self.session_id: str | None = None if options.stateless else (options.known_session_id or None)
        #: The protocol version the initialize result negotiated (None before that).
        self.protocol_version: str | None = None
        self.listen_state = ListenStreamState.OFF
        self._init_ids: set[Any] = set()
        self._inflight: dict[Any, _Inflight] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._listen_task: asyncio.Task[None] | None = None
        self._listen_ready: asyncio.Event | None = None
        self._inbox = FrameInbox(options.max_queued_frames)
        self._fatal: ConnectionClosedError | None = None
        self._closed = False
        self._started = False
        #: Tool name -> its ``x-mcp-header`` annotations, mirrored as ``Mcp-Param-*`` on a
        #: modern ``tools/call`` (filled by the client from ``tools/list``).
        self.tool_headers: dict[str, HeaderAnnotations] = {}
        #: True once a 2026-07-28 request went out (and no ``initialize`` since).
        self.modern = False

    # lifecycle ----------------------------------------------------------------------------

    async def start(self) -> None:
        if self._started:
            return
        self._started = True
        if self._client is None:
            self._client = new_http_client(self.options)
        self._requester = HttpRequester(self.options, self._client)
        if self.session_id is not None:
            self._start_listening()  # resuming a known session: no initialize will come

    @property
    def era_key(self) -> str:
        """The key this endpoint's era is remembered under (see ``_eras``)."""
        return endpoint_key(self.endpoint)

    @property
    def requester(self) -> HttpRequester:
        if self._requester is None:
            raise TransportError("transport not started")
        return self._requester

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.listen_state = ListenStreamState.CLOSED
        tasks = [t for t in (self._listen_task, *self._tasks) if t is not None and not t.done()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        try:
            if self.session_id is not None and not self.options.stateless and self._fatal is None:
                await self._delete_session()
        finally:
            if self._owns_client and self._client is not None:
                await self._client.aclose()
            self._inbox.close()

    async def _delete_session(self) -> None:
        """Tell the server the session is over (it may answer 405: it keeps sessions)."""
        try:
            async with asyncio.timeout(DELETE_TIMEOUT):
                response = await self.requester.open(
                    "DELETE", self.endpoint, self._headers(), streaming=False
                )
                await response.aclose()
        except (TransportError, TimeoutError, httpx.HTTPError) as exc:
            logger.debug("%s: DELETE of the session failed: %r", self.options.display_name, exc)

    # outbound -----------------------------------------------------------------------------

    async def send(self, frame: bytes) -> None:
        if self._fatal is not None:
            raise ConnectionClosedError(str(self._fatal)) from self._fatal
        if self._closed:
            raise ConnectionClosedError("the HTTP transport is closed")
        if not self._started:
            await self.start()
        peeks = _peek(frame)
        request_ids = tuple(p.id for p in peeks if p.is_request)
        for p in peeks:
            if p.method == "initialize" and p.is_request:
                self._init_ids.add(p.id)
                self.modern = False
        if not request_ids:
            if self._modern_cancel(peeks):
                return
            await self._post_message(frame, peeks)
            return
        if len(self._inflight) + len(request_ids) > MAX_INFLIGHT_REQUESTS:
            raise TransportError(f"more than {MAX_INFLIGHT_REQUESTS} requests in flight")
        modern_headers = self._modern_headers(peeks)
        if modern_headers is not None:
            self.modern = True
            record = _Inflight(ids=request_ids, modern=True)
            for request_id in request_ids:
                self._inflight[request_id] = record
            record.task = self._spawn(self._request_flow(frame, record, modern_headers))
            return
        record = _Inflight(ids=request_ids)
        for request_id in request_ids:
            self._inflight[request_id] = record
        if any(i in self._init_ids for i in request_ids):
            # Initialization is awaited up to the response headers, so a refusal (or a
            # server that is not there) fails connect() with a clear error, and AUTO_DETECT
            # can fall back on 400/404/405.
            try:
                response = await self._open_post(frame, initialize=True)
            except BaseException:
                self._forget(request_ids)
                raise
            self._adopt_session(response)
            record.task = self._spawn(self._consume(response, record))
        else:
            record.task = self._spawn(self._request_flow(frame, record))

    def _modern_headers(self, peeks: list[_Peek]) -> dict[str, str] | None:
        """The headers of a 2026-07-28 request (version, SEP-2243), or None when ``peeks``
        is not one modern request."""
        if len(peeks) != 1 or not peeks[0].is_request or peeks[0].method is None:
            return None
        method = peeks[0].method
        params = _decoded(peeks[0].params)
        version = _modern_version_of(params)
        if version is None:
            return None
        annotations: HeaderAnnotations = []
        if method == "tools/call" and isinstance(params.get("name"), str):
            annotations = self.tool_headers.get(params["name"]) or []
        headers = request_headers(method, params, annotations)
        headers[VERSION_HEADER] = version
        return headers

    def _modern_cancel(self, peeks: list[_Peek]) -> bool:
        """Cancel modern requests by closing their streams: True when ``peeks`` was only
        ``notifications/cancelled`` for such requests (nothing left to POST)."""
        if not peeks or any(p.method != "notifications/cancelled" for p in peeks):
            return False
        for p in peeks:
            record = self._inflight.get(_raw_field(p.params, "requestId"))
            if record is None:
                if not self.modern:
                    return False  # a handshake-era request, or unknown: tell the server
                continue  # already answered: nothing to close
            if not record.modern:
                return False
            if record.task is not None:
                record.task.cancel()
        return True

    def _headers(self, *, initialize: bool = False) -> dict[str, str]:
        headers: dict[str, str] = {}
        if not initialize:
            if self.protocol_version:
                headers[VERSION_HEADER] = self.protocol_version
            if self.session_id and not self.options.stateless:
                headers[SESSION_HEADER] = self.session_id
        return headers

    async def _open_post(
        self, frame: bytes, *, initialize: bool = False, modern_headers: dict[str, str] | None = None
    ) -> httpx.Response:
        """POST ``frame``; return the response once its status is good.

        Raises ``HttpStatusError`` for an error status, ``ConnectionClosedError`` (after ending
        the transport) when the session expired, ``TransportError`` when the request failed.
        ``modern_headers`` (a 2026-07-28 request) replace the session and version headers.
        """
        headers = dict(modern_headers) if modern_headers is not None else self._headers(initialize=initialize)
        headers["Accept"] = f"{JSON}, {SSE}"
        headers["Content-Type"] = JSON
        sent_session = SESSION_HEADER in headers
        response = await self.requester.open("POST", self.endpoint, headers, content=frame)
        if 200 <= response.status_code < 300:
            return response
        try:
            body = await error_body(response)
        finally:
            await response.aclose()
        if response.status_code == 404 and sent_session:
            raise self._session_expired(response, body)
        raise status_error("POST", self.endpoint, response, body)

    def _adopt_session(self, response: httpx.Response) -> None:
        if self.options.stateless:
            return
        session_id = response.headers.get("mcp-session-id")
        if session_id:
            self.session_id = session_id
        elif self.session_id and self.session_id == self.options.known_session_id:
            self.session_id = None  # the new initialize opened no session

    async def _post_message(self, frame: bytes, peeks: list[_Peek]) -> None:
        """POST a notification or response and wait for the server to accept it."""
        cancelled = [
            _raw_field(p.params, "requestId") for p in peeks if p.method == "notifications/cancelled"
        ]
        try:
            response = await self._open_post(frame)
        except ConnectionClosedError:
            raise
        except TransportError as exc:
            if any(p.method is not None for p in peeks):
                raise
            # A reply to a server request that did not get through: the engine cannot do
            # anything more with it than the log does.
            logger.warning("%s: reply to the server failed: %s", self.options.display_name, exc)
            return
        if content_type(response) == SSE:
            # Unusual (a notification answered with a stream), but its messages are real.
            self._spawn(self._consume(response, _Inflight(answered=True)))  # no ids: reads to the end
        else:
            await response.aclose()
        for request_id in cancelled:
            # The engine gave up on it, and the server has been told: stop reading its stream.
            record = self._inflight.get(request_id)
            if record is not None and record.task is not None:
                record.task.cancel()
        if any(p.method == "notifications/initialized" for p in peeks):
            self._start_listening()
            await self._wait_listen_ready()

    # one request ---------------------------------------------------------------------------

    async def _request_flow(
        self, frame: bytes, record: _Inflight, modern_headers: dict[str, str] | None = None
    ) -> None:
        try:
            try:
                response = await self._open_post(frame, modern_headers=modern_headers)
            except ConnectionClosedError:
                return  # the transport has ended; the engine hears it from receive()
            except TransportError as exc:
                await self._fail(record, exc)
                return
            await self._consume(response, record)
        finally:
            self._forget(record.ids)

    async def _consume(self, response: httpx.Response, record: _Inflight) -> None:
        """Deliver what a POST answered with; resume its stream if it ends too early."""
        try:
            kind = content_type(response)
            if response.status_code == 202:
                return  # accepted: the answer comes on another stream
            if kind == SSE:
                decoder = SseDecoder(max_event_bytes=self.options.max_sse_event_bytes)
                try:
                    await self._pump(response, decoder, record)
                except MessageTooLargeError as exc:
                    await self._fail(record, exc)
                    return
                except httpx.HTTPError as exc:
                    logger.debug("%s: POST stream broke: %r", self.options.display_name, exc)
                finally:
                    await response.aclose()
                if not record.answered and record.modern:
                    await self._fail(
                        record,
                        StreamBrokenError(
                            "the server ended the response stream before answering (2026-07-28 "
                            "streams are not resumable: the request must be sent again)"
                        ),
                    )
                elif not record.answered:
                    await self._resume(record, decoder.last_event_id, decoder.retry)
            elif kind == JSON:
                try:
                    body = await read_body(response, self.options.max_response_bytes)
                except MessageTooLargeError as exc:
                    await self._fail(record, exc)
                    return
                except httpx.HTTPError as exc:
                    await self._fail(record, TransportError(f"reading the response failed: {exc!r}"))
                    return
                if body.strip():
                    await self._deliver(body)
                if not record.answered:
                    await self._fail(record, TransportError("the server's JSON answer held no response"))
            elif not record.answered:
                await self._fail(
                    record,
                    TransportError(f"unexpected response content type {kind!r} ({describe_status(response)})"),
                )
        finally:
            await response.aclose()
            self._forget(record.ids)

    async def _pump(self, response: httpx.Response, decoder: SseDecoder, record: _Inflight | None) -> int:
        """Deliver an SSE stream's messages until it ends or ``record`` is answered.

        Returns the number of events dispatched (priming events included).
        """
        events = 0
        async for chunk in response.aiter_bytes():
            for event in decoder.feed(chunk):
                events += 1
                if event.data and event.event in (None, "message"):
                    await self._deliver(event.data.encode("utf-8"))
            if record is not None and record.ids and record.answered:
                break  # its stream has served its purpose
        return events

    async def _resume(self, record: _Inflight, last_event_id: str | None, retry_ms: int | None) -> None:
        """Reconnect to an interrupted response stream until its response arrives (SEP-1699)."""
        name = self.options.display_name
        if self.options.stateless or not last_event_id:
            await self._fail(
                record,
                TransportError("the server ended the response stream before answering, without an event id to resume from"),
            )
            return
        failures = 0
        hint: float | None = None
        while not record.answered:
            await asyncio.sleep(_reconnect_delay(failures, retry_ms, hint))
            hint = None
            if record.answered:
                return
            headers = self._headers()
            headers["Accept"] = SSE
            headers["Last-Event-ID"] = last_event_id
            try:
                response = await self.requester.open("GET", self.endpoint, headers)
            except TransportError as exc:
                logger.debug("%s: resuming a stream failed: %r", name, exc)
                failures += 1
            else:
                try:
                    status, kind = response.status_code, content_type(response)
                    if status == 200 and kind == SSE:
                        decoder = SseDecoder(max_event_bytes=self.options.max_sse_event_bytes)
                        events = 0
                        try:
                            events = await self._pump(response, decoder, record)
                        except httpx.HTTPError as exc:
                            logger.debug("%s: resumed stream broke: %r", name, exc)
                        except MessageTooLargeError as exc:
                            await self._fail(record, exc)
                            return
                        last_event_id = decoder.last_event_id or last_event_id
                        if decoder.retry is not None:
                            retry_ms = decoder.retry
                        failures = 0 if events else failures + 1
                    elif status == 404 and SESSION_HEADER in headers:
                        body = await error_body(response)
                        self._session_expired(response, body)
                        return
                    elif status in (408, 429) or status >= 500 or 200 < status < 300:
                        failures += 1
                        hint = retry_after(response)
                    else:
                        body = await error_body(response)
                        await self._fail(record, status_error("GET", self.endpoint, response, body))
                        return
                finally:
                    await response.aclose()
            if failures > self.options.max_reconnect_attempts:
                await self._fail(
                    record,
                    TransportError(f"could not resume the response stream after {failures} attempts"),
                )
                return

    # inbound ------------------------------------------------------------------------------

    async def _deliver(self, frame: bytes) -> None:
        for p in _peek(frame):
            if not p.is_response:
                continue
            self._mark_answered(p.id)
            if p.id in self._init_ids:
                self._init_ids.discard(p.id)
                version = _raw_field(p.result, "protocolVersion")
                if isinstance(version, str) and version:
                    self.protocol_version = version
        await self._inbox.put(frame)

    def _mark_answered(self, request_id: Any) -> None:
        record = self._inflight.pop(request_id, None)
        if record is not None and all(i not in self._inflight for i in record.ids):
            record.answered = True

    async def receive(self) -> bytes | None:
        return await self._inbox.get()

    # failures -----------------------------------------------------------------------------

    async def _fail(self, record: _Inflight, exc: BaseException) -> None:
        """Answer every unanswered request of ``record`` with a JSON-RPC error."""
        if record.answered or self._closed:
            return
        error: dict[str, Any] | None = None
        if isinstance(exc, HttpStatusError):
            error = _rpc_error_in(exc.body)
            if error is not None:
                error = {**error, "message": f"{error['message']} (HTTP {exc.status_code})"}
        if error is None:
            code = getattr(exc, "code", None)
            error = {
                "code": code if isinstance(code, int) else int(ErrorCode.INTERNAL_ERROR),
                "message": str(exc),
            }
            if isinstance(exc, HttpStatusError):
                error["data"] = {"httpStatus": exc.status_code}
            elif isinstance(exc, StreamBrokenError):
                error["data"] = {STREAM_BROKEN: True}
        for request_id in record.ids:
            if request_id in self._inflight:
                await self._deliver(encode_json({"jsonrpc": "2.0", "id": request_id, "error": error}))
        record.answered = True

    def _session_expired(self, response: httpx.Response, body: bytes) -> ConnectionClosedError:
        exc = ConnectionClosedError(
            f"MCP session {self.session_id} expired: {self.endpoint} answered "
            f"{describe_status(response, body)}; connect again to start a new session"
        )
        self._end(exc)
        return exc

    def _end(self, exc: ConnectionClosedError) -> None:
        """A failure that ends the transport: fail everything pending with ``exc``."""
        if self._fatal is not None:
            return
        self._fatal = exc
        logger.warning("%s: %s", self.options.display_name, exc)
        self._inbox.close(exc)
        current = asyncio.current_task()
        for task in [self._listen_task, *self._tasks]:
            if task is not None and task is not current and not task.done():
                task.cancel()

    def _forget(self, ids: tuple[Any, ...]) -> None:
        for request_id in ids:
            self._inflight.pop(request_id, None)

    def _spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    # the GET listen stream ----------------------------------------------------------------

    def _start_listening(self) -> None:
        if (
            self._listen_task is None
            and not self._closed
            and self._fatal is None
            and self.options.listen_stream_enabled
        ):
            self.listen_state = ListenStreamState.CONNECTING
            self._listen_ready = asyncio.Event()
            self._listen_task = asyncio.ensure_future(self._listen())
            self._listen_task.add_done_callback(lambda _: self._listen_ready and self._listen_ready.set())

    async def _wait_listen_ready(self) -> None:
        """Wait (bounded) until the listen stream's first GET has been answered."""
        if self._listen_ready is None:
            return
        try:
            async with asyncio.timeout(LISTEN_READY_TIMEOUT):
                await self._listen_ready.wait()
        except TimeoutError:
            logger.debug("%s: listen stream not answered yet; going on", self.options.display_name)

    async def _listen(self) -> None:
        """Hold the GET stream open, reconnecting (with ``Last-Event-ID``) when it drops.

        4xx (404 and 405 included) and a 200 that is not an event stream mean the server
        offers no listen stream: given up silently. 408, 429, 5xx, other 2xx and network
        failures are retried with backoff, at most ``max_reconnect_attempts`` in a row.
        """
        name = self.options.display_name
        failures = 0
        last_event_id: str | None = None
        retry_ms: int | None = None
        while not self._closed:
            hint: float | None = None
            headers = self._headers()
            headers["Accept"] = SSE
            if last_event_id and not self.options.stateless:
                headers["Last-Event-ID"] = last_event_id
            try:
                response = await self.requester.open("GET", self.endpoint, headers)
            except TransportError as exc:
                logger.debug("%s: listen stream failed to connect: %r", name, exc)
                failures += 1
            else:
                try:
                    status, kind = response.status_code, content_type(response)
                    if status == 200 and kind == SSE:
                        self.listen_state = ListenStreamState.OPEN
                    if self._listen_ready is not None:
                        self._listen_ready.set()
                    if status == 200 and kind == SSE:
                        decoder = SseDecoder(max_event_bytes=self.options.max_sse_event_bytes)
                        events = 0
                        try:
                            events = await self._pump(response, decoder, None)
                        except httpx.HTTPError as exc:
                            logger.debug("%s: listen stream broke: %r", name, exc)
                        except MessageTooLargeError as exc:
                            logger.warning("%s: listen stream given up: %s", name, exc)
                            self.listen_state = ListenStreamState.FAILED
                            return
                        last_event_id = decoder.last_event_id or last_event_id
                        if decoder.retry is not None:
                            retry_ms = decoder.retry
                        failures = 0 if events else failures + 1
                        self.listen_state = ListenStreamState.RECONNECTING
                    elif status in (408, 429) or status >= 500 or 200 < status < 300:
                        failures += 1
                        hint = retry_after(response)
                    else:
                        logger.debug("%s: no listen stream (%s)", name, describe_status(response))
                        self.listen_state = ListenStreamState.UNSUPPORTED
                        return
                finally:
                    await response.aclose()
            if failures > self.options.max_reconnect_attempts:
                logger.warning("%s: listen stream given up after %d failed attempts", name, failures)
                self.listen_state = ListenStreamState.FAILED
                return
            self.listen_state = ListenStreamState.RECONNECTING
            await asyncio.sleep(_reconnect_delay(failures, retry_ms, hint))
