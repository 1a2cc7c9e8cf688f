"""Streamable HTTP (2025-03-26 and later, handshake era): one endpoint, POST / GET / DELETE.

POST carries client messages. A request is answered as JSON, or as an SSE stream opened
the moment the call produces a message of its own (progress, logs, a server-to-client
request), so quick calls stay plain JSON. GET opens the session's standalone stream or
resumes a dropped one (``Last-Event-ID``). DELETE ends the session.

With a ``SessionStore`` backend (``options.session_store``) sessions are shared between
instances: what that changes lives in ``_cluster.py``; this module calls it at a few
points and keeps the in-memory default's path free of store I/O.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from typing import TYPE_CHECKING, Any

from mcpkit._exceptions import InvalidRequestError, ProtocolError, StoreUnavailableError
from mcpkit._codes import ErrorCode
from mcpkit.protocol._jsonrpc import (
    JsonRpcErrorResponse,
    JsonRpcNotification,
    JsonRpcRequest,
    JsonRpcResponse,
    decode_message,
    error_response,
)
from mcpkit.protocol._headers import check_request_headers
from mcpkit.protocol._versions import (
    LATEST_HANDSHAKE_VERSION,
    LATEST_VERSION,
    MODERN_VERSIONS,
    SUPPORTED_VERSIONS,
    V2025_03_26,
    V2025_11_25,
)
from mcpkit.server._modern import (
    HeaderMismatchError,
    UnsupportedProtocolVersionError,
    check_request_meta,
    modern_version,
)
from mcpkit.auth._types import CURRENT_AUTH
from mcpkit.server._binding import CURRENT_BINDING, TransportBinding
from mcpkit.server._session import McpSession
from mcpkit.stores._events import InMemoryEventStore, StoredEvent
from mcpkit.transports.http._asgi import (
    BodyTooLarge,
    Receive,
    Send,
    encode_headers,
    read_body,
    send_chunk,
    send_json,
    send_response,
    start_sse,
)
from mcpkit.protocol._sse import encode_event
from mcpkit.protocol._jsonrpc import encode_json
from mcpkit.transports.http._options import StreamableHttpServerOptions
from mcpkit.transports.http._cluster import STATEFUL_METHODS, SessionCluster
from mcpkit.transports.http._sessions import SessionLimitReached, StreamableSession, StreamableSessionStore
from mcpkit.transports.http._streams import SseStream

if TYPE_CHECKING:
    from mcpkit.server._app import McpServerApp

logger = logging.getLogger("mcpkit.http")

#: Seconds a call runs before we start watching for its client to disconnect (quick
#: calls never pay for the watcher).
DISCONNECT_WATCH_DELAY = 0.05


#: HTTP statuses of 2026-07-28 errors (Streamable HTTP, "Protocol Version Header").
_MODERN_ERROR_STATUS = {
    ErrorCode.METHOD_NOT_FOUND: 404,
    ErrorCode.HEADER_MISMATCH: 400,
    ErrorCode.MISSING_REQUIRED_CAPABILITY: 400,
    ErrorCode.UNSUPPORTED_PROTOCOL_VERSION: 400,
}


def _error_body(code: int, message: str, data: Any = None, request_id: Any = None) -> dict[str, Any]:
    error = ProtocolError(message, data, code=code)
    return error_response(request_id, error)


class _Call:
    """The HTTP side of one POSTed request while it runs."""

    __slots__ = ("send", "stream", "opened", "headers", "prime", "finished")

    def __init__(self, send: Send, headers: list[tuple[bytes, bytes]], stream: SseStream | None, prime: bool) -> None:
        self.send = send
        self.stream = stream
        self.headers = headers
        self.prime = prime
        self.opened = False
        self.finished = False

    async def open_sse(self) -> None:
        if self.opened or self.stream is None:
            return
        self.opened = True
        await start_sse(self.send, self.headers)
        self.stream.attach(self.send)
        if self.prime:
            await self.stream.prime()


class _WatchList:
    """Calls that may outlive their client. One sweeper task looks for calls running longer
    than ``DISCONNECT_WATCH_DELAY`` and starts a disconnect watcher for each; quick calls
    cost a dict insert and delete (no timer per request: cancelled timers linger in the
    loop's heap, keep their calls alive and make the garbage collector work hard)."""

    def __init__(self, watch: Any) -> None:
        self._watch = watch
        self._calls: dict[int, tuple[float, Any]] = {}
        self._watchers: dict[int, asyncio.Task[None]] = {}
        self._ids = itertools.count()
        self._sweeper: asyncio.Task[None] | None = None

    def add(self, *call: Any) -> int:
        token = next(self._ids)
        self._calls[token] = (time.monotonic(), call)
        if self._sweeper is None:
            self._sweeper = asyncio.get_running_loop().create_task(self._sweep())
        return token

    def remove(self, token: int) -> None:
        self._calls.pop(token, None)
        watcher = self._watchers.pop(token, None)
        if watcher is not None:
            watcher.cancel()

    async def _sweep(self) -> None:
        try:
            while self._calls:
                await asyncio.sleep(DISCONNECT_WATCH_DELAY)
                cutoff = time.monotonic() - DISCONNECT_WATCH_DELAY
                loop = asyncio.get_running_loop()
                for token, (started, call) in list(self._calls.items()):
                    if started <= cutoff and token not in self._watchers:
                        self._watchers[token] = loop.create_task(self._watch(*call))
        finally:
            self._sweeper = None


class _Replayer:
    """Writes replayed events to a resuming GET and remembers the last one sent."""

    __slots__ = ("send", "last_id")

    def __init__(self, send: Send, last_id: str) -> None:
        self.send = send
        self.last_id = last_id

    async def __call__(self, event: StoredEvent) -> None:
        if event.message is not None:
            await send_chunk(self.send, encode_event(encode_json(event.message), event="message", id=event.event_id))
        self.last_id = event.event_id


class StreamableHttpHandler:
    """The ASGI handler of the Streamable HTTP endpoint."""

    def __init__(self, app: McpServerApp, options: StreamableHttpServerOptions) -> None:
        self.app = app
        self.options = options
        self.event_store = options.event_store or InMemoryEventStore()
        self.sessions = self._session_table(options)
        self.sessions.on_remove(self._forget)
        self._stateless_ids = itertools.count(1)
        self._stream_ids = itertools.count(1)
        self._background: set[asyncio.Task[Any]] = set()
        self._watch_list = _WatchList(self._watch)
        #: Shared sessions and/or a message bus: None keeps the single-process path.
        self.cluster = SessionCluster(self) if self.sessions.shared or options.message_bus is not None else None
        self._stream_prefix = f"{self.cluster.instance_id}." if self.cluster is not None and self.sessions.shared else ""

    def _session_table(self, options: StreamableHttpServerOptions) -> StreamableSessionStore:
        """``options.session_store``: a ``StreamableSessionStore`` (this process's table) or
        a ``SessionStore`` backend shared with other instances; None: in memory."""
        store = options.session_store
        if isinstance(store, StreamableSessionStore):
            store.event_store = store.event_store or self.event_store
            store.retry_ms = options.retry_ms
            return store
        return StreamableSessionStore(
            max_sessions=options.max_sessions,
            idle_timeout=options.session_idle_timeout,
            backend=store,
            event_store=self.event_store,
            retry_ms=options.retry_ms,
        )

    # dispatch by HTTP method --------------------------------------------------------------

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send, headers: dict[str, str]) -> None:
        method = scope["method"]
        if self.cluster is not None and not self.cluster.started:
            try:
                await self.cluster.start()
            except StoreUnavailableError as exc:  # serve anyway; the next request retries
                logger.warning("message bus unavailable: %s", exc)
        stateless = self.options.stateless or headers.get("mcp-protocol-version") in MODERN_VERSIONS
        if method == "POST":
            await self.post(receive, send, headers)
        elif method == "GET" and not stateless:
            await self.get(receive, send, headers)
        elif method == "DELETE" and not stateless:
            await self.delete(send, headers)
        else:
            allow = "POST" if stateless else "GET, POST, DELETE"
            await self._fail(
                send, 405, ErrorCode.INVALID_REQUEST, f"Method {method} not allowed",
                extra=encode_headers([("allow", allow)]),
            )

    # POST ---------------------------------------------------------------------------------

    async def post(self, receive: Receive, send: Send, headers: dict[str, str]) -> None:
        accept = headers.get("accept", "*/*")
        wants_sse = "text/event-stream" in accept
        if not (wants_sse or "application/json" in accept or "*/*" in accept):
            await self._fail(send, 406, ErrorCode.INVALID_REQUEST, "Accept must allow application/json or text/event-stream")
            return
        version = headers.get("mcp-protocol-version")
        try:
            body = await read_body(receive, self.options.max_body_bytes)
        except BodyTooLarge:
            await self._fail(send, 413, ErrorCode.INVALID_REQUEST, f"Body exceeds {self.options.max_body_bytes} bytes")
            return
        try:
            decoded = decode_message(body, max_bytes=None)
        except ProtocolError as exc:
            await send_json(send, 400, error_response(getattr(exc, "request_id", None), exc))
            return
        if self._is_modern(decoded, headers, version):
            await self._post_modern(decoded, headers, version, wants_sse, send, receive)
            return
        if version is not None and version not in SUPPORTED_VERSIONS:
            await self._unsupported_version(send, version, getattr(decoded, "id", None))
            return
        messages = decoded if isinstance(decoded, list) else [decoded]
        try:
            session, failure = await self._session_for(messages, headers, version)
        except StoreUnavailableError as exc:
            await self._store_unavailable(send, exc, getattr(decoded, "id", None))
            return
        if failure is not None:
            status, body_dict = failure
            await send_json(send, status, body_dict, self._response_headers(None, version))
            return
        if isinstance(decoded, list) and (session is None or session.protocol_version != V2025_03_26) and version != V2025_03_26:
            await self._fail(send, 400, ErrorCode.INVALID_REQUEST, "JSON-RPC batches are not supported in this protocol version")
            return
        await self._serve_messages(messages, session, headers, version, wants_sse, send, receive, isinstance(decoded, list))

    # POST, 2026-07-28 ------------------------------------------------------------------------

    @staticmethod
    def _is_modern(decoded: Any, headers: dict[str, str], version: str | None) -> bool:
        """The era of this POST: a modern version header, or modern ``_meta`` in the body,
        or a version header we don't know on a request without a session (a modern
        client's probe gets a modern error)."""
        if version in MODERN_VERSIONS:
            return True
        params = getattr(decoded, "params", None)
        if modern_version(params) is not None:
            return True
        return version is not None and version not in SUPPORTED_VERSIONS and "mcp-session-id" not in headers and (
            isinstance(decoded, JsonRpcRequest) and decoded.method != "initialize"
        )

    async def _post_modern(
        self, decoded: Any, headers: dict[str, str], version: str | None, wants_sse: bool, send: Send, receive: Receive
    ) -> None:
        """One stateless request: no session, headers checked against the body (SEP-2243)."""
        if isinstance(decoded, list) or isinstance(decoded, (JsonRpcResponse, JsonRpcErrorResponse)):
            await self._fail(send, 400, ErrorCode.INVALID_REQUEST, "2026-07-28 accepts one request or notification per POST")
            return
        if isinstance(decoded, JsonRpcNotification):
            await send_response(send, 202, b"", [(b"mcp-protocol-version", (version or LATEST_VERSION).encode())])
            return
        request: JsonRpcRequest = decoded
        params = request.params
        body_version = modern_version(params)
        response_headers = self._modern_headers(headers, body_version or version)
        problem: ProtocolError | None = None
        if body_version is not None and version != body_version:
            problem = HeaderMismatchError(
                f"MCP-Protocol-Version header {version!r} does not match _meta protocolVersion {body_version!r}"
            )
        if problem is None:
            problem = check_request_meta(params)
        if problem is None:
            tool = self.app.catalog.get_tool(params.get("name")) if request.method == "tools/call" and params else None
            mismatch = check_request_headers(request.method, params, headers, tool.header_params if tool else [])
            if mismatch is not None:
                problem = HeaderMismatchError(f"Header mismatch: {mismatch}")
        if problem is not None:
            await send_json(send, 400, error_response(request.id, problem), response_headers)
            return
        binding = TransportBinding(
            session=None, send=None, headers=headers,
            connection_key=f"m{next(self._stateless_ids)}", extras={"modern": True},
        )
        await self._serve_request(request, None, binding, wants_sse, send, receive, response_headers, modern=True)

    @staticmethod
    def _modern_headers(headers: dict[str, str], version: str | None) -> list[tuple[bytes, bytes]]:
        out = [(b"mcp-protocol-version", (version if version in MODERN_VERSIONS else LATEST_VERSION).encode())]
        for name in ("mcp-method", "mcp-name"):
            if name in headers:
                out.append((name.encode(), headers[name].strip(" \t").encode("latin-1")))
        return out

    async def _session_for(
        self, messages: list[Any], headers: dict[str, str], version: str | None
    ) -> tuple[StreamableSession | None, tuple[int, dict[str, Any]] | None]:
        if self.options.stateless:
            return None, None
        initialize = any(isinstance(m, JsonRpcRequest) and m.method == "initialize" for m in messages)
        if initialize:
            if len(messages) != 1:
                return None, (400, _error_body(ErrorCode.INVALID_REQUEST, "initialize must be sent on its own"))
            try:
                session = self.sessions.create(self.event_store, self.options.retry_ms)
            except SessionLimitReached:
                return None, (503, _error_body(ErrorCode.INTERNAL_ERROR, "Too many sessions; try again later"))
            self.app.connections.register(session.mcp.send, session.mcp.key)
            return session, None
        session_id = headers.get("mcp-session-id")
        if session_id is None:
            return None, (400, _error_body(ErrorCode.INVALID_REQUEST, "Mcp-Session-Id header is required"))
        session = await self.sessions.find(session_id)
        if session is None:
            return None, (404, _error_body(ErrorCode.SESSION_EXPIRED, "Session expired or unknown", {"sessionId": session_id}))
        return session, None

    def _response_headers(self, session: StreamableSession | None, version: str | None) -> list[tuple[bytes, bytes]]:
        pairs = [(b"mcp-protocol-version", (session and session.protocol_version or version or LATEST_HANDSHAKE_VERSION).encode())]
        if session is not None:
            pairs.append((b"mcp-session-id", session.session_id.encode()))
        return pairs

    def _binding(self, session: StreamableSession | None, headers: dict[str, str], version: str | None) -> TransportBinding:
        if session is not None:
            return TransportBinding(session=session.mcp, send=session.mcp.send, headers=headers, connection_key=session.mcp.key)
        temp = McpSession(None, key=f"sl{next(self._stateless_ids)}")
        temp.ephemeral = True
        temp.initialize_seen = True
        temp.initialized = True
        temp.protocol_version = version or LATEST_HANDSHAKE_VERSION
        return TransportBinding(session=temp, send=None, headers=headers, connection_key=temp.key)

    async def _serve_messages(
        self,
        messages: list[Any],
        session: StreamableSession | None,
        headers: dict[str, str],
        version: str | None,
        wants_sse: bool,
        send: Send,
        receive: Receive,
        batch: bool,
    ) -> None:
        binding = self._binding(session, headers, version)
        binding.extras["auth"] = CURRENT_AUTH.get()
        CURRENT_BINDING.set(binding)
        requests: list[JsonRpcRequest] = []
        replies: list[dict[str, Any]] = []
        for message in messages:
            if isinstance(message, JsonRpcRequest):
                requests.append(message)
            elif isinstance(message, JsonRpcNotification):
                await self.app.dispatcher.notify(message, binding)
                if self.cluster is not None and session is not None:
                    await self.cluster.after_notification(session, message)
            elif isinstance(message, (JsonRpcResponse, JsonRpcErrorResponse)):
                if not binding.session.resolve(message) and self.cluster is not None and session is not None:  # type: ignore[union-attr]
                    await self.cluster.route_response(session, message)
            else:  # an invalid member of a batch
                replies.append(error_response(getattr(message, "request_id", None), message))
        response_headers = self._response_headers(session, version)
        if not requests and not replies:
            if self.cluster is not None and session is not None and any(
                getattr(m, "method", None) in STATEFUL_METHODS for m in messages
            ):
                await self.cluster.save(session)
            await send_response(send, 202, b"", response_headers)
            return
        if batch:
            results = await asyncio.gather(*(self.app.dispatcher.dispatch(r, binding) for r in requests))
            replies.extend(r for r in results if r is not None)
            await send_json(send, 200, replies, response_headers)
            return
        if session is not None and self.sessions.shared and requests[0].method == "initialize":
            await self.cluster.initialize(requests[0], session, binding, send, response_headers)  # type: ignore[union-attr]
            return
        await self._serve_request(requests[0], session, binding, wants_sse, send, receive, response_headers)
        if session is not None and requests[0].method == "initialize" and not session.mcp.initialize_seen:
            self.sessions.remove(session.session_id)  # initialize failed: no session

    async def _serve_request(
        self,
        request: JsonRpcRequest,
        session: StreamableSession | None,
        binding: TransportBinding,
        wants_sse: bool,
        send: Send,
        receive: Receive,
        response_headers: list[tuple[bytes, bytes]],
        modern: bool = False,
    ) -> None:
        stream = None
        if wants_sse:
            resumable = session is not None
            stream = SseStream(
                f"{self._stream_prefix}p{next(self._stream_ids)}",
                session.session_id if resumable else None,  # type: ignore[union-attr]
                self.event_store if resumable else None,
                self.options.retry_ms,
            )
        prime = session is not None and (session.protocol_version or "") >= V2025_11_25
        call = _Call(send, response_headers, stream, prime)
        if stream is not None:
            binding.send = self._lazy_sse_sender(call)
            binding.extras["close_sse_stream"] = lambda: self._close_stream(call, binding, request)
            if session is not None:
                session.streams[stream.stream_id] = stream
        token = self._watch_list.add(receive, call, binding, request)
        try:
            response = await self.app.dispatcher.dispatch(request, binding)
        finally:
            self._watch_list.remove(token)
            call.finished = True
            binding.extras.pop("close_sse_stream", None)  # breaks the binding<->closure cycle
        if self.cluster is not None and session is not None and request.method in STATEFUL_METHODS:
            await self.cluster.save(session)
        try:
            await self._finish(call, response, session, response_headers, modern)
        finally:
            if stream is not None:
                stream.finished.set()
                if session is not None:
                    session.streams.pop(stream.stream_id, None)

    def _lazy_sse_sender(self, call: _Call) -> Any:
        async def send_on_stream(message: dict[str, Any]) -> None:
            if not call.opened:
                await call.open_sse()
            await call.stream.write(message)  # type: ignore[union-attr]

        return send_on_stream

    async def _finish(
        self,
        call: _Call,
        response: dict[str, Any] | None,
        session: StreamableSession | None,
        headers: list[tuple[bytes, bytes]],
        modern: bool = False,
    ) -> None:
        if call.opened:
            stream = call.stream
            assert stream is not None
            if response is not None:
                await stream.write(response)
            await stream.end_response()
            return
        if response is None:  # cancelled: JSON-RPC sends nothing, HTTP still ends the exchange
            await send_response(call.send, 202, b"", headers)
            return
        status = 200
        if modern and "error" in response:
            status = _MODERN_ERROR_STATUS.get(response["error"].get("code"), 200)
        await send_json(call.send, status, response, headers)

    async def _close_stream(self, call: _Call, binding: TransportBinding, request: JsonRpcRequest) -> None:
        """SEP-1699: end the POST's SSE response mid-call; the client resumes with GET."""
        if call.stream is None or call.stream.store is None:
            return
        await call.open_sse()
        await call.stream.end_response()
        self._cancel_later(call, binding, request)

    async def _watch(self, receive: Receive, call: _Call, binding: TransportBinding, request: JsonRpcRequest) -> None:
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                break
        if call.finished:
            return
        stream = call.stream
        if stream is not None and stream.store is not None and call.opened:
            stream.detach(call.send)  # a resumed GET may already have taken over
            self._cancel_later(call, binding, request)
        else:
            self.app.dispatcher.cancel(binding.connection_key, request.id)

    def _cancel_later(self, call: _Call, binding: TransportBinding, request: JsonRpcRequest) -> None:
        """A dropped resumable stream: cancel the call unless the client resumes in time."""
        def expire() -> None:
            stream = call.stream
            if not call.finished and (stream is None or not (stream.attached or stream.remote_reader)):
                self.app.dispatcher.cancel(binding.connection_key, request.id)

        asyncio.get_running_loop().call_later(self.options.resume_grace, expire)

    async def _unsupported_version(self, send: Send, version: str, request_id: Any = None) -> None:
        error = UnsupportedProtocolVersionError(version)
        headers = [(b"mcp-protocol-version", LATEST_HANDSHAKE_VERSION.encode())]
        await send_json(send, 400, error_response(request_id, error), headers)

    async def _store_unavailable(self, send: Send, exc: StoreUnavailableError, request_id: Any = None) -> None:
        """503: the session or event store (Redis) cannot be reached; the client may retry."""
        logger.warning("store unavailable: %s", exc)
        headers = [(b"mcp-protocol-version", LATEST_HANDSHAKE_VERSION.encode()), (b"retry-after", b"1")]
        body = _error_body(ErrorCode.INTERNAL_ERROR, f"Session store unavailable: {exc}", {"retryable": True}, request_id)
        await send_json(send, 503, body, headers)

    async def _fail(
        self, send: Send, status: int, code: int, message: str, data: Any = None, extra: list[tuple[bytes, bytes]] | None = None
    ) -> None:
        """An HTTP error whose body is a JSON-RPC error; it carries MCP-Protocol-Version too."""
        headers = [(b"mcp-protocol-version", LATEST_HANDSHAKE_VERSION.encode()), *(extra or ())]
        await send_json(send, status, _error_body(code, message, data), headers)

    # GET ----------------------------------------------------------------------------------

    async def get(self, receive: Receive, send: Send, headers: dict[str, str]) -> None:
        if "text/event-stream" not in headers.get("accept", ""):
            await self._fail(send, 406, ErrorCode.INVALID_REQUEST, "Accept must allow text/event-stream")
            return
        version = headers.get("mcp-protocol-version")
        if version is not None and version not in SUPPORTED_VERSIONS:
            await self._unsupported_version(send, version)
            return
        session_id = headers.get("mcp-session-id")
        if session_id is None:
            await self._fail(send, 400, ErrorCode.INVALID_REQUEST, "Mcp-Session-Id header is required")
            return
        try:
            session = await self.sessions.find(session_id)
        except StoreUnavailableError as exc:
            await self._store_unavailable(send, exc)
            return
        if session is None:
            await self._fail(send, 404, ErrorCode.SESSION_EXPIRED, "Session expired or unknown", {"sessionId": session_id})
            return
        last_event_id = headers.get("last-event-id")
        if self.sessions.shared:
            await self.cluster.get(session, send, receive, version, last_event_id)  # type: ignore[union-attr]
            return
        if last_event_id is None and session.standalone.attached:
            await self._fail(send, 409, ErrorCode.INVALID_REQUEST, "A stream is already open for this session")
            return
        await start_sse(send, self._response_headers(session, version))
        if last_event_id is None:
            await self._serve_stream(session.standalone, session, send, receive, None)
            return
        replayer = _Replayer(send, last_event_id)
        stream_id = await self.event_store.replay_events_after(session.session_id, last_event_id, replayer)
        if stream_id is None or stream_id == session.standalone.stream_id:
            await self._serve_stream(session.standalone, session, send, receive, replayer)
            return
        live = session.streams.get(stream_id)
        if live is None or live.finished.is_set():
            await send_chunk(send, b"", more=False)  # that call is over and fully replayed
            return
        await self._serve_stream(live, session, send, receive, replayer)

    async def _serve_stream(
        self,
        stream: SseStream,
        session: StreamableSession,
        send: Send,
        receive: Receive,
        replayer: _Replayer | None,
    ) -> None:
        """Attach this GET to ``stream`` until the stream ends or the client leaves.

        After a replay, a second one under the stream's lock catches up on events written
        meanwhile, so the live feed starts exactly where the replay stopped.
        """
        async with stream.lock:
            if replayer is not None:
                await self.event_store.replay_events_after(session.session_id, replayer.last_id, replayer)
            stream.attach(send)
        if replayer is None and (session.protocol_version or "") >= V2025_11_25:
            await stream.prime()
        keep_alive = asyncio.ensure_future(self._keep_alive(stream))
        try:
            await self._wait_finished_or_gone(stream, receive)
        finally:
            keep_alive.cancel()
            if stream.attached:
                await stream.end_response()

    async def _wait_finished_or_gone(self, stream: SseStream, receive: Receive) -> None:
        finished = asyncio.ensure_future(stream.finished.wait())
        gone = asyncio.ensure_future(self._until_disconnect(receive))
        try:
            await asyncio.wait({finished, gone}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            finished.cancel()
            gone.cancel()
        if not stream.finished.is_set():
            stream.detach()

    @staticmethod
    async def _until_disconnect(receive: Receive) -> None:
        while (await receive())["type"] != "http.disconnect":
            pass

    async def _keep_alive(self, stream: SseStream) -> None:
        interval = self.options.sse_keep_alive_ms / 1000
        if interval <= 0:
            return
        while True:
            await asyncio.sleep(interval)
            await stream.keep_alive()

    # DELETE -------------------------------------------------------------------------------

    async def delete(self, send: Send, headers: dict[str, str]) -> None:
        session_id = headers.get("mcp-session-id")
        if session_id is None:
            await self._fail(send, 400, ErrorCode.INVALID_REQUEST, "Mcp-Session-Id header is required")
            return
        held_here = self.sessions.local(session_id) is not None
        try:
            known = await self.sessions.end(session_id)
        except StoreUnavailableError as exc:
            await self._store_unavailable(send, exc)
            return
        if self.cluster is not None and self.sessions.shared and not held_here:
            await self.cluster.publish_ended(session_id)  # else _forget tells the others
        if not known:
            await self._fail(send, 404, ErrorCode.SESSION_EXPIRED, "Session expired or unknown", {"sessionId": session_id})
            return
        await send_response(send, 200, b"")

    # session teardown ---------------------------------------------------------------------

    def _forget(self, session: StreamableSession, ended: bool = True) -> None:
        """Tear a session down here; ``ended``: it is over everywhere (not only this
        instance's replica of a shared session), so its events go too."""
        key = session.mcp.key
        self.app.dispatcher.cancel_connection(key)
        self.app.connections.unregister(key)
        self.app.subscriptions.unsubscribe_all(key)
        for stream in list(session.streams.values()):
            stream.close()
        if not ended or (self.sessions.shared and session.saved is None):
            return  # only this replica goes, or the session was never stored
        self._spawn(self._evict(session.session_id))
        if self.cluster is not None and self.sessions.shared:
            self._spawn(self.cluster.publish_ended(session.session_id))

    async def _evict(self, session_id: str) -> None:
        try:
            await self.event_store.evict_session(session_id)
        except StoreUnavailableError as exc:
            logger.warning("could not evict the events of session %s: %s", session_id, exc)

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def close(self) -> None:
        self.sessions.close_all()
        if self.cluster is not None:
            self._spawn(self.cluster.aclose())


__all__ = ["StreamableHttpHandler", "InvalidRequestError"]
