"""Per-call transport state, threaded to handlers through a context variable.

The dispatcher is shared by every connection, so what differs per call (headers, session,
where notifications go, how to ask the client something) travels in a ``TransportBinding``
set by the transport around each dispatch.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

import msgspec

from mcpkit.server._engine.request_scope import McpRequestScope, request_scope_of

if TYPE_CHECKING:
    from mcpkit.auth._types import AuthInfo
    from mcpkit.server._engine.session import McpSession, SendMessage

#: Sends one message dict to the client on the channel of the current call.
SendNotification = Callable[[str, "dict[str, Any] | None"], Awaitable[None]]
ClientRpc = Callable[..., Awaitable[Any]]
#: Ends the SSE response a call is answering on (SEP-1699 polling).
CloseStream = Callable[[], Awaitable[None]]


class TransportBinding(msgspec.Struct, eq=False, repr_omit_defaults=True):
    """What a transport knows about the call it hands to the dispatcher.

    ``send`` is the channel for messages produced during this call (the stdio pipe, a POST's
    SSE stream, a WebSocket); ``session`` is the connection's protocol state. ``auth`` is
    the identity the transport verified for the call, the one way it reaches the engine
    (``ctx.auth``, the owner of a task); ``http_scope`` is the ASGI scope of the HTTP
    request (or WebSocket upgrade) the call came on, None over stdio and in memory, the one
    way it reaches guards and injected ``McpRequestScope`` parameters (``request``);
    ``close_stream`` is set while the call answers on an SSE response it may end early.

    The engine's own per-call state: ``modern`` marks a 2026-07-28 request (its session made
    from its ``_meta``); ``round_inputs`` holds such a call's multi round-trip inputs
    (``server._eras.mrtr.round_inputs`` reads them); ``task_start`` is set while a
    ``@deferred_task`` call may still become a task, ``task_id`` once it runs as one.
    """

    # A msgspec Struct for the cost of making one, in C (the HTTP transport makes one per
    # request). Equality is identity; ``msgspec.structs.replace`` copies one.
    session: McpSession | None = None
    send: SendMessage | None = None
    headers: Mapping[str, str] | None = None
    execution_context: Any = None
    connection_key: str = ""
    auth: AuthInfo | None = None
    http_scope: dict[str, Any] | None = None
    close_stream: CloseStream | None = None
    modern: bool = False
    round_inputs: Any = None
    task_start: Callable[[], Awaitable[None]] | None = None
    task_id: str | None = None

    @property
    def request(self) -> McpRequestScope | None:
        """The HTTP request the call came on (a view made once per request), None over
        stdio and in memory."""
        scope = self.http_scope
        return None if scope is None else request_scope_of(scope)

    @property
    def session_id(self) -> str | None:
        """The session's id, None without a session."""
        return self.session.session_id if self.session is not None else None

    @property
    def client_capabilities(self) -> dict[str, Any] | None:
        """The capabilities the session's client declared, None without a session."""
        return self.session.client_capabilities if self.session is not None else None

    async def send_notification(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Push a notification to the client on this call's channel."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        send = self.send or (self.session.send if self.session is not None else None)
        if send is not None:
            await send(message)

    async def client_rpc(
        self, method: str, params: dict[str, Any] | None = None, *, timeout: float | None = None
    ) -> Any:
        """Send a request to the client and wait for its result."""
        if self.session is None:
            from mcpkit._exceptions import InvalidRequestError

            raise InvalidRequestError("server-to-client requests need a session")
        return await self.session.request(method, params, send=self.send, timeout=timeout)


#: The binding of the message being served: set by the connection that fed it to the
#: dispatcher, read by code that has no ``ctx`` (a tool's own helpers).
CURRENT_BINDING: ContextVar[TransportBinding | None] = ContextVar(
    "mcp_transport_binding", default=None
)
