"""Thin adapters between byte streams and the engine: one module per transport."""

from typing import Any

from mcpkit.protocol._stream import MessageStream
from mcpkit.transports._memory import InMemoryTransport
from mcpkit.transports._pipes import FramedPipes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from mcpkit.transports._stdio import serve_stdio


def __getattr__(name: str) -> Any:
    # serve_stdio brings the server engine: loaded on first use, so the client's stdio
    # transport (which takes its pipe settings from _pipes) does not import the engine.
    if name == "serve_stdio":
        from mcpkit.transports._stdio import serve_stdio

        globals()[name] = serve_stdio
        return serve_stdio
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["FramedPipes", "InMemoryTransport", "MessageStream", "serve_stdio"]
