"""The cluster of one instance: what ``SessionCluster`` does when sessions live in this
process alone and no message bus links it to others, which is nothing.

The Streamable HTTP handler always holds a cluster and calls it at the same points (a
notification seen, an answer matching no request, a session's state changed, the server
going down); with this one those calls cost an attribute lookup and a no-op, so the
one-process path has no ``cluster is not None`` branches and does no store or bus I/O.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcpkit.protocol._jsonrpc import (
        JsonRpcErrorResponse,
        JsonRpcNotification,
        JsonRpcResponse,
    )
    from mcpkit.stores._bus import MessageBus
    from mcpkit.transports.http._streamable.sessions import StreamableSession

logger = logging.getLogger("mcpkit.http")

#: The instance id of a lone instance: nothing outside it ever reads it.
LOCAL_INSTANCE_ID = "local"


class LocalCluster:
    """``SessionCluster``'s interface for an instance that shares nothing."""

    #: Always started: there is no bus to start.
    started = True
    #: No bus: the legacy SSE transport forwards nothing.
    bus: MessageBus | None = None
    instance_id = LOCAL_INSTANCE_ID

    async def start(self) -> None:
        """Nothing to start."""

    async def aclose(self) -> None:
        """Nothing to close."""

    async def publish(self, channel: str, message: dict[str, Any]) -> None:
        """No other instance to tell."""

    async def publish_ended(self, session_id: str) -> None:
        """No other instance holds a replica of the session."""

    async def save(self, session: StreamableSession) -> None:
        """The session's state lives here only: nothing to store."""

    async def after_notification(
        self, session: StreamableSession, note: JsonRpcNotification
    ) -> None:
        """A cancellation can only target a request running here: the engine has it."""

    async def route_response(
        self, session: StreamableSession | None, message: JsonRpcResponse | JsonRpcErrorResponse
    ) -> None:
        """An answer no request here waits for is waited for nowhere: dropped."""
        logger.debug("response %r matches no pending request; dropped", message.id)


__all__ = ["LOCAL_INSTANCE_ID", "LocalCluster"]
