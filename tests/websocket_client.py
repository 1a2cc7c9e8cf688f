"""Keyword arguments for ``websockets``' ``connect`` in the tests, on every release mcpkit allows.

From websockets 15 ``connect`` takes a proxy from the environment (``HTTPS_PROXY``, ...) unless
given ``proxy=None``; before 15 it has no ``proxy`` argument and uses no proxy. The tests
connect to servers on 127.0.0.1 and pass ``**NO_PROXY``: direct on every release, including
the lowest the floors job (``./dev floors``) installs.

``RawWebSocket``: a client written by hand, for peers no library plays.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import socket
import struct
from typing import Any

import websockets

NO_PROXY: dict[str, Any] = (
    {"proxy": None} if int(websockets.__version__.split(".")[0]) >= 15 else {}
)


class RawWebSocket:
    """A WebSocket client written by hand over a plain socket, for peers no library plays:
    one that never reads (a small receive buffer, nothing read), one that sends frames a
    library would refuse to."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    @classmethod
    async def open(cls, ws_url: str, receive_buffer: int | None = None) -> RawWebSocket:
        """Connect and upgrade (offering the ``mcp`` subprotocol); ``receive_buffer``: the
        socket's SO_RCVBUF, small for a peer meant to stop reading soon."""
        host, port = ws_url.split("//", 1)[1].split("/", 1)[0].split(":")
        path = "/" + ws_url.split("//", 1)[1].split("/", 1)[1]
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if receive_buffer is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
        sock.setblocking(False)
        await asyncio.get_running_loop().sock_connect(sock, (host, int(port)))
        reader, writer = await asyncio.open_connection(sock=sock)
        key = base64.b64encode(os.urandom(16)).decode()
        writer.write(
            (
                f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
                f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: mcp\r\n\r\n"
            ).encode()
        )
        head = await reader.readuntil(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 101"), head
        return cls(reader, writer)

    def send_frame(self, payload: bytes, opcode: int = 0x1, fin: bool = True) -> None:
        """One masked frame, as a client must send it (not waiting for it to go)."""
        first = (0x80 if fin else 0) | opcode
        size = len(payload)
        if size < 126:
            header = struct.pack("!BB", first, 0x80 | size)
        elif size < 1 << 16:
            header = struct.pack("!BBH", first, 0x80 | 126, size)
        else:
            header = struct.pack("!BBQ", first, 0x80 | 127, size)
        mask = os.urandom(4)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.writer.write(header + mask + masked)

    def send_json(self, message: Any) -> None:
        self.send_frame(json.dumps(message).encode())

    async def receive_frame(self) -> tuple[int, bytes]:
        """The next frame from the server: (opcode, payload)."""
        first, second = await self.reader.readexactly(2)
        size = second & 0x7F
        if size == 126:
            (size,) = struct.unpack("!H", await self.reader.readexactly(2))
        elif size == 127:
            (size,) = struct.unpack("!Q", await self.reader.readexactly(8))
        return first & 0x0F, await self.reader.readexactly(size)

    async def receive_json(self) -> Any:
        """The next text or binary message (pings skipped)."""
        while True:
            opcode, payload = await self.receive_frame()
            if opcode in (0x1, 0x2):
                return json.loads(payload)
            if opcode == 0x8:
                raise ConnectionError(f"closed: {payload!r}")

    def close(self) -> None:
        self.writer.close()
