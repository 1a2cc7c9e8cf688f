"""Streamable HTTP client transport (MCP 2025-03-26 and later).

Every outbound frame is its own POST to the MCP endpoint, and POSTs run concurrently: a long
call never holds up a ping. A request's POST answers with JSON or with an SSE stream whose
messages are delivered as they arrive, so a server request carried on that stream
(sampling, elicitation) is answered, by another POST, while the stream is still open; a
stream that ends before the response is resumed (``_response_streams``). After
``notifications/initialized`` an optional GET "listen stream" carries the server's
unsolicited messages (``_listen_stream``).

Failures of one request (an HTTP error status, a stream that cannot be resumed) come back to
that request as a JSON-RPC error response. A 404 on a request that carried the session id
means the server forgot the session: for a session initialized here a new one is started
and the request sent there once more (``_session_renewal``); otherwise (or when that fails)
it ends the transport: the engine's pending requests fail with a ``SessionExpiredError`` (a
``ConnectionClosedError``) that says so.

A ``known_session_id`` is resumed without ``initialize`` (``resume_session``): requests
carry that session id and the version given, the first answer confirms the session (its
``MCP-Protocol-Version`` names the session's own version, when the server says) and opens
the listen stream. Closing DELETEs only a session this transport initialized, unless
``delete_session_on_close`` says otherwise.

A 2026-07-28 request (one whose ``_meta`` names a modern protocol version) is sent the
modern way, whatever else the transport has done (``_modern_http``): its headers mirror its
body, no session id is sent, and its response stream is not resumable. Cancelling it
closes its stream, as the modern transport wants, instead of POSTing
``notifications/cancelled``.

This module holds the transport itself: its lifecycle, the routing of outbound frames, the
session, and delivery of inbound ones.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

import httpx

from mcpkit._exceptions import ConnectionClosedError, TransportError
from mcpkit.client._endpoint_memory import EndpointMemory
from mcpkit.client._errors import SessionExpiredError
from mcpkit.client._frames import FramePeek, peek, raw_field
from mcpkit.client._http_options import (
    JSON,
    SESSION_HEADER,
    SSE,
    VERSION_HEADER,
    HttpClientTransportOptions,
    HttpRequester,
    content_type,
    describe_status,
    error_body,
    new_http_client,
    status_error,
)
from mcpkit.client._inbox import InboxTransport
from mcpkit.client._listen_stream import ListenStreamHandling, ListenStreamState
from mcpkit.client._modern_http import (
    STREAM_BROKEN,
    HeaderAnnotations,
    StreamBrokenError,
    modern_request_headers,
)
from mcpkit.client._response_streams import Inflight, ResponseStreamHandling
from mcpkit.client._session_renewal import SessionRenewal
from mcpkit.protocol._versions import HANDSHAKE_VERSIONS

logger = logging.getLogger("mcpkit.client.http")

__all__ = [
    "STREAM_BROKEN",
    "ListenStreamState",
    "StreamBrokenError",
    "StreamableHttpClientTransport",
]

#: Requests one transport tracks at once (the client engine bounds them first).
MAX_INFLIGHT_REQUESTS = 4096
#: Seconds the DELETE that ends a session may take when the transport closes.
DELETE_TIMEOUT = 5.0

_peek = peek  # the name this module used to define, still imported by tests


class StreamableHttpClientTransport(ResponseStreamHandling, ListenStreamHandling, InboxTransport):
    """A ``MessageStream`` over Streamable HTTP.

    The client engine reads it with ``receive()``; a failure that ends the transport (the
    session expired) is raised from there so pending requests fail with its reason.

    Its size: the client end of Streamable HTTP is one state machine over one session id
    and one httpx client (POST answers as JSON or SSE, the GET stream, resumption, session
    renewal, DELETE, the 2026-07-28 form); reading streams is in its mixins already.
    """

    def __init__(
        self, options: HttpClientTransportOptions, *, http_client: httpx.AsyncClient | None = None
    ) -> None:
        super().__init__(options.max_queued_frames)
        self.options = options
        self.endpoint = options.endpoint
        self._client = http_client
        self._owns_client = http_client is None
        self._requester: HttpRequester | None = None
        #: The session the server assigned (None until then, and always when stateless).
        self.session_id: str | None = (
            None if options.stateless else (options.known_session_id or None)
        )
        #: The protocol version the initialize result negotiated (None before that), or the
        #: one a resumed session speaks.
        self.protocol_version: str | None = None
        #: True while the session in use is ``known_session_id`` (not one initialized here).
        self.resumed = self.session_id is not None
        #: A resumed session no answer has confirmed yet.
        self._unconfirmed = False
        self.listen_state = ListenStreamState.OFF
        self._init_ids: set[Any] = set()
        self._inflight: dict[Any, Inflight] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._listen_task: asyncio.Task[None] | None = None
        self._listen_ready: asyncio.Event | None = None
        self._started = False
        #: Tool name -> its ``x-mcp-header`` annotations, mirrored as ``Mcp-Param-*`` on a
        #: modern ``tools/call`` (filled by the client from ``tools/list``).
        self.tool_headers: dict[str, HeaderAnnotations] = {}
        #: True once a 2026-07-28 request went out (and no ``initialize`` since).
        self.modern = False
        #: A new session in place of one the server forgot (404).
        self.renewal = SessionRenewal(self)
        #: Where the era found is remembered: the options' shared one, else this transport's.
        self.endpoint_memory = (
            options.endpoint_memory if options.endpoint_memory is not None else EndpointMemory()
        )

    # lifecycle ----------------------------------------------------------------------------

    async def start(self) -> None:
        """Make the HTTP client (unless one was given); requests go out on ``send``."""
        if self._started:
            return
        self._started = True
        if self._client is None:
            self._client = new_http_client(self.options)
        self._requester = HttpRequester(self.options, self._client)

    @property
    def known_session_id(self) -> str | None:
        """The session to resume instead of initializing (None: initialize as usual)."""
        return self.session_id if self.resumed else None

    async def resume_session(self, protocol_version: str) -> None:
        """Speak in the known session without ``initialize``: requests carry its id and
        ``protocol_version`` (replaced by the version the first answer names, when the
        server names one). The listen stream opens once an answer confirms the session."""
        if not self.resumed:
            raise TransportError("no known_session_id to resume")
        self.protocol_version = protocol_version
        self._unconfirmed = True

    @property
    def memory_key(self) -> str:
        """The key this endpoint and its credentials are remembered under in
        ``endpoint_memory``."""
        return EndpointMemory.key(self.options, None if self._owns_client else self._client)

    @property
    def requester(self) -> HttpRequester:
        """What sends this transport's HTTP requests (once started)."""
        if self._requester is None:
            raise TransportError("transport not started")
        return self._requester

    async def aclose(self) -> None:
        """Close the streams, DELETE the session when ``delete_session_on_close`` says so,
        and close the HTTP client this transport made."""
        if not self._begin_close():
            return
        self.listen_state = ListenStreamState.CLOSED
        tasks = [t for t in (self._listen_task, *self._tasks) if t is not None and not t.done()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        try:
            if self._deletes_on_close():
                await self._delete_session()
        finally:
            if self._owns_client and self._client is not None:
                await self._client.aclose()
            self._inbox.close()

    def _deletes_on_close(self) -> bool:
        if self.session_id is None or self.options.stateless or self._fatal is not None:
            return False
        wanted = self.options.delete_session_on_close
        return not self.resumed if wanted is None else wanted

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
        """POST one frame; its answer (JSON or an SSE stream) is read into the inbox."""
        self._raise_if_ended()
        if self._closed:
            raise ConnectionClosedError("the HTTP transport is closed")
        if not self._started:
            await self.start()
        peeks = peek(frame)
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
        if modern_headers is None:
            self.renewal.note(frame, peeks)
        record = Inflight(ids=request_ids, modern=modern_headers is not None)
        for request_id in request_ids:
            self._inflight[request_id] = record
        if modern_headers is not None:
            self.modern = True
            record.task = self._spawn(self._request_flow(frame, record, modern_headers))
        elif any(i in self._init_ids for i in request_ids):
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

    def _modern_headers(self, peeks: list[FramePeek]) -> dict[str, str] | None:
        """The headers of a 2026-07-28 request, or None when ``peeks`` is not one."""
        return modern_request_headers(peeks, self.tool_headers)

    def _modern_cancel(self, peeks: list[FramePeek]) -> bool:
        """Cancel modern requests by closing their streams: True when ``peeks`` was only
        ``notifications/cancelled`` for such requests (nothing left to POST)."""
        if not peeks or any(p.method != "notifications/cancelled" for p in peeks):
            return False
        for p in peeks:
            record = self._inflight.get(raw_field(p.params, "requestId"))
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
        self,
        frame: bytes,
        *,
        initialize: bool = False,
        modern_headers: dict[str, str] | None = None,
        renewing: bool = False,
    ) -> httpx.Response:
        """POST ``frame``; return the response once its status is good.

        Raises ``HttpStatusError`` for an error status, ``ConnectionClosedError`` (after ending
        the transport) when the session expired, ``TransportError`` when the request failed.
        ``modern_headers`` (a 2026-07-28 request) replace the session and version headers.
        A 404 on the session starts a new one and POSTs ``frame`` there once more, unless
        ``renewing`` (the renewal's own requests, and that second POST).
        """
        headers = (
            dict(modern_headers)
            if modern_headers is not None
            else self._headers(initialize=initialize)
        )
        headers["Accept"] = f"{JSON}, {SSE}"
        headers["Content-Type"] = JSON
        sent_session = SESSION_HEADER in headers
        response = await self.requester.open("POST", self.endpoint, headers, content=frame)
        if 200 <= response.status_code < 300:
            if self._unconfirmed and sent_session:
                self._confirm_resumed(response)
            return response
        try:
            body = await error_body(response)
        finally:
            await response.aclose()
        if response.status_code == 404 and sent_session:
            if not renewing and await self.renewal.renewed(headers[SESSION_HEADER]):
                return await self._open_post(frame, initialize=initialize, renewing=True)
            raise self._session_expired(response, body)
        raise status_error("POST", self.endpoint, response, body)

    # what a session renewal does through the transport -------------------------------------

    async def open_post(self, frame: bytes) -> httpx.Response:
        """``_open_post`` for the renewal: no renewal of its own on a 404."""
        return await self._open_post(frame, renewing=True)

    async def own_request(self, frame: bytes, request_id: str, *, initialize: bool = False) -> None:
        """POST a request of the transport's own and read its answer (``SessionRenewal.take``
        keeps it from the client engine); an ``initialize`` adopts the session it opens."""
        response = await self._open_post(frame, initialize=initialize, renewing=True)
        if initialize:
            self._adopt_session(response)
        record = Inflight(ids=(request_id,))
        self._inflight[request_id] = record
        await self._consume(response, record)

    def _renewable(self) -> bool:
        """Whether a 404 on the session would start a new one (``SessionRenewal``)."""
        return self.renewal.possible()

    def stop_listening(self) -> None:
        """Drop the listen stream (of a session that is gone)."""
        task, self._listen_task = self._listen_task, None
        if task is not None and not task.done():
            task.cancel()
        self.listen_state = ListenStreamState.OFF

    def start_listening(self) -> None:
        """Open the listen stream (of a new session)."""
        self._start_listening()

    def _confirm_resumed(self, response: httpx.Response) -> None:
        """The server answered in the resumed session: take the version it names for the
        session (servers that keep one say it in ``MCP-Protocol-Version``), then listen."""
        self._unconfirmed = False
        version = response.headers.get("mcp-protocol-version", "").strip()
        if version in HANDSHAKE_VERSIONS:
            self.protocol_version = version
        self._start_listening()

    def _adopt_session(self, response: httpx.Response) -> None:
        if self.options.stateless:
            return
        session_id = response.headers.get("mcp-session-id")
        self.resumed = self._unconfirmed = False  # initialized here, whatever it answered
        if session_id:
            self.session_id = session_id
        elif self.session_id and self.session_id == self.options.known_session_id:
            self.session_id = None  # the new initialize opened no session

    async def _post_message(self, frame: bytes, peeks: list[FramePeek]) -> None:
        """POST a notification or response and wait for the server to accept it."""
        cancelled = [
            raw_field(p.params, "requestId") for p in peeks if p.method == "notifications/cancelled"
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
            self._spawn(
                self._consume(response, Inflight(answered=True))
            )  # no ids: reads to the end
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

    # inbound ------------------------------------------------------------------------------

    async def _deliver(self, frame: bytes) -> None:
        if self.renewal.take(frame):
            for p in peek(frame):
                self._mark_answered(p.id)
            return
        for p in peek(frame):
            if not p.is_response:
                continue
            self._mark_answered(p.id)
            if p.id in self._init_ids:
                self._init_ids.discard(p.id)
                version = raw_field(p.result, "protocolVersion")
                if isinstance(version, str) and version:
                    self.protocol_version = version
        await self._inbox.put(frame)

    def _mark_answered(self, request_id: Any) -> None:
        record = self._inflight.pop(request_id, None)
        if record is not None and all(i not in self._inflight for i in record.ids):
            record.answered = True

    # the end ------------------------------------------------------------------------------

    def _session_expired(self, response: httpx.Response, body: bytes) -> SessionExpiredError:
        known = " (the known_session_id given)" if self.resumed else ""
        exc = SessionExpiredError(
            f"MCP session {self.session_id}{known} expired or is unknown: {self.endpoint} "
            f"answered {describe_status(response, body)}; connect again to start a new session",
            session_id=self.session_id,
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
