"""A connection's life in the engine, the same for every transport.

A transport opens a connection when a client's session begins (a stdio pipe or WebSocket
accepted, a legacy SSE stream opened, a Streamable HTTP ``initialize`` or a shared session
adopted on this instance) and closes it when the session ends (the pipe or socket gone,
the stream ended, DELETE, expiry, shutdown). Between the two the connection is reachable:
broadcasts (``list_changed``) and resource updates find it, its requests run under its
key. Closing undoes all of it in one order: requests still running are cancelled, then
the connection leaves the registry, its resource subscriptions go and so does the state its
tools kept (``ctx.set_state``).

The transports only translate bytes and HTTP semantics; what opening and closing mean is
decided here alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcpkit.server._engine.engine import McpEngine
    from mcpkit.server._engine.registry import DrainedConnection, SendFn
    from mcpkit.server._engine.session import McpSession


def open_connection(
    engine: McpEngine,
    session: McpSession,
    send: SendFn,
    served: DrainedConnection | None = None,
) -> str:
    """Make ``session``'s connection reachable through ``send`` (broadcasts, resource
    updates); ``served``: the frame connection serving it, drained at shutdown. Returns
    the connection's key (the session's)."""
    return engine.connections.register(send, session.key, served)


def close_connection(engine: McpEngine, key: str) -> None:
    """Forget the connection ``key`` everywhere: its running requests are cancelled, it
    leaves the registry (and the frame connections a shutdown drains), its resource
    subscriptions are dropped and its state freed. Idempotent: closing twice does nothing
    more."""
    engine.dispatcher.cancel_connection(key)
    engine.connections.unregister(key)
    engine.subscriptions.unsubscribe_all(key)
    engine.session_state.forget(key)


__all__ = ["close_connection", "open_connection"]
