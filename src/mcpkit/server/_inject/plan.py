"""Filling ``Header``, ``State`` and ``Depends`` parameters (``markers``), and
``McpRequestScope`` ones (the HTTP request, by type).

``plan_injection(fn)`` reads a function's markers once, at registration, into an
``InjectionPlan`` (None when it has none: such a function's calls pay nothing). Each call
then runs ``plan.call``: resolve every parameter (providers once per call, in a per-call
cache), call the function, and run the generator providers' cleanup in reverse order after
it, whether it returned, raised or was cancelled.
"""

from __future__ import annotations

import contextlib
import inspect
import logging
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, get_args, get_origin

import msgspec

from mcpkit._exceptions import InternalError, InvalidParamsError
from mcpkit.server._engine.request_scope import McpRequestScope
from mcpkit.server._engine.sync_calls import call_entry, is_coroutine_callable
from mcpkit.server._inject.markers import Dependency, Header, State, find_marker
from mcpkit.server._schema.type_hints import (
    _admits_none,
    _callable_name,
    _injected_type,
    _is_union,
    _resolve_hints,
)

if TYPE_CHECKING:
    from mcpkit.protocol._jsonrpc import JsonRpcRequest
    from mcpkit.server._engine.binding import TransportBinding
    from mcpkit.server._engine.sync_calls import SyncWorkers

logger = logging.getLogger("mcpkit.server")

_EMPTY = inspect.Parameter.empty
#: An annotation left as text (unresolvable) that still says None is welcome.
_OPTIONAL_TEXT = re.compile(r"\b(?:None|Optional)\b")
#: Deepest chain of providers depending on providers (a cycle is refused long before).
MAX_PROVIDER_DEPTH = 32


class CallScope:
    """What one call's parameters are resolved from, and what it must clean up."""

    __slots__ = ("app", "binding", "cache", "context", "owner", "request", "stack")

    def __init__(
        self, app: Any, binding: TransportBinding, request: JsonRpcRequest, owner: Any = None
    ) -> None:
        self.app = app
        #: The app the function belongs to (a mounted one: its lifespan state, its
        #: providers); ``app`` serves the request.
        self.owner = app if owner is None else owner
        self.binding = binding
        self.request = request
        #: Provider results of this call, by provider (``use_cache``).
        self.cache: dict[Any, Any] = {}
        self.stack: contextlib.AsyncExitStack | None = None
        self.context: Any = None

    def tool_context(self) -> Any:
        """The call's ``McpToolContext`` (one for the function and its providers)."""
        if self.context is None:
            from mcpkit.server._context import McpToolContext

            self.context = McpToolContext(
                self.binding, self.request, self.app.dispatcher, self.owner.lifespan_context
            )
        return self.context

    def headers(self) -> Mapping[str, str] | None:
        """The headers of the HTTP request carrying the call (the connection's when the
        call came another way, e.g. from another instance); None without HTTP."""
        scope = self.binding.request
        if scope is not None:
            return scope.headers
        return self.binding.headers


# --------------------------------------------------------------------------- resolvers


def _converter(target: Any, where: str) -> Callable[[str], Any]:
    """How a header's text becomes ``target`` (str as is; else msgspec's lax conversion:
    ``"5"`` → 5, ``"true"`` → True)."""
    if _is_union(target):
        members = [arg for arg in get_args(target) if arg is not type(None)]
        if len(members) == 1:
            target = members[0]
    if target in (str, Any, _EMPTY) or isinstance(target, str):
        return str
    try:
        msgspec.convert("", type=target, strict=False)
    except msgspec.ValidationError:
        pass  # the type is usable; "" is just not one of its values
    except TypeError as exc:
        raise TypeError(f"{where}: a header cannot be converted to {target!r}") from exc

    def convert(text: str) -> Any:
        return msgspec.convert(text, type=target, strict=False)

    return convert


@dataclass(frozen=True, slots=True)
class _HeaderParam:
    header: str
    convert: Callable[[str], Any]
    default: Any
    admits_none: bool

    def resolve(self, call: CallScope) -> Any:
        headers = call.headers()
        raw = headers.get(self.header) if headers is not None else None
        if raw is None:
            if self.default is not _EMPTY:
                return self.default
            if self.admits_none:
                return None
            raise InvalidParamsError(
                f'Missing required header "{self.header}"', {"header": self.header}
            )
        try:
            return self.convert(raw)
        except (msgspec.ValidationError, ValueError) as exc:
            raise InvalidParamsError(
                f'Invalid header "{self.header}": {exc}', {"header": self.header}
            ) from None


