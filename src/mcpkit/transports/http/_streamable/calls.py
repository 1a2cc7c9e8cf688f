"""The HTTP side of one POSTed request while it runs: a JSON answer, or an SSE stream
opened the moment the call has something of its own to say."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

import msgspec

from mcpkit._exceptions import ConnectionClosedError
from mcpkit.protocol._versions import V2025_11_25
from mcpkit.transports.http._asgi import Send, start_sse
from mcpkit.transports.http._streamable.streams import SseStream

if TYPE_CHECKING:
    from mcpkit.protocol._jsonrpc import RequestId
    from mcpkit.transports.http._streamable.endpoint import StreamableEndpoint
    from mcpkit.transports.http._streamable.sessions import StreamableSession

logger = logging.getLogger("mcpkit.http")

_NO_STREAM = (
    "cannot send a request to the client: its POST accepts only application/json"
    " (no SSE stream to carry it) and no GET stream is open"
)


class PostCall(msgspec.Struct, eq=False):
    """One request's HTTP exchange. The SSE stream (and, in a session, its place among the
    session's resumable streams) is made only when the call first sends something, so a
    call answered with plain JSON allocates nothing for it. A msgspec Struct for the cost
    of making one, in C (one per POST)."""

    handler: StreamableEndpoint
    send: Send
    headers: list[tuple[bytes, bytes]]
    session: StreamableSession | None
    #: The client accepts an SSE answer.
    sse: bool
    # Not the binding: it holds this call as its ``send``, and a cycle would leave both
    # to the garbage collector.
    connection_key: str
    request_id: RequestId
    stream: SseStream | None = None
    opened: bool = False
    finished: bool = False
    #: Set while the SSE answer is being opened: whoever else would write waits for it.
    opening: asyncio.Future[None] | None = None

    @property
    def resumable(self) -> bool:
        """Its events are kept: a dropped stream can be resumed with ``Last-Event-ID``."""
        return self.sse and self.session is not None

    async def __call__(self, message: dict[str, Any]) -> None:
        """The binding's ``send`` while the call runs: opens the SSE answer if need be."""
        if not self.opened or self.opening is not None:  # not open yet, or being opened
            if not self.sse:
                await self._without_stream(message)
                return
            await self.open_sse()
        await self.stream.write(message)  # type: ignore[union-attr]

    async def _without_stream(self, message: dict[str, Any]) -> None:
        """A message of a call whose client accepts only JSON (its answer has no stream):
        it goes on the session's GET stream. A request to the client that nothing would
        carry to it (no GET open) fails at once: it would wait for an answer that cannot
        come. (A shared session's GET may be held by another instance: sent as before.)"""
        session = self.session
        if session is None:
            if "id" in message:
                raise ConnectionClosedError(_NO_STREAM)
            return
        standalone = session.standalone
        if "id" in message and not (standalone.attached or standalone.relayed):
            raise ConnectionClosedError(_NO_STREAM)
        await standalone.write(message)

    async def open_sse(self) -> None:
        """Make the answer an SSE stream, once. Opened by the call's first message, or from
        outside while it is quiet (``open_quietly``): a writer that comes while another
        opens it waits until the stream is attached (a write before would be lost)."""
        if self.opened:
            opening = self.opening
            if opening is not None:
                await asyncio.shield(opening)
            return
        if not self.sse:
            return
        self.opened = True
        opening = self.opening = asyncio.get_running_loop().create_future()
        try:
            stream = self.stream = self.handler.new_post_stream(self.session)
            if self.session is not None:
                self.session.streams[stream.stream_id] = stream
            await start_sse(self.send, self.headers)
            stream.attach(self.send)
            if self.session is not None and (self.session.protocol_version or "") >= V2025_11_25:
                await stream.prime()  # SEP-1699
        finally:
            self.opening = None
            opening.set_result(None)

    async def open_quietly(self) -> None:
        """Open the SSE answer of a call that has run quiet for a while, so that its
        keep-alive comments reach a proxy in front before it drops the silent response
        (nginx: 60 s). A client gone meanwhile is the call's own business."""
        if self.finished:
            return
        try:
            await self.open_sse()
        except Exception as exc:  # the client hung up: the disconnect watch cancels the call
            logger.debug("could not open the SSE answer early: %r", exc)

    async def close_stream(self) -> None:
        """SEP-1699: end the SSE answer mid-call; the client resumes with GET."""
        if not self.resumable:
            return
        await self.open_sse()
        await self.stream.end_response()  # type: ignore[union-attr]
        self.cancel_later()

    def end(self) -> None:
        """The call is over: its stream, if it had one, is finished."""
        stream = self.stream
        if stream is not None:
            stream.finished.set()
            if self.session is not None:
                self.session.streams.pop(stream.stream_id, None)

    def client_gone(self) -> None:
        """The client hung up before the answer: cancel, unless it may still resume."""
        if self.finished:
            return
        stream = self.stream
        if stream is not None and stream.store is not None:
            stream.detach(self.send)  # a resumed GET may already have taken over
            self.cancel_later()
        else:
            self.cancel()

    def cancel(self) -> None:
        self.handler.engine.dispatcher.cancel(self.connection_key, self.request_id)

    def cancel_later(self) -> None:
        """A dropped resumable stream: cancel the call unless the client resumes in time."""

        def expire() -> None:
            stream = self.stream
            if not self.finished and (
                stream is None or not (stream.attached or stream.remote_reader)
            ):
                self.cancel()

        asyncio.get_running_loop().call_later(self.handler.options.resume_grace, expire)
