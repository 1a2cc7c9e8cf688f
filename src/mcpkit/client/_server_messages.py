"""What a server sends a client unasked, and the handlers ``McpClient`` answers it with.

The server's requests (sampling, elicitation, roots) go to the handlers the client was given,
in either era: as requests of their own (handshake era) or as the ``inputRequests`` of a
multi round-trip request (2026-07-28). The handlers given are also what the client
declares as its capabilities, with the protocol extensions it was given. Notifications go
to the ``listen()`` streams that want them, then to the logging and change callbacks.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

from mcpkit._exceptions import InvalidRequestError, MethodNotFoundError
from mcpkit.client._errors import InputRequestError
from mcpkit.protocol._versions import Era

if TYPE_CHECKING:
    from mcpkit.client._state import ClientState

__all__ = [
    "INPUT_CAPABILITY",
    "Callback",
    "ElicitationHandler",
    "LoggingHandler",
    "NotificationRouter",
    "RootsHandler",
    "SamplingHandler",
    "ServerMessageHandler",
]

SamplingHandler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
ElicitationHandler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
RootsHandler = Callable[[], Awaitable[list[dict[str, Any]]]]
LoggingHandler = Callable[[dict[str, Any]], Any]
Callback = Callable[..., Any]
#: Told of every task status notification (it wakes whoever polls that task).
TaskStatusCallback = Callable[[dict[str, Any]], None]

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


class NotificationRouter(Protocol):
    """Where a notification goes first: the client's open ``listen()`` streams
    (``NotificationListeners``, in ``_subscriptions``)."""

    def __len__(self) -> int:
        """How many streams are open (none: nothing to route)."""
        ...

    def route(self, method: str, params: dict[str, Any]) -> None:
        """Hand the notification to the streams it is for."""
        ...


class ServerMessageHandler:
    """Answers what the server sends ``McpClient`` unasked: its requests with the handlers
    given (also what the client declares as its capabilities), its notifications by routing
    them to the ``listen()`` streams, the task waiters and the callbacks."""

    def __init__(
        self,
        state: ClientState,
        listeners: NotificationRouter,
        task_status_changed: TaskStatusCallback,
        *,
        sampling_handler: SamplingHandler | None = None,
        elicitation_handler: ElicitationHandler | None = None,
        roots: list[dict[str, Any]] | RootsHandler | None = None,
        logging_handler: LoggingHandler | None = None,
        on_list_changed: Callback | None = None,
        on_resource_updated: Callback | None = None,
        on_notification: Callback | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> None:
        self._state = state
        self._listeners = listeners
        self._task_status_changed = task_status_changed
        self.sampling_handler = sampling_handler
        self.elicitation_handler = elicitation_handler
        self.roots = roots
        self.logging_handler = logging_handler
        self.on_list_changed = on_list_changed
        self.on_resource_updated = on_resource_updated
        self.on_notification = on_notification
        #: The protocol extensions declared (checked by ``declared_extensions``).
        self.extensions = extensions or {}

    def capabilities(self) -> dict[str, Any]:
        """The client capabilities the handlers given amount to, with the extensions
        declared (copies: what a request adds to them stays in that request)."""
        caps: dict[str, Any] = {}
        if self.extensions:
            caps["extensions"] = {name: dict(value) for name, value in self.extensions.items()}
        if self.sampling_handler is not None:
            caps["sampling"] = {}
        if self.elicitation_handler is not None:
            caps["elicitation"] = {"form": {}, "url": {}}
        if self.roots is not None:
            # 2026-07-28 has no notifications/roots/list_changed: roots are asked for afresh.
            caps["roots"] = {} if self._state.era is Era.MODERN else {"listChanged": True}
        return caps

    def can_serve(self, method: str) -> bool:
        """Whether a handler for the input request ``method`` was given."""
        if method == "sampling/createMessage":
            return self.sampling_handler is not None
        if method == "elicitation/create":
            return self.elicitation_handler is not None
        if method == "roots/list":
            return self.roots is not None
        return False

    async def serve(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Run the handler for a sampling, elicitation or roots request (either era)."""
        if method == "sampling/createMessage" and self.sampling_handler is not None:
            return await self.sampling_handler(params)
        if method == "elicitation/create" and self.elicitation_handler is not None:
            return await self.elicitation_handler(params)
        if method == "roots/list" and self.roots is not None:
            roots = self.roots if isinstance(self.roots, list) else await self.roots()
            return {"roots": roots}
        raise MethodNotFoundError(f"Method not found: {method}")

    async def answer_inputs(self, method: str, requests: Any) -> dict[str, Any]:
        """Answer the ``inputRequests`` of a 2026-07-28 result (of ``method``) with the
        handlers: one response per key."""
        if not isinstance(requests, dict):
            raise InputRequestError(f"{method}: inputRequests is not an object: {requests!r}")
        answers: dict[str, Any] = {}
        for key, request in requests.items():
            kind = request.get("method") if isinstance(request, dict) else None
            params = request.get("params") if isinstance(request, dict) else None
            if kind not in INPUT_CAPABILITY or not isinstance(params, (dict, type(None))):
                raise InputRequestError(
                    f"{method}: input request {key!r} is not a sampling, elicitation or roots request: {request!r}",
                    method=kind if isinstance(kind, str) else None,
                    key=key,
                )
            if not self.can_serve(kind):
                raise InputRequestError(
                    f"{method}: the server asked for {kind} (input request {key!r}), but this client did "
                    f"not declare the {INPUT_CAPABILITY[kind]} capability, so the server must not ask for "
                    "it (SEP-2322); give the client a handler for it",
                    method=kind,
                    key=key,
                )
            answers[key] = await self.serve(kind, params or {})
        return answers

    async def on_request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """A request of the server's own (handshake era): its handler's answer."""
        if method in INPUT_CAPABILITY and not self.can_serve(method):
            raise InvalidRequestError(f"This client does not support {method}")
        return await self.serve(method, params)

    async def on_server_notification(self, method: str, params: dict[str, Any]) -> None:
        """A notification: to the ``listen()`` streams, the task waiters, the callbacks."""
        if self._listeners:
            self._listeners.route(method, params)
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
