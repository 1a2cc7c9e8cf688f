"""Composition: one ``McpServerApp`` serving what others offer (``app.mount``,
``app.import_app``; docs/composition.md).

A mount copies the mounted app's catalog entries into the parent's catalog, renamed by
the prefix rules of ``_prefixing``, and (``live``) follows every later change of the
mounted catalog through a change listener, so the parent's own ``list_changed``
notifications reach its clients. The copies call the mounted app's own functions.

Each copy runs, from the outside in: the mount's guards, interceptors and exception
handlers (the parent's), then the mounted entry's own pipeline as the mounted app sees
the call (its own names and URIs, its own lifespan context), then the function.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import inspect
import logging
import threading
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from mcpkit.protocol._uri_template import UriTemplate
from mcpkit.server._catalog import COMPLETIONS_CHANGED, McpCatalogManager, OnConflict
from mcpkit.server._context import McpToolContext
from mcpkit.server._decorators import SERVER_ATTR, Pipeline, warn_if_interceptors
from mcpkit.server._engine.execution import McpExecutionContext
from mcpkit.server._entries import (
    ResourceTemplateEntry,
)
from mcpkit.server._pipeline import Call, run_pipeline
from mcpkit.server._prefixing import check_prefix, prefix_name, prefix_uri, unprefix_uri

if TYPE_CHECKING:
    from mcpkit.server._catalog import McpCatalogManager
    from mcpkit.server._engine.engine import McpEngine
    from mcpkit.server._engine.subscriptions import ResourceSubscriptionManager

logger = logging.getLogger("mcpkit.server")


@runtime_checkable
class MountedApp(Protocol):
    """What composition reads of an app, the parent and the mounted one alike (an
    ``McpServerApp``, whose class makes the mounts: this module names only this)."""

    name: str
    mounts: list[Mount]

    @property
    def catalog(self) -> McpCatalogManager: ...
    @property
    def engine(self) -> McpEngine: ...
    @property
    def subscriptions(self) -> ResourceSubscriptionManager: ...
    @property
    def started(self) -> bool: ...
    @property
    def needs_startup(self) -> bool: ...
    @property
    def lifespan_context(self) -> Any: ...

    def running(self) -> contextlib.AbstractAsyncContextManager[Any]: ...


_ON_CONFLICT = ("replace", "error", "ignore")


class MountCycleError(ValueError):
    """Mounting would make an app serve itself (directly or through other mounts)."""


def _accepts(fn: Any, name: str) -> bool:
    try:
        return name in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


class MountedStage:
    """The innermost interceptor of a mounted entry: runs the mounted app's own pipeline
    on the call as that app sees it (its names, its URIs, its lifespan context)."""

    def __init__(self, mount: Mount, inner: Pipeline, original: str | None) -> None:
        self.mount = mount
        self.inner = inner
        self.original = original  # a tool's or prompt's own name; None: a resource's URI

    async def intercept(self, ctx: McpExecutionContext, call: Call) -> Any:
        prefix = self.mount.prefix
        arguments = ctx.arguments
        for value in arguments.values():
            if isinstance(value, McpToolContext):
                value.lifespan_context = self.mount.app.lifespan_context
        uri = arguments.get("uri")
        if self.original is None and isinstance(uri, str):
            arguments["uri"] = unprefix_uri(prefix, uri) or uri
        target = self.original or unprefix_uri(prefix, ctx.tool_name) or ctx.tool_name
        if self.inner.empty:
            return await call()
        inner_ctx = dataclasses.replace(ctx, tool_name=target, metadata=self.inner.metadata)
        return await run_pipeline(self.inner, inner_ctx, call)


@dataclass(slots=True)
class _Copy:
    """One entry of the mounted app (``source``) and the copy placed in the parent."""

    source: Any
    placed: Any


@dataclass(frozen=True, slots=True)
class _Kind:
    """How one table of the catalog is listed, keyed, copied and changed."""

    label: str
    listed: Callable[[McpCatalogManager], list[Any]]
    key: Callable[[Mount, Any], str]
    copy: Callable[[Mount, Any, str], Any]
    found: Callable[[McpCatalogManager, str], Any]
    register: Callable[[McpCatalogManager, Any, OnConflict], Any]
    unregister: Callable[[McpCatalogManager, str], Any]


def _template_of(catalog: McpCatalogManager, key: str) -> ResourceTemplateEntry | None:
    return next((t for t in catalog.list_resource_templates() if t.uri_template == key), None)


def _owned(mount: Mount, entry: Any) -> Any:
    """The entry's injection plan, bound to the app it came from: a mounted function's
    ``State``/``Depends`` read that app's lifespan state and providers, not the parent's."""
    plan = entry.injection
    if plan is None or plan.owner is not None:  # none, or bound already (a nested mount)
        return plan
    return dataclasses.replace(plan, owner=mount.app)


def _mounted_from(mount: Mount, entry: Any) -> tuple[Any, ...]:
    """The apps a tool's copy comes from, innermost first: their ``mask_error_details``
    hold for it in the parent (``_handlers``)."""
    return (*entry.mounted_from, mount.app)


_TOOLS = _Kind(
    "tool",
    lambda c: c.list_tools(),
    lambda m, e: prefix_name(m.prefix, e.name),
    lambda m, e, key: dataclasses.replace(
        e,
        name=key,
        _wire=None,
        pipeline=m.pipeline_for(e, e.name),
        injection=_owned(m, e),
        mounted_from=_mounted_from(m, e),
    ),
    lambda c, key: c.registered_tool(key),
    lambda c, e, how: c.register_tool(e, on_conflict=how),
    lambda c, key: c.unregister_tool(key),
)
_PROMPTS = _Kind(
    "prompt",
    lambda c: c.list_prompts(),
    lambda m, e: prefix_name(m.prefix, e.name),
    lambda m, e, key: dataclasses.replace(
        e, name=key, pipeline=m.pipeline_for(e, e.name), injection=_owned(m, e)
    ),
    lambda c, key: c.get_prompt(key),
    lambda c, e, how: c.register_prompt(e, on_conflict=how),
    lambda c, key: c.unregister_prompt(key),
)
_RESOURCES = _Kind(
    "resource",
    lambda c: c.list_resources(),
    lambda m, e: prefix_uri(m.prefix, e.uri),
    lambda m, e, key: dataclasses.replace(
        e, uri=key, pipeline=m.pipeline_for(e, None), injection=_owned(m, e)
    ),
    lambda c, key: c.get_resource(key),
    lambda c, e, how: c.register_resource(e, on_conflict=how),
    lambda c, key: c.unregister_resource(key),
)
_TEMPLATES = _Kind(
    "resource template",
    lambda c: c.list_resource_templates(),
    lambda m, e: prefix_uri(m.prefix, e.uri_template),
    lambda m, e, key: dataclasses.replace(
        e, template=UriTemplate(key), pipeline=m.pipeline_for(e, None), injection=_owned(m, e)
    ),
    _template_of,
    lambda c, e, how: c.register_resource(e, on_conflict=how),
    lambda c, key: c.unregister_resource(key),
)

#: The tables one ``list_changed`` method covers.
_KINDS_OF = {
    "notifications/tools/list_changed": (_TOOLS,),
    "notifications/prompts/list_changed": (_PROMPTS,),
    "notifications/resources/list_changed": (_RESOURCES, _TEMPLATES),
}
_ALL_KINDS = (_TOOLS, _PROMPTS, _RESOURCES, _TEMPLATES)


class Mount:
    """One app mounted (``live``) or imported into another: what it placed in the
    parent's catalog, and how it follows the mounted app. Returned by ``app.mount``."""

    def __init__(
        self,
        parent: MountedApp,
        app: MountedApp,
        prefix: str | None,
        *,
        live: bool,
        on_conflict: OnConflict,
        pipeline: Pipeline,
    ) -> None:
        self.parent = parent
        #: The mounted (or imported) app.
        self.app = app
        self.prefix: str | None = prefix
        #: True for ``mount`` (follows later changes), False for ``import_app``.
        self.live = live
        self.on_conflict: OnConflict = on_conflict
        #: The parent's guards, interceptors and exception handlers for mounted calls.
        self.pipeline = pipeline
        self._copies: dict[str, dict[str, _Copy]] = {kind.label: {} for kind in _ALL_KINDS}
        self._refused: dict[str, dict[str, Any]] = {kind.label: {} for kind in _ALL_KINDS}
        self._completions: dict[int, _Copy] = {}
        # Changes may come from worker threads (sync tools registering at run time).
        self._lock = threading.RLock()
        self._late_start: asyncio.Task[None] | None = None

    def __repr__(self) -> str:
        how = "live" if self.live else "imported"
        return f"<Mount of {self.app.name!r} prefix={self.prefix!r} ({how})>"

    # what the copies run ----------------------------------------------------------------

    def pipeline_for(self, source: Any, original: str | None) -> Pipeline:
        """The pipeline of the copy of ``source``: the mount's around the entry's own."""
        inner: Pipeline = source.pipeline
        restores_uri = (
            original is None
            and self.prefix is not None
            and ("uri" in source.injected or _accepts(source.fn, "uri"))
        )
        if self.pipeline.empty and inner.empty and not source.injected and not restores_uri:
            return inner  # nothing to adapt: the copy keeps the fast path of a plain entry
        stage = MountedStage(self, inner, original)
        return Pipeline(
            self.pipeline.guards,
            (*self.pipeline.interceptors, stage),
            self.pipeline.exception_handlers,
            inner.metadata,
        )

    # following the mounted app ----------------------------------------------------------

    def attach(self) -> None:
        """Place the copies (refusing clashes first with ``on_conflict="error"``), then
        follow the mounted app: its catalog changes (``live``), its resource updates."""
        with self._lock:
            if self.on_conflict == "error":
                clashes = self._clashes()
                if clashes:
                    raise ValueError(
                        f"mounting {self.app.name!r} clashes with what the app already "
                        f"offers: {', '.join(clashes)}"
                    )
            for kind in _ALL_KINDS:
                self._sync(kind)
            self._sync_completions()
        if self.live:
            self.app.catalog.add_change_listener(self._on_change)
        self.app.subscriptions.add_update_forwarder(self._forward_update)

    def placed(self) -> int:
        """How many entries of the mounted app the parent serves through this mount."""
        return sum(len(copies) for copies in self._copies.values()) + len(self._completions)

    def detach(self) -> None:
        """Unmount: stop following the mounted app and take its copies out of the parent
        (whose clients hear list_changed). A mounted app the parent started stays running
        until the parent stops."""
        self.app.catalog.remove_change_listener(self._on_change)
        self.app.subscriptions.remove_update_forwarder(self._forward_update)
        with self._lock:
            catalog = self.parent.catalog
            for kind in _ALL_KINDS:
                for key, copy in self._copies[kind.label].items():
                    if kind.found(catalog, key) is copy.placed:
                        kind.unregister(catalog, key)
                self._copies[kind.label].clear()
                self._refused[kind.label].clear()
            for copy in self._completions.values():
                catalog.unregister_completion(copy.placed)
            self._completions.clear()
        if self in self.parent.mounts:
            self.parent.mounts.remove(self)

    def _clashes(self) -> list[str]:
        catalog = self.parent.catalog
        found = []
        for kind in _ALL_KINDS:
            for entry in kind.listed(self.app.catalog):
                key = kind.key(self, entry)
                if kind.found(catalog, key) is not None:
                    found.append(f"{kind.label} {key!r}")
        return found

    def _on_change(self, method: str) -> None:
        with self._lock:
            if method == COMPLETIONS_CHANGED:
                self._sync_completions()
                return
            for kind in _KINDS_OF.get(method, ()):
                self._sync(kind)

    def _sync(self, kind: _Kind) -> None:
        """Make the parent's copies of one table match the mounted app's table."""
        catalog = self.parent.catalog
        copies = self._copies[kind.label]
        refused = self._refused[kind.label]
        wanted = {kind.key(self, entry): entry for entry in kind.listed(self.app.catalog)}
        for key, copy in list(copies.items()):
            if wanted.get(key) is not copy.source:
                del copies[key]
                if kind.found(catalog, key) is copy.placed:  # still ours: not replaced since
                    kind.unregister(catalog, key)
        for key in [key for key in refused if wanted.get(key) is not refused[key]]:
            del refused[key]
        for key, source in wanted.items():
            if key in copies or key in refused:
                continue
            placed = kind.copy(self, source, key)
            try:
                kind.register(catalog, placed, self.on_conflict)
            except ValueError as exc:  # on_conflict="error" at run time: keep the parent's
                logger.warning("mounted %s %r not served: %s", kind.label, key, exc)
            if kind.found(catalog, key) is placed:
                copies[key] = _Copy(source, placed)
            else:
                refused[key] = source

    def _sync_completions(self) -> None:
        catalog = self.parent.catalog
        wanted = {id(entry): entry for entry in self.app.catalog.list_completions()}
        for ident, copy in list(self._completions.items()):
            if wanted.get(ident) is not copy.source:
                del self._completions[ident]
                catalog.unregister_completion(copy.placed)
        for ident, source in wanted.items():
            if ident in self._completions:
                continue
            renamed = (
                prefix_name(self.prefix, source.ref)
                if source.ref_type == "ref/prompt"
                else prefix_uri(self.prefix, source.ref)
            )
            placed = dataclasses.replace(source, ref=renamed)
            catalog.register_completion(placed)
            self._completions[ident] = _Copy(source, placed)

    async def _forward_update(self, uri: str) -> None:
        await self.parent.subscriptions.notify_updated(prefix_uri(self.prefix, uri))

    # life -------------------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """The mounted app's lifespans around the parent's life (not when it runs already)."""
        if self.app.started:
            yield
            return
        async with self.app.running():
            yield

    def start_late(self, stack: contextlib.AsyncExitStack, loop: asyncio.AbstractEventLoop) -> None:
        """Mounted into a parent already started: start the mounted app now (a task on
        ``loop``), to stop with the parent (``stack``: the parent's)."""
        self._late_start = loop.create_task(
            stack.enter_async_context(self.running()), name=f"mcpkit-mount-{self.app.name}"
        )

    async def wait_started(self) -> None:
        """Return once the mounted app runs, when it was mounted into a parent already
        started (its start-up is a task then); at once otherwise."""
        if self._late_start is not None:
            await asyncio.shield(self._late_start)


