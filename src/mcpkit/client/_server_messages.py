"""What a server sends a client unasked, and the handlers ``McpClient`` answers it with.

The server's requests (sampling, elicitation, roots) go to the handlers the client was given,
in either era: as requests of their own (handshake era) or as the ``inputRequests`` of a
multi round-trip request (2026-07-28). The handlers given are also what the client
declares as its capabilities. Notifications go to the ``listen()`` streams that want them,
then to the logging and change callbacks.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from mcpkit._exceptions import InvalidRequestError, MethodNotFoundError
from mcpkit.client._subscriptions import ACKNOWLEDGED, ServerNotification, subscription_id_of
from mcpkit.protocol._versions import Era

if TYPE_CHECKING:
    from mcpkit.client._subscriptions import ListenStream

__all__ = [
    "INPUT_CAPABILITY",
    "Callback",
    "ElicitationHandler",
    "LoggingHandler",
    "RootsHandler",
    "SamplingHandler",
    "ServerMessageHandling",
]

SamplingHandler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
ElicitationHandler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
RootsHandler = Callable[[], Awaitable[list[dict[str, Any]]]]
LoggingHandler = Callable[[dict[str, Any]], Any]
Callback = Callable[..., Any]

#: Input a server may ask for (SEP-2322), and the client capability each needs.
INPUT_CAPABILITY = {
    "sampling/createMessage": "sampling",
    "elicitation/create": "elicitation",
    "roots/list": "roots",
}

#: Task status notifications (2025-11-25, and the 2026-07-28 tasks extension).
_TASK_STATUS = frozenset({"notifications/tasks/status", "notifications/tasks"})

_LIST_CHANGED = {
    "notifications/tools/list_changed": "tools",
    "notifications/resources/list_changed": "resources",
    "notifications/prompts/list_changed": "prompts",
}


class ServerMessageHandling:
    """The handlers of ``McpClient`` (a mixin: the client sets them in its constructor)."""

    era: Era | None
    sampling_handler: SamplingHandler | None
    elicitation_handler: ElicitationHandler | None
    roots: list[dict[str, Any]] | RootsHandler | None
    logging_handler: LoggingHandler | None
    on_list_changed: Callback | None
    on_resource_updated: Callback | None
    on_notification: Callback | None
    _subscriptions: dict[Any, ListenStream]
    _legacy_listeners: set[ListenStream]
    _task_status_changed: Callable[[dict[str, Any]], None]

    def capabilities(self) -> dict[str, Any]:
        """The client capabilities the handlers given amount to."""
        caps: dict[str, Any] = {}
        if self.sampling_handler is not None:
            caps["sampling"] = {}
        if self.elicitation_handler is not None:
            caps["elicitation"] = {"form": {}, "url": {}}
        if self.roots is not None:
            # 2026-07-28 has no notifications/roots/list_changed: roots are asked for afresh.
            caps["roots"] = {} if self.era is Era.MODERN else {"listChanged": True}
        return caps

    def _can_serve(self, method: str) -> bool:
        if method == "sampling/createMessage":
            return self.sampling_handler is not None
        if method == "elicitation/create":
            return self.elicitation_handler is not None
        if method == "roots/list":
            return self.roots is not None
        return False

    async def _serve(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Run the handler for a sampling, elicitation or roots request (either era)."""
        if method == "sampling/createMessage" and self.sampling_handler is not None:
            return await self.sampling_handler(params)
        if method == "elicitation/create" and self.elicitation_handler is not None:
            return await self.elicitation_handler(params)
        if method == "roots/list" and self.roots is not None:
            roots = self.roots if isinstance(self.roots, list) else await self.roots()
            return {"roots": roots}
        raise MethodNotFoundError(f"Method not found: {method}")

    async def _server_request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method in INPUT_CAPABILITY and not self._can_serve(method):
            raise InvalidRequestError(f"This client does not support {method}")
        return await self._serve(method, params)

    async def _server_notification(self, method: str, params: dict[str, Any]) -> None:
        subscription = (
            self._subscriptions.get(subscription_id_of(params)) if self._subscriptions else None
        )
        if subscription is not None:
            if method == ACKNOWLEDGED:
                subscription._acknowledge(params.get("notifications"))
            else:
                subscription._push(ServerNotification(method, params))
        elif self._legacy_listeners:
            for listener in self._legacy_listeners:
                if listener.wants(method, params):
                    listener._push(ServerNotification(method, params))
        if method in _TASK_STATUS:
            self._task_status_changed(params)  # wakes whoever polls that task
        if method == "notifications/message" and self.logging_handler is not None:
            await _maybe_await(self.logging_handler(params))
        elif method in _LIST_CHANGED and self.on_list_changed is not None:
            await _maybe_await(self.on_list_changed(_LIST_CHANGED[method]))
        elif method == "notifications/resources/updated" and self.on_resource_updated is not None:
            await _maybe_await(self.on_resource_updated(params.get("uri")))
        if self.on_notification is not None:
            await _maybe_await(self.on_notification(method, params))


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value
