"""A session whose caller comes back with another token may see other components: a
token with more scopes after a step-up, or fewer. The transports where each request of a
session carries its own token (Streamable HTTP, legacy SSE) tell ``SessionIdentities``
whom each request came as; when the token changed, the lists that now look different to
that session get their ``notifications/*/list_changed``, sent to that session alone.

What differs is the served app's to say (``differs``, set by ``McpServerApp``: the
per-component ``auth=`` requirements); an app with none says nothing, and a request under
the same token as the one before costs a comparison of two strings."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

import msgspec

if TYPE_CHECKING:
    from mcpkit.auth._types import AuthInfo
    from mcpkit.server._engine.registry import McpConnectionRegistry
    from mcpkit.server._engine.session import McpSession

logger = logging.getLogger("mcpkit.server")

#: ``(identity before, identity now) -> notification methods`` of the lists that differ.
ListsThatDiffer = Callable[["AuthInfo | None", "AuthInfo | None"], list[str]]


def _token(auth: AuthInfo | None) -> str | None:
    return None if auth is None else auth.token


class SessionIdentities:
    """Who each session's requests came as, and the ``list_changed`` a change of token owes
    that session (one per list that now differs)."""

    def __init__(self, connections: McpConnectionRegistry) -> None:
        self.connections = connections
        #: The lists that differ between two identities (None: the app restricts nothing).
        self.differs: ListsThatDiffer | None = None
        #: Notifications on their way: one per changed list of a session, each bounded by
        #: the registry's ``broadcast_timeout``.
        self._sending: set[asyncio.Task[bool]] = set()

    def seen(self, session: McpSession, auth: AuthInfo | None) -> None:
        """A request of ``session`` came as ``auth``: the session's first, or one whose
        identity object differs from the one before (the transports check ``is`` first)."""
        before = session.seen_auth
        session.seen_auth = auth
        if before is msgspec.UNSET or self.differs is None or _token(before) == _token(auth):
            return
        try:
            methods = self.differs(before, auth)
        except Exception:  # a broken requirement hides; it must not fail the request
            logger.warning("could not tell whether a session's lists changed", exc_info=True)
            return
        loop = asyncio.get_running_loop()
        for method in methods:
            message = {"jsonrpc": "2.0", "method": method}
            task = loop.create_task(self.connections.send_to(session.key, message))
            self._sending.add(task)
            task.add_done_callback(self._sending.discard)

    async def sent(self) -> None:
        """Return once the notifications on their way have gone (tests, shutdown)."""
        if self._sending:
            await asyncio.gather(*self._sending, return_exceptions=True)


__all__ = ["ListsThatDiffer", "SessionIdentities"]
