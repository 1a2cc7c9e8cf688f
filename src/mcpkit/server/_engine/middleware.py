"""Middleware: code around every message an engine serves, requests and notifications
alike, in both eras and on every transport.

A ``Middleware`` has one hook per kind of message: ``on_message`` (every one),
``on_request`` or ``on_notification``, then the one of its method (``on_call_tool``,
``on_list_tools``, ``on_read_resource``, ``on_get_prompt``, ``on_initialize``, ... see
``METHOD_HOOKS``). Each takes the ``MiddlewareContext`` and ``call_next`` and returns what
``call_next(context)`` gave (a request's result, as the wire dict; None for a
notification), changed or not; it may change ``context.params`` first, answer without
calling on, or raise (a ``ProtocolError`` is the request's error, as a handler's is). The
middleware of an engine run in the order given, the first outermost; within one, the
general hooks wrap the specific: ``on_message``, then ``on_request``, then the method's.

An engine without middleware runs none of this: one check per message.

The same middleware may be attached to one component (``use_interceptors`` on a server
class, a method or a mount): then its hooks (``on_message``, ``on_request``, the method's)
run around that component's call alone, after its guards, with ``component`` set on the
context and ``call_next`` giving what the component returned (``run_component``)."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from mcpkit.protocol._headers import NAME_FIELDS
from mcpkit.protocol._jsonrpc import JsonRpcNotification, JsonRpcRequest

if TYPE_CHECKING:
    from mcpkit.server._engine.binding import TransportBinding

#: A method's own hook, by method.
METHOD_HOOKS: Mapping[str, str] = MappingProxyType(
    {
        "initialize": "on_initialize",
        "ping": "on_ping",
        "tools/list": "on_list_tools",
        "tools/call": "on_call_tool",
        "resources/list": "on_list_resources",
        "resources/templates/list": "on_list_resource_templates",
        "resources/read": "on_read_resource",
        "resources/subscribe": "on_subscribe",
        "resources/unsubscribe": "on_unsubscribe",
        "prompts/list": "on_list_prompts",
        "prompts/get": "on_get_prompt",
        "completion/complete": "on_complete",
        "logging/setLevel": "on_set_level",
        "server/discover": "on_discover",
        "subscriptions/listen": "on_listen",
    }
)

#: What a hook calls to go on: the next hook, or the handler; it returns the result.
CallNext = Callable[["MiddlewareContext"], Awaitable[Any]]

#: Every hook a middleware may have: one of them makes an object middleware.
HOOK_NAMES = ("on_message", "on_request", "on_notification", *METHOD_HOOKS.values())
#: The request each kind of component call answers.
METHOD_OF_KIND: Mapping[str, str] = MappingProxyType(
    {"tool": "tools/call", "resource": "resources/read", "prompt": "prompts/get"}
)


@dataclasses.dataclass(slots=True)
class MiddlewareContext:
    """One message on its way through the middleware: its ``method`` and ``params`` (a hook
    may change them for the hooks and handler after it), whether it is a ``request`` (else
    a notification), its request ``id``, the ``binding`` it came on (the session, the
    caller's ``auth``, the HTTP request), and when it began (``time.monotonic()``).

    Around one component's call (middleware attached with ``use_interceptors``),
    ``component`` is its name as called (a resource's URI), ``component_arguments`` its
    validated arguments (a hook may change them) and ``metadata`` what ``set_metadata`` put
    on it; app-wide they are None. ``name`` and ``arguments`` read either."""

    method: str
    params: dict[str, Any] | None
    request: bool
    id: Any
    binding: TransportBinding
    started: float = dataclasses.field(default_factory=time.monotonic)
    component: str | None = None
    component_arguments: dict[str, Any] | None = None
    metadata: Mapping[str, Any] | None = None

    @property
    def name(self) -> str | None:
        """The tool or prompt named, or the resource URI read (``tools/call``,
        ``prompts/get``, ``resources/read``), None for other messages."""
        if self.component is not None:
            return self.component
        if self.method not in _NAMED:
            return None
        value = (self.params or {}).get(_NAMED[self.method])
        return value if isinstance(value, str) else None

    @property
    def arguments(self) -> dict[str, Any]:
        """The call's arguments: the component's validated ones around one component, the
        request's ``arguments`` app-wide (empty when there are none)."""
        if self.component_arguments is not None:
            return self.component_arguments
        value = (self.params or {}).get("arguments")
        return value if isinstance(value, dict) else {}

    @property
    def headers(self) -> Mapping[str, str] | None:
        """The HTTP request's headers, None over stdio and in memory."""
        return self.binding.headers

    def get_metadata(self, key: str, default: Any = None) -> Any:
        """What ``set_metadata`` attached to the component called, else ``default``
        (always ``default`` app-wide)."""
        return default if self.metadata is None else self.metadata.get(key, default)

    @property
    def auth(self) -> Any:
        """The caller's identity (``AuthInfo``), None without auth."""
        return self.binding.auth

    @property
    def session_id(self) -> str | None:
        """The session's id (Streamable HTTP, legacy SSE), None without one."""
        return self.binding.session_id


#: The field naming the component each call method reaches (as its ``Mcp-Name`` mirrors).
_NAMED = MappingProxyType({method: NAME_FIELDS[method] for method in METHOD_OF_KIND.values()})


class Middleware:
    """A base class whose hooks all call on: override the ones a middleware needs."""

    async def on_message(self, context: MiddlewareContext, call_next: CallNext) -> Any:
        return await call_next(context)

    async def on_request(self, context: MiddlewareContext, call_next: CallNext) -> Any:
        return await call_next(context)

    async def on_notification(self, context: MiddlewareContext, call_next: CallNext) -> Any:
        return await call_next(context)


def _hooks(middleware: Iterable[Any], method: str, request: bool) -> list[Callable[..., Any]]:
    """The hooks a message goes through, outermost first."""
    kind = "on_request" if request else "on_notification"
    specific = METHOD_HOOKS.get(method)
    found: list[Callable[..., Any]] = []
    for item in middleware:
        for name in ("on_message", kind, specific):
            hook = getattr(item, name, None) if name else None
            if hook is not None:
                found.append(hook)
    return found


class MiddlewareChain:
    """The middleware of one engine, and how a message goes through them."""

    __slots__ = ("items",)

    def __init__(self, items: Iterable[Any] = ()) -> None:
        self.items: list[Any] = []
        for item in items:
            self.add(item)

    def __bool__(self) -> bool:
        return bool(self.items)

    def add(self, item: Any) -> None:
        """Add ``item`` innermost (after those added before)."""
        if not is_middleware(item):
            raise TypeError(f"{item!r} is no middleware: it has no on_* hook")
        self.items.append(item)

    async def request(
        self,
        request: JsonRpcRequest,
        binding: TransportBinding,
        handler: Callable[[JsonRpcRequest, TransportBinding], Awaitable[Any]],
    ) -> Any:
        """``handler``'s result for ``request``, through every hook."""
        context = MiddlewareContext(request.method, request.params, True, request.id, binding)

        async def innermost(ctx: MiddlewareContext) -> Any:
            if ctx.params is not request.params or ctx.method != request.method:
                return await handler(JsonRpcRequest(request.id, ctx.method, ctx.params), binding)
            return await handler(request, binding)

        return await _through(_hooks(self.items, request.method, True), context, innermost)

    async def notification(
        self,
        note: JsonRpcNotification,
        binding: TransportBinding,
        handler: Callable[[JsonRpcNotification, TransportBinding], Awaitable[Any]] | None,
    ) -> None:
        """``note`` through every hook, to ``handler`` (None: no handler; the hooks still
        see it)."""
        context = MiddlewareContext(note.method, note.params, False, None, binding)

        async def innermost(ctx: MiddlewareContext) -> Any:
            if handler is not None:
                await handler(JsonRpcNotification(ctx.method, ctx.params), binding)
            return None

        await _through(_hooks(self.items, note.method, False), context, innermost)


def is_middleware(item: Any) -> bool:
    """Whether ``item`` has an ``on_*`` hook (else it is no middleware)."""
    return any(callable(getattr(item, name, None)) for name in HOOK_NAMES)


async def run_component(item: Any, context: MiddlewareContext, innermost: CallNext) -> Any:
    """``innermost(context)`` through the hooks of ``item`` a request of
    ``context.method`` goes through: the middleware attached to one component."""
    return await _through(_hooks((item,), context.method, True), context, innermost)


async def _through(
    hooks: list[Callable[..., Any]], context: MiddlewareContext, innermost: CallNext
) -> Any:
    def step(index: int) -> CallNext:
        if index == len(hooks):
            return innermost
        hook, after = hooks[index], step(index + 1)
        return lambda ctx: hook(ctx, after)

    return await step(0)(context)


__all__ = [
    "HOOK_NAMES",
    "METHOD_HOOKS",
    "METHOD_OF_KIND",
    "CallNext",
    "Middleware",
    "MiddlewareChain",
    "MiddlewareContext",
    "is_middleware",
    "run_component",
]
