"""The programming model: decorators that mark a class and its methods for MCP.

Decorators only record what they were told on the function or class (``__mcp_*__``
attributes); ``McpServerApp`` reads them when it builds the catalog.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar, overload

from mcpkit.auth._types import AuthRequirement, as_requirement
from mcpkit.server._engine.middleware import is_middleware
from mcpkit.server._ui_meta import tool_meta

F = TypeVar("F", bound=Callable[..., Any])
C = TypeVar("C", bound=type)

TOOL_ATTR = "__mcp_tool__"
RESOURCE_ATTR = "__mcp_resource__"
PROMPT_ATTR = "__mcp_prompt__"
COMPLETION_ATTR = "__mcp_completion__"
LIFESPAN_ATTR = "__mcp_lifespan__"
SERVER_ATTR = "__mcp_server__"
GUARDS_ATTR = "__mcp_guards__"
INTERCEPTORS_ATTR = "__mcp_interceptors__"
EXCEPTION_HANDLERS_ATTR = "__mcp_exception_handlers__"
METADATA_ATTR = "__mcp_metadata__"
#: Set on a module-level function once an app registered it (its guards are read then).
REGISTERED_ATTR = "__mcp_registered__"
#: A tool's ``execution.taskSupport`` values (None: not said, which means "forbidden").
TASK_SUPPORT_VALUES = ("forbidden", "optional", "required")
#: ``task=True`` / ``task=False`` (FastMCP's spelling) as ``task_support``.
_TASK_FLAGS = {True: "optional", False: "forbidden"}


@dataclass(frozen=True, slots=True)
class ServerSpec:
    name: str | None = None
    version: str | None = None
    title: str | None = None
    instructions: str | None = None
    website_url: str | None = None
    icons: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str | None = None
    title: str | None = None
    description: str | None = None
    annotations: dict[str, Any] | None = None
    icons: tuple[dict[str, Any], ...] = ()
    meta: dict[str, Any] | None = None
    timeout: float | None = None
    input_schema: dict[str, Any] | None = None
    output_schema: dict[str, Any] | None = None
    structured_output: bool | None = None
    task_support: str | None = None
    run_in_thread: bool = True
    #: What a caller's identity must satisfy to see and call it (``as_requirement``).
    auth: AuthRequirement | None = None
    #: Labels ``app.enable(tags=...)`` and ``app.disable(tags=...)`` select it by.
    tags: frozenset[str] = frozenset()
    #: False: registered but not served until ``app.enable`` (absent from lists and calls).
    enabled: bool = True
    #: One of several versions of the tool of this name: the highest is served unless a
    #: rule (``catalog.use_tool_version``) or the call (``_meta``) picks another.
    version: str | None = None

    def __post_init__(self) -> None:
        _take_requirement(self)


@dataclass(frozen=True, slots=True)
class ResourceSpec:
    uri: str
    name: str | None = None
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    annotations: dict[str, Any] | None = None
    icons: tuple[dict[str, Any], ...] = ()
    meta: dict[str, Any] | None = None
    run_in_thread: bool = True
    auth: AuthRequirement | None = None
    #: Labels ``app.enable(tags=...)`` and ``app.disable(tags=...)`` select it by.
    tags: frozenset[str] = frozenset()
    #: False: registered but not served until ``app.enable`` (absent from lists and calls).
    enabled: bool = True

    def __post_init__(self) -> None:
        _take_requirement(self)


@dataclass(frozen=True, slots=True)
class PromptSpec:
    name: str | None = None
    title: str | None = None
    description: str | None = None
    icons: tuple[dict[str, Any], ...] = ()
    meta: dict[str, Any] | None = None
    run_in_thread: bool = True
    auth: AuthRequirement | None = None
    #: Labels ``app.enable(tags=...)`` and ``app.disable(tags=...)`` select it by.
    tags: frozenset[str] = frozenset()
    #: False: registered but not served until ``app.enable`` (absent from lists and calls).
    enabled: bool = True

    def __post_init__(self) -> None:
        _take_requirement(self)


def _take_requirement(spec: Any) -> None:
    """A spec's ``auth=`` as an ``AuthRequirement``: a scope, scopes or a predicate are
    turned into one when the decorator runs, so a wrong one fails there; its ``tags`` as
    a frozenset of strings (a string alone is one tag)."""
    if spec.auth is not None and not isinstance(spec.auth, AuthRequirement):
        object.__setattr__(spec, "auth", as_requirement(spec.auth))
    tags = spec.tags
    if isinstance(tags, str):
        tags = (tags,)
    if not isinstance(tags, frozenset):
        tags = frozenset(tags)
        if not all(isinstance(tag, str) and tag for tag in tags):
            raise TypeError(f"tags are non-empty strings, not {sorted(map(repr, tags))}")
        object.__setattr__(spec, "tags", tags)


@dataclass(frozen=True, slots=True)
class CompletionSpec:
    """Completes the argument ``argument`` of a prompt (``prompt=``) or a resource template
    (``resource=``); ``argument=None`` completes every argument of it."""

    prompt: str | None = None
    resource: str | None = None
    argument: str | None = None
    run_in_thread: bool = True


#: FastMCP's decorator options mcpkit has no option for, and what does their job.
_THEIR_OPTIONS = {
    "exclude_args": "a parameter filled by Depends(...), State or Header stays out of the "
    "input schema (docs/injection.md)",
}


def _spec(cls: type, decorator: str, options: dict[str, Any]) -> Any:
    """``cls(**options)``, or a ``TypeError`` naming the option the decorator does not take
    (not the spec class), with what does its job when it is one of FastMCP's."""
    known = cls.__dataclass_fields__  # type: ignore[attr-defined]
    unknown = next((key for key in options if key not in known), None)
    if unknown is not None:
        hint = _THEIR_OPTIONS.get(unknown)
        raise TypeError(
            f"{decorator}() got an unexpected keyword argument {unknown!r}"
            + (f"; {hint}" if hint else "")
        )
    return cls(**options)


