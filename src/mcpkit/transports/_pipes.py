"""Newline-framed JSON-RPC over a pair of pipes, push-style.

Frames are handed to a callback straight from ``data_received`` (no reader task between
the pipe and the engine), and a writer whose buffer passes its high-water mark pauses the
reading side, so a peer that stops reading cannot make us buffer without bound.
"""

from __future__ import annotations

import asyncio
import logging
import os
import selectors
import stat
import threading
from collections.abc import Callable
from typing import IO, Any

from mcpkit.protocol._framing import OVERSIZED, LineFramer
from mcpkit.protocol._jsonrpc import DEFAULT_MAX_MESSAGE_BYTES

logger = logging.getLogger("mcpkit.server")

#: Output buffered before reading pauses until the peer catches up.
DEFAULT_WRITE_HIGH_WATER = 1024 * 1024
DEFAULT_WRITE_LOW_WATER = 256 * 1024

OnFrame = Callable[[bytes], None]
OnEvent = Callable[[], None]


class _ReadProtocol(asyncio.Protocol):
    def __init__(self, pipes: FramedPipes) -> None:
        self.pipes = pipes

    def data_received(self, data: bytes) -> None:
        pipes = self.pipes
        if pipes.reading_stopped:  # a worker thread's chunk, queued before stop_reading()
            return
        for frame in pipes.framer.feed(data):
            try:
                if frame is OVERSIZED:
                    pipes.on_oversized()
                else:
                    pipes.on_frame(frame)
            except Exception:
                # Raised out of data_received, it would make asyncio close the pipe: the
                # server would stop reading. One bad frame costs that frame only.
                logger.exception("handling a frame from the pipe failed")

    def eof_received(self) -> bool:
        self._end_of_input()
        return False

    def connection_lost(self, exc: BaseException | None) -> None:
        self._end_of_input()

    def _end_of_input(self) -> None:
        pipes = self.pipes
        if not pipes.closed.done() and not pipes.reading_stopped:
            # A last line without its newline is still a message (the official SDK
            # answers it too): EOF ends it.
            self.data_received(b"\n")
        pipes._mark_closed()


class _WriteProtocol(asyncio.Protocol):
    def __init__(self, pipes: FramedPipes) -> None:
        self.pipes = pipes
        #: Done once the transport is gone: after ``close()``, its buffer was written.
        self.lost: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def pause_writing(self) -> None:
        self.pipes._pause_reading()

    def resume_writing(self) -> None:
        self.pipes._resume_reading()

    def connection_lost(self, exc: BaseException | None) -> None:
        if not self.lost.done():
            self.lost.set_result(None)
        self.pipes._mark_closed()


