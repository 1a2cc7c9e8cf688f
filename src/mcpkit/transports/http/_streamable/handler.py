"""Streamable HTTP (2025-03-26 and later): one endpoint, POST / GET / DELETE.

POST carries client messages. A request is answered as JSON, or as an SSE stream opened
the moment the call produces a message of its own (progress, logs, a server-to-client
request), so quick calls stay plain JSON (``calls.py``). A 2026-07-28 POST is stateless
(``modern_post.py``). GET opens the session's standalone stream or resumes a dropped one
(``Last-Event-ID``, ``get.py``). DELETE ends the session.

With a ``SessionStore`` backend (``options.session_store``) sessions are shared between
instances: what that changes lives in ``cluster.py``; this module calls it at a few
points and keeps the in-memory default's path free of store I/O.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from typing import TYPE_CHECKING, Any

from mcpkit._codes import ErrorCode
from mcpkit._exceptions import (
    ProtocolError,
    StoreUnavailableError,
)
from mcpkit.auth._types import CURRENT_AUTH, session_owner
from mcpkit.protocol._jsonrpc import (
    JsonRpcErrorResponse,
    JsonRpcNotification,
    JsonRpcRequest,
    JsonRpcResponse,
    decode_message,
    error_response,
)
from mcpkit.protocol._versions import (
    LATEST_HANDSHAKE_VERSION,
    allows_batch_post,
    is_modern,
    is_supported,
    negotiate_version,
    resumable_streams,
)
from mcpkit.server._engine.binding import CURRENT_BINDING, TransportBinding
from mcpkit.server._engine.lifecycle import close_connection
from mcpkit.server._engine.session import McpSession
from mcpkit.stores._events import InMemoryEventStore
from mcpkit.transports.http._asgi import (
    BodyTooLarge,
    Receive,
    Send,
    empty_response,
    encode_headers,
    json_response,
    send_json,
    send_response,
)
from mcpkit.transports.http._endpoint import request_headers
from mcpkit.transports.http._options import StreamableHttpServerOptions
from mcpkit.transports.http._request_watch import (
    ANSWER_PIECE_BYTES,
    RequestsFull,
    RequestWatch,
    WatchedRequest,
    read_body,
    write_in_pieces,
)
from mcpkit.transports.http._streamable.admission import session_for, session_table
from mcpkit.transports.http._streamable.calls import PostCall
from mcpkit.transports.http._streamable.cluster import STATEFUL_METHODS, SessionCluster
from mcpkit.transports.http._streamable.get import ListenStreams
from mcpkit.transports.http._streamable.local_cluster import LocalCluster
from mcpkit.transports.http._streamable.modern_post import (
    MODERN_ERROR_STATUS,
    ModernPosts,
    is_modern_post,
)
from mcpkit.transports.http._streamable.replies import (
    answer_cancelled,
    answer_too_large,
    fail,
    fail_unknown_session,
    listen_needs_sse,
    not_acceptable,
    store_unavailable,
    too_busy,
    unsupported_version,
)
from mcpkit.transports.http._streamable.sessions import StreamableSession
from mcpkit.transports.http._streamable.step_up import answer_step_up
from mcpkit.transports.http._streamable.streams import SseResponse, SseStream

if TYPE_CHECKING:
    from mcpkit.server._engine.engine import McpEngine

logger = logging.getLogger("mcpkit.http")

#: Versions whose answer headers a stateless endpoint keeps made (a POST names a supported
#: version, or none, before its headers are made: a handful at most).
MAX_VERSION_HEADERS = 16


class StreamableHttpHandler:
    """The Streamable HTTP endpoint, an ASGI app: ``await handler(scope, receive, send)``."""

    def __init__(self, engine: McpEngine, options: StreamableHttpServerOptions) -> None:
        self.engine = engine
        self.options = options
        # Not ``or``: an empty store is falsy (it has a length).
        self.event_store = (
            options.event_store if options.event_store is not None else InMemoryEventStore()
        )
        self.sessions = session_table(options, self.event_store)
        self.sessions.on_remove(self._forget)
        self._stateless_ids = itertools.count(1)
        #: The session each stateless POST of a version copies (``_engine.binding``).
        self._stateless_sessions: dict[str | None, McpSession] = {}
        self._version_headers: dict[str | None, list[tuple[bytes, bytes]]] = {}
        self._stream_ids = itertools.count(1)
        self._background: set[asyncio.Task[Any]] = set()
        #: This endpoint's POSTs while served: body deadlines, clients gone, quiet calls.
        quiet_open = options.sse_keep_alive_ms / 1000
        self.requests = RequestWatch(quiet_open, options.max_concurrent_requests)
        self.modern = ModernPosts(self.engine)
        #: The GET endpoint: a session's standalone stream, or one resumed.
        self.listen = ListenStreams(self)
        #: Shared sessions and/or a message bus; else ``LocalCluster``, which does nothing.
        self.cluster: SessionCluster | LocalCluster = (
            SessionCluster(self)
            if self.sessions.shared or options.message_bus is not None
            else LocalCluster()
        )
        #: The cluster when sessions are shared: ``initialize`` and GET then take its path.
        self.shared_cluster = (
            self.cluster
            if isinstance(self.cluster, SessionCluster) and self.sessions.shared
            else None
        )
        #: Nothing shared, no bus: the cluster's per-message steps do nothing, and are skipped.
        self._local = type(self.cluster) is LocalCluster
        self._stream_prefix = (
            f"{self.cluster.instance_id}." if self.shared_cluster is not None else ""
        )

    # dispatch by HTTP method --------------------------------------------------------------

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        headers = request_headers(scope)
        method = scope["method"]
        if not self.cluster.started:
            try:
                await self.cluster.start()
            except StoreUnavailableError as exc:  # serve anyway; the next request retries
                logger.warning("message bus unavailable: %s", exc)
        if method == "POST":
            await self.post(scope, receive, send, headers)
            return
        stateless = self.options.stateless or is_modern(headers.get("mcp-protocol-version"))
        if method == "GET" and not stateless:
            await self.listen.get(receive, send, headers)
        elif method == "DELETE" and not stateless:
            await self.delete(send, headers)
        else:
            allow = "POST" if stateless else "GET, POST, DELETE"
            await fail(
                send,
                405,
                ErrorCode.INVALID_REQUEST,
                f"Method {method} not allowed",
                extra=encode_headers([("allow", allow)]),
            )

    # POST ---------------------------------------------------------------------------------

    async def post(
        self, scope: dict[str, Any], receive: Receive, send: Send, headers: dict[str, str]
    ) -> None:
        accept = headers.get("accept", "*/*")
        wants_sse = "text/event-stream" in accept
        if not (wants_sse or "application/json" in accept or "*/*" in accept):
            await not_acceptable(send)
            return
        # Watched from here: its body's deadline, then its call's client.
        try:
            watched = self.requests.enter(receive, self.options.body_read_timeout)
        except RequestsFull as exc:
            await too_busy(send, exc)
            return
        try:
            version = headers.get("mcp-protocol-version")
            limit = self.options.max_body_bytes
            try:  # BodyTimeout: answered 408 by McpAsgiApp
                body = await read_body(receive, limit, watched)
            except BodyTooLarge:
                await fail(send, 413, ErrorCode.INVALID_REQUEST, f"Body exceeds {limit} bytes")
                return
            try:
                decoded = decode_message(
                    body, max_bytes=None, max_depth=self.options.max_message_depth
                )
            except ProtocolError as exc:
                await send_json(send, 400, error_response(getattr(exc, "request_id", None), exc))
                return
            if is_modern_post(decoded, headers, version):
                binding, response_headers, refusal = self.modern.admit(
                    decoded, scope, headers, version
                )
                if refusal is not None:
                    status, answer = refusal
                    if answer is None:
                        await send_response(send, status, b"", response_headers)
                    else:
                        await send_json(send, status, answer, response_headers)
                    return
                request: JsonRpcRequest = decoded  # type: ignore[assignment]  # checked by admission
                if not wants_sse and request.method == "subscriptions/listen":
                    await listen_needs_sse(send, request, response_headers)
                    return
                await self.serve_request(
                    request,
                    None,
                    binding,  # type: ignore[arg-type]
                    wants_sse,
                    send,
                    watched,
                    response_headers,
                    modern=True,
                )
                return
            # A refusal of the whole POST carries the id of its request, never a response's
            # (the client would take it for the answer to its own request of that id).
            request_id = decoded.id if type(decoded) is JsonRpcRequest else None
            if not is_supported(version):
                await unsupported_version(send, version, request_id)
                return
            batch = type(decoded) is list
            messages: list[Any] = decoded if batch else [decoded]  # type: ignore[assignment]
            session = None
            if not self.options.stateless:
                try:
                    session, failure = await session_for(self, messages, headers)
                except StoreUnavailableError as exc:
                    await store_unavailable(send, exc, request_id)
                    return
                if failure is not None:
                    await send_json(
                        send, failure[0], failure[1], self.response_headers(None, version)
                    )
                    return
            if batch and not allows_batch_post(
                None if session is None else session.protocol_version, version
            ):
                await fail(
                    send,
                    400,
                    ErrorCode.INVALID_REQUEST,
                    "JSON-RPC batches are not supported in this protocol version",
                )
                return
            binding = self._binding(session, scope, headers, version)
            if batch or type(decoded) is not JsonRpcRequest:
                response_headers = self.response_headers(session, version)
                await self._serve_messages(
                    messages, session, binding, send, response_headers, batch
                )
                return
            initialize = decoded.method == "initialize"
            # initialize's answer names the version it agrees on, not the one the header did.
            shown = (
                negotiate_version((decoded.params or {}).get("protocolVersion"))
                if initialize
                else version
            )
            response_headers = self.response_headers(session, shown)
            if initialize and session is not None:
                await self._initialize(
                    decoded, session, binding, wants_sse, send, watched, response_headers
                )
            else:
                await self.serve_request(
                    decoded, session, binding, wants_sse, send, watched, response_headers
                )
        finally:
            self.requests.leave(watched)

    async def owned_session(
        self, send: Send, session_id: str, owner: str | None
    ) -> StreamableSession | None:
        """The session ``session_id`` names, when ``owner`` (``session_owner`` of the
        request's identity) may use it; else None, the request answered: 503 when the
        store is down, 404 when the session is unknown or another's."""
        try:
            session = await self.sessions.find_owned(session_id, owner)
        except StoreUnavailableError as exc:
            await store_unavailable(send, exc)
            return None
        if session is None:
            await fail_unknown_session(send, session_id)
        return session

    def response_headers(
        self, session: StreamableSession | None, version: str | None
    ) -> list[tuple[bytes, bytes]]:
        """``MCP-Protocol-Version`` (and ``Mcp-Session-Id``) of an answer. Made once per
        version, and per session, then shared by the answers: never changed by a user."""
        if session is None:
            headers = self._version_headers.get(version)
            if headers is None:
                headers = [
                    (b"mcp-protocol-version", (version or LATEST_HANDSHAKE_VERSION).encode())
                ]
                if len(self._version_headers) < MAX_VERSION_HEADERS:
                    self._version_headers[version] = headers
            return headers
        shown = session.mcp.protocol_version or version or LATEST_HANDSHAKE_VERSION
        made = session.answer_headers
        if made is None or made[0] != shown:
            made = session.answer_headers = (
                shown,
                [
                    (b"mcp-protocol-version", shown.encode()),
                    (b"mcp-session-id", session.session_id.encode()),
                ],
            )
        return made[1]

    def _binding(
        self,
        session: StreamableSession | None,
        scope: dict[str, Any],
        headers: dict[str, str],
        version: str | None,
    ) -> TransportBinding:
        auth = CURRENT_AUTH.get()
        if session is not None:
            mcp = session.mcp
            if auth is not mcp.seen_auth:  # its first request, or maybe another token
                self.engine.identities.seen(mcp, auth)
            binding = TransportBinding(
                session=mcp,
                send=mcp.send,
                headers=headers,
                connection_key=mcp.key,
                auth=auth,
                http_scope=scope,
            )
        else:
            made = self._stateless_sessions.get(version)
            if made is None:  # once per version: is_supported has bounded them
                made = McpSession.for_request("", version or LATEST_HANDSHAKE_VERSION, None)
                self._stateless_sessions[version] = made
            temp = made.copy_with_key(f"sl{next(self._stateless_ids)}")
            binding = TransportBinding(
                session=temp, headers=headers, connection_key=temp.key, auth=auth, http_scope=scope
            )
        CURRENT_BINDING.set(binding)
        return binding

    async def _initialize(
        self,
        request: JsonRpcRequest,
        session: StreamableSession,
        binding: TransportBinding,
        wants_sse: bool,
        send: Send,
        watched: WatchedRequest,
        response_headers: list[tuple[bytes, bytes]],
    ) -> None:
        """``initialize`` on the session just made for it: it is dropped if that fails."""
        if self.shared_cluster is not None:
            await self.shared_cluster.initialize(request, session, binding, send, response_headers)
            return
        await self.serve_request(
            request, session, binding, wants_sse, send, watched, response_headers
        )
        if not session.mcp.initialize_seen:
            self.sessions.remove(session.session_id)

    async def _serve_messages(
        self,
        messages: list[Any],
        session: StreamableSession | None,
        binding: TransportBinding,
        send: Send,
        response_headers: list[tuple[bytes, bytes]],
        batch: bool,
    ) -> None:
        """Notifications, the client's answers, and (2025-03-26) batches."""
        requests: list[JsonRpcRequest] = []
        replies: list[dict[str, Any]] = []
        for message in messages:
            if isinstance(message, JsonRpcRequest):
                requests.append(message)
            elif isinstance(message, JsonRpcNotification):
                await self.engine.dispatcher.notify(message, binding)
                if session is not None and not self._local:
                    await self.cluster.after_notification(session, message)
            elif isinstance(message, (JsonRpcResponse, JsonRpcErrorResponse)):
                # Never answered (an answer is not answered), even one with no id.
                if not binding.session.resolve(message):  # type: ignore[union-attr]
                    try:
                        await self.cluster.route_response(session, message)
                    except StoreUnavailableError as exc:  # not passed on: the client retries
                        return await store_unavailable(send, exc)
            else:  # an invalid member of a batch
                replies.append(error_response(getattr(message, "request_id", None), message))
        if not requests and not replies:
            if (
                session is not None
                and self.shared_cluster is not None  # else nothing is stored
                and any(getattr(m, "method", None) in STATEFUL_METHODS for m in messages)
            ):
                await self.shared_cluster.save(session)
            start, body = empty_response(202, response_headers)
            await send(start)
            await send(body)
            return
        results = await asyncio.gather(
            *(self.engine.dispatcher.dispatch(r, binding) for r in requests)
        )
        replies.extend(r for r in results if r is not None)
        await send_json(send, 200, replies if batch else replies[0], response_headers)

    async def serve_request(
        self,
        request: JsonRpcRequest,
        session: StreamableSession | None,
        binding: TransportBinding,
        wants_sse: bool,
        send: Send,
        watched: WatchedRequest,
        response_headers: list[tuple[bytes, bytes]],
        modern: bool = False,
    ) -> None:
        """Run one request and answer it as JSON, or on the SSE stream it opened (or 403, a
        token to step up)."""
        if binding.auth is not None and await answer_step_up(self.engine, request, binding, send):
            return
        call = PostCall(
            self, send, response_headers, session, wants_sse, binding.connection_key, request.id
        )
        if wants_sse:
            binding.send = call
            # Closing the stream before its response (SEP-1699 polling) exists from
            # 2025-11-25: earlier clients could not resume it (no priming event id).
            if session is not None and resumable_streams(session.protocol_version):
                binding.close_stream = call.close_stream
        elif session is not None:
            binding.send = call  # JSON only: the session's GET stream, if one is open
        if session is not None:
            session.calls += 1
        watched.call = call  # a call that waits may outlive its client
        try:
            response = await self.engine.dispatcher.dispatch(request, binding)
        except BaseException:
            call.end()
            if call.stream is not None:
                call.stream.close()  # its response ends: nothing will answer on it now
            raise
        finally:
            watched.call = None  # no more watchers or early openings: it is answered now
            call.finished = True
            if session is not None:
                session.calls -= 1
                binding.close_stream = None  # breaks the binding<->call cycle
        if (
            session is not None
            and self.shared_cluster is not None  # else nothing is stored
            and request.method in STATEFUL_METHODS
        ):
            await self.shared_cluster.save(session)
        if call.opened:
            await call.open_sse()  # an opening under way (a quiet call's) completes first
            stream: SseStream = call.stream  # type: ignore[assignment]
            try:
                if response is not None:
                    await stream.write(response)
            finally:
                await stream.end_response()  # also when cancelled: the stream ends unanswered
                call.end()
        elif response is None:
            await answer_cancelled(request, wants_sse, send, response_headers)
        else:
            status = (
                MODERN_ERROR_STATUS.get(response["error"].get("code"), 200)
                if modern and "error" in response
                else 200
            )
            start, body = json_response(status, response, response_headers)
            size = len(body["body"])
            if size <= ANSWER_PIECE_BYTES:  # the usual answer: one message, never waits
                await send(start)
                await send(body)
                return
            if size > self.options.max_answer_bytes:
                start, body = answer_too_large(
                    request, size, self.options.max_answer_bytes, response_headers
                )
            await send(start)
            await write_in_pieces(send, body["body"], watched, self.options.sse_write_timeout)

    def new_post_stream(self, session: StreamableSession | None) -> SseStream:
        """The SSE stream of a POST's answer; resumable within a session."""
        stream_id = f"{self._stream_prefix}p{next(self._stream_ids)}"
        options = self.options
        return SseStream(
            stream_id,
            None if session is None else session.session_id,
            None if session is None else self.event_store,
            options.retry_ms,
            max_queued=options.max_queued_messages,
            write_timeout=options.sse_write_timeout,
            keep_alive=options.sse_keep_alive_ms / 1000,
        )

    def sse_response(self, send: Send, label: str = "") -> SseResponse:
        """A started SSE response to a GET, with this endpoint's bounds and keep-alive."""
        options = self.options
        return SseResponse(
            send,
            max_queued=options.max_queued_messages,
            write_timeout=options.sse_write_timeout,
            keep_alive=options.sse_keep_alive_ms / 1000,
            label=label,
        )

    # DELETE -------------------------------------------------------------------------------

    async def delete(self, send: Send, headers: dict[str, str]) -> None:
        session_id = headers.get("mcp-session-id")
        if session_id is None:
            await fail(send, 400, ErrorCode.INVALID_REQUEST, "Mcp-Session-Id header is required")
            return
        # The ownership check, without a coroutine when nothing is to be looked up: without
        # auth, and no owner here, DELETE works as it always did.
        owner = session_owner(CURRENT_AUTH.get())
        held = self.sessions.local(session_id)
        if owner is not None or (held is not None and held.owner is not None):
            if await self.owned_session(send, session_id, owner) is None:
                return  # answered 404, as an unknown session
            held = self.sessions.local(session_id)  # it may have been adopted meanwhile
        if self.sessions.backend is None:  # end(), with nothing to wait for
            known = self.sessions.remove(session_id) is not None
        else:
            try:
                known = await self.sessions.end(session_id)
            except StoreUnavailableError as exc:
                await store_unavailable(send, exc)
                return
            if held is None:
                await self.cluster.publish_ended(session_id)  # else _forget tells the others
        if not known:
            await fail_unknown_session(send, session_id)
            return
        start, body = empty_response(200)
        await send(start)
        await send(body)

    # session teardown ---------------------------------------------------------------------

    def _forget(self, session: StreamableSession, ended: bool = True) -> None:
        """Tear a session down here; ``ended``: it is over everywhere (not only this
        instance's replica of a shared session), so its events go too."""
        close_connection(self.engine, session.mcp.key)
        for stream in list(session.streams.values()):
            stream.close()
        if not ended or (self.sessions.shared and session.saved is None):
            return  # only this replica goes, or the session was never stored
        if not self.event_store.evict_session_now(session.session_id):
            self._spawn(self._evict(session.session_id))
        if self.sessions.shared:
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

    def end_streams(self) -> None:
        """End every GET stream open here, each with its end of body (the server is going
        down: uvicorn waits for open responses before it runs the lifespan shutdown, and
        a GET stream never ends by itself). Sessions and running calls go on until
        ``close``; a call's own SSE answer ends when the call does."""
        for session in self.sessions.held():
            session.standalone.end_attached()
            session.close_relays()

    def close(self) -> None:
        """Close every session held here; their streams end, each with its end of body."""
        self.sessions.close_all()
        self.requests.close()
        self._spawn(self.cluster.aclose())


__all__ = ["StreamableHttpHandler"]
