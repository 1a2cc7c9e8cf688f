"""``StreamableEndpoint``: what the parts of the Streamable HTTP endpoint (a POST's call,
the GET streams, the cluster of instances) read of the endpoint they serve. The handler
(``handler.py``) makes those parts; they name this interface instead of importing it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from mcpkit.server._engine.engine import McpEngine
    from mcpkit.stores._events import EventStore
    from mcpkit.transports.http._asgi import Receive, Send
    from mcpkit.transports.http._options import StreamableHttpServerOptions
    from mcpkit.transports.http._streamable.sessions import (
        StreamableSession,
        StreamableSessionStore,
    )
    from mcpkit.transports.http._streamable.streams import Replayer, SseResponse, SseStream


class StreamServer(Protocol):
    """The GET side that attaches a response to a session's stream (``ListenStreams``)."""

    async def serve_stream(
        self,
        stream: SseStream,
        session: StreamableSession,
        send: Send,
        receive: Receive,
        replayer: Replayer | None,
    ) -> None: ...


class SharedStreams(Protocol):
    """The cluster's GET, relaying a session's stream from the shared event store."""

    async def get(
        self,
        session: StreamableSession,
        send: Send,
        receive: Receive,
        version: str | None,
        last_event_id: str | None,
    ) -> None: ...


class StreamableEndpoint(Protocol):
    """One Streamable HTTP endpoint: its engine, options, sessions and event store, the
    answers it gives, and the streams it opens."""

    @property
    def engine(self) -> McpEngine: ...
    @property
    def options(self) -> StreamableHttpServerOptions: ...
    @property
    def sessions(self) -> StreamableSessionStore: ...
    @property
    def event_store(self) -> EventStore: ...
    @property
    def listen(self) -> StreamServer: ...
    @property
    def shared_cluster(self) -> SharedStreams | None: ...

    def new_post_stream(self, session: StreamableSession | None) -> SseStream: ...

    def sse_response(self, send: Send, label: str = "") -> SseResponse: ...

    def response_headers(
        self, session: StreamableSession | None, version: str | None
    ) -> list[tuple[bytes, bytes]]: ...

    async def owned_session(
        self, send: Send, session_id: str, owner: str | None
    ) -> StreamableSession | None: ...


__all__ = ["SharedStreams", "StreamServer", "StreamableEndpoint"]
