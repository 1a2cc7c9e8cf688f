"""Thin adapters between byte streams and the engine: one module per transport."""

from mcpkit.protocol._stream import MessageStream
from mcpkit.transports._memory import InMemoryTransport
from mcpkit.transports._pipes import FramedPipes
from mcpkit.transports._stdio import serve_stdio

__all__ = ["FramedPipes", "InMemoryTransport", "MessageStream", "serve_stdio"]
