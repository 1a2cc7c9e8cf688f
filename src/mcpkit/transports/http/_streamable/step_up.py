"""Step-up over Streamable HTTP: a request naming a component whose requirement is
``require_scopes(..., step_up=True)`` that its token does not meet is answered 403
``insufficient_scope`` before it runs, with the challenge of the bearer gate that accepted
the token (naming the token's scopes and the ones it lacks), for the client to get a token
with them and send the request again (the authorization spec's step-up flow)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcpkit.auth._types import GATE_SCOPE_KEY

if TYPE_CHECKING:
    from mcpkit.protocol._jsonrpc import JsonRpcRequest
    from mcpkit.server._engine.binding import TransportBinding
    from mcpkit.server._engine.engine import McpEngine
    from mcpkit.transports.http._asgi import Send


async def answer_step_up(
    engine: McpEngine,
    request: JsonRpcRequest,
    binding: TransportBinding,
    send: Send,
) -> bool:
    """Whether ``request`` was answered 403 ``insufficient_scope`` here. Without a gate
    (no bearer auth on the endpoint) it is not: the dispatcher then refuses it (-32600,
    ``InsufficientScopeError``)."""
    auth = binding.auth
    scope = binding.http_scope
    needed = engine.step_up_scopes(request.method, request.params, auth)
    gate = scope.get(GATE_SCOPE_KEY) if needed is not None and scope is not None else None
    if gate is None or scope is None or auth is None or needed is None:
        return False
    wanted = tuple(dict.fromkeys((*auth.scopes, *needed)))
    await gate.send_denial(send, gate.insufficient_scope(scope, binding.headers, wanted))
    return True


__all__ = ["answer_step_up"]
