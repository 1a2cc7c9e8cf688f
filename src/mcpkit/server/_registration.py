"""What ``McpServerApp`` serves, found and registered: the ``@mcp_server`` classes it
instantiates (their constructors given the app's providers by type), their decorated
members and the module-level functions it is given, each with the guards, interceptors,
exception handlers and metadata in force for it, put in the catalog by the entry builder.
``Registrar`` does it for one app; the app's decorators (``app.tool()`` and the rest)
register through it too."""

from __future__ import annotations

import contextlib
import inspect
import logging
from typing import TYPE_CHECKING, Any

from mcpkit.server._decorators import (
    COMPLETION_ATTR,
    EXCEPTION_HANDLERS_ATTR,
    GUARDS_ATTR,
    INTERCEPTORS_ATTR,
    LIFESPAN_ATTR,
    METADATA_ATTR,
    PROMPT_ATTR,
    REGISTERED_ATTR,
    RESOURCE_ATTR,
    SERVER_ATTR,
    TOOL_ATTR,
    Pipeline,
)
from mcpkit.server._engine.engine import ConnectionGuard
from mcpkit.server._entries import CompletionEntry

if TYPE_CHECKING:
    from collections.abc import Callable

    from mcpkit.server._builder import EntryBuilder
    from mcpkit.server._catalog import McpCatalogManager

logger = logging.getLogger("mcpkit.server")


def _members_in_declaration_order(cls: type) -> list[tuple[str, Any]]:
    """Class members base-first, each class in the order its body declares them: lists
    come out in a stable, author-chosen order (2026-07-28 asks for a deterministic one)."""
    seen: dict[str, Any] = {}
    for klass in reversed(cls.__mro__):
        for name, value in vars(klass).items():
            seen.pop(name, None)
            seen[name] = value
    return [(name, getattr(cls, name, value)) for name, value in seen.items()]


#: What a decorator leaves on a function the app serves (``@mcp_tool`` and the rest).
_MEMBER_ATTRS = (TOOL_ATTR, RESOURCE_ATTR, PROMPT_ATTR, COMPLETION_ATTR, LIFESPAN_ATTR)


def is_member(value: Any) -> bool:
    fn = getattr(value, "__func__", value)
    return callable(fn) and any(getattr(fn, attr, None) for attr in _MEMBER_ATTRS)


def _serves_members(cls: type) -> bool:
    """Whether ``cls`` is an ``@mcp_server`` class or has decorated members."""
    if getattr(cls, SERVER_ATTR, None) is not None:
        return True
    return any(is_member(value) for _, value in _members_in_declaration_order(cls))


def _warn_if_taken(kind: str, entry: Any, taken: Any) -> None:
    """Two functions under one name: almost always a slip, and the later one would
    silently replace the earlier (``catalog.register_*`` replaces on purpose, for live
    updates)."""
    if taken is not None and _function(taken.fn) is not _function(entry.fn):
        logger.warning(
            "two %ss are named %r: %s replaces %s; give one of them another name",
            kind,
            entry.name,
            _qualname(entry.fn),
            _qualname(taken.fn),
        )


def _function(fn: Any) -> Any:
    return getattr(fn, "__func__", fn)


def _qualname(fn: Any) -> str:
    return getattr(_function(fn), "__qualname__", repr(fn))


def describe(target: Any) -> str:
    name = getattr(target, "__qualname__", None) or getattr(target, "__name__", None)
    if isinstance(target, type):
        return f"class {name}"
    if callable(target) and name:
        return f"function {name}"
    return f"{type(target).__name__} object"


_HOW_TO_SERVE = (
    "pass @mcp_server classes (or instances of them), classes with @mcp_tool/@mcp_resource/"
    "@mcp_prompt/@mcp_completion/@mcp_lifespan members, or functions carrying one of those "
    "decorators; register a plain function with app.tool() / app.resource(uri) / app.prompt(), "
    "and give other objects to providers=[...]"
)


