"""``McpExecutionContext``: the light, frozen view of one call (or one connection) that
guards and interceptors get before it runs. The engine's: the HTTP transports build it
for connection guards, the programming model for calls."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mcpkit.auth._types import AuthInfo
from mcpkit.server._engine.binding import TransportBinding
from mcpkit.server._engine.request_scope import McpRequestScope


@dataclass(frozen=True, slots=True)
class McpExecutionContext:
    """Built once per call, passed to every guard and interceptor; for a connection check
    (``kind == "connection"``) built once per HTTP request or WebSocket upgrade, with no
    tool or arguments and a binding of the headers and the identity alone."""

    tool_name: str
    method_name: str
    server_class: type | None
    headers: Mapping[str, str] | None
    execution_context: Any
    session_id: str | None
    metadata: dict[str, Any]
    tool_use_id: str | int | None
    kind: str = "tool"
    arguments: dict[str, Any] = field(default_factory=dict)
    binding: TransportBinding | None = None
    #: The HTTP request the call (or connection) came on: path, query, client, headers;
    #: None over stdio and in memory.
    request: McpRequestScope | None = None
    #: The request's params as the client sent them (None for a connection check).
    params: dict[str, Any] | None = None

    @property
    def is_connection(self) -> bool:
        """True for a connection check (``kind == "connection"``: an HTTP request or
        WebSocket upgrade before any MCP message is read), False for a call."""
        return self.kind == "connection"

    def get_metadata(self, key: str, default: Any = None) -> Any:
        """A value ``set_metadata`` attached to the target, else ``default``."""
        return self.metadata.get(key, default)

    @property
    def auth(self) -> AuthInfo | None:
        """The verified identity of the call (``AuthInfo``; None without bearer auth)."""
        return call_auth(self.binding)


def call_auth(binding: TransportBinding | None) -> AuthInfo | None:
    """The identity a call runs as, the same on every transport: the one its transport
    put on the binding (``binding.auth``), None without bearer auth."""
    return binding.auth if binding is not None else None


__all__ = ["McpExecutionContext", "call_auth"]
