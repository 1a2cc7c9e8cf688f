"""Whose a backend's own message is. A handshake-era backend's request during a call
(sampling, elicitation, roots) and its ``notifications/message`` name no call on the wire
(progress alone carries its token): only the connection it came on tells whose it is. So a
connection runs the calls of one party only (``_pool``), and a message on a connection
whose calls may be several parties' goes to none of them: a request is refused, a log
dropped. Never to the newest call, which may be another user's."""

from __future__ import annotations

from mcpkit._exceptions import InternalError, InvalidRequestError
from mcpkit.proxy._backend import BackendConnection
from mcpkit.proxy._parked import ParkedCall
from mcpkit.server._context import McpToolContext
from mcpkit.server._tasks.wire import default_principal

#: A front call running on a backend connection: a handshake-era or stateless call's
#: context, or a 2026-07-28 call kept running between its rounds.
Owner = McpToolContext | ParkedCall
#: The client capabilities a backend may ask for, each declared only for a front client
#: that declared it.
ASKABLE = ("sampling", "elicitation", "roots")
#: What a stateless front call's connection declares: its client's capabilities are not
#: known (its ``initialize`` went with another request), and no request can reach it; the
#: backend's sampling or elicitation during the call is refused with ``stateless_refusal``,
#: which the call then fails with. Never ``roots``, which a backend asks for unprompted.
STATELESS_DECLARED = frozenset({"sampling", "elicitation"})
#: The principal of every front call without bearer auth.
ANONYMOUS = "anonymous"


def owner_of(connection: BackendConnection) -> Owner | None:
    """The one front call a backend's message on ``connection`` can be for: the only call
    running there, or, when all its calls are one party's (one front session), its newest
    (the same client either way); None when none runs or they may be several users'."""
    active = connection.active
    if len(active) == 1:
        owner: Owner = active[0]
        return owner
    if active and connection.party is not None:
        newest: Owner = active[-1]
        return newest
    return None


def unowned(method: str, connection: BackendConnection) -> InvalidRequestError:
    """The refusal of a backend's request no single front call can be asked."""
    why = (
        "several users' calls run on this backend connection"
        if connection.active
        else "no front call runs on this backend connection"
    )
    return InvalidRequestError(f"{method} refused by the proxy: {why}, so no client can be asked")


def front_of(owner: Owner) -> McpToolContext | None:
    """The context of the front round driving ``owner`` now (progress and logs go to it)."""
    return owner.ctx if isinstance(owner, ParkedCall) else owner


def principal_of(ctx: McpToolContext) -> str:
    """Who a front call is for the proxy's connections: the bearer token's issuer, client
    and subject (as its sessions are told apart), else ``ANONYMOUS``."""
    return default_principal(ctx.binding) or ANONYMOUS


def declared_capabilities(ctx: McpToolContext) -> frozenset[str]:
    """What of ``ASKABLE`` the front client of ``ctx`` declared."""
    declared = ctx.client_capabilities
    return frozenset(name for name in ASKABLE if declared.get(name) is not None)


def is_stateless(ctx: McpToolContext | None) -> bool:
    """A handshake-era request served without a session (stateless Streamable HTTP): no
    request can reach its client."""
    session = ctx.binding.session if ctx is not None else None
    return session is not None and session.ephemeral and not session.modern


def stateless_refusal(capability: str) -> InternalError:
    """What a stateless front call (and the backend) is told when the backend asks its
    client for something: the server, not the client, is what cannot (-32603)."""
    return InternalError(
        f"This server is stateless (Streamable HTTP without sessions): it cannot send the "
        f"client the {capability} request this call needs; use a server with sessions"
    )
