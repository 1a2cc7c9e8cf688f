"""A transport for driving an HTTP protocol in process, with no socket: it records what
the protocol writes and whether it closed, and stands for a peer at 127.0.0.1."""

from __future__ import annotations

import asyncio
from typing import Any


class RecordingTransport(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        #: Each ``write`` and ``writelines`` call, in order: ``("write", bytes)`` or
        #: ``("writelines", [parts])``.
        self.writes: list[tuple[str, Any]] = []
        self.closed = False
        #: The protocol the connection was handed to (``set_protocol``: an upgrade).
        self.protocol: Any = None

    @property
    def written(self) -> bytes:
        """Everything written, joined."""
        return b"".join(data if kind == "write" else b"".join(data) for kind, data in self.writes)

    def write(self, data: Any) -> None:
        self.writes.append(("write", bytes(data)))

    def writelines(self, data: Any) -> None:
        self.writes.append(("writelines", list(data)))

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return ("127.0.0.1", 8000) if name in ("peername", "sockname") else default

    def set_protocol(self, protocol: Any) -> None:
        self.protocol = protocol

    def pause_reading(self) -> None: ...

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None: ...

    def get_write_buffer_size(self) -> int:
        return 0

    def resume_reading(self) -> None: ...
