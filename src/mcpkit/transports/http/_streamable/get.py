"""The GET side of the Streamable HTTP endpoint: a session's standalone stream (what the
server sends outside any call), or a stream resumed with ``Last-Event-ID`` after it dropped:
the events missed are replayed from the event store, then the live feed takes over where the
replay stopped. With shared sessions the instance holding the session serves it
(``cluster.py``).

Under bearer auth a GET's identity was checked once, when it came: the stream lasts as long
as its token. At the token's ``exp`` its response ends (after what is queued), as a
WebSocket is closed then; the client comes back with a fresh token and ``Last-Event-ID``,
and what was sent meanwhile is replayed from the event store."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from mcpkit._codes import ErrorCode
from mcpkit.auth._types import CURRENT_AUTH, session_owner
from mcpkit.protocol._versions import is_supported, resumable_streams
from mcpkit.transports.http._asgi import (
    Receive,
    Send,
    disconnected_before,
    send_chunk,
    start_sse,
)
from mcpkit.transports.http._streamable.replies import fail, unsupported_version
from mcpkit.transports.http._streamable.sessions import StreamableSession
from mcpkit.transports.http._streamable.streams import Replayer, SseResponse, SseStream

if TYPE_CHECKING:
    from mcpkit.transports.http._streamable.endpoint import StreamableEndpoint

logger = logging.getLogger("mcpkit.http")


class ListenStreams:
    """Serves the GETs of a ``StreamableEndpoint`` (its options, sessions, event store)."""

    def __init__(self, handler: StreamableEndpoint) -> None:
        self.handler = handler

    async def get(self, receive: Receive, send: Send, headers: dict[str, str]) -> None:
        handler = self.handler
        if "text/event-stream" not in headers.get("accept", ""):
            await fail(send, 406, ErrorCode.INVALID_REQUEST, "Accept must allow text/event-stream")
            return
        version = headers.get("mcp-protocol-version")
        if not is_supported(version):
            await unsupported_version(send, version)
            return
        session_id = headers.get("mcp-session-id")
        if session_id is None:
            await fail(send, 400, ErrorCode.INVALID_REQUEST, "Mcp-Session-Id header is required")
            return
        session = await handler.owned_session(send, session_id, session_owner(CURRENT_AUTH.get()))
        if session is None:
            return
        last_event_id = headers.get("last-event-id")
        if handler.shared_cluster is not None:
            await handler.shared_cluster.get(session, send, receive, version, last_event_id)
            return
        if last_event_id is None and session.standalone.attached:
            await fail(
                send, 409, ErrorCode.INVALID_REQUEST, "A stream is already open for this session"
            )
            return
        await start_sse(send, handler.response_headers(session, version))
        if last_event_id is None:
            await self.serve_stream(session.standalone, session, send, receive, None)
            return
        replayer = Replayer(send, last_event_id, handler.options.sse_write_timeout)
        try:
            stream_id = await handler.event_store.replay_events_after(
                session.session_id, last_event_id, replayer
            )
        except TimeoutError:  # the client does not read its replay: the server closes it
            logger.warning(
                "SSE client of session %s not reading its replay; stream dropped",
                session.session_id,
            )
            return
        if stream_id is None or stream_id == session.standalone.stream_id:
            await self.serve_stream(session.standalone, session, send, receive, replayer)
            return
        live = session.streams.get(stream_id)
        if live is None or live.finished.is_set():
            await send_chunk(send, b"", more=False)  # that call is over and fully replayed
            return
        await self.serve_stream(live, session, send, receive, replayer)

    async def serve_stream(
        self,
        stream: SseStream,
        session: StreamableSession,
        send: Send,
        receive: Receive,
        replayer: Replayer | None,
    ) -> None:
        """Attach this GET (its SSE response started) to ``stream`` until the stream ends
        (its session closed, its call answered), the client leaves, or it stops reading
        (the response is dropped; the client resumes with Last-Event-ID). However it ends,
        the response ends with its end of body, and nothing of it outlives this call.

        After a replay, a second one under the stream's lock catches up on events written
        meanwhile (queued, never waiting: writers wait on that lock), so the live feed
        starts exactly where the replay stopped.
        """
        handler = self.handler
        response = handler.sse_response(send, stream.stream_id)
        try:
            async with stream.lock:
                if replayer is not None:
                    replayer.response = response
                    await handler.event_store.replay_events_after(
                        session.session_id, replayer.last_id, replayer
                    )
                stream.attach(response)
            if replayer is None and resumable_streams(session.protocol_version):
                await stream.prime()
            expiry = end_at_token_expiry(response.end)
            try:
                await self._wait_finished_or_gone(response, receive)
            finally:
                if expiry is not None:
                    expiry.cancel()
        finally:
            stream.detach(response)  # still attached: the client left, or this was cancelled
            await response.wait()

    @staticmethod
    async def _wait_finished_or_gone(response: SseResponse, receive: Receive) -> None:
        """Until ``response`` is complete (its stream ended it, or it was dropped) or the
        client leaves (then it is dropped)."""
        if await disconnected_before(response.task, receive) and not response.task.done():
            response.drop()  # the client left


def end_at_token_expiry(end: Callable[[], object]) -> asyncio.TimerHandle | None:
    """Calls ``end`` (which ends a GET's response) when the GET's token expires (its identity
    is this task's ``CURRENT_AUTH``); None without auth or without ``exp``."""
    auth = CURRENT_AUTH.get()
    if auth is None or auth.expires_at is None:
        return None
    delay = max(0.0, auth.expires_at - time.time())
    return asyncio.get_running_loop().call_later(delay, end)


__all__ = ["ListenStreams", "end_at_token_expiry"]
