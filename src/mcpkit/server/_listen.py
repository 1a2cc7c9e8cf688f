"""``subscriptions/listen`` (2026-07-28): one long-lived request whose response stream
carries the change notifications the client opted in to, each tagged with the
subscription's id (the request's JSON-RPC id).

A handshake-era session has no such method (it has ``resources/subscribe`` and the
list-changed notifications every session gets): its ``subscriptions/listen`` is answered
-32601 at once, not held open unanswered until its client gives up."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcpkit._exceptions import InvalidParamsError, MethodNotFoundError
from mcpkit.protocol._modern import SUBSCRIPTION_ID_KEY

if TYPE_CHECKING:
    from mcpkit.protocol._jsonrpc import JsonRpcRequest
    from mcpkit.server._app import McpServerApp
    from mcpkit.server._binding import TransportBinding

_LIST_CHANGED = {
    "toolsListChanged": "notifications/tools/list_changed",
    "promptsListChanged": "notifications/prompts/list_changed",
    "resourcesListChanged": "notifications/resources/list_changed",
}
#: Resource URIs one subscription may watch.
DEFAULT_MAX_RESOURCE_SUBSCRIPTIONS = 1000


def handshake_era_listen(binding: TransportBinding) -> MethodNotFoundError:
    """The refusal of a ``subscriptions/listen`` outside the 2026-07-28 era."""
    session = binding.session
    version = session.protocol_version if session is not None else None
    return MethodNotFoundError(
        "Method not found: subscriptions/listen is a 2026-07-28 request, and this session "
        f"speaks {version or 'a handshake-era version'}: use resources/subscribe (the "
        "list_changed notifications come without asking)"
    )


class Subscription:
    """One ``subscriptions/listen`` request while it is open."""

    def __init__(
        self, app: McpServerApp, request: JsonRpcRequest, binding: TransportBinding
    ) -> None:
        if not binding.modern:
            raise handshake_era_listen(binding)
        self.app = app
        self.id = request.id
        self.binding = binding
        self.key = f"{binding.connection_key}/listen/{request.id}"
        wanted = (request.params or {}).get("notifications") or {}
        if not isinstance(wanted, dict):
            raise InvalidParamsError('"notifications" must be an object')
        self.methods = {
            method for flag, method in _LIST_CHANGED.items() if wanted.get(flag) is True
        }
        uris = wanted.get("resourceSubscriptions") or []
        if not isinstance(uris, list) or not all(isinstance(u, str) for u in uris):
            raise InvalidParamsError('"resourceSubscriptions" must be a list of URIs')
        if len(uris) > DEFAULT_MAX_RESOURCE_SUBSCRIPTIONS:
            raise InvalidParamsError(
                f"at most {DEFAULT_MAX_RESOURCE_SUBSCRIPTIONS} resource subscriptions"
            )
        self.uris = list(dict.fromkeys(uris))
        self.acknowledged: dict[str, Any] = {
            flag: True for flag, m in _LIST_CHANGED.items() if m in self.methods
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
        await self.binding.send_notification(
            "notifications/subscriptions/acknowledged",
            {"_meta": {SUBSCRIPTION_ID_KEY: self.id}, "notifications": self.acknowledged},
        )
        self.app.connections.register(self._deliver, self.key)
        for uri in self.uris:
            self.app.subscriptions.subscribe(uri, self.key, self._deliver)
        try:
            await self.app.shutting_down.wait()
        finally:
            self.app.connections.unregister(self.key)
            self.app.subscriptions.unsubscribe_all(self.key)
        return {"_meta": {SUBSCRIPTION_ID_KEY: self.id}}
