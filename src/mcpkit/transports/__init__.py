"""Thin adapters between byte streams and the engine: one module per transport."""

from mcpkit.transports._base import MessageStream
from mcpkit.transports._memory import InMemoryTransport
from mcpkit.transports._stdio import PipeStream, serve_stdio

__all__ = ["InMemoryTransport", "MessageStream", "PipeStream", "serve_stdio"]
