"""Who subscribed to which resource URI, and the ``notifications/resources/updated`` fan-out
(with a message bus: to the subscribers of every instance, each instance notifying its own)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from mcpkit.server._engine.registry import SendFn
from mcpkit.stores._bus import DELIVERY_ID, new_delivery_id

if TYPE_CHECKING:
    from mcpkit.stores._bus import MessageBus

logger = logging.getLogger("mcpkit.server")

#: Subscriptions one session may hold.
DEFAULT_MAX_SUBSCRIPTIONS_PER_SESSION = 1000
#: The longest URI a subscription may name (characters): each is kept while subscribed,
#: so without it a session could hold its 1,000 subscriptions' worth of request bodies.
MAX_SUBSCRIBED_URI_LENGTH = 8192
#: The bus channel resource updates travel on between instances.
UPDATED_CHANNEL = "resources/updated"


def check_subscribed_uri(uri: str) -> None:
    """``ValueError`` when ``uri`` is longer than a subscription may name."""
    if len(uri) > MAX_SUBSCRIBED_URI_LENGTH:
        raise ValueError(
            f"a subscribed URI may be at most {MAX_SUBSCRIBED_URI_LENGTH} characters long,"
            f" not {len(uri)}"
        )


class ResourceSubscriptionManager:
    """Per-URI subscribers; ``unsubscribe_all`` runs when a session goes away."""

    def __init__(self, *, max_per_session: int = DEFAULT_MAX_SUBSCRIPTIONS_PER_SESSION) -> None:
        self._by_uri: dict[str, dict[str, SendFn]] = {}
        self._by_session: dict[str, set[str]] = {}
        self.max_per_session = max_per_session
        self._bus: MessageBus | None = None
        self._forwarders: list[Callable[[str], Awaitable[object]]] = []
        self._watchers: list[Callable[[str, bool], None]] = []

    def add_watch_listener(self, listener: Callable[[str, bool], None]) -> None:
        """Call ``listener(uri, True)`` when ``uri`` gains its first subscriber and
        ``listener(uri, False)`` when it loses its last (a file watcher polls only then)."""
        self._watchers = [*self._watchers, listener]

    def remove_watch_listener(self, listener: Callable[[str, bool], None]) -> None:
        """Stop telling ``listener`` when URIs gain or lose their subscribers."""
        self._watchers = [fn for fn in self._watchers if fn != listener]

    def _tell_watchers(self, uri: str, watched: bool) -> None:
        for listener in self._watchers:
            try:
                listener(uri, watched)
            except Exception:  # a broken watcher must not undo the subscription
                logger.warning("a subscription watch listener failed", exc_info=True)

    def add_update_forwarder(self, forward: Callable[[str], Awaitable[object]]) -> None:
        """Also hand every ``notify_updated`` URI to ``forward`` (an app this one is
        mounted in re-announces it under its own URI)."""
        self._forwarders = [*self._forwarders, forward]

    def remove_update_forwarder(self, forward: Callable[[str], Awaitable[object]]) -> None:
        """Stop handing updates to ``forward``."""
        self._forwarders = [fn for fn in self._forwarders if fn != forward]

    def set_bus(self, bus: MessageBus) -> None:
        """Fan updates out through ``bus`` too: every instance notifies its own subscribers."""
        self._bus = bus
        bus.subscribe(UPDATED_CHANNEL, self._receive)

    def subscribe(self, uri: str, session_key: str, send_fn: SendFn) -> None:
        """Subscribe a session to a URI (``ValueError`` past ``max_per_session``, or for a
        URI longer than ``MAX_SUBSCRIBED_URI_LENGTH``)."""
        check_subscribed_uri(uri)
        uris = self._by_session.setdefault(session_key, set())
        if uri not in uris and len(uris) >= self.max_per_session:
            raise ValueError(f"a session may hold at most {self.max_per_session} subscriptions")
        uris.add(uri)
        first = uri not in self._by_uri
        self._by_uri.setdefault(uri, {})[session_key] = send_fn
        if first and self._watchers:
            self._tell_watchers(uri, True)

    def unsubscribe(self, uri: str, session_key: str) -> None:
        """Drop one subscription of a session."""
        subscribers = self._by_uri.get(uri)
        if subscribers is not None:
            subscribers.pop(session_key, None)
            if not subscribers:
                del self._by_uri[uri]
                if self._watchers:
                    self._tell_watchers(uri, False)
        uris = self._by_session.get(session_key)
        if uris is not None:
            uris.discard(uri)
            if not uris:
                del self._by_session[session_key]

    def unsubscribe_all(self, session_key: str) -> None:
        """Drop every subscription of a session (it went away)."""
        for uri in list(self._by_session.get(session_key, ())):
            self.unsubscribe(uri, session_key)

    def get_subscribers(self, uri: str) -> dict[str, SendFn]:
        """The subscribers of a URI, by session key, with their senders."""
        return dict(self._by_uri.get(uri, {}))

    def subscriptions_of(self, session_key: str) -> set[str]:
        """The URIs a session is subscribed to."""
        return set(self._by_session.get(session_key, ()))

    async def notify_updated(self, uri: str) -> int:
        """Send ``notifications/resources/updated`` to every subscriber of ``uri`` (of every
        instance, with a bus); returns how many of this instance's subscribers took it."""
        for forward in self._forwarders:
            try:
                await forward(uri)
            except Exception:
                logger.warning("could not forward the update of %s", uri, exc_info=True)
        bus = self._bus
        if bus is None:
            return await self._notify_local(uri)
        delivery = new_delivery_id()
        token = DELIVERY_ID.set(delivery)
        try:
            count = await self._notify_local(uri)
        finally:
            DELIVERY_ID.reset(token)
        try:
            await bus.publish(UPDATED_CHANNEL, {"delivery": delivery, "uri": uri})
        except Exception:
            logger.warning(
                "could not publish the update of %s to the other instances", uri, exc_info=True
            )
        return count

    async def _receive(self, message: dict[str, Any]) -> None:
        token = DELIVERY_ID.set(message.get("delivery"))
        try:
            await self._notify_local(message["uri"])
        finally:
            DELIVERY_ID.reset(token)

    async def _notify_local(self, uri: str) -> int:
        payload: dict[str, Any] = {
            "jsonrpc": "2.0",
            "method": "notifications/resources/updated",
            "params": {"uri": uri},
        }
        subscribers = list(self.get_subscribers(uri).items())
        results = await asyncio.gather(
            *(self._deliver(key, send, payload) for key, send in subscribers)
        )
        return sum(results)

    @staticmethod
    async def _deliver(key: str, send: SendFn, payload: dict[str, Any]) -> bool:
        try:
            await send(payload)
            return True
        except Exception:
            logger.warning("could not notify subscriber %s", key, exc_info=True)
            return False
