"""Which session a handshake-era POST belongs to: a new one for ``initialize`` (bounded by
``max_sessions``, owned by the caller's identity), else the one ``Mcp-Session-Id`` names
and the caller may use; and the table the sessions are kept in."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcpkit._codes import ErrorCode
from mcpkit._exceptions import SessionLimitReached
from mcpkit.auth._types import CURRENT_AUTH, session_owner
from mcpkit.protocol._jsonrpc import JsonRpcRequest
from mcpkit.server._engine.lifecycle import open_connection
from mcpkit.transports.http._asgi import error_body
from mcpkit.transports.http._streamable.sessions import StreamableSession, StreamableSessionStore

if TYPE_CHECKING:
    from mcpkit.stores._events import EventStore
    from mcpkit.transports.http._options import StreamableHttpServerOptions
    from mcpkit.transports.http._streamable.endpoint import StreamableEndpoint


def session_table(
    options: StreamableHttpServerOptions, event_store: EventStore
) -> StreamableSessionStore:
    """``options.session_store``: a ``StreamableSessionStore`` (this process's table) or
    a ``SessionStore`` backend shared with other instances; None: in memory."""
    store = options.session_store
    if isinstance(store, StreamableSessionStore):
        if store.event_store is None:
            store.event_store = event_store
        store.retry_ms = options.retry_ms
        return store
    return StreamableSessionStore(
        max_sessions=options.max_sessions,
        idle_timeout=options.session_idle_timeout,
        backend=store,
        event_store=event_store,
        retry_ms=options.retry_ms,
    )


async def session_for(
    endpoint: StreamableEndpoint, messages: list[Any], headers: dict[str, str]
) -> tuple[StreamableSession | None, tuple[int, dict[str, Any]] | None]:
    """The session of a stateful POST: a new one for ``initialize``, else the one its
    ``Mcp-Session-Id`` names; or why there is none (status, body)."""
    sessions = endpoint.sessions
    if len(messages) == 1:
        initialize = getattr(messages[0], "method", None) == "initialize" and isinstance(
            messages[0], JsonRpcRequest
        )
    else:
        initialize = any(
            isinstance(m, JsonRpcRequest) and m.method == "initialize" for m in messages
        )
    if initialize:
        if len(messages) != 1:
            return None, (
                400,
                error_body(ErrorCode.INVALID_REQUEST, "initialize must be sent on its own"),
            )
        session: StreamableSession | None
        try:
            session = sessions.create(
                endpoint.event_store,
                endpoint.options.retry_ms,
                owner=session_owner(CURRENT_AUTH.get()),
            )
        except SessionLimitReached:
            return None, (
                503,
                error_body(ErrorCode.INTERNAL_ERROR, "Too many sessions; try again later"),
            )
        open_connection(endpoint.engine, session.mcp, session.standalone.write)
        return session, None
    session_id = headers.get("mcp-session-id")
    if session_id is None:
        return None, (
            400,
            error_body(ErrorCode.INVALID_REQUEST, "Mcp-Session-Id header is required"),
        )
    auth = CURRENT_AUTH.get()
    owner = None if auth is None else session_owner(auth)  # no call without auth
    if sessions.backend is not None:  # a session store to ask
        return _found(await sessions.find_owned(session_id, owner), session_id)
    session = sessions.owned_here(session_id, owner)
    return (session, None) if session is not None else _found(None, session_id)


def _found(
    session: StreamableSession | None, session_id: str
) -> tuple[StreamableSession | None, tuple[int, dict[str, Any]] | None]:
    if session is None:
        return None, (
            404,
            error_body(
                ErrorCode.SESSION_EXPIRED,
                "Session expired or unknown",
                {"sessionId": session_id},
            ),
        )
    return session, None


__all__ = ["session_for", "session_table"]
