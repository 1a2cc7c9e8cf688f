"""Legacy HTTP+SSE transport (protocol 2024-11-05): ``GET {base}/sse`` opens a session's
event stream, ``POST {base}/messages?session_id=...`` carries the client's messages.

The stream starts with an ``endpoint`` event whose data is the (relative) URI to POST to;
every server-to-client message then follows as a ``message`` event. Each POST is answered
202 at once: what the server has to say (responses, parse errors, notifications, its own
requests) travels on the stream.

One ``ServerConnection`` serves each stream, so requests run concurrently and cancel when
the stream goes away. Its writes land on a bounded queue drained to the SSE response; a
queue that fills up means the client stopped reading, and the session is dropped rather
than blocking the engine. The session id comes from the ``session_id`` query parameter
(what the ``endpoint`` event carries) or, for clients that send it that way, the
``mcp-session-id`` header. These sessions are unrelated to Streamable HTTP sessions, but
count with them (and with WebSocket connections) against the app's one ``max_sessions``:
past it, the GET is answered 503.

Behind a load balancer (a ``message_bus`` shared by several instances) a client's POST may
reach an instance other than the one holding its stream. The session id then names its
owner (``{instance_id}.{token}``), so any instance knows where to send the message without
a store lookup: it goes on the bus to ``instance.{owner}`` (``legacy_message``), the owner
feeds it to the session's connection as if it had been posted there and confirms
(``legacy_taken``, with ``taken`` false when it holds no such session). The POST is answered
202 once confirmed, 404 when refused or when no confirmation comes within
``DEFAULT_FORWARD_TIMEOUT`` (the owner is gone). A session lives exactly as long as its
stream, so when the stream ends its owner refuses everything after: 404 everywhere.

Under bearer auth a session belongs to the identity whose GET opened it
(``mcpkit.auth._types.session_owner``): a POST made with another identity's token is
answered 404, as for an unknown session, on the instance holding the stream or (the
identity travels with the forwarded message) on any other. Tools see the POST's identity
on ``ctx.auth``; a message forwarded from another instance runs with the identity of the
stream's GET, the same owner.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, quote

from mcpkit._codes import ErrorCode
from mcpkit._exceptions import ConnectionClosedError, StoreUnavailableError
from mcpkit.auth._types import CURRENT_AUTH, AuthInfo, session_owner
from mcpkit.protocol._sse import encode_comment, encode_event, encode_json_event
from mcpkit.server._engine.connection import ServerConnection
from mcpkit.transports.http._asgi import (
    BodyTooLarge,
    Receive,
    Send,
    encode_headers,
    error_body,
    send_chunk,
    send_json,
    send_response,
    start_sse,
)
from mcpkit.transports.http._endpoint import request_headers
from mcpkit.transports.http._legacy_forwarding import _Forwarding, _ForwardsFull
from mcpkit.transports.http._options import StreamableHttpServerOptions
from mcpkit.transports.http._request_watch import RequestsFull, RequestWatch
from mcpkit.transports.http._streamable.cluster import SessionCluster
from mcpkit.transports.http._streamable.sessions import StreamableSessionStore

if TYPE_CHECKING:
    from mcpkit.server._engine.engine import McpEngine
    from mcpkit.transports.http._streamable.local_cluster import LocalCluster

logger = logging.getLogger("mcpkit.http")

#: Seconds spent trying to end the HTTP response of a stream that is going away (a client
#: that stopped reading would otherwise hold the handler in a blocked write).
END_RESPONSE_TIMEOUT = 1.0
#: Why a session ends when the server goes down (its queued answers are still written).
SHUTTING_DOWN = "server shutting down"

#: Query parameters that may carry the session id (``sessionId`` is what some clients use).
_SESSION_PARAMS = ("session_id", "sessionId")

#: Seconds a POST for a session held by another instance waits for that instance to confirm
#: it took the message. No confirmation in time means the owner is gone: 404.
DEFAULT_FORWARD_TIMEOUT = 3.0

#: Forwarded POSTs waiting for their confirmation at once, per instance; beyond, 503.
DEFAULT_MAX_PENDING_FORWARDS = 1024


class _LegacySession:
    """One legacy SSE session: its connection and the queue feeding its stream."""

    __slots__ = (
        "auth",
        "closed",
        "connection",
        "ended",
        "identity",
        "queue",
        "reason",
        "session_id",
    )

    def __init__(self, session_id: str, max_queued: int, auth: AuthInfo | None = None) -> None:
        self.session_id = session_id
        #: Who opened the stream (None without auth), and the owner key POSTs must match.
        self.auth = auth
        self.identity = session_owner(auth)
        self.queue: asyncio.Queue[bytes] = asyncio.Queue(max(1, max_queued))
        self.connection: ServerConnection | None = None
        #: Set when the session must end although its client is still connected.
        self.ended = asyncio.Event()
        self.reason = ""
        self.closed = False

    async def write(self, frame: bytes) -> None:
        """``ServerConnection``'s writer: queue one message as an SSE ``message`` event.

        Never waits: a full queue ends the session instead.
        """
        if self.closed or self.ended.is_set():
            raise ConnectionClosedError("the SSE session is closed")
        try:
            self.queue.put_nowait(encode_json_event(frame, event="message"))
        except asyncio.QueueFull:
            logger.warning(
                "legacy SSE session %s dropped: %d messages queued and the client is not reading",
                self.session_id,
                self.queue.maxsize,
            )
            self.end("queue full")
            raise ConnectionClosedError("the SSE client is not reading; session dropped") from None

    def end(self, reason: str) -> None:
        if not self.ended.is_set():
            self.reason = reason
            self.ended.set()


class LegacySseHandler:
    """The two ASGI endpoints of the legacy HTTP+SSE transport, and their sessions."""

    def __init__(
        self,
        engine: McpEngine,
        options: StreamableHttpServerOptions,
        cluster: SessionCluster | LocalCluster | None = None,
        *,
        forward_timeout: float = DEFAULT_FORWARD_TIMEOUT,
        max_pending_forwards: int = DEFAULT_MAX_PENDING_FORWARDS,
        session_table: StreamableSessionStore | None = None,
    ) -> None:
        self.engine = engine
        self.options = options
        self.sessions: dict[str, _LegacySession] = {}
        #: What counts the sessions against ``max_sessions``: the app's Streamable HTTP
        #: session table (one bound for every kind), else a table of its own. (Not ``or``:
        #: an empty table is falsy.)
        self.session_table = (
            session_table
            if session_table is not None
            else StreamableSessionStore(
                max_sessions=options.max_sessions, idle_timeout=options.session_idle_timeout
            )
        )
        #: This endpoint's POST bodies being read, per event loop (``body_read_timeout``).
        self.requests = RequestWatch(max_requests=options.max_concurrent_requests)
        #: Set when a message bus links this instance to others (``cluster``: the
        #: Streamable HTTP handler's, which owns the bus); None keeps the one-instance path.
        self.forwarding = (
            _Forwarding(self, cluster, forward_timeout, max_pending_forwards)
            if isinstance(cluster, SessionCluster) and cluster.bus is not None
            else None
        )

    # GET {base}/sse -----------------------------------------------------------------------

    async def get(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        """``GET {base}/sse``, an ASGI app: opens a session and streams its messages."""
        headers = request_headers(scope)
        if scope["method"] != "GET":
            await self._fail(
                send,
                405,
                ErrorCode.INVALID_REQUEST,
                f"Method {scope['method']} not allowed",
                allow="GET",
            )
            return
        if not self.session_table.admit_connection():
            await self._fail(
                send, 503, ErrorCode.INTERNAL_ERROR, "Too many sessions; try again later"
            )
            return
        try:
            await self._open(scope, receive, send, headers)
        finally:
            self.session_table.release_connection()

    async def _open(
        self, scope: dict[str, Any], receive: Receive, send: Send, headers: dict[str, str]
    ) -> None:
        """A session admitted: its stream, served until the client goes."""
        forwarding = self.forwarding
        if forwarding is None:
            session_id = secrets.token_urlsafe(24)
        else:
            session_id = forwarding.new_session_id()
            await self._join_bus(forwarding)
        auth = CURRENT_AUTH.get()
        session = _LegacySession(session_id, self.options.max_queued_messages, auth)
        connection = ServerConnection(
            self.engine,
            session.write,
            headers=headers,
            max_message_bytes=self.options.max_body_bytes,
            max_message_depth=self.options.max_message_depth,
            auth=auth,
            http_scope=scope,
        )
        connection.session.session_id = session_id
        session.connection = connection
        self.sessions[session_id] = session
        try:
            await start_sse(send)
            await send_chunk(
                send, encode_event(self._endpoint_uri(scope, session_id), event="endpoint")
            )
            await self._stream_until_gone(session, send, receive)
        finally:
            self.sessions.pop(session_id, None)
            session.closed = True
            await connection.close()
            try:
                async with asyncio.timeout(END_RESPONSE_TIMEOUT):
                    await send_chunk(send, b"", more=False)
            except Exception:  # the client is gone or not reading: the server closes the socket
                logger.debug(
                    "could not end the SSE response of session %s", session_id, exc_info=True
                )

    @staticmethod
    async def _join_bus(forwarding: _Forwarding) -> None:
        """Before the client learns where to post: POSTs that reach other instances come
        here on the bus. Without it the stream still works through this instance."""
        try:
            await forwarding.ready()
        except StoreUnavailableError as exc:  # the next request retries
            logger.warning("message bus unavailable: %s", exc)

    def _endpoint_uri(self, scope: dict[str, Any], session_id: str) -> str:
        """The relative URI of the POST endpoint, as the client sees this server.

        Mounted under a prefix, the URI starts with it: ``root_path`` is that prefix whether
        the host keeps it in ``path`` (the ASGI spec, Starlette) or strips it."""
        root = (scope.get("root_path") or "").rstrip("/")
        return f"{root}{self.options.base_path}/messages?session_id={quote(session_id)}"

    async def _stream_until_gone(
        self, session: _LegacySession, send: Send, receive: Receive
    ) -> None:
        pump = asyncio.ensure_future(self._pump(session, send))
        gone = asyncio.ensure_future(self._until_disconnect(receive))
        ended = asyncio.ensure_future(session.ended.wait())
        tasks = {pump, gone, ended}
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        if pump.done() and not pump.cancelled() and pump.exception() is not None:
            logger.debug(
                "SSE write failed for session %s", session.session_id, exc_info=pump.exception()
            )
        elif session.reason == SHUTTING_DOWN and not gone.done():
            await self._flush(session, send)

    @staticmethod
    async def _flush(session: _LegacySession, send: Send) -> None:
        """Write what the session still has queued (the answers of calls ended by a
        shutdown), within ``END_RESPONSE_TIMEOUT``."""
        with contextlib.suppress(Exception):
            async with asyncio.timeout(END_RESPONSE_TIMEOUT):
                while not session.queue.empty():
                    await send_chunk(send, session.queue.get_nowait())

    async def _pump(self, session: _LegacySession, send: Send) -> None:
        """Write queued events to the response, with a keep-alive comment when idle. A write
        blocked ``sse_write_timeout`` seconds (the client stopped reading) ends the session,
        as a full queue does."""
        interval = self.options.sse_keep_alive_ms / 1000
        write_timeout = self.options.sse_write_timeout
        queue = session.queue
        while True:
            if interval > 0:
                try:
                    async with asyncio.timeout(interval):
                        chunk = await queue.get()
                except TimeoutError:
                    chunk = encode_comment("keep-alive")
            else:
                chunk = await queue.get()
            try:
                async with asyncio.timeout(write_timeout if write_timeout > 0 else None):
                    await send_chunk(send, chunk)
            except TimeoutError:
                logger.warning(
                    "legacy SSE session %s dropped: a write stayed blocked for %s s",
                    session.session_id,
                    write_timeout,
                )
                session.end("client not reading")
                return

    @staticmethod
    async def _until_disconnect(receive: Receive) -> None:
        while (await receive())["type"] != "http.disconnect":
            pass

    # POST {base}/messages -----------------------------------------------------------------

    async def post(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        """``POST {base}/messages``, an ASGI app: one message for a session's connection."""
        headers = request_headers(scope)
        if scope["method"] != "POST":
            await self._fail(
                send,
                405,
                ErrorCode.INVALID_REQUEST,
                f"Method {scope['method']} not allowed",
                allow="POST",
            )
            return
        session_id = self._session_id(scope, headers)
        if session_id is None:
            await self._fail(
                send,
                400,
                ErrorCode.INVALID_REQUEST,
                "session_id query parameter (or Mcp-Session-Id header) is required",
            )
            return
        session = self.sessions.get(session_id)
        if session is None or session.closed or session.connection is None:
            owner = (
                self.forwarding.owner_elsewhere(session_id) if self.forwarding is not None else None
            )
            if owner is None:
                await self._session_expired(send, session_id)
            else:
                await self._post_elsewhere(owner, session_id, receive, send)
            return
        if session.identity != session_owner(CURRENT_AUTH.get()):
            await self._session_expired(send, session_id)  # another identity's: as unknown
            return
        body = await self._read_body(receive, send)
        if body is None:
            return
        if session.closed:  # the stream went away while the body arrived
            await self._session_expired(send, session_id)
            return
        # Parse errors, responses and notifications are all handled (or answered on the
        # stream) by the connection; requests run as tasks of their own, as the POST's
        # identity (the same owner as the GET's, perhaps with a newer token).
        session.connection.feed(body, CURRENT_AUTH.get(), scope)
        await send_response(send, 202, b"Accepted", content_type=b"text/plain; charset=utf-8")

    async def _post_elsewhere(
        self, owner: str, session_id: str, receive: Receive, send: Send
    ) -> None:
        """A POST for a session whose stream another instance holds: forwarded there."""
        assert self.forwarding is not None
        body = await self._read_body(receive, send)
        if body is None:
            return
        try:
            taken = await self.forwarding.forward(
                owner, session_id, body, session_owner(CURRENT_AUTH.get())
            )
        except StoreUnavailableError as exc:
            logger.warning("could not forward a legacy SSE message: %s", exc)
            await self._unavailable(send, f"Message bus unavailable: {exc}")
            return
        except _ForwardsFull:
            await self._unavailable(send, "Too many forwarded messages waiting; try again later")
            return
        if taken:
            await self._accepted(send)
        else:
            await self._session_expired(send, session_id)

    def deliver(self, session_id: str, body: bytes, identity: str | None = None) -> bool:
        """Feed a message posted on another instance by ``identity`` to a session held
        here, exactly as ``post`` does; False when no such session is open or it is
        another identity's. The message runs with the identity of the session's GET: the
        bus worker's context is not the poster's and may hold some other request's."""
        session = self.sessions.get(session_id)
        if session is None or session.closed or session.connection is None:
            return False
        if session.identity != identity:
            return False
        token = CURRENT_AUTH.set(session.auth)
        try:
            session.connection.feed(body)
        finally:
            CURRENT_AUTH.reset(token)
        return True

    @staticmethod
    def _session_id(scope: dict[str, Any], headers: dict[str, str]) -> str | None:
        query: dict[str, list[str]] = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        for name in _SESSION_PARAMS:
            values = query.get(name)
            if values and values[0]:
                return values[0]
        return headers.get("mcp-session-id") or None

    # helpers ------------------------------------------------------------------------------

    @staticmethod
    async def _accepted(send: Send) -> None:
        await send_response(send, 202, b"Accepted", content_type=b"text/plain; charset=utf-8")

    async def _session_expired(self, send: Send, session_id: str) -> None:
        await self._fail(
            send, 404, ErrorCode.SESSION_EXPIRED, "Session expired", {"sessionId": session_id}
        )

    async def _read_body(self, receive: Receive, send: Send) -> bytes | None:
        """A POST's body, read under this endpoint's bounds; None when it was refused and
        answered instead (413 too large, 503 too many requests at once). ``BodyTimeout``
        goes on: ``McpAsgiApp`` answers it 408."""
        try:
            return await self.requests.read_body(
                receive, self.options.max_body_bytes, self.options.body_read_timeout
            )
        except BodyTooLarge:
            await self._fail(
                send,
                413,
                ErrorCode.INVALID_REQUEST,
                f"Body exceeds {self.options.max_body_bytes} bytes",
            )
        except RequestsFull as exc:
            await self._unavailable(send, str(exc))
        return None

    @staticmethod
    async def _unavailable(send: Send, message: str) -> None:
        """503 with a JSON-RPC error the client may retry on, as Streamable HTTP answers an outage."""
        body = error_body(ErrorCode.INTERNAL_ERROR, message, {"retryable": True})
        await send_json(send, 503, body, encode_headers([("retry-after", "1")]))

    async def _fail(
        self,
        send: Send,
        status: int,
        code: int,
        message: str,
        data: Any = None,
        allow: str | None = None,
    ) -> None:
        extra = encode_headers([("allow", allow)]) if allow else None
        await send_json(send, status, error_body(code, message, data), extra)

    def close(self) -> None:
        """End every open stream (server shutdown); each GET then cleans its session up."""
        for session in list(self.sessions.values()):
            session.end(SHUTTING_DOWN)
        self.requests.close()

    def __len__(self) -> int:
        return len(self.sessions)


__all__ = ["DEFAULT_FORWARD_TIMEOUT", "DEFAULT_MAX_PENDING_FORWARDS", "LegacySseHandler"]
