"""The message bus: how the instances serving one MCP endpoint reach each other.

Behind a load balancer several processes serve the same clients. What happens on one of
them that the others must act on travels on the bus: a catalog change (``list_changed``
for every client), a resource update (for its subscribers wherever they are), the answer
to a server-to-client request that the client posted to another instance. Every instance
hands what it receives to its own connections.

This module owns the interface and the in-process implementation; the Redis one lives in
``mcpkit.stores``. It does not own what travels: the registry, the subscription manager
and the HTTP transport name their channels and shape their messages (JSON objects).

Delivery is best effort, at most once, and in publication order per publisher: an instance
that is unreachable when a message is published never gets it.
"""

from __future__ import annotations

import logging
import secrets
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Any

import msgspec

logger = logging.getLogger("mcpkit.server")

BusHandler = Callable[[dict[str, Any]], Awaitable[None]]

#: The id of the broadcast being handed to this instance's connections, the same on every
#: instance. A session may have a replica on several instances (any of them may serve
#: it); a shared event store keeps one event per (session, delivery id), so the client
#: gets the broadcast once however many replicas delivered it.
DELIVERY_ID: ContextVar[str | None] = ContextVar("mcp_delivery_id", default=None)


def new_instance_id() -> str:
    """A short random id naming one instance (process) on the bus."""
    return secrets.token_hex(4)


def new_delivery_id() -> str:
    return secrets.token_hex(8)


class MessageBus(ABC):
    """Channels of JSON messages between the instances of one server.

    ``publish`` reaches the handlers subscribed to the channel on every *other* instance;
    the publisher acts locally itself. Handlers run one message at a time per instance and
    should not block for long.
    """

    #: This instance's name on the bus (also used to route answers to it).
    instance_id: str

    def __init__(self) -> None:
        self._handlers: dict[str, list[BusHandler]] = {}

    def subscribe(self, channel: str, handler: BusHandler) -> None:
        """Call ``handler(message)`` for every message other instances publish on ``channel``
        (from ``start`` on, or at once when the bus already runs)."""
        self._handlers.setdefault(channel, []).append(handler)

    def unsubscribe(self, channel: str, handler: BusHandler) -> None:
        """Stop calling ``handler`` for messages on ``channel``."""
        handlers = self._handlers.get(channel)
        if handlers and handler in handlers:
            handlers.remove(handler)
            if not handlers:
                del self._handlers[channel]

    @property
    def channels(self) -> list[str]:
        """The channels something listens on."""
        return list(self._handlers)

    async def dispatch(self, channel: str, message: dict[str, Any]) -> None:
        """Hand one received message to this instance's handlers (a failing one is logged)."""
        for handler in list(self._handlers.get(channel, ())):
            try:
                await handler(message)
            except Exception:
                logger.warning("bus handler for %s failed", channel, exc_info=True)

    @abstractmethod
    async def publish(self, channel: str, message: dict[str, Any]) -> int | None:
        """Send ``message`` to the other instances; raises ``StoreUnavailableError`` when
        the bus's backend cannot be reached. Returns how many instances listen on
        ``channel`` and got it, when the backend can tell (None when it can't)."""

    async def start(self) -> None:
        """Begin receiving (idempotent)."""

    async def aclose(self) -> None:
        """Stop receiving and release the backend."""


class InProcessMessageBus(MessageBus):
    """Links the apps of one process: each app's bus joins the same ``hub`` (a plain
    list). Alone (the default) it has no one to tell, so single-process behaviour is that
    of no bus at all. Messages go through JSON on the way, as they would over a network."""

    def __init__(
        self, hub: list[InProcessMessageBus] | None = None, *, instance_id: str | None = None
    ) -> None:
        super().__init__()
        self.instance_id = instance_id or new_instance_id()
        self.hub = hub if hub is not None else []
        self.hub.append(self)

    async def publish(self, channel: str, message: dict[str, Any]) -> int:
        data = msgspec.json.encode(message)
        delivered = 0
        for member in list(self.hub):
            if member is not self and channel in member._handlers:
                delivered += 1
                await member.dispatch(channel, msgspec.json.decode(data))
        return delivered

    async def aclose(self) -> None:
        if self in self.hub:
            self.hub.remove(self)