def _reaches(app: MountedApp, target: MountedApp) -> bool:
    return app is target or any(_reaches(mount.app, target) for mount in app.mounts)


def _not_an_app(other: Any, prefix: Any) -> str:
    """What to mount instead of ``other``: the app inside what users reach for first."""
    refused = f"only an McpServerApp can be mounted, not {type(other).__name__}"
    if isinstance(other, str) and prefix is not None:  # FastMCP 1's mount(prefix, server)
        return f"{refused}: the app comes first, mount(app, {other!r})"
    if isinstance(other, type) and hasattr(other, SERVER_ATTR):
        return f"{refused}: mount McpServerApp({other.__name__})"
    if isinstance(getattr(other, "app", None), MountedApp):
        # McpProxy, and create_asgi_app's McpAsgiApp: each serves an app of its own.
        return f"{refused}: mount its .app"
    return refused


def mount_app(
    parent: MountedApp,
    other: MountedApp,
    prefix: str | None,
    *,
    live: bool,
    on_conflict: OnConflict,
    guards: Iterable[Any],
    interceptors: Iterable[Any],
    exception_handlers: Iterable[Any],
) -> Mount:
    """``parent.mount`` (``live``) and ``parent.import_app``: checks, then attaches."""
    interceptors = tuple(interceptors)
    warn_if_interceptors(interceptors, "mount" if live else "import_app", stacklevel=4)
    if not isinstance(other, MountedApp):
        raise TypeError(_not_an_app(other, prefix))
    if on_conflict not in _ON_CONFLICT:
        raise ValueError(f"on_conflict must be one of {', '.join(_ON_CONFLICT)}")
    prefix = check_prefix(prefix)
    if other is parent:
        raise MountCycleError(f"cannot mount app {parent.name!r} into itself")
    if _reaches(other, parent):
        raise MountCycleError(
            f"cannot mount {other.name!r} into {parent.name!r}: "
            f"{other.name!r} already serves {parent.name!r} (a mount cycle)"
        )
    stack = parent.engine.life  # set while the parent runs
    loop = None
    if stack is not None and not other.started:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            raise RuntimeError(
                "mounting into a started app starts the mounted one: call mount() on the "
                "event loop the app serves on"
            ) from None
    mount = Mount(
        parent,
        other,
        prefix,
        live=live,
        on_conflict=on_conflict,
        pipeline=Pipeline(tuple(guards), tuple(interceptors), tuple(exception_handlers)),
    )
    mount.attach()
    if not live and not other.started and other.needs_startup and not mount.placed():
        # A proxy's catalog, say, is filled by its lifespan: a snapshot now copies nothing.
        logger.warning(
            "import_app(%r) copied nothing: it offers nothing until its lifespan has run; "
            "mount() it instead to serve what it registers then",
            other.name,
        )
    parent.mounts.append(mount)
    if stack is not None and loop is not None:
        mount.start_late(stack, loop)
    return mount