@dataclass(frozen=True, slots=True)
class _StateParam:
    name: str | None
    kind: type | None
    default: Any
    label: str

    def resolve(self, call: CallScope) -> Any:
        app = call.owner
        context = app.lifespan_context
        values = context if isinstance(context, list) else [context]
        for value in values:
            if value is None:
                continue
            if self.name is not None:
                if isinstance(value, Mapping) and self.name in value:
                    return value[self.name]
                if not isinstance(value, Mapping) and hasattr(value, self.name):
                    return getattr(value, self.name)
                continue
            assert self.kind is not None
            if isinstance(value, self.kind):
                return value
            if isinstance(value, Mapping):
                for item in value.values():
                    if isinstance(item, self.kind):
                        return item
        if self.name is None and self.kind is not None:
            with contextlib.suppress(LookupError):
                return app.resolve(self.kind)
        if self.default is not _EMPTY:
            return self.default
        raise InternalError(
            f"{self.label}: no such value in the lifespan state or the app's providers"
        )


@dataclass(frozen=True, slots=True)
class _ContextParam:
    def resolve(self, call: CallScope) -> Any:
        return call.tool_context()


@dataclass(frozen=True, slots=True)
class _RequestParam:
    """The HTTP request the call came on. Without one (stdio, in memory): the default,
    None for ``McpRequestScope | None``; a plain ``McpRequestScope`` promises a request, so
    the call fails (``-32603``, as a missing ``State``: the server is served where the
    function cannot work) rather than handing it a None it does not expect."""

    default: Any
    #: Set when the call must fail without a request: what the error names.
    required: str | None

    def resolve(self, call: CallScope) -> Any:  # the request, else the default
        scope = call.binding.request
        if scope is not None:
            return scope
        if self.required is None:
            return self.default
        raise InternalError(
            f"{self.required}: there is no HTTP request (the call came over stdio or in "
            "memory); annotate it McpRequestScope | None to accept such calls"
        )


def _request_param(owner: str, name: str, hint: Any, default: Any) -> _RequestParam:
    if default is not _EMPTY:
        return _RequestParam(default, None)
    if _admits_none(hint) or (isinstance(hint, str) and _OPTIONAL_TEXT.search(hint)):
        return _RequestParam(None, None)
    return _RequestParam(None, f"{owner}: parameter {name!r} (McpRequestScope)")


_SyncParam = _HeaderParam | _StateParam | _ContextParam | _RequestParam


@dataclass(frozen=True, slots=True)
class _Provider:
    """One ``Depends`` provider: how it is called and what it takes."""

    fn: Callable[..., Any]
    mode: str  # "async", "sync", "asyncgen", "gen"
    params: tuple[tuple[str, Any], ...]  # (name, resolver)

    async def run(self, call: CallScope) -> Any:
        kwargs = await resolve_params(self.params, call)
        mode = self.mode
        if mode == "async":
            return await self.fn(**kwargs)
        if mode == "sync":
            return self.fn(**kwargs)
        if call.stack is None:
            call.stack = contextlib.AsyncExitStack()
        if mode == "asyncgen":
            manager = contextlib.asynccontextmanager(self.fn)(**kwargs)
            return await call.stack.enter_async_context(manager)
        return call.stack.enter_context(contextlib.contextmanager(self.fn)(**kwargs))


@dataclass(frozen=True, slots=True)
class _DependsParam:
    provider: _Provider
    use_cache: bool

    async def resolve(self, call: CallScope) -> Any:
        if not self.use_cache:
            return await self.provider.run(call)
        key = self.provider.fn
        if key in call.cache:
            return call.cache[key]
        value = call.cache[key] = await self.provider.run(call)
        return value


async def resolve_params(params: tuple[tuple[str, Any], ...], call: CallScope) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for name, resolver in params:
        if type(resolver) is _DependsParam:
            values[name] = await resolver.resolve(call)
        else:
            values[name] = resolver.resolve(call)
    return values


# --------------------------------------------------------------------------- plans


@dataclass(frozen=True, slots=True)
class InjectionPlan:
    """What a function's injected parameters need, decided at registration."""

    params: tuple[tuple[str, Any], ...]
    #: The app whose state and providers fill the parameters, once the entry is mounted
    #: in another (None: the app serving the call).
    owner: Any = None

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.params)

    async def call(
        self,
        entry: Any,
        kwargs: dict[str, Any],
        call: CallScope,
        workers: SyncWorkers,
    ) -> Any:
        """Resolve the parameters, call ``entry``'s function, then clean up (the generator
        providers' code after ``yield``, last opened first), however the call ended."""
        try:
            kwargs.update(await resolve_params(self.params, call))
            result = await call_entry(entry, kwargs, workers)
        except BaseException as exc:
            stack = call.stack
            if stack is not None:
                call.stack = None
                # The call's own exception goes on, whatever a provider's cleanup does with it.
                await stack.__aexit__(type(exc), exc, exc.__traceback__)
            raise
        stack = call.stack
        if stack is not None:
            call.stack = None
            await stack.aclose()
        return result


def _provider_mode(fn: Callable[..., Any]) -> str:
    target = inspect.unwrap(fn)
    if inspect.isasyncgenfunction(target):
        return "asyncgen"
    if inspect.isgeneratorfunction(target):
        return "gen"
    return "async" if is_coroutine_callable(fn) else "sync"


