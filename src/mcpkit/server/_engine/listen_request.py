"""One ``subscriptions/listen`` request while it is open: acknowledged, then delivering
the notifications its filter asked for (``listen``) until the engine shuts down."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcpkit._exceptions import InvalidParamsError
from mcpkit.protocol._modern import SUBSCRIPTION_ID_KEY
from mcpkit.server._engine.listen import (
    DEFAULT_MAX_RESOURCE_SUBSCRIPTIONS,
    LIST_CHANGED,
    handshake_era_listen,
    listen_filter,
)

if TYPE_CHECKING:
    from mcpkit.protocol._jsonrpc import JsonRpcRequest
    from mcpkit.server._engine.binding import TransportBinding
    from mcpkit.server._engine.engine import McpEngine


class Subscription:
    """One ``subscriptions/listen`` request while it is open."""

    def __init__(
        self, engine: McpEngine, request: JsonRpcRequest, binding: TransportBinding
    ) -> None:
        if not binding.modern:
            raise handshake_era_listen(binding)
        self.engine = engine
        self.id = request.id
        self.binding = binding
        self.key = f"{binding.connection_key}/listen/{request.id}"
        #: The request's ``notifications`` (its spec fields' types checked).
        self.filter = wanted = listen_filter(request.params)
        self.methods = {method for flag, method in LIST_CHANGED.items() if wanted.get(flag) is True}
        uris: list[str] = wanted.get("resourceSubscriptions", [])
        if len(uris) > DEFAULT_MAX_RESOURCE_SUBSCRIPTIONS:
            raise InvalidParamsError(
                f"at most {DEFAULT_MAX_RESOURCE_SUBSCRIPTIONS} resource subscriptions"
            )
        self.uris = list(dict.fromkeys(uris))
        self.acknowledged: dict[str, Any] = {
            flag: True for flag, m in LIST_CHANGED.items() if m in self.methods
        }
        if self.uris:
            self.acknowledged["resourceSubscriptions"] = self.uris

    def _tagged(self, method: str, params: dict[str, Any] | None) -> dict[str, Any]:
        params = dict(params or {})
        params["_meta"] = {**(params.get("_meta") or {}), SUBSCRIPTION_ID_KEY: self.id}
        return {"jsonrpc": "2.0", "method": method, "params": params}

    async def _deliver(self, payload: dict[str, Any]) -> None:
        method = payload.get("method")
        if method in self.methods or (method == "notifications/resources/updated" and self.uris):
            await self.binding.send_notification(
                method, self._tagged(method, payload.get("params"))["params"]
            )

    async def run(self) -> dict[str, Any]:
        """Acknowledge, deliver until the engine shuts down, then the final result."""
        await self.prepare()
        await self.binding.send_notification(
            "notifications/subscriptions/acknowledged",
            {"_meta": {SUBSCRIPTION_ID_KEY: self.id}, "notifications": self.acknowledged},
        )
        self.attach()
        try:
            await self.started()
            await self.engine.shutting_down.wait()
        finally:
            self.detach()
        return {"_meta": {SUBSCRIPTION_ID_KEY: self.id}}

    async def prepare(self) -> None:
        """What is settled before the acknowledgement (a subclass's own notifications)."""

    def attach(self) -> None:
        """Start receiving what the filter asked for."""
        self.engine.connections.register(self._deliver, self.key)
        for uri in self.uris:
            self.engine.subscriptions.subscribe(uri, self.key, self._deliver)

    async def started(self) -> None:
        """What is sent once attached, before waiting (a subclass's current states)."""

    def detach(self) -> None:
        """Stop receiving, whatever ended the subscription."""
        self.engine.connections.unregister(self.key)
        self.engine.subscriptions.unsubscribe_all(self.key)
