"""The contract every message transport meets, server side and client side alike: the
engine serves, and the client talks over, any stream of whole frames."""

from __future__ import annotations

from typing import Protocol


class MessageStream(Protocol):
    """A bidirectional stream of whole JSON-RPC frames.

    ``receive`` returns the next frame, or None at end of stream; it raises
    ``MessageTooLargeError`` for a frame past the transport's bound (the stream stays usable).
    """

    async def send(self, frame: bytes) -> None:
        """Write one whole frame."""

    async def receive(self) -> bytes | None:
        """The next whole frame, or None once the stream has ended."""

    async def aclose(self) -> None:
        """Close the stream; later sends fail and ``receive`` returns None."""
