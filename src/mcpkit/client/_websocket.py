"""WebSocket client transport: one text message per JSON-RPC frame, subprotocol ``mcp``."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any

from mcpkit._exceptions import ConnectionClosedError, TransportError
from mcpkit.client._http_options import DEFAULT_HTTP_TIMEOUT
from mcpkit.client._inbox import DEFAULT_MAX_QUEUED_FRAMES, InboxTransport
from mcpkit.protocol._jsonrpc import DEFAULT_MAX_MESSAGE_BYTES

logger = logging.getLogger("mcpkit.client.websocket")

__all__ = ["WebSocketClientTransport"]

SUBPROTOCOL = "mcp"
#: Seconds the closing handshake may take.
DEFAULT_CLOSE_TIMEOUT = 5.0


class WebSocketClientTransport(InboxTransport):
    """A ``MessageStream`` over one WebSocket connection (``websockets`` asyncio client).

    Messages past ``max_message_bytes`` make the library close the connection (1009), which
    ends the transport. A server that selects no subprotocol is accepted with a warning.
    """

    #: This transport predates the 2026-07-28 era: clients speak the handshake era on it.
    modern_capable = False

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        max_message_bytes: int | None = DEFAULT_MAX_MESSAGE_BYTES,
        open_timeout: float | None = DEFAULT_HTTP_TIMEOUT,
        max_queued_frames: int = DEFAULT_MAX_QUEUED_FRAMES,
        ping_interval: float | None = 20.0,
    ) -> None:
        super().__init__(max_queued_frames)
        self.url = url
        self.headers = dict(headers or {})
        self.max_message_bytes = max_message_bytes
        self.open_timeout = open_timeout
        self.ping_interval = ping_interval
        self._ws: Any = None
        self._reader: asyncio.Task[None] | None = None

    @property
    def subprotocol(self) -> str | None:
        return self._ws.subprotocol if self._ws is not None else None

    async def start(self) -> None:
        if self._ws is not None:
            return
        try:
            from websockets.asyncio.client import connect
            from websockets.exceptions import WebSocketException
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise TransportError("the WebSocket transport needs `pip install mcpkit[ws]`") from exc
        try:
            self._ws = await connect(
                self.url,
                subprotocols=[SUBPROTOCOL],  # type: ignore[list-item]
                additional_headers=self.headers or None,
                max_size=self.max_message_bytes,
                open_timeout=self.open_timeout,
                ping_interval=self.ping_interval,
                close_timeout=DEFAULT_CLOSE_TIMEOUT,
                compression=None,
            )
        except (OSError, TimeoutError, WebSocketException) as exc:
            raise TransportError(f"WebSocket connection to {self.url} failed: {exc!r}") from exc
        if self._ws.subprotocol != SUBPROTOCOL:
            logger.warning("%s selected no %r subprotocol; continuing", self.url, SUBPROTOCOL)
        self._reader = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        from websockets.exceptions import ConnectionClosed, ConnectionClosedOK

        error: ConnectionClosedError | None = None
        try:
            async for message in self._ws:
                await self._inbox.put(message.encode("utf-8") if isinstance(message, str) else bytes(message))
        except ConnectionClosedOK:
            pass
        except ConnectionClosed as exc:
            error = ConnectionClosedError(f"WebSocket {self.url} closed: {_describe(exc)}")
        if error is None and not self._closed:
            error = ConnectionClosedError(f"the server closed the WebSocket {self.url}")
        if not self._closed:
            self._fatal = error
        self._inbox.close(None if self._closed else error)

    async def send(self, frame: bytes) -> None:
        from websockets.exceptions import ConnectionClosed

        self._raise_if_ended()
        if self._ws is None or self._closed:
            raise ConnectionClosedError("the WebSocket transport is not connected")
        try:
            await self._ws.send(frame.decode("utf-8"))
        except ConnectionClosed as exc:
            raise ConnectionClosedError(f"WebSocket {self.url} closed: {_describe(exc)}") from exc

    async def aclose(self) -> None:
        if not self._begin_close():
            return
        if self._ws is not None:
            try:
                await self._ws.close()
            except Exception as exc:  # the peer vanished mid-handshake: nothing left to do
                logger.debug("closing %s: %r", self.url, exc)
        if self._reader is not None:
            self._reader.cancel()
            await asyncio.gather(self._reader, return_exceptions=True)
        self._inbox.close()


def _describe(exc: Any) -> str:
    frame = getattr(exc, "rcvd", None) or getattr(exc, "sent", None)
    if frame is None:
        return "no close frame"
    return f"code {frame.code}" + (f" ({frame.reason})" if frame.reason else "")
