"""The proxy's resource subscriptions at the backend: a front subscription (both eras'
``resources/subscribe`` and ``subscriptions/listen`` end in the engine's subscription
manager) subscribes the backend connection of its session once per URI; when the last
front subscriber of that connection goes (it unsubscribes, or its session ends), the
backend is unsubscribed."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from mcpkit.proxy._backend import BackendConnection, BackendPool
from mcpkit.server._subscriptions import ResourceSubscriptionManager

logger = logging.getLogger("mcpkit.proxy")


class BackendSubscriptions:
    """Keeps each backend connection subscribed to exactly the URIs its front sessions
    are subscribed to (updates are fanned out by the engine)."""

    def __init__(
        self,
        manager: ResourceSubscriptionManager,
        pool: BackendPool,
        spawn: Any,
    ) -> None:
        self._manager = manager
        self._pool = pool
        self._spawn = spawn
        #: The URIs each backend connection is subscribed to.
        self.by_connection: dict[BackendConnection, set[str]] = {}
        self._subscribe = manager.subscribe
        self._unsubscribe = manager.unsubscribe
        manager.subscribe = self.subscribe  # type: ignore[method-assign]
        manager.unsubscribe = self.unsubscribe  # type: ignore[method-assign]

    def _connection_of(self, session_key: str) -> BackendConnection:
        return self._pool.existing(session_key) or self._pool.shared

    def subscribe(self, uri: str, session_key: str, send_fn: Any) -> None:
        self._subscribe(uri, session_key, send_fn)
        connection = self._connection_of(session_key)
        uris = self.by_connection.setdefault(connection, set())
        if uri not in uris:
            uris.add(uri)
            self._spawn(self._backend_request(connection, "resources/subscribe", uri))

    def unsubscribe(self, uri: str, session_key: str) -> None:
        connection = self._connection_of(session_key)
        self._unsubscribe(uri, session_key)
        uris = self.by_connection.get(connection)
        if uris is None or uri not in uris:
            return
        remaining = self._manager.get_subscribers(uri)
        if any(self._connection_of(key) is connection for key in remaining):
            return
        uris.discard(uri)
        if not uris:
            del self.by_connection[connection]
        if connection.connected:  # a closed connection took its subscriptions with it
            self._spawn(self._backend_request(connection, "resources/unsubscribe", uri))

    async def _backend_request(self, connection: BackendConnection, method: str, uri: str) -> None:
        try:
            await connection.run(lambda client: client.request(method, {"uri": uri}))
        except asyncio.CancelledError:
            raise
        except Exception:
            if method == "resources/subscribe":
                self.by_connection.get(connection, set()).discard(uri)
            logger.warning("the backend's %s of %s failed", method, uri, exc_info=True)
