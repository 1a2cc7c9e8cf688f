"""Every live connection's send function, for fan-out to all clients (with a message bus:
the clients of every instance, each instance delivering to its own), and the frame
connections among them (stdio, WebSocket, legacy SSE) a graceful shutdown drains."""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

from mcpkit.stores._bus import DELIVERY_ID, new_delivery_id

if TYPE_CHECKING:
    from mcpkit.stores._bus import MessageBus

logger = logging.getLogger("mcpkit.server")

SendFn = Callable[[dict[str, Any]], Awaitable[None]]


class DrainedConnection(Protocol):
    """A frame connection (``ServerConnection``) as a graceful shutdown drains it: its calls
    get the grace to finish, then the rest are answered "Server shutting down"."""

    async def drain(self, timeout: float, hurry: asyncio.Event | None = None) -> None: ...

    async def abort(self) -> None: ...


#: How long one connection may take to accept a broadcast before it is skipped.
DEFAULT_BROADCAST_TIMEOUT = 5.0
#: The bus channel broadcasts travel on between instances.
BROADCAST_CHANNEL = "broadcast"


class McpConnectionRegistry:
    """Tracks connections; a broadcast reaches all of them, a failing one is logged and skipped."""

    def __init__(self, *, broadcast_timeout: float = DEFAULT_BROADCAST_TIMEOUT) -> None:
        self._connections: dict[str, SendFn] = {}
        #: The frame connections among them, by key: their calls are drained at shutdown.
        self._served: dict[str, DrainedConnection] = {}
        self._ids = itertools.count(1)
        self.broadcast_timeout = broadcast_timeout
        self._bus: MessageBus | None = None
        self._count_listeners: list[Callable[[int], None]] = []

    def add_count_listener(self, listener: Callable[[int], None]) -> None:
        """Call ``listener(count)`` whenever a connection comes or goes (a file watcher
        refreshes a directory listing only while someone can hear ``list_changed``)."""
        self._count_listeners = [*self._count_listeners, listener]

    def remove_count_listener(self, listener: Callable[[int], None]) -> None:
        """Stop telling ``listener`` the connection count."""
        self._count_listeners = [fn for fn in self._count_listeners if fn != listener]

    def _tell_count(self) -> None:
        for listener in self._count_listeners:
            try:
                listener(len(self._connections))
            except Exception:  # a broken listener must not undo the registration
                logger.warning("a connection count listener failed", exc_info=True)

    def set_bus(self, bus: MessageBus) -> None:
        """Broadcast through ``bus`` too: every instance delivers to its own connections."""
        self._bus = bus
        bus.subscribe(BROADCAST_CHANNEL, self._receive)

    def register(
        self, send_fn: SendFn, key: str | None = None, served: DrainedConnection | None = None
    ) -> str:
        """Add a connection (``served``: the frame connection it is); returns its opaque key."""
        key = key or f"c{next(self._ids)}"
        known = key in self._connections
        self._connections[key] = send_fn
        if served is not None:
            self._served[key] = served
        if not known and self._count_listeners:
            self._tell_count()
        return key

    def unregister(self, key: str) -> None:
        """Forget a connection (it closed)."""
        self._served.pop(key, None)
        if self._connections.pop(key, None) is not None and self._count_listeners:
            self._tell_count()

    def served(self) -> list[DrainedConnection]:
        """The frame connections open now (stdio, WebSocket, legacy SSE)."""
        return list(self._served.values())

    def __len__(self) -> int:
        return len(self._connections)

    def keys(self) -> list[str]:
        """The keys of the open connections."""
        return list(self._connections)

    async def send_to(self, key: str, payload: dict[str, Any]) -> bool:
        """Send ``payload`` to one connection; False when it is gone or the send failed."""
        send = self._connections.get(key)
        if send is None:
            return False
        return await self._deliver(key, send, payload)

    async def _deliver(self, key: str, send: SendFn, payload: dict[str, Any]) -> bool:
        """``_offer`` to one connection, bounded by ``broadcast_timeout``."""
        try:
            async with asyncio.timeout(self.broadcast_timeout):
                return await self._offer(key, send, payload)
        except TimeoutError:
            logger.warning(
                "could not deliver %s to connection %s within %s s",
                payload.get("method"),
                key,
                self.broadcast_timeout,
            )
            return False

    async def broadcast(self, payload: dict[str, Any]) -> int:
        """Send ``payload`` to every connection (of every instance, with a bus); returns how
        many of this instance's connections took it."""
        bus = self._bus
        if bus is None:
            return await self._deliver_all(payload)
        delivery = new_delivery_id()
        token = DELIVERY_ID.set(delivery)
        try:
            count = await self._deliver_all(payload)
        finally:
            DELIVERY_ID.reset(token)
        try:
            await bus.publish(BROADCAST_CHANNEL, {"delivery": delivery, "payload": payload})
        except Exception:
            logger.warning(
                "could not publish %s to the other instances", payload.get("method"), exc_info=True
            )
        return count

    async def _receive(self, message: dict[str, Any]) -> None:
        token = DELIVERY_ID.set(message.get("delivery"))
        try:
            await self._deliver_all(message["payload"])
        finally:
            DELIVERY_ID.reset(token)

    async def _deliver_all(self, payload: dict[str, Any]) -> int:
        targets = list(self._connections.items())
        if not targets:
            return 0
        # One deadline for the whole fan-out, not a timer per connection: every delivery
        # starts now, so each still gets ``broadcast_timeout``.
        loop = asyncio.get_running_loop()
        tasks = [loop.create_task(self._offer(k, s, payload)) for k, s in targets]
        done, late = await asyncio.wait(tasks, timeout=self.broadcast_timeout)
        for task in late:
            task.cancel()
        if late:
            logger.warning(
                "%d connections did not take %s within %s s",
                len(late),
                payload.get("method"),
                self.broadcast_timeout,
            )
        return sum(task.result() for task in done)

    @staticmethod
    async def _offer(key: str, send: SendFn, payload: dict[str, Any]) -> bool:
        """Send ``payload`` to one connection; False (logged) when that fails."""
        try:
            await send(payload)
            return True
        except Exception:
            logger.warning(
                "could not deliver %s to connection %s", payload.get("method"), key, exc_info=True
            )
            return False

    async def broadcast_method(self, method: str, params: dict[str, Any] | None = None) -> int:
        """Broadcast a notification by method name (e.g. ``notifications/tools/list_changed``)."""
        payload: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            payload["params"] = params
        return await self.broadcast(payload)
