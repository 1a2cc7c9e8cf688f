"""The proxy's resource subscriptions at the backend: a front subscription (both eras'
``resources/subscribe`` and ``subscriptions/listen`` end in the engine's subscription
manager) subscribes the backend connection of its session once per URI; when the last
front subscriber of that connection goes (it unsubscribes, or its session ends), the
backend is unsubscribed. A 2026-07-28 backend has no ``resources/subscribe``: its connection
holds one ``subscriptions/listen`` naming all its URIs instead, reopened when they change."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from mcpkit.client import McpClient
from mcpkit.protocol._versions import Era
from mcpkit.proxy._backend import BackendConnection
from mcpkit.proxy._pool import BackendPool
from mcpkit.server._engine.subscriptions import ResourceSubscriptionManager

logger = logging.getLogger("mcpkit.proxy")


def _subscribable(client: McpClient) -> bool:
    """Whether a handshake-era backend declared ``resources.subscribe`` (one resumed
    without an ``initialize`` result is taken to)."""
    info = client.server_info
    if info is None:
        return True
    resources = getattr(info.capabilities, "resources", None)
    return bool(getattr(resources, "subscribe", False))


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
        #: The ``subscriptions/listen`` of each 2026-07-28 backend connection.
        self._listens: dict[BackendConnection, asyncio.Task[None]] = {}
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
            client = await connection.client()
            if client.era is Era.MODERN:
                self._relisten(connection)
                return
            if not _subscribable(client):  # only negotiated capabilities are used
                logger.debug("the backend offers no resource subscriptions: %s not sent", method)
                return
            await connection.run(lambda client: client.request(method, {"uri": uri}))
        except asyncio.CancelledError:
            raise
        except Exception:
            if method == "resources/subscribe":
                self.by_connection.get(connection, set()).discard(uri)
            logger.warning("the backend's %s of %s failed", method, uri, exc_info=True)

    def _relisten(self, connection: BackendConnection) -> None:
        """Replace the connection's ``subscriptions/listen`` with one naming its URIs now."""
        old = self._listens.pop(connection, None)
        if old is not None:
            old.cancel()
        uris = sorted(self.by_connection.get(connection, ()))
        if uris:
            self._listens[connection] = asyncio.ensure_future(self._listen(connection, uris))

    async def _listen(self, connection: BackendConnection, uris: list[str]) -> None:
        # The updates reach the front through the client's on_resource_updated callback.
        try:
            client = await connection.client()
            async with client.listen(resource_subscriptions=uris) as stream:
                async for _note in stream:
                    pass
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.warning("the backend's subscriptions/listen of %s failed", uris, exc_info=True)

    def close(self) -> None:
        """Stop every ``subscriptions/listen`` (the proxy stops)."""
        for task in self._listens.values():
            task.cancel()
        self._listens.clear()