def mcp_server(
    name: str | None = None,
    *,
    version: str | None = None,
    title: str | None = None,
    instructions: str | None = None,
    website_url: str | None = None,
    icons: list[dict[str, Any]] | None = None,
) -> Callable[[C], C]:
    """Mark a class as an MCP server. Its constructor receives the engine's singletons
    (``McpCatalogManager``, ``McpConnectionRegistry``, ``ResourceSubscriptionManager``) and
    user providers by the types of its parameters."""
    spec = ServerSpec(name, version, title, instructions, website_url, tuple(icons or ()))

    def mark(cls: C) -> C:
        setattr(cls, SERVER_ATTR, spec)
        return cls

    return mark


def _mark(attr: str, spec: Any) -> Callable[[F], F]:
    def mark(fn: F) -> F:
        setattr(fn, attr, spec)
        return fn

    return mark


@overload
def mcp_tool(fn: F, /) -> F: ...
@overload
def mcp_tool(
    name: str | None = None,
    *,
    title: str | None = None,
    description: str | None = None,
    annotations: dict[str, Any] | None = None,
    icons: list[dict[str, Any]] | None = None,
    meta: dict[str, Any] | None = None,
    timeout: float | None = None,
    input_schema: dict[str, Any] | None = None,
    output_schema: dict[str, Any] | None = None,
    structured_output: bool | None = None,
    task_support: str | None = None,
    task: bool | str | None = None,
    run_in_thread: bool = True,
    auth: Any = None,
    tags: Iterable[str] = (),
    enabled: bool = True,
    version: str | None = None,
    ui: str | dict[str, Any] | None = None,
) -> Callable[[F], F]: ...
def mcp_tool(name: Any = None, **options: Any) -> Any:
    """Expose a method as a tool.

    The name defaults to the method's name, the description to its docstring, the input
    schema to what its type hints say. ``timeout`` (seconds) bounds one call; ``input_schema``
    given as it is replaces the derived one: the arguments arrive as keywords, checked
    against it (a schema no check can be made of is a ``ValueError`` at registration).
    ``annotations`` are MCP tool annotations (``readOnlyHint``, ``destructiveHint``, ...).

    A sync (``def``) function runs in a worker thread of the app's pool (bounded by
    ``McpServerApp(max_sync_workers=...)``), so a blocking one does not hold up other calls;
    context variables are copied into the thread. ``run_in_thread=False`` calls it on the
    event loop instead: for functions that are trivially fast (no I/O, no sleeps), where
    the thread hop costs more than the call, or that need the event loop's thread. An
    ``async def`` function always runs on the event loop. A cancelled call stops waiting at
    once, but a sync function already running in its thread finishes on its own.

    ``task_support`` (``"optional"``, ``"required"``, ``"forbidden"``) lets the tool run as a
    task (docs/tasks.md); ``task=True`` is FastMCP's spelling of ``"optional"``, and
    ``task=False`` of ``"forbidden"``.

    ``auth`` is what a caller's identity must satisfy to see and call the tool: a scope
    (``"files:write"``), a collection of scopes (all required), a sync predicate
    ``(AuthInfo | None) -> bool``, or ``require_scopes(...)`` / ``require(...)`` from
    ``mcpkit.auth``. A caller who does not satisfy it does not find the tool in
    ``tools/list``, and calling it is answered as for an unknown tool (docs/auth.md).

    ``tags`` label it for ``app.enable(tags=...)`` and ``app.disable(tags=...)``;
    ``enabled=False`` registers it set aside, served only once enabled. ``version``: one
    of several versions of the tool of that name (docs/tools.md).

    ``ui`` names the page a host shows with the tool's result (MCP Apps, docs/apps.md): a
    ``ui://`` URI, or ``tool_ui(uri, visibility=[...])`` from ``mcpkit.server.apps``.
    """
    if callable(name):
        return _mark(TOOL_ATTR, ToolSpec())(name)
    ui = options.pop("ui", None)
    if ui is not None:
        options["meta"] = tool_meta(ui, options.get("meta"))
    options["icons"] = tuple(options.get("icons") or ())
    options["task_support"] = resolve_task_support(
        options.pop("task", None), options.get("task_support")
    )
    return _mark(TOOL_ATTR, _spec(ToolSpec, "mcp_tool", {"name": name, **options}))


