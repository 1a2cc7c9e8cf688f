"""Where a network client transport keeps received frames until the client engine reads them.

``FrameInbox`` is the bounded queue. ``InboxTransport`` is what the Streamable HTTP, legacy
HTTP+SSE, WebSocket and auto-detecting transports share around it: ``receive()``, an
``aclose()`` that does its work once, and the error that ended the transport, which every
later ``send()`` raises again.
"""

from __future__ import annotations

import asyncio
from typing import Any

from mcpkit._exceptions import ConnectionClosedError
from mcpkit.client._errors import SessionExpiredError

__all__ = ["DEFAULT_MAX_QUEUED_FRAMES", "FrameInbox", "InboxTransport"]

#: Frames received but not yet read by the client engine, per transport.
DEFAULT_MAX_QUEUED_FRAMES = 1024

_END = object()


class FrameInbox:
    """Frames received and not yet taken by the client engine: a bounded queue with an end.

    ``put`` waits while the queue is full (back-pressure onto the network read). ``close``
    ends the stream: ``get`` returns what is queued, then None, or raises the close error
    (so the engine fails its pending requests with that reason).
    """

    def __init__(self, maxsize: int = DEFAULT_MAX_QUEUED_FRAMES) -> None:
        self._queue: asyncio.Queue[Any] = asyncio.Queue(maxsize)
        self._closed = False
        self._error: BaseException | None = None

    @property
    def closed(self) -> bool:
        return self._closed

    async def put(self, frame: bytes) -> None:
        if not self._closed:
            await self._queue.put(frame)

    def close(self, error: BaseException | None = None) -> None:
        if self._closed:
            return
        self._closed = True
        self._error = error
        if self._queue.empty():
            self._queue.put_nowait(_END)  # wakes a waiting get(); a full queue has none

    async def get(self) -> bytes | None:
        if self._closed and self._queue.empty():
            self._end()
            return None
        item = await self._queue.get()
        if item is _END:
            self._end()
            return None
        return item  # type: ignore[no-any-return]

    def _end(self) -> None:
        if self._error is not None:
            raise self._error


class InboxTransport:
    """Base of the client transports that read the network into a ``FrameInbox``."""

    def __init__(self, max_queued_frames: int = DEFAULT_MAX_QUEUED_FRAMES) -> None:
        self._inbox = FrameInbox(max_queued_frames)
        #: What ended the transport (the server closed it, the session expired), if anything.
        self._fatal: ConnectionClosedError | None = None
        self._closed = False

    async def receive(self) -> bytes | None:
        return await self._inbox.get()

    def _raise_if_ended(self) -> None:
        """A send after the transport ended fails with the reason it ended."""
        if self._fatal is not None:
            if isinstance(self._fatal, SessionExpiredError):
                raise self._fatal.renewed() from self._fatal
            raise ConnectionClosedError(str(self._fatal)) from self._fatal

    def _begin_close(self) -> bool:
        """Mark the transport closed: True the first time, when ``aclose()`` has work to do."""
        if self._closed:
            return False
        self._closed = True
        return True
