"""stdio server transport: newline-delimited JSON-RPC on stdin/stdout."""

from __future__ import annotations

import asyncio
import os
import sys
from typing import TYPE_CHECKING, BinaryIO

from mcpkit._exceptions import MessageTooLargeError
from mcpkit.protocol._framing import OVERSIZED, LineFramer
from mcpkit.protocol._jsonrpc import DEFAULT_MAX_MESSAGE_BYTES

if TYPE_CHECKING:
    from mcpkit.server._app import McpServerApp

#: Bytes read from the pipe per system call.
READ_CHUNK_BYTES = 256 * 1024
#: Output buffered before a write waits for the reader to catch up.
DEFAULT_WRITE_HIGH_WATER = 1024 * 1024


class PipeStream:
    """A ``MessageStream`` over a pair of pipes (file objects), one line per frame."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        max_message_bytes: int | None = DEFAULT_MAX_MESSAGE_BYTES,
        write_high_water: int = DEFAULT_WRITE_HIGH_WATER,
    ) -> None:
        self._reader = reader
        self._writer = writer
        self._framer = LineFramer(max_message_bytes)
        self._frames: list[bytes] = []
        self._write_high_water = write_high_water

    async def send(self, frame: bytes) -> None:
        self._writer.write(frame + b"\n")
        if self._writer.transport.get_write_buffer_size() > self._write_high_water:
            await self._writer.drain()

    async def receive(self) -> bytes | None:
        while not self._frames:
            chunk = await self._reader.read(READ_CHUNK_BYTES)
            if not chunk:
                return None
            self._frames = self._framer.feed(chunk)
            self._frames.reverse()
        frame = self._frames.pop()
        if frame is OVERSIZED:
            raise MessageTooLargeError("message exceeds the size limit")
        return frame

    async def aclose(self) -> None:
        try:
            self._writer.close()
        except Exception:
            pass


async def open_pipes(
    stdin: BinaryIO, stdout: BinaryIO
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """asyncio reader/writer over two binary file objects (pipes, ttys or files)."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=2**31 - 1)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdin)
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, stdout)
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    return reader, writer


async def serve_stdio(
    app: McpServerApp, *, max_message_bytes: int | None = DEFAULT_MAX_MESSAGE_BYTES
) -> None:
    """Serve ``app`` on this process's stdin/stdout until stdin closes."""
    from mcpkit.server._connection import serve_stream

    stdin = os.fdopen(os.dup(sys.stdin.fileno()), "rb", buffering=0)
    stdout = os.fdopen(os.dup(sys.stdout.fileno()), "wb", buffering=0)
    # Anything printed by user code must not corrupt the protocol stream.
    sys.stdout = sys.stderr
    reader, writer = await open_pipes(stdin, stdout)
    stream = PipeStream(reader, writer, max_message_bytes=max_message_bytes)
    async with app.running():
        try:
            await serve_stream(app, stream, max_message_bytes=max_message_bytes)
        finally:
            try:
                await writer.drain()
            except Exception:
                pass
            await stream.aclose()