def resolve_task_support(task: Any, support: Any) -> str | None:
    """``task_support`` from ``mcp_tool``'s ``task`` and ``task_support`` options."""
    if task is not None:
        if support is not None:
            raise TypeError("give a tool task= or task_support=, not both")
        support = _TASK_FLAGS[task] if isinstance(task, bool) else task
    if support is None:
        return None
    if support not in TASK_SUPPORT_VALUES:
        raise ValueError(
            f"task_support must be one of {', '.join(map(repr, TASK_SUPPORT_VALUES))}, "
            f"not {support!r}"
        )
    return str(support)


def mcp_resource(
    uri: str,
    *,
    name: str | None = None,
    title: str | None = None,
    description: str | None = None,
    mime_type: str | None = None,
    size: int | None = None,
    annotations: dict[str, Any] | None = None,
    icons: list[dict[str, Any]] | None = None,
    meta: dict[str, Any] | None = None,
    run_in_thread: bool = True,
    auth: Any = None,
    tags: Iterable[str] = (),
    enabled: bool = True,
) -> Callable[[F], F]:
    """Expose a method as a resource. ``uri`` with ``{var}`` expressions (RFC 6570) makes a
    resource template whose variables arrive as keyword arguments. ``run_in_thread``,
    ``auth``, ``tags`` and ``enabled`` as for ``mcp_tool``: a caller ``auth`` refuses finds
    the resource (or template) absent from the lists, and reading it is answered as for an
    unknown URI."""
    spec = ResourceSpec(
        uri,
        name,
        title,
        description,
        mime_type,
        size,
        annotations,
        tuple(icons or ()),
        meta,
        run_in_thread,
        auth,
        tags,  # type: ignore[arg-type]  # made a frozenset by the spec
        enabled,
    )
    return _mark(RESOURCE_ATTR, spec)


@overload
def mcp_prompt(fn: F, /) -> F: ...
@overload
def mcp_prompt(
    name: str | None = None,
    *,
    title: str | None = None,
    description: str | None = None,
    icons: list[dict[str, Any]] | None = None,
    meta: dict[str, Any] | None = None,
    run_in_thread: bool = True,
    auth: Any = None,
    tags: Iterable[str] = (),
    enabled: bool = True,
) -> Callable[[F], F]: ...
def mcp_prompt(name: Any = None, **options: Any) -> Any:
    """Expose a method as a prompt; its parameters are the prompt's arguments.
    ``run_in_thread`` and ``auth`` as for ``mcp_tool`` (a prompt ``auth`` refuses is got as
    an unknown one)."""
    if callable(name):
        return _mark(PROMPT_ATTR, PromptSpec())(name)
    options["icons"] = tuple(options.get("icons") or ())
    return _mark(PROMPT_ATTR, _spec(PromptSpec, "mcp_prompt", {"name": name, **options}))


def mcp_completion(
    *,
    prompt: str | None = None,
    resource: str | None = None,
    argument: str | None = None,
    run_in_thread: bool = True,
) -> Callable[[F], F]:
    """Provide ``completion/complete`` values for a prompt's or resource template's argument.

    The method receives ``value`` (the partial input), and optionally ``argument`` (its name)
    and ``context`` (already-resolved arguments); it returns a list of strings, or a dict
    ``{"values": [...], "total": N, "hasMore": True}`` when it knows of more values than it
    returns. ``run_in_thread`` as for ``mcp_tool``.
    """
    if (prompt is None) == (resource is None):
        raise ValueError("mcp_completion needs exactly one of prompt= or resource=")
    return _mark(COMPLETION_ATTR, CompletionSpec(prompt, resource, argument, run_in_thread))