def _plan_param(
    owner: str,
    name: str,
    hint: Any,
    default: Any,
    providers: dict[Any, _Provider],
    chain: tuple[Any, ...],
    for_provider: bool,
) -> Any:
    """The resolver of one parameter, or None when it is not injected."""
    from mcpkit.server._context import McpToolContext

    found = find_marker(hint, default)
    if found is None:
        if not for_provider:
            return None
        if _injected_type(hint, (McpToolContext,)) is not None:
            return _ContextParam()
        if _injected_type(hint, (McpRequestScope,)) is not None:
            return _request_param(owner, name, hint, default)
        if default is not _EMPTY:
            return None
        raise TypeError(
            f"{owner}: parameter {name!r} is not Header, State, Depends, McpToolContext or "
            "McpRequestScope, and has no default: a provider's parameters are all injected"
        )
    marker, base = found
    if isinstance(default, (Header, State, Dependency)):
        default = _EMPTY
    where = f"{owner}: parameter {name!r}"
    if isinstance(marker, Header):
        header = marker.name or name.replace("_", "-").lower()
        return _HeaderParam(header, _converter(base, where), default, _admits_none(hint))
    if isinstance(marker, State):
        kind = None
        if marker.name is None:
            origin = get_origin(base) or base
            if _is_union(base):
                members = [a for a in get_args(base) if a is not type(None)]
                origin = (get_origin(members[0]) or members[0]) if len(members) == 1 else None
            if not isinstance(origin, type):
                raise TypeError(
                    f"{where}: State[{base!r}] cannot be found by type: name it, State[T, 'name']"
                )
            kind = origin
        label = f"State[{getattr(base, '__name__', base)!s}"
        label += f", {marker.name!r}]" if marker.name is not None else "]"
        return _StateParam(marker.name, kind, default, f"{where}: {label}")
    return _DependsParam(_plan_provider(marker.provider, providers, chain), marker.use_cache)


def _plan_provider(
    fn: Callable[..., Any], providers: dict[Any, _Provider], chain: tuple[Any, ...]
) -> _Provider:
    if fn in providers:
        return providers[fn]
    owner = f"provider {_callable_name(fn)}"
    if fn in chain:
        cycle = " -> ".join(_callable_name(f) for f in (*chain, fn))
        raise TypeError(f"Depends cycle: {cycle}")
    if len(chain) >= MAX_PROVIDER_DEPTH:
        raise TypeError(f"{owner}: providers nested deeper than {MAX_PROVIDER_DEPTH}")
    params = _plan_params(fn, owner, providers, (*chain, fn), for_provider=True)
    provider = providers[fn] = _Provider(fn, _provider_mode(fn), params)
    return provider


def _plan_params(
    fn: Callable[..., Any],
    owner: str,
    providers: dict[Any, _Provider],
    chain: tuple[Any, ...],
    for_provider: bool,
) -> tuple[tuple[str, Any], ...]:
    signature = inspect.signature(fn)
    hints = _resolve_hints(fn)
    params = []
    for parameter in signature.parameters.values():
        if parameter.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            continue
        hint = hints.get(parameter.name, parameter.annotation)
        resolver = _plan_param(
            owner, parameter.name, hint, parameter.default, providers, chain, for_provider
        )
        if resolver is not None:
            params.append((parameter.name, resolver))
    return tuple(params)


def plan_injection(
    fn: Callable[..., Any], context_params: Mapping[str, Any]
) -> InjectionPlan | None:
    """The plan of ``fn``'s ``Header`` / ``State`` / ``Depends`` / ``McpRequestScope``
    parameters, None when it has none. ``context_params`` (its ``McpToolContext`` and
    ``McpRequestScope`` parameters, by type) join the plan when there is one, so a single
    step fills everything. A mistake (a provider taking what
    nothing provides, a cycle, a header type that cannot be converted) is a ``TypeError``
    here, at registration, not at the first call."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    hints = _resolve_hints(fn)
    takes_request = any(_is_request_kind(kind) for kind in context_params.values())
    if not takes_request and not any(
        find_marker(hints.get(p.name, p.annotation), p.default) is not None
        for p in signature.parameters.values()
    ):
        return None
    owner = _callable_name(fn)
    params = list(_plan_params(fn, owner, {}, (), for_provider=False))
    for name, kind in context_params.items():
        if _is_request_kind(kind):
            parameter = signature.parameters.get(name)
            default = _EMPTY if parameter is None else parameter.default
            hint = hints.get(name, _EMPTY if parameter is None else parameter.annotation)
            params.append((name, _request_param(owner, name, hint, default)))
        else:
            params.append((name, _ContextParam()))
    return InjectionPlan(tuple(params))


def _is_request_kind(kind: Any) -> bool:
    return isinstance(kind, type) and issubclass(kind, McpRequestScope)


__all__ = ["MAX_PROVIDER_DEPTH", "CallScope", "InjectionPlan", "plan_injection"]
