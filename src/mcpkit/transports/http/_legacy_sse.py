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
``mcp-session-id`` header. These sessions are unrelated to Streamable HTTP sessions.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, quote

from mcpkit._codes import ErrorCode
from mcpkit._exceptions import ConnectionClosedError
from mcpkit.protocol._sse import encode_comment, encode_event
from mcpkit.server._connection import ServerConnection
from mcpkit.transports.http._asgi import (
    BodyTooLarge,
    Receive,
    Send,
    encode_headers,
    error_body,
    read_body,
    send_chunk,
    send_json,
    send_response,
    start_sse,
)
from mcpkit.transports.http._options import StreamableHttpServerOptions

if TYPE_CHECKING:
    from mcpkit.server._app import McpServerApp

logger = logging.getLogger("mcpkit.http")

#: Seconds spent trying to end the HTTP response of a stream that is going away (a client
#: that stopped reading would otherwise hold the handler in a blocked write).
END_RESPONSE_TIMEOUT = 1.0

#: Query parameters that may carry the session id (``sessionId`` is what some clients use).
_SESSION_PARAMS = ("session_id", "sessionId")


class _LegacySession:
    """One legacy SSE session: its connection and the queue feeding its stream."""

    __slots__ = ("session_id", "queue", "connection", "ended", "reason", "closed")

    def __init__(self, session_id: str, max_queued: int) -> None:
        self.session_id = session_id
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
            self.queue.put_nowait(encode_event(frame, event="message"))
        except asyncio.QueueFull:
            logger.warning(
                "legacy SSE session %s dropped: %d messages queued and the client is not reading",
                self.session_id, self.queue.maxsize,
            )
            self.end("queue full")
            raise ConnectionClosedError("the SSE client is not reading; session dropped") from None

    def end(self, reason: str) -> None:
        if not self.ended.is_set():
            self.reason = reason
            self.ended.set()


class LegacySseHandler:
    """The two ASGI endpoints of the legacy HTTP+SSE transport, and their sessions."""

    def __init__(self, app: McpServerApp, options: StreamableHttpServerOptions) -> None:
        self.app = app
        self.options = options
        self.sessions: dict[str, _LegacySession] = {}

    # GET {base}/sse -----------------------------------------------------------------------

    async def get(self, scope: dict[str, Any], receive: Receive, send: Send, headers: dict[str, str]) -> None:
        if scope["method"] != "GET":
            await self._fail(send, 405, ErrorCode.INVALID_REQUEST, f"Method {scope['method']} not allowed", allow="GET")
            return
        if len(self.sessions) >= self.options.max_sessions:
            await self._fail(send, 503, ErrorCode.INTERNAL_ERROR, "Too many sessions; try again later")
            return
        session_id = secrets.token_urlsafe(24)
        session = _LegacySession(session_id, self.options.max_queued_messages)
        connection = ServerConnection(
            self.app,
            session.write,
            headers=headers,
            max_message_bytes=self.options.max_body_bytes,
        )
        connection.session.session_id = session_id
        session.connection = connection
        self.sessions[session_id] = session
        try:
            await start_sse(send)
            await send_chunk(send, encode_event(self._endpoint_uri(scope, session_id), event="endpoint"))
            await self._stream_until_gone(session, send, receive)
        finally:
            self.sessions.pop(session_id, None)
            session.closed = True
            await connection.close()
            try:
                async with asyncio.timeout(END_RESPONSE_TIMEOUT):
                    await send_chunk(send, b"", more=False)
            except Exception:  # the client is gone or not reading: the server closes the socket
                logger.debug("could not end the SSE response of session %s", session_id, exc_info=True)

    def _endpoint_uri(self, scope: dict[str, Any], session_id: str) -> str:
        """The relative URI of the POST endpoint, as the client sees this server.

        A ``root_path`` (mounted under a prefix) is included unless the server already
        put it in ``path``.
        """
        root = scope.get("root_path", "") or ""
        if root and scope["path"].startswith(root):
            root = ""
        return f"{root}{self.options.base_path}/messages?session_id={quote(session_id)}"

    async def _stream_until_gone(self, session: _LegacySession, send: Send, receive: Receive) -> None:
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
            logger.debug("SSE write failed for session %s", session.session_id, exc_info=pump.exception())

    async def _pump(self, session: _LegacySession, send: Send) -> None:
        """Write queued events to the response, with a keep-alive comment when idle."""
        interval = self.options.sse_keep_alive_ms / 1000
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
            await send_chunk(send, chunk)

    @staticmethod
    async def _until_disconnect(receive: Receive) -> None:
        while (await receive())["type"] != "http.disconnect":
            pass

    # POST {base}/messages -----------------------------------------------------------------

    async def post(self, scope: dict[str, Any], receive: Receive, send: Send, headers: dict[str, str]) -> None:
        if scope["method"] != "POST":
            await self._fail(send, 405, ErrorCode.INVALID_REQUEST, f"Method {scope['method']} not allowed", allow="POST")
            return
        session_id = self._session_id(scope, headers)
        if session_id is None:
            await self._fail(
                send, 400, ErrorCode.INVALID_REQUEST,
                "session_id query parameter (or Mcp-Session-Id header) is required",
            )
            return
        session = self.sessions.get(session_id)
        if session is None or session.closed or session.connection is None:
            await self._fail(send, 404, ErrorCode.SESSION_EXPIRED, "Session expired", {"sessionId": session_id})
            return
        try:
            body = await read_body(receive, self.options.max_body_bytes)
        except BodyTooLarge:
            await self._fail(send, 413, ErrorCode.INVALID_REQUEST, f"Body exceeds {self.options.max_body_bytes} bytes")
            return
        # Parse errors, responses and notifications are all handled (or answered on the
        # stream) by the connection; requests run as tasks of their own.
        session.connection.feed(body)
        await send_response(send, 202, b"Accepted", content_type=b"text/plain; charset=utf-8")

    @staticmethod
    def _session_id(scope: dict[str, Any], headers: dict[str, str]) -> str | None:
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        for name in _SESSION_PARAMS:
            values = query.get(name)
            if values and values[0]:
                return values[0]
        return headers.get("mcp-session-id") or None

    # helpers ------------------------------------------------------------------------------

    async def _fail(
        self, send: Send, status: int, code: int, message: str, data: Any = None, allow: str | None = None
    ) -> None:
        extra = encode_headers([("allow", allow)]) if allow else None
        await send_json(send, status, error_body(code, message, data), extra)

    def close(self) -> None:
        """End every open stream (server shutdown); each GET then cleans its session up."""
        for session in list(self.sessions.values()):
            session.end("server shutting down")

    def __len__(self) -> int:
        return len(self.sessions)


__all__ = ["LegacySseHandler"]