class FramedPipes:
    """Reads frames from one pipe into ``on_frame``; writes frames to another."""

    def __init__(
        self,
        on_frame: OnFrame,
        *,
        on_oversized: OnEvent = lambda: None,
        max_message_bytes: int | None = DEFAULT_MAX_MESSAGE_BYTES,
    ) -> None:
        self.on_frame = on_frame
        self.on_oversized = on_oversized
        self.framer = LineFramer(max_message_bytes)
        self.closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._reader: asyncio.ReadTransport | None = None
        self._writer: asyncio.WriteTransport | None = None
        self._write_protocol: _WriteProtocol | None = None
        #: ``stop_reading()`` was called: input after it is not taken.
        self.reading_stopped = False

    async def open(self, read_pipe: IO[bytes] | Any, write_pipe: IO[bytes] | Any) -> None:
        """Start on two file objects. Regular files (``< in.jsonl``, ``> out.jsonl``) and
        devices the event loop cannot watch (``< /dev/null``) work too: asyncio's pipe
        transports refuse them (uvloop aborts the process), so they get plain blocking I/O."""
        loop = asyncio.get_running_loop()
        # The writer first: the first frame read may be answered before open() returns.
        if _needs_thread(write_pipe, selectors.EVENT_WRITE):
            self._writer = _FileWriter(write_pipe)
        else:
            protocol = self._write_protocol = _WriteProtocol(self)
            self._writer, _ = await loop.connect_write_pipe(lambda: protocol, write_pipe)
            self._writer.set_write_buffer_limits(DEFAULT_WRITE_HIGH_WATER, DEFAULT_WRITE_LOW_WATER)
        if _needs_thread(read_pipe, selectors.EVENT_READ):
            self._reader = _FileReader(read_pipe, _ReadProtocol(self))
        else:
            self._reader, _ = await loop.connect_read_pipe(lambda: _ReadProtocol(self), read_pipe)

    def attach(self, reader: asyncio.ReadTransport, writer: asyncio.WriteTransport) -> None:
        """Use transports someone else opened (a subprocess's pipes)."""
        self._reader, self._writer = reader, writer
        writer.set_write_buffer_limits(DEFAULT_WRITE_HIGH_WATER, DEFAULT_WRITE_LOW_WATER)

    def write(self, frame: bytes) -> None:
        """Write one frame and its newline (never waits: the transport buffers)."""
        writer = self._writer
        if writer is None or writer.is_closing():
            raise ConnectionResetError("pipe is closed")
        writer.write(frame + b"\n")

    async def send(self, frame: bytes) -> None:
        """``write``, for the ``MessageStream`` contract."""
        self.write(frame)

    def _pause_reading(self) -> None:
        if self._reader is not None and self._reader.is_reading():
            self._reader.pause_reading()

    def _resume_reading(self) -> None:
        if (
            self._reader is not None
            and not self._reader.is_reading()
            and not self._reader.is_closing()
        ):
            self._reader.resume_reading()

    def _mark_closed(self) -> None:
        if not self.closed.done():
            self.closed.set_result(None)

    @property
    def can_write(self) -> bool:
        """The output is still open (the peer may read what is written)."""
        return self._writer is not None and not self._writer.is_closing()

    def stop_reading(self) -> None:
        """Take no more input (shutting down); writing goes on."""
        self.reading_stopped = True
        reader = self._reader
        if reader is not None and not reader.is_closing():
            reader.close()

    def close(self) -> None:
        """Close both pipes."""
        for transport in (self._reader, self._writer):
            if transport is not None and not transport.is_closing():
                transport.close()
        self._mark_closed()

    async def aclose(self, timeout: float) -> None:
        """``close()``, then wait up to ``timeout`` seconds for what is buffered to be
        written (a peer that stops reading cannot hold the exit longer)."""
        self.reading_stopped = True
        self.close()
        protocol = self._write_protocol
        if protocol is None or protocol.lost.done():
            return
        try:
            await asyncio.wait_for(asyncio.shield(protocol.lost), timeout)
        except TimeoutError:
            if self._writer is not None:
                self._writer.abort()


def _needs_thread(file: Any, events: int) -> bool:
    """True for files the event loop cannot watch: regular files, and devices such as
    ``/dev/null`` (epoll refuses them). Pipes, sockets and terminals it can."""
    mode = os.fstat(file.fileno()).st_mode
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        return False
    if stat.S_ISREG(mode):
        return True
    try:
        with selectors.DefaultSelector() as selector:
            selector.register(file.fileno(), events)
    except (OSError, ValueError):
        return True
    return False


class _FileWriter(asyncio.WriteTransport):
    """Blocking writes to a regular file (never slow enough to need buffering)."""

    def __init__(self, file: Any) -> None:
        super().__init__()
        self._file = file
        self._closing = False

    def write(self, data: bytes) -> None:  # type: ignore[override]
        self._file.write(data)
        self._file.flush()

    def is_closing(self) -> bool:
        return self._closing

    def close(self) -> None:
        self._closing = True


class _FileReader(asyncio.ReadTransport):
    """Reads a regular file in a worker thread and feeds the protocol on the loop."""

    def __init__(self, file: Any, protocol: _ReadProtocol) -> None:
        super().__init__()
        self._closing = False
        loop = asyncio.get_running_loop()

        def pump() -> None:
            while not self._closing:
                chunk = file.read(256 * 1024)
                if not chunk:
                    break
                loop.call_soon_threadsafe(protocol.data_received, chunk)
            loop.call_soon_threadsafe(protocol.eof_received)

        threading.Thread(target=pump, name="mcpkit-file-reader", daemon=True).start()

    def is_reading(self) -> bool:
        return not self._closing

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass

    def is_closing(self) -> bool:
        return self._closing

    def close(self) -> None:
        self._closing = True