def spec_of(marker: Callable[[Any], Any], attr: str, fn: Any) -> Any:
    """The spec ``marker`` (``mcp_tool(...)`` and the like) records, marking ``fn`` with
    it when ``fn`` takes attributes (a bound method: its function)."""
    target = getattr(fn, "__func__", fn)
    try:
        marker(target)
    except (AttributeError, TypeError):  # no __dict__: read the spec off a stand-in

        def target() -> None: ...

        marker(target)
    return getattr(target, attr)


class Registrar:
    """Finds and registers what one app serves into its ``catalog`` through its entry
    ``builder``; ``providers`` by type fill constructors, ``lifespans`` collects the
    ``@mcp_lifespan`` functions met."""

    def __init__(
        self,
        catalog: McpCatalogManager,
        builder: EntryBuilder,
        providers: dict[type, Any],
        lifespans: list[Callable[..., Any]],
    ) -> None:
        self.catalog = catalog
        self.builder = builder
        self._providers = providers
        self._lifespans = lifespans

    def resolve(self, cls: type) -> Any:
        """The provider registered for ``cls`` (or a subclass of it)."""
        if cls in self._providers:
            return self._providers[cls]
        for provided, value in self._providers.items():
            if isinstance(provided, type) and issubclass(provided, cls):
                return value
        raise LookupError(f"nothing provides {cls.__name__}")

    @staticmethod
    def served(target: Any) -> tuple[Any, bool]:
        """``(target, is_function)`` for something given to the constructor; a
        ``TypeError`` for something that would serve nothing."""
        if isinstance(target, type):
            if _serves_members(target):
                return target, False
            raise TypeError(
                f"McpServerApp() got {describe(target)}, which has no @mcp_server and no decorated members: {_HOW_TO_SERVE}"
            )
        if isinstance(target, str):
            raise TypeError(
                f"McpServerApp() got the string {target!r} after what it serves: a name comes"
                f' first, McpServerApp("name", ...), or as name="name"'
            )
        if is_member(target):
            return target, True
        if callable(target) and (
            inspect.isfunction(target) or inspect.ismethod(target) or inspect.isbuiltin(target)
        ):
            raise TypeError(
                f"McpServerApp() got the undecorated {describe(target)}: {_HOW_TO_SERVE}"
            )
        if _serves_members(type(target)):
            return target, False
        raise TypeError(
            f"McpServerApp() got a {describe(target)} that serves nothing: {_HOW_TO_SERVE}"
        )

    def instantiate(self, target: Any) -> Any:
        if not isinstance(target, type):
            return target
        hints = inspect.signature(target).parameters
        try:
            annotations = inspect.get_annotations(
                target.__init__,  # type: ignore[misc]  # the class's own __init__
                eval_str=True,
            )
        except Exception:
            annotations = {}
        kwargs = {}
        for name, param in hints.items():
            annotation = annotations.get(name, param.annotation)
            if isinstance(annotation, type):
                try:
                    kwargs[name] = self.resolve(annotation)
                    continue
                except LookupError:
                    pass
            if param.default is inspect.Parameter.empty:
                raise TypeError(
                    f"cannot build {target.__name__}: nothing provides parameter {name!r}"
                )
        instance = target(**kwargs)
        self._providers.setdefault(target, instance)
        return instance

    def connection_guards(self, instances: list[Any]) -> list[ConnectionGuard]:
        """The guards of the served ``instances``' classes that check connections
        (``can_connect``), made once."""
        guards = []
        for instance in instances:
            server_class = type(instance)
            metadata = dict(vars(server_class).get(METADATA_ATTR) or {})
            for declared in vars(server_class).get(GUARDS_ATTR, ()):
                if getattr(declared, "can_connect", None) is not None:
                    guard = self.instantiate(declared)
                    guards.append(ConnectionGuard(guard, guard.can_connect, server_class, metadata))
        return guards

    def _pipeline(self, cls: type | None, fn: Any) -> Pipeline:
        """What is in force for ``fn``: its server class's guards, interceptors, exception
        handlers and metadata (none for a module-level function), then its own."""
        own = vars(cls) if cls is not None else {}

        def gather(attr: str) -> tuple[Any, ...]:
            items = tuple(own.get(attr, ())) + tuple(getattr(fn, attr, ()))
            return tuple(self.instantiate(item) for item in items)

        metadata = dict(own.get(METADATA_ATTR) or {})
        metadata.update(getattr(fn, METADATA_ATTR, None) or {})
        return Pipeline(
            gather(GUARDS_ATTR),
            gather(INTERCEPTORS_ATTR),
            gather(EXCEPTION_HANDLERS_ATTR),
            metadata,
        )

    def collect(self, instance: Any) -> None:
        cls = type(instance)
        for attr_name, raw in _members_in_declaration_order(cls):
            fn = getattr(raw, "__func__", raw)
            if not callable(fn):
                continue
            self._register(getattr(instance, attr_name), fn, cls)

    def register_function(self, target: Any) -> None:
        """A decorated module-level function (or bound method) given to the constructor."""
        fn = getattr(target, "__func__", target)
        owner = type(target.__self__) if inspect.ismethod(target) else None
        self._register(target, fn, owner)

    def _register(
        self, bound: Any, fn: Any, cls: type | None, only: str | None = None, given: Any = None
    ) -> None:
        """Register what ``fn``'s decorators say (``only``: that one decorator, whose spec
        may be ``given``), served by ``bound`` (``fn`` itself, or bound to its server instance)."""

        def wanted(attr: str) -> Any:
            if only is None:
                return getattr(fn, attr, None)
            return (
                (given if given is not None else getattr(fn, attr, None)) if attr == only else None
            )

        registered = False
        if (spec := wanted(TOOL_ATTR)) is not None:
            tool = self.builder.tool(
                bound, spec, pipeline=self._pipeline(cls, fn), server_class=cls
            )
            _warn_if_taken("tool", tool, self.catalog.get_tool(tool.name))
            self.catalog.register_tool(tool)
            registered = True
        if (spec := wanted(RESOURCE_ATTR)) is not None:
            self.catalog.register_resource(
                self.builder.resource(
                    bound, spec, pipeline=self._pipeline(cls, fn), server_class=cls
                )
            )
            registered = True
        if (spec := wanted(PROMPT_ATTR)) is not None:
            prompt = self.builder.prompt(
                bound, spec, pipeline=self._pipeline(cls, fn), server_class=cls
            )
            _warn_if_taken("prompt", prompt, self.catalog.get_prompt(prompt.name))
            self.catalog.register_prompt(prompt)
            registered = True
        if (spec := wanted(COMPLETION_ATTR)) is not None:
            ref_type = "ref/prompt" if spec.prompt is not None else "ref/resource"
            accepts = frozenset(inspect.signature(bound).parameters)
            self.catalog.register_completion(
                CompletionEntry(
                    ref_type,
                    spec.prompt or spec.resource,
                    spec.argument,
                    bound,
                    accepts,
                    run_in_thread=spec.run_in_thread,
                )
            )
        if wanted(LIFESPAN_ATTR):
            self._lifespans.append(bound)
        if registered and cls is None:
            # Guards and the like are read now: one applied later would silently not apply.
            with contextlib.suppress(AttributeError, TypeError):
                setattr(fn, REGISTERED_ATTR, True)

    def register_live(self, fn: Any, attr: str, spec: Any) -> None:
        owner = type(fn.__self__) if inspect.ismethod(fn) else None
        self._register(fn, getattr(fn, "__func__", fn), owner, only=attr, given=spec)


__all__ = ["Registrar", "describe", "is_member", "spec_of"]
