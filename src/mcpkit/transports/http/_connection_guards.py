"""Connection guards: checks run on every HTTP request to an MCP endpoint (Streamable HTTP
POST, GET and DELETE, legacy SSE GET and POST) and on every WebSocket upgrade, before any
MCP message is read. A refusal is 403 (HTTP) or close 1008 before the handshake (WebSocket).

Which guards run:

* every guard of ``StreamableHttpServerOptions.connection_guards``: a callable, or an
  object with ``can_connect(ctx)`` or ``can_activate(ctx)``;
* every ``@use_guards`` guard of an ``@mcp_server`` class of the app that has a
  ``can_connect(ctx)`` method (one with only ``can_activate`` stays a per-call guard).

Each gets an ``McpExecutionContext`` with ``kind == "connection"`` (``ctx.is_connection``),
``ctx.request`` (path, query, client, headers), ``ctx.headers`` and ``ctx.auth``; there is
no tool and no arguments, and its binding carries only the headers and the identity the
auth layer verified. It returns (or awaits) a bool; False, or an
exception, refuses. Without any guard nothing is wrapped: requests pay nothing.
"""

from __future__ import annotations

import inspect
import logging
from typing import TYPE_CHECKING, Any

from mcpkit._exceptions import McpForbiddenError
from mcpkit.auth._types import CURRENT_AUTH
from mcpkit.protocol._jsonrpc import error_response
from mcpkit.server._engine.binding import TransportBinding
from mcpkit.server._engine.engine import ConnectionGuard
from mcpkit.server._engine.execution import McpExecutionContext
from mcpkit.transports.http._asgi import Receive, Send, send_json
from mcpkit.transports.http._endpoint import AsgiApp, request_headers

if TYPE_CHECKING:
    from mcpkit.server._engine.engine import McpEngine
    from mcpkit.transports.http._options import StreamableHttpServerOptions

logger = logging.getLogger("mcpkit.http")

#: What the refusal names as its target (``McpForbiddenError``'s "denied the call for").
CONNECTION_TARGET = "connection"


def _name_of(guard: Any) -> str:
    if isinstance(guard, type):
        return guard.__name__
    return getattr(guard, "__name__", None) or type(guard).__name__


class ConnectionGate:
    """The connection guards of one ASGI app."""

    def __init__(self, guards: list[ConnectionGuard]) -> None:
        self.guards = guards

    @classmethod
    def for_engine(
        cls, engine: McpEngine, options: StreamableHttpServerOptions
    ) -> ConnectionGate | None:
        """The gate for ``engine`` served with ``options``: the options' guards, then those
        the served classes declare (``engine.connection_guards``); None when there is none."""
        guards = []
        for guard in options.connection_guards:
            check = getattr(guard, "can_connect", None) or getattr(guard, "can_activate", guard)
            guards.append(ConnectionGuard(guard, check))
        guards.extend(engine.connection_guards)
        return cls(guards) if guards else None

    def context(
        self, scope: dict[str, Any], headers: dict[str, str], entry: ConnectionGuard
    ) -> McpExecutionContext:
        binding = TransportBinding(headers=headers, auth=CURRENT_AUTH.get(), http_scope=scope)
        return McpExecutionContext(
            tool_name="",
            method_name="",
            server_class=entry.server_class,
            headers=headers,
            execution_context=None,
            session_id=headers.get("mcp-session-id"),
            metadata=dict(entry.metadata or {}),
            tool_use_id=None,
            kind="connection",
            binding=binding,
            request=binding.request,
        )

    async def refusal(self, scope: dict[str, Any], headers: dict[str, str]) -> str | None:
        """The name of the first guard that refuses this connection, else None."""
        for entry in self.guards:
            guard = entry.guard
            try:
                verdict = entry.check(self.context(scope, headers, entry))
                if inspect.isawaitable(verdict):
                    verdict = await verdict
            except McpForbiddenError:
                verdict = False
            except Exception:
                logger.exception("connection guard %s raised; refusing", _name_of(guard))
                verdict = False
            if not verdict:
                return _name_of(guard)
        return None

    def wrap(self, endpoint: AsgiApp) -> AsgiApp:
        """``endpoint`` (an ASGI app) behind the gate, itself an ASGI app: a refused request
        is answered 403 (a JSON-RPC error without id, ``data.type == "FORBIDDEN"``); CORS
        preflights pass unchecked."""

        async def gated(scope: dict[str, Any], receive: Receive, send: Send) -> None:
            if scope.get("method") != "OPTIONS":
                refused = await self.refusal(scope, request_headers(scope))
                if refused is not None:
                    error = McpForbiddenError(refused, CONNECTION_TARGET)
                    await send_json(send, 403, error_response(None, error))
                    return
            await endpoint(scope, receive, send)

        return gated


__all__ = ["CONNECTION_TARGET", "ConnectionGate"]
