"""``McpServerApp``: the programming model. The server classes and functions it serves,
their registration (decorators, constructor injection, mounts), and the handlers that
serve its catalog, over an engine it holds (``app.engine``, ``McpEngine``): transports
take the app or its engine and feed the engine messages."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import threading
from collections.abc import AsyncIterator, Callable, Iterable
from typing import TYPE_CHECKING, Any

from mcpkit._runtime import run_async
from mcpkit.protocol._versions import MODERN_VERSIONS, V2024_11_05, V2025_11_25
from mcpkit.server._builder import EntryBuilder
from mcpkit.server._catalog import McpCatalogManager
from mcpkit.server._context import McpToolContext
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
    ServerSpec,
    mcp_completion,
    mcp_lifespan,
    mcp_prompt,
    mcp_resource,
    mcp_tool,
)
from mcpkit.server._engine.dispatcher import DEFAULT_MAX_IN_FLIGHT_PER_CONNECTION, McpDispatcher
from mcpkit.server._engine.engine import ConnectionGuard, McpEngine
from mcpkit.server._engine.listen import DEFAULT_MAX_LISTENS_PER_CONNECTION
from mcpkit.server._engine.pagination import DEFAULT_PAGE_SIZE
from mcpkit.server._engine.registry import McpConnectionRegistry
from mcpkit.server._engine.request_scope import McpRequestScope
from mcpkit.server._engine.shutdown import DEFAULT_SHUTDOWN_GRACE, check_grace
from mcpkit.server._engine.subscriptions import ResourceSubscriptionManager
from mcpkit.server._engine.sync_calls import DEFAULT_MAX_SYNC_WORKERS
from mcpkit.server._entries import CompletionEntry
from mcpkit.server._eras import downgrade as _downgrade
from mcpkit.server._eras.modern import ModernEra
from mcpkit.server._eras.state_binding import DEFAULT_REQUEST_STATE_TTL, RequestStates
from mcpkit.server._eras.state_codec import RequestStateCodec
from mcpkit.server._eras.used_states import DEFAULT_MAX_USED_REQUEST_STATES
from mcpkit.server._files.contents import DEFAULT_MAX_CONCURRENT_FILE_READS
from mcpkit.server._handlers import MethodHandlers
from mcpkit.server._tasks.manager import DEFAULT_MAX_RUNNING_TASKS, TASKS_EXTENSION, TaskManager
from mcpkit.stores._tasks import TaskStore

logger = logging.getLogger("mcpkit.server")

from mcpkit._version import __version__ as SDK_VERSION  # noqa: E402

#: ``ttlMs`` on cacheable results of the 2026-07-28 era (SEP-2549).
DEFAULT_CACHE_TTL_MS = 60_000


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


def _is_member(value: Any) -> bool:
    fn = getattr(value, "__func__", value)
    return callable(fn) and any(getattr(fn, attr, None) for attr in _MEMBER_ATTRS)


def _serves_members(cls: type) -> bool:
    """Whether ``cls`` is an ``@mcp_server`` class or has decorated members."""
    if getattr(cls, SERVER_ATTR, None) is not None:
        return True
    return any(_is_member(value) for _, value in _members_in_declaration_order(cls))


def _name_option(name: Any, options: dict[str, Any], kind: str) -> Any:
    """The name given to ``app.tool``/``app.prompt``, positionally or as ``name=``."""
    if "name" not in options:
        return name
    if name is not None:
        raise TypeError(f"app.{kind}() got its name twice, positionally and as name=")
    return options.pop("name")


#: What ``app.run`` serves: stdio, or the HTTP app (Streamable HTTP, legacy SSE at
#: ENDPOINT/sse, WebSocket at ENDPOINT/ws) under each name users know it by.
_RUN_TRANSPORTS = ("stdio", "http", "streamable-http", "sse", "ws")

_ASGI = "create_asgi_app(app) from mcpkit.transports.http is the ASGI app (docs/mounting.md)"
#: FastMCP's and the mcp SDK's names users reach for, and mcpkit's (docs/migrating.md).
_THEIR_NAMES = {
    "import_server": "app.import_app(other, prefix) copies another app's entries (not awaited)",
    "http_app": _ASGI,
    "streamable_http_app": _ASGI,
    "sse_app": _ASGI + "; legacy SSE is served beside Streamable HTTP, at /mcp/sse",
    "as_proxy": "McpProxy(backend).app from mcpkit.proxy is an app serving another server",
    "add_tool": "app.tool()(fn) registers a function as a tool (live: clients hear list_changed)",
    "remove_tool": "app.catalog.unregister_tool(name) takes a tool away (clients hear "
    "list_changed)",
}


def lifespan_manager(lifespan: Callable[..., Any], app: Any) -> Any:
    """The async context manager of one lifespan: an async generator function, or one
    ``@asynccontextmanager`` made (FastMCP's and the mcp SDK's form), called with ``app``
    when it takes an argument (their ``lifespan(server)``), else with none."""
    try:
        wants_app = any(
            p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
            for p in inspect.signature(lifespan).parameters.values()
        )
    except (TypeError, ValueError):  # no signature to read: called as it always was
        wants_app = False
    made = lifespan(app) if wants_app else lifespan()
    if inspect.isasyncgen(made):
        return contextlib.asynccontextmanager(lambda: made)()
    if hasattr(made, "__aenter__") and hasattr(made, "__aexit__"):
        return made
    name = getattr(lifespan, "__qualname__", lifespan)
    raise TypeError(
        f"lifespan {name} returned {type(made).__name__}, not an async generator or an async "
        "context manager: write it as an async def with one yield"
    )


def _outside_event_loop() -> None:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return
    raise RuntimeError(
        "app.run() blocks, so it cannot run inside an event loop: await serve_stdio(app)"
        " (mcpkit.transports) or serve create_asgi_app(app) (mcpkit.transports.http) instead"
    )


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


def _spec_of(marker: Callable[[Any], Any], attr: str, fn: Any) -> Any:
    """The spec ``marker`` (``mcp_tool(...)`` and the like) records, marking ``fn`` with
    it when ``fn`` takes attributes (a bound method: its function)."""
    target = getattr(fn, "__func__", fn)
    try:
        marker(target)
    except (AttributeError, TypeError):  # no __dict__: read the spec off a stand-in

        def target() -> None: ...

        marker(target)
    return getattr(target, attr)


def _describe(target: Any) -> str:
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


class _AppLife:
    """The app's part of the engine's life: its lifespans, then its mounts' (stopped in
    reverse), then what they registered announced. A class, not an async generator: a
    generator made on an event loop keeps that loop alive as long as it lives (its
    finalizer is the loop's), and the engine may be started from any loop."""

    def __init__(self, app: McpServerApp) -> None:
        self.app = app
        self.stack: contextlib.AsyncExitStack | None = None

    async def __aenter__(self) -> None:
        app = self.app
        stack = contextlib.AsyncExitStack()
        contexts = []
        try:
            for lifespan in app._lifespans:
                contexts.append(await stack.enter_async_context(lifespan_manager(lifespan, app)))
            for mount in app.mounts:  # after this app's own; stopped before them
                await stack.enter_async_context(mount.running())
            # What the lifespans registered is announced by tasks: let them run now, while
            # no connection exists, not into a transport's first one before it is open.
            await app.catalog.announced()
        except BaseException:
            # What did start stops (in reverse) as at a plain stop: it runs on otherwise.
            await stack.aclose()
            raise
        app.lifespan_context = contexts[0] if len(contexts) == 1 else (contexts or None)
        self.stack = stack

    async def __aexit__(self, *exc_info: object) -> None:
        stack, self.stack = self.stack, None
        if stack is not None:  # exited as at a plain stop, whatever stops the engine
            await stack.aclose()


class McpServerApp:
    """An MCP server: what it serves, and the engine serving it (``app.engine``).

    ``McpServerApp(MyServer, OtherServer, providers=[db])`` instantiates each ``@mcp_server``
    class, giving its constructor the engine's singletons and the providers by type, and
    registers every decorated tool, resource, prompt and completion. Module-level functions
    decorated with ``@mcp_tool``, ``@mcp_resource``, ``@mcp_prompt``, ``@mcp_completion`` or
    ``@mcp_lifespan`` may be passed beside them (``McpServerApp(hello, Weather)``), or
    registered on the app later with its decorators (``@app.tool()``, ``@app.resource(uri)``,
    ``@app.prompt()``, ``@app.completion(...)``, ``@app.lifespan``). A string first is the
    server's name (``McpServerApp("weather")``, as ``name="weather"``). Anything else passed
    is a ``TypeError``. ``lifespan=fn`` runs ``fn`` around the app's life as ``@app.lifespan``
    does: an async generator, or an ``@asynccontextmanager`` (FastMCP's and the mcp SDK's
    form), given the app when it takes an argument.

    Sync (``def``) functions run in worker threads, at most ``max_sync_workers`` at once for
    the whole app (``DEFAULT_MAX_SYNC_WORKERS``); see ``mcp_tool(run_in_thread=...)``. Its
    file resources read at most ``max_concurrent_file_reads`` files at once
    (``DEFAULT_MAX_CONCURRENT_FILE_READS``); a connection holds at most
    ``max_listens_per_connection`` ``subscriptions/listen`` open at once
    (``DEFAULT_MAX_LISTENS_PER_CONNECTION``, and always fewer than
    ``max_in_flight_per_connection``).

    An exception nobody anticipated (a handler bug, not a tool's own error, which becomes an
    ``isError`` result) is answered -32603 "Internal error (id …); see the server log", its
    detail logged under that id; ``expose_internal_errors=True`` (development) sends the
    exception's text instead. A tool's exception is an ``isError`` result carrying its text;
    ``mask_error_details=True`` hides that text the same way ("Tool 'x' failed (error id
    …); see the server log"), except a ``ToolError``'s, which is meant for the model: for
    the app's own tools wherever they are served (mounted into another app too), and for
    every tool it serves (those of the apps mounted into it too).
    """

    def __init__(
        self,
        *servers: Any,
        name: str | None = None,
        version: str | None = None,
        title: str | None = None,
        instructions: str | None = None,
        providers: Iterable[Any] = (),
        page_size: int = DEFAULT_PAGE_SIZE,
        max_in_flight_per_connection: int = DEFAULT_MAX_IN_FLIGHT_PER_CONNECTION,
        max_listens_per_connection: int = DEFAULT_MAX_LISTENS_PER_CONNECTION,
        max_concurrent_file_reads: int = DEFAULT_MAX_CONCURRENT_FILE_READS,
        cache_ttl_ms: int = DEFAULT_CACHE_TTL_MS,
        cache_scope: str = "public",
        request_state_secret: bytes | None = None,
        request_state_ttl: float = DEFAULT_REQUEST_STATE_TTL,
        max_used_request_states: int = DEFAULT_MAX_USED_REQUEST_STATES,
        task_store: TaskStore | None = None,
        max_running_tasks: int = DEFAULT_MAX_RUNNING_TASKS,
        max_sync_workers: int = DEFAULT_MAX_SYNC_WORKERS,
        shutdown_grace: float = DEFAULT_SHUTDOWN_GRACE,
        expose_internal_errors: bool = False,
        mask_error_details: bool = False,
        lifespan: Callable[..., Any] | None = None,
    ) -> None:
        self.catalog = McpCatalogManager()
        #: What serves this app over any transport: the dispatcher, the connections, the
        #: subscriptions, per-session state, the worker threads, start and stop. Its parts
        #: are read through the app too (``app.dispatcher`` is ``app.engine.dispatcher``).
        self.engine = engine = McpEngine(
            max_in_flight_per_connection=max_in_flight_per_connection,
            max_listens_per_connection=max_listens_per_connection,
            max_sync_workers=max_sync_workers,
            shutdown_grace=shutdown_grace,
            expose_internal_errors=expose_internal_errors,
            on_loop=self.catalog.bind_loop,
        )
        self.sync_workers = engine.sync_workers
        self.connections = engine.connections
        self.subscriptions = engine.subscriptions
        self.dispatcher = engine.dispatcher
        self.listens = engine.listens
        self.session_state = engine.session_state
        if max_concurrent_file_reads < 1:
            raise ValueError("max_concurrent_file_reads must be at least 1")
        #: Files the app's ``FileResource``/``DirectoryResource`` read at once (each read
        #: holds up to ~2.7 times its file's size); the other reads wait their turn. A
        #: threading semaphore: reads run in worker threads, whatever loop serves the call.
        self.max_concurrent_file_reads = max_concurrent_file_reads
        self.file_reads = threading.BoundedSemaphore(max_concurrent_file_reads)
        self.page_size = page_size
        #: A tool's exception (but a ``ToolError``) reaches the model as an error id, not its
        #: text: read only when a tool raised.
        self.mask_error_details = mask_error_details
        #: The tasks extension (SEP-2663): ``task_store`` keeps tasks (memory by default);
        #: at most ``max_running_tasks`` run at once.
        self.tasks = TaskManager(self, task_store, max_running=max_running_tasks)
        # McpRequestScope parameters are filled by an injection plan (_inject.plan), the
        # McpToolContext ones by it too when there is one, else directly (_handlers).
        self.builder = EntryBuilder((McpToolContext, McpRequestScope))
        self.catalog.set_entry_builder(self.builder)
        self._providers: dict[type, Any] = {
            McpCatalogManager: self.catalog,
            McpConnectionRegistry: self.connections,
            ResourceSubscriptionManager: self.subscriptions,
            McpDispatcher: self.dispatcher,
            McpEngine: engine,
            TaskManager: self.tasks,
            McpServerApp: self,
        }
        for provider in providers:
            self._providers[type(provider)] = provider
        self.lifespan_context: Any = None
        self._lifespans: list[Callable[..., Any]] = []
        if lifespan is not None:  # FastMCP's and the mcp SDK's spelling of @app.lifespan
            self._lifespans.append(lifespan)
        #: The apps mounted or imported into this one (``mount``, ``import_app``).
        self.mounts: list[Mount] = []
        if servers and type(servers[0]) is str:  # McpServerApp("weather"): its name
            if name is not None:
                raise TypeError(f"McpServerApp() got two names: {servers[0]!r} and name={name!r}")
            name, servers = servers[0], servers[1:]
        served = [self._served(server) for server in servers]
        self.instances = [
            self._instantiate(server) for server, is_function in served if not is_function
        ]
        #: The module-level functions given to the constructor.
        self.functions = [server for server, is_function in served if is_function]
        spec = self._first_spec()
        self.name = name or spec.name or "mcpkit-server"
        self.version = version or spec.version or SDK_VERSION
        self.title = title or spec.title
        self.instructions = instructions or spec.instructions
        self.website_url = spec.website_url
        self.icons = spec.icons
        for instance in self.instances:
            self._collect(instance)
        for fn in self.functions:
            self._register_function(fn)
        MethodHandlers(self).install()
        self.catalog.set_broadcast_fn(self.connections.broadcast_method)
        self.dispatcher.modern = ModernEra(
            self,
            ttl_ms=cache_ttl_ms,
            cache_scope=cache_scope,
            request_states=RequestStates(
                RequestStateCodec(request_state_secret),
                ttl=request_state_ttl,
                max_used=max_used_request_states,
            ),
        )
        engine.on_start(lambda: _AppLife(self), needed=lambda: self.needs_startup)
        engine.before_stop(self.tasks.stop)
        engine.tool_header_params = self.catalog.header_params_of
        engine.connection_guards = self._connection_guards()
        engine.mounted = lambda: [mount.app.engine for mount in self.mounts]

    # construction -----------------------------------------------------------------------

    def _first_spec(self) -> ServerSpec:
        for instance in self.instances:
            spec: ServerSpec | None = getattr(type(instance), SERVER_ATTR, None)
            if spec is not None:
                return spec
        return ServerSpec()

    def resolve(self, cls: type) -> Any:
        """The provider registered for ``cls`` (or a subclass of it)."""
        if cls in self._providers:
            return self._providers[cls]
        for provided, value in self._providers.items():
            if isinstance(provided, type) and issubclass(provided, cls):
                return value
        raise LookupError(f"nothing provides {cls.__name__}")

    @staticmethod
    def _served(target: Any) -> tuple[Any, bool]:
        """``(target, is_function)`` for something given to the constructor; a
        ``TypeError`` for something that would serve nothing."""
        if isinstance(target, type):
            if _serves_members(target):
                return target, False
            raise TypeError(
                f"McpServerApp() got {_describe(target)}, which has no @mcp_server and no decorated members: {_HOW_TO_SERVE}"
            )
        if isinstance(target, str):
            raise TypeError(
                f"McpServerApp() got the string {target!r} after what it serves: a name comes"
                f' first, McpServerApp("name", ...), or as name="name"'
            )
        if _is_member(target):
            return target, True
        if callable(target) and (
            inspect.isfunction(target) or inspect.ismethod(target) or inspect.isbuiltin(target)
        ):
            raise TypeError(
                f"McpServerApp() got the undecorated {_describe(target)}: {_HOW_TO_SERVE}"
            )
        if _serves_members(type(target)):
            return target, False
        raise TypeError(
            f"McpServerApp() got a {_describe(target)} that serves nothing: {_HOW_TO_SERVE}"
        )

    def _instantiate(self, target: Any) -> Any:
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

    def _connection_guards(self) -> list[ConnectionGuard]:
        """The guards of the served classes that check connections (``can_connect``),
        made once."""
        guards = []
        for instance in self.instances:
            server_class = type(instance)
            metadata = dict(vars(server_class).get(METADATA_ATTR) or {})
            for declared in vars(server_class).get(GUARDS_ATTR, ()):
                if getattr(declared, "can_connect", None) is not None:
                    guard = self._instantiate(declared)
                    guards.append(ConnectionGuard(guard, guard.can_connect, server_class, metadata))
        return guards

    def _pipeline(self, cls: type | None, fn: Any) -> Pipeline:
        """What is in force for ``fn``: its server class's guards, interceptors, exception
        handlers and metadata (none for a module-level function), then its own."""
        own = vars(cls) if cls is not None else {}

        def gather(attr: str) -> tuple[Any, ...]:
            items = tuple(own.get(attr, ())) + tuple(getattr(fn, attr, ()))
            return tuple(self._instantiate(item) for item in items)

        metadata = dict(own.get(METADATA_ATTR) or {})
        metadata.update(getattr(fn, METADATA_ATTR, None) or {})
        return Pipeline(
            gather(GUARDS_ATTR),
            gather(INTERCEPTORS_ATTR),
            gather(EXCEPTION_HANDLERS_ATTR),
            metadata,
        )

    def _collect(self, instance: Any) -> None:
        cls = type(instance)
        for attr_name, raw in _members_in_declaration_order(cls):
            fn = getattr(raw, "__func__", raw)
            if not callable(fn):
                continue
            self._register(getattr(instance, attr_name), fn, cls)

    def _register_function(self, target: Any) -> None:
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

    # decorators on the app: register at once (live: connected clients hear list_changed) ---

    def tool(self, name: Any = None, /, **options: Any) -> Any:
        """Register a function as a tool: ``@app.tool``, ``@app.tool()``, ``@app.tool("name",
        description=...)`` or ``@app.tool(name="name", ...)``; the options are ``mcp_tool``'s.
        Returns the function unchanged.

        Guards, interceptors and exception handlers (``@use_guards`` ...) go below this
        decorator, next to the ``def``: they are read when the function is registered."""
        if callable(name):
            return self.tool()(name)
        marker = mcp_tool(_name_option(name, options, "tool"), **options)

        def register(fn: Any) -> Any:
            self._register_live(fn, TOOL_ATTR, _spec_of(marker, TOOL_ATTR, fn))
            return fn

        return register

    def resource(self, uri: str, /, **options: Any) -> Callable[[Any], Any]:
        """Register a function as a resource, or a resource template when ``uri`` has
        ``{var}`` expressions: ``@app.resource("file:///{path}")``; the options are
        ``mcp_resource``'s. Returns the function unchanged."""
        if not isinstance(uri, str):
            raise TypeError('app.resource needs the resource\'s URI: @app.resource("scheme://...")')
        marker = mcp_resource(uri, **options)

        def register(fn: Any) -> Any:
            self._register_live(fn, RESOURCE_ATTR, _spec_of(marker, RESOURCE_ATTR, fn))
            return fn

        return register

    def prompt(self, name: Any = None, /, **options: Any) -> Any:
        """Register a function as a prompt: ``@app.prompt``, ``@app.prompt("name", ...)`` or
        ``@app.prompt(name="name", ...)``; the options are ``mcp_prompt``'s. Returns the
        function unchanged."""
        if callable(name):
            return self.prompt()(name)
        marker = mcp_prompt(_name_option(name, options, "prompt"), **options)

        def register(fn: Any) -> Any:
            self._register_live(fn, PROMPT_ATTR, _spec_of(marker, PROMPT_ATTR, fn))
            return fn

        return register

    def completion(self, **options: Any) -> Callable[[Any], Any]:
        """Register a completion provider: ``@app.completion(prompt="review",
        argument="language")``; the options are ``mcp_completion``'s."""
        marker = mcp_completion(**options)

        def register(fn: Any) -> Any:
            self._register_live(fn, COMPLETION_ATTR, _spec_of(marker, COMPLETION_ATTR, fn))
            return fn

        return register

    def lifespan(self, fn: Any) -> Any:
        """Register an async generator function to run around the app's life, as
        ``@mcp_lifespan`` does (see ``lifespan_manager`` for the forms it takes); it takes
        effect at the next ``start()``."""
        self._register_live(fn, LIFESPAN_ATTR, _spec_of(mcp_lifespan, LIFESPAN_ATTR, fn))
        return fn

    def add_resource(self, resource: Any) -> Any:
        """Serve a ready-made resource, such as ``FileResource`` or ``DirectoryResource``
        (docs/files.md): it registers its entries (live: clients hear list_changed) and
        follows subscriptions. Returns it; ``resource.detach()`` takes it away again."""
        attach = getattr(resource, "attach", None)
        if not callable(attach):
            raise TypeError(
                f"app.add_resource() takes a FileResource, a DirectoryResource or another "
                f"object with attach(app), not {_describe(resource)}"
            )
        attach(self)
        return resource

    def _register_live(self, fn: Any, attr: str, spec: Any) -> None:
        owner = type(fn.__self__) if inspect.ismethod(fn) else None
        self._register(fn, getattr(fn, "__func__", fn), owner, only=attr, given=spec)

    # description ------------------------------------------------------------------------

    def server_info(self, version: str | None = None) -> dict[str, Any]:
        """``serverInfo`` as ``version`` has it (``title`` from 2025-06-18; ``websiteUrl``
        and ``icons`` from 2025-11-25); every member for None (the latest)."""
        engine = self.engine
        info: dict[str, Any] = {
            "name": engine.announced_name or self.name,
            "version": engine.announced_version or self.version,
        }
        if self.title:
            info["title"] = self.title
        if self.website_url:
            info["websiteUrl"] = self.website_url
        if self.icons:
            info["icons"] = list(self.icons)
        return _downgrade.server_info(info, version)

    def capabilities(self, version: str | None = None) -> dict[str, Any]:
        """The server capabilities announced to a client of ``version``."""
        caps: dict[str, Any] = {
            "tools": {"listChanged": True},
            "resources": {"subscribe": True, "listChanged": True},
            "prompts": {"listChanged": True},
            "logging": {},
        }
        if version != V2024_11_05:
            caps["completions"] = {}
        if version in MODERN_VERSIONS:
            caps["resources"] = {"subscribe": True, "listChanged": True}
            caps.setdefault("extensions", {})[TASKS_EXTENSION] = {}
        elif version == V2025_11_25:  # the experimental tasks utility; older versions lack it
            tasks = self.tasks.capability_2025()
            if tasks is not None:
                caps["tasks"] = tasks
        return caps

    # life -------------------------------------------------------------------------------

    @property
    def shutdown_grace(self) -> float:
        """Seconds requests still running at shutdown (stdin closed, SIGTERM, SIGINT) get
        to finish; then they are cancelled, each answered -32000 "Server shutting down"."""
        return self.engine.shutdown_grace

    @shutdown_grace.setter
    def shutdown_grace(self, grace: float) -> None:
        self.engine.shutdown_grace = check_grace(grace)

    @property
    def open_connections(self) -> set[ServerConnection]:
        """The frame connections being served (stdio, WebSocket, legacy SSE), as the
        registry holds them: a graceful shutdown answers their calls before their sockets
        close."""
        return self.engine.open_connections

    @property
    def shutting_down(self) -> asyncio.Event:
        """Set when the app stops: long-lived requests (subscriptions) end gracefully."""
        return self.engine.shutting_down

    @property
    def started(self) -> bool:
        """True between ``start()`` and ``stop()``."""
        return self.engine.started

    @property
    def needs_startup(self) -> bool:
        """True when ``start()`` has work to do (an ``@mcp_lifespan`` is registered): a
        transport must then not serve requests before it."""
        return bool(self._lifespans) or any(m.app.needs_startup for m in self.mounts)

    async def start(self) -> None:
        """Start the engine, and with it the lifespans' start-up halves (idempotent)."""
        await self.engine.start()

    async def stop(self) -> None:
        """Stop the engine: its running tasks, then the lifespans' shutdown halves."""
        await self.engine.stop()

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[McpServerApp]:
        """``async with app.running():`` starts the app (its lifespans) and stops it on exit."""
        async with self.engine.running():
            yield self

    # composition (docs/composition.md) ------------------------------------------------

    def mount(
        self,
        other: McpServerApp,
        prefix: str | None = None,
        *,
        on_conflict: OnConflict = "replace",
        guards: Iterable[Any] = (),
        interceptors: Iterable[Any] = (),
        exception_handlers: Iterable[Any] = (),
    ) -> Mount:
        """Serve ``other``'s tools, prompts, resources, templates and completions live
        under ``prefix`` (``prefix_name``; ``scheme://prefix/path``), following its later
        changes; ``guards``, ``interceptors`` and ``exception_handlers`` wrap every mounted
        call, outside ``other``'s own. See ``mcpkit.server._compose``."""
        from mcpkit.server._compose import mount_app

        return mount_app(
            self,
            other,
            prefix,
            live=True,
            on_conflict=on_conflict,
            guards=guards,
            interceptors=interceptors,
            exception_handlers=exception_handlers,
        )

    def import_app(
        self,
        other: McpServerApp,
        prefix: str | None = None,
        *,
        on_conflict: OnConflict = "replace",
        guards: Iterable[Any] = (),
        interceptors: Iterable[Any] = (),
        exception_handlers: Iterable[Any] = (),
    ) -> Mount:
        """``mount``, but a snapshot: what ``other`` offers now, not its later changes."""
        from mcpkit.server._compose import mount_app

        return mount_app(
            self,
            other,
            prefix,
            live=False,
            on_conflict=on_conflict,
            guards=guards,
            interceptors=interceptors,
            exception_handlers=exception_handlers,
        )

    # serving, the short way ---------------------------------------------------------------

    def run(self, transport: str = "stdio", **options: Any) -> None:
        """Serve this app until it is stopped, as ``mcpkit run`` does. ``app.run()`` serves
        stdio, what an AI client launches (``python server.py``); ``app.run("http",
        port=8000)`` serves Streamable HTTP, with legacy SSE and WebSocket beside it;
        ``options`` are ``StreamableHttpServerOptions`` fields (``host``, ``port``,
        ``endpoint``, ``stateless``, ...). Blocks; inside an event loop of your own,
        ``await serve_stdio(app)`` or mount ``create_asgi_app(app)`` instead."""
        if transport not in _RUN_TRANSPORTS:
            raise ValueError(
                f"app.run(): unknown transport {transport!r}; use one of {', '.join(_RUN_TRANSPORTS)}"
            )
        _outside_event_loop()
        if transport == "stdio":
            if options:
                raise TypeError(f"app.run() on stdio takes no options; got {', '.join(options)}")
            from mcpkit.transports._stdio import serve_stdio

            run_async(serve_stdio(self))
            return
        from mcpkit.transports.http import StreamableHttpServerOptions, serve_http

        serve_http(self, StreamableHttpServerOptions(**options))

    # built from an HTTP API (mcpkit.openapi, docs/openapi.md) ---------------------------

    @classmethod
    def from_openapi(
        cls,
        spec: OpenApiSource | OpenApiDocument,
        *,
        client: httpx.AsyncClient,
        base_url: str | None = None,
        name: str | None = None,
        version: str | None = None,
        title: str | None = None,
        instructions: str | None = None,
        **options: Unpack[OpenApiOptions],
    ) -> Self:
        """An app serving the operations of an OpenAPI 3.0/3.1 document (a dict, or JSON
        text) as tools (or, by ``route_maps``, resources and resource templates), each
        call an HTTP request made with ``client``. ``name``, ``version`` and
        ``instructions`` default to the document's ``info``; the ``options`` are
        ``mcpkit.openapi.OpenApiOptions`` (``route_maps``, ``names``, ``forward_headers``,
        ``resource_prefix``, ``max_response_bytes``)."""
        from mcpkit.openapi._factory import app_from_openapi

        return app_from_openapi(
            cls,
            spec,
            client=client,
            base_url=base_url,
            name=name,
            version=version,
            title=title,
            instructions=instructions,
            **options,
        )

    @classmethod
    def from_asgi(
        cls,
        asgi_app: AsgiApp,
        *,
        base_url: str = "http://app",
        openapi_path: str | None = None,
        spec: OpenApiSource | OpenApiDocument | None = None,
        run_lifespan: bool = True,
        headers: Mapping[str, str] | None = None,
        name: str | None = None,
        version: str | None = None,
        title: str | None = None,
        instructions: str | None = None,
        **options: Unpack[OpenApiOptions],
    ) -> Self:
        """``from_openapi`` for an ASGI app (FastAPI, Starlette) called in-process through
        ``httpx.ASGITransport``: the document is ``asgi_app.openapi()`` (FastAPI) or the
        JSON at ``openapi_path`` (``/openapi.json``); with ``run_lifespan`` the app's own
        lifespan runs inside this app's. See ``mcpkit.openapi.app_from_asgi``."""
        from mcpkit.openapi._factory import app_from_asgi

        return app_from_asgi(
            cls,
            asgi_app,
            base_url=base_url,
            openapi_path=openapi_path,
            spec=spec,
            run_lifespan=run_lifespan,
            headers=headers,
            name=name,
            version=version,
            title=title,
            instructions=instructions,
            **options,
        )


class _TheirName:
    """A name FastMCP or the mcp SDK has and mcpkit does not: reading it raises the
    ``AttributeError`` Python would, naming mcpkit's way. Set on the class after it is made,
    so type checkers and the reference docs never see these names. (A ``__getattr__`` would
    do it too, but it makes every attribute read of the app slower: the hot path reads many.)"""

    def __init__(self, name: str, instead: str) -> None:
        self.name, self.instead = name, instead

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        kind = type(obj).__name__ if obj is not None else owner.__name__
        raise AttributeError(
            f"{kind!r} object has no attribute {self.name!r}; {self.instead}", name=self.name
        )


for _name, _instead in _THEIR_NAMES.items():
    setattr(McpServerApp, _name, _TheirName(_name, _instead))


# Types for the annotations above (the OpenAPI bridge is imported lazily; the connection
# module imports this one).

if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Self, Unpack

    import httpx

    from mcpkit.openapi._asgi import AsgiApp
    from mcpkit.openapi._bridge import OpenApiOptions
    from mcpkit.openapi._document import OpenApiDocument, OpenApiSource
    from mcpkit.server._catalog import OnConflict
    from mcpkit.server._compose import Mount
    from mcpkit.server._engine.connection import ServerConnection
