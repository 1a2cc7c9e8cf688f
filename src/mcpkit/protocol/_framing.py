"""Newline-delimited framing for stdio (sans-I/O): bytes in, whole lines out.

A line longer than the bound is dropped whole (up to its newline) and reported once as an
``OVERSIZED`` marker, so one bad message costs one error reply and never desynchronizes
the stream.
"""

from __future__ import annotations

from typing import Final

from mcpkit.protocol._jsonrpc import DEFAULT_MAX_MESSAGE_BYTES

OVERSIZED: Final = b"\x00oversized"


class LineFramer:
    """Splits a byte stream into lines of at most ``max_line_bytes`` (newline excluded)."""

    __slots__ = ("_buffer", "_discarding", "max_line_bytes")

    def __init__(self, max_line_bytes: int | None = DEFAULT_MAX_MESSAGE_BYTES) -> None:
        self.max_line_bytes = max_line_bytes
        self._buffer = bytearray()
        self._discarding = False

    def feed(self, data: bytes) -> list[bytes]:
        """Frames completed by ``data``: lines (without ``\\n``, ``\\r`` stripped) or
        ``OVERSIZED``. Blank lines are skipped."""
        frames: list[bytes] = []
        start = 0
        while True:
            end = data.find(b"\n", start)
            if end < 0:
                self._keep(data[start:], frames)
                return frames
            self._finish(data[start:end], frames)
            start = end + 1

    def _keep(self, tail: bytes, frames: list[bytes]) -> None:
        if self._discarding:
            return
        self._buffer += tail
        if self.max_line_bytes is not None and len(self._buffer) > self.max_line_bytes:
            self._buffer.clear()
            self._discarding = True
            frames.append(OVERSIZED)

    def _finish(self, piece: bytes, frames: list[bytes]) -> None:
        if self._discarding:
            self._discarding = False
            return
        if self._buffer:
            self._buffer += piece
            line = bytes(self._buffer)
            self._buffer.clear()
        else:
            line = piece
        if line.endswith(b"\r"):
            line = line[:-1]
        if self.max_line_bytes is not None and len(line) > self.max_line_bytes:
            frames.append(OVERSIZED)
        elif line.strip():
            frames.append(line)

    @property
    def pending(self) -> int:
        """Bytes held for an unfinished line."""
        return len(self._buffer)