def mcp_lifespan(fn: F) -> F:
    """Mark an async generator method (or module-level async generator function) that runs
    around the server's life: code before its ``yield`` runs at start-up, after it at
    shutdown; the yielded value is available to tools as ``McpToolContext.lifespan_context``.
    One that takes an argument is given the app (FastMCP's ``lifespan(server)``)."""
    setattr(fn, LIFESPAN_ATTR, True)
    return fn


def _refuse_registered(target: Any, decorator: str) -> None:
    if not isinstance(target, type) and getattr(target, REGISTERED_ATTR, False):
        name = getattr(target, "__name__", target)
        raise TypeError(
            f"@{decorator} on {name!r}, which an app has registered already, would not apply: "
            f"put it below @app.tool() (and the other app decorators), next to the def"
        )


def _append(attr: str, items: tuple[Any, ...], decorator: str) -> Callable[[Any], Any]:
    def mark(target: Any) -> Any:
        _refuse_registered(target, decorator)
        existing = (
            target.__dict__.get(attr, ()) if isinstance(target, type) else getattr(target, attr, ())
        )
        setattr(target, attr, tuple(existing) + items)
        return target

    return mark


def use_guards(*guards: Any) -> Callable[[Any], Any]:
    """Run guards before a tool, resource or prompt (on a method) or before every one of a
    server class. A guard is a callable or class with ``can_activate(ctx)`` taking an
    ``McpExecutionContext`` and returning (or awaiting) a bool; False refuses the call."""
    return _append(GUARDS_ATTR, guards, "use_guards")


def use_middleware(*middleware: Any) -> Callable[[Any], Any]:
    """Run middleware (``mcpkit.server.middleware``) around the calls of one tool, resource
    or prompt (on a method or function) or of every one of a server class: its
    ``on_message``, ``on_request`` and the method's hook (``on_call_tool``,
    ``on_read_resource``, ``on_get_prompt``) run after the guards, with the component's
    name, arguments and metadata on the context; the first listed is the outermost.
    ``use_interceptors`` is the same decorator."""
    warn_if_interceptors(middleware, "use_middleware")
    return _append(INTERCEPTORS_ATTR, middleware, "use_middleware")


def use_interceptors(*interceptors: Any) -> Callable[[Any], Any]:
    """``use_middleware`` by its first name. An interceptor (``async (ctx, call_next) ->
    result``, or an object with ``intercept(ctx, call_next)``) still works here, with a
    ``DeprecationWarning``: write it as middleware."""
    warn_if_interceptors(interceptors, "use_interceptors")
    return _append(INTERCEPTORS_ATTR, interceptors, "use_interceptors")


def warn_if_interceptors(items: Iterable[Any], where: str, stacklevel: int = 3) -> None:
    """A ``DeprecationWarning`` for each of ``items`` that is an interceptor, not
    middleware, pointing (by default) at the caller of the function that called this one."""
    for item in items:
        if not is_middleware(item):
            warnings.warn(
                f"{where}({item!r}): interceptors (intercept(ctx, call_next)) are deprecated; "
                "write a Middleware (mcpkit.server.middleware) with on_call_tool, "
                "on_read_resource or on_get_prompt and attach it the same way",
                DeprecationWarning,
                stacklevel=stacklevel,
            )


def use_exception_handlers(*handlers: Any) -> Callable[[Any], Any]:
    """Turn exceptions a call raises into results. A handler is ``(exc, ctx) -> result`` or a
    class with ``catch(exc, ctx)``; an optional ``handles`` tuple of exception types limits
    it. A handler that re-raises passes the exception on to the next one."""
    return _append(EXCEPTION_HANDLERS_ATTR, handlers, "use_exception_handlers")


def set_metadata(key: str, value: Any) -> Callable[[Any], Any]:
    """Attach metadata readable by guards and middleware via ``ctx.get_metadata(key)``."""

    def mark(target: Any) -> Any:
        _refuse_registered(target, "set_metadata")
        own = (
            target.__dict__.get(METADATA_ATTR)
            if isinstance(target, type)
            else getattr(target, METADATA_ATTR, None)
        )
        merged = dict(own or {})
        merged[key] = value
        setattr(target, METADATA_ATTR, merged)
        return target

    return mark


@dataclass(slots=True)
class Pipeline:
    """Guards, interceptors, exception handlers and metadata in force for one callable."""

    guards: tuple[Any, ...] = ()
    interceptors: tuple[Any, ...] = ()
    exception_handlers: tuple[Any, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict)
    #: Nothing to run around the callable: read on every call, so worked out once (a
    #: pipeline is made whole and never changed; ``dataclasses.replace`` works it out again).
    empty: bool = field(init=False, repr=False, compare=False, default=True)

    def __post_init__(self) -> None:
        self.empty = not (self.guards or self.interceptors or self.exception_handlers)
