"""``McpServerApp``: the programming model. The server classes and functions it serves,
their registration (decorators, constructor injection, mounts), and the handlers that
serve its catalog, over an engine it holds (``app.engine``, ``McpEngine``): transports
take the app or its engine and feed the engine messages."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import threading
from collections.abc import AsyncIterator, Callable, Iterable
from typing import TYPE_CHECKING, Any

from mcpkit._forwarding import Forwarded
from mcpkit._runtime import run_async
from mcpkit.protocol._versions import V2024_11_05, V2025_11_25
from mcpkit.server._access import lists_that_differ
from mcpkit.server._builder import EntryBuilder
from mcpkit.server._catalog import McpCatalogManager
from mcpkit.server._context import McpToolContext
from mcpkit.server._decorators import (
    COMPLETION_ATTR,
    LIFESPAN_ATTR,
    PROMPT_ATTR,
    RESOURCE_ATTR,
    SERVER_ATTR,
    TOOL_ATTR,
    ServerSpec,
    mcp_completion,
    mcp_lifespan,
    mcp_prompt,
    mcp_resource,
    mcp_tool,
)
from mcpkit.server._engine.dispatcher import DEFAULT_MAX_IN_FLIGHT_PER_CONNECTION, McpDispatcher
from mcpkit.server._engine.engine import McpEngine
from mcpkit.server._engine.listen import DEFAULT_MAX_LISTENS_PER_CONNECTION
from mcpkit.server._engine.pagination import DEFAULT_PAGE_SIZE
from mcpkit.server._engine.registry import McpConnectionRegistry
from mcpkit.server._engine.request_scope import McpRequestScope
from mcpkit.server._engine.shutdown import DEFAULT_SHUTDOWN_GRACE
from mcpkit.server._engine.subscriptions import ResourceSubscriptionManager
from mcpkit.server._engine.sync_calls import DEFAULT_MAX_SYNC_WORKERS
from mcpkit.server._eras import downgrade as _downgrade
from mcpkit.server._eras.modern import ModernEra
from mcpkit.server._eras.state_binding import DEFAULT_REQUEST_STATE_TTL, RequestStates
from mcpkit.server._eras.state_codec import RequestStateCodec
from mcpkit.server._eras.used_states import DEFAULT_MAX_USED_REQUEST_STATES
from mcpkit.server._extensions import announced_extensions
from mcpkit.server._files.contents import DEFAULT_MAX_CONCURRENT_FILE_READS
from mcpkit.server._handlers import MethodHandlers
from mcpkit.server._lifespans import AppLife
from mcpkit.server._registration import Registrar, describe, spec_of
from mcpkit.server._tasks.manager import DEFAULT_MAX_RUNNING_TASKS, TaskManager
from mcpkit.server._their_names import add_their_names
from mcpkit.server._versions import VersionPick
from mcpkit.stores._tasks import TaskStore

logger = logging.getLogger("mcpkit.server")

from mcpkit._version import __version__ as SDK_VERSION  # noqa: E402

#: ``ttlMs`` on cacheable results of the 2026-07-28 era (SEP-2549).
DEFAULT_CACHE_TTL_MS = 60_000


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


def _outside_event_loop() -> None:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return
    raise RuntimeError(
        "app.run() blocks, so it cannot run inside an event loop: await serve_stdio(app)"
        " (mcpkit.transports) or serve create_asgi_app(app) (mcpkit.transports.http) instead"
    )


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
    does (an async generator or an ``@asynccontextmanager``, given the app if it takes one).

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
        middleware: Iterable[Any] = (),
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
        for item in middleware:
            self.add_middleware(item)
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
        #: Finds and registers what the app serves (its classes, members, functions).
        self.registrar = registrar = Registrar(
            self.catalog, self.builder, self._providers, self._lifespans
        )
        served = [registrar.served(server) for server in servers]
        self.instances = [
            registrar.instantiate(server) for server, is_function in served if not is_function
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
            registrar.collect(instance)
        for fn in self.functions:
            registrar.register_function(fn)
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
        engine.on_start(lambda: AppLife(self), needed=lambda: self.needs_startup)
        engine.before_stop(self.tasks.stop)
        engine.tool_header_params = self.catalog.header_params_of
        engine.step_up_scopes = self.catalog.step_up_of
        engine.identities.differs = functools.partial(lists_that_differ, self.catalog)
        engine.connection_guards = registrar.connection_guards(self.instances)
        engine.mounted = lambda: [mount.app.engine for mount in self.mounts]

    # construction -----------------------------------------------------------------------

    def resolve(self, cls: type) -> Any:
        """The provider registered for ``cls`` (or a subclass of it)."""
        return self.registrar.resolve(cls)

    def _first_spec(self) -> ServerSpec:
        for instance in self.instances:
            spec: ServerSpec | None = getattr(type(instance), SERVER_ATTR, None)
            if spec is not None:
                return spec
        return ServerSpec()

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
            self.registrar.register_live(fn, TOOL_ATTR, spec_of(marker, TOOL_ATTR, fn))
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
            self.registrar.register_live(fn, RESOURCE_ATTR, spec_of(marker, RESOURCE_ATTR, fn))
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
            self.registrar.register_live(fn, PROMPT_ATTR, spec_of(marker, PROMPT_ATTR, fn))
            return fn

        return register

    def add_middleware(self, middleware: Any) -> None:
        """Run ``middleware`` (any object with ``on_*`` hooks) around every message this app
        serves, inside those added before it (docs/middleware.md)."""
        self.dispatcher.middleware.add(middleware)

    def enable(self, *names: str, tags: Iterable[str] = (), version: VersionPick = None) -> int:
        """Serve again what ``disable`` (or ``enabled=False``) set aside; see ``disable``."""
        return self.catalog.set_enabled(True, names, tags, version)

    def disable(self, *names: str, tags: Iterable[str] = (), version: VersionPick = None) -> int:
        """Set aside the components named (by name, or a resource's URI) or carrying any of
        ``tags`` (``version``: only those versions), unknown to every list and call here and
        where the app is mounted until ``enable``; how many. Clients hear ``list_changed``."""
        return self.catalog.set_enabled(False, names, tags, version)

    def completion(self, **options: Any) -> Callable[[Any], Any]:
        """Register a completion provider: ``@app.completion(prompt="review",
        argument="language")``; the options are ``mcp_completion``'s."""
        marker = mcp_completion(**options)

        def register(fn: Any) -> Any:
            self.registrar.register_live(fn, COMPLETION_ATTR, spec_of(marker, COMPLETION_ATTR, fn))
            return fn

        return register

    def lifespan(self, fn: Any) -> Any:
        """Register an async generator function to run around the app's life, as
        ``@mcp_lifespan`` does (see ``_lifespans.lifespan_manager`` for the forms it takes); it takes
        effect at the next ``start()``."""
        self.registrar.register_live(fn, LIFESPAN_ATTR, spec_of(mcp_lifespan, LIFESPAN_ATTR, fn))
        return fn

    def add_resource(self, resource: Any) -> Any:
        """Serve a ready-made resource, such as ``FileResource`` or ``DirectoryResource``
        (docs/files.md): it registers its entries (live: clients hear list_changed) and
        follows subscriptions. Returns it; ``resource.detach()`` takes it away again."""
        attach = getattr(resource, "attach", None)
        if not callable(attach):
            raise TypeError(
                f"app.add_resource() takes a FileResource, a DirectoryResource or another "
                f"object with attach(app), not {describe(resource)}"
            )
        attach(self)
        return resource

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
        if extensions := announced_extensions(self.catalog, version):
            caps["extensions"] = extensions
        if version == V2025_11_25:  # the experimental tasks utility; older versions lack it
            tasks = self.tasks.capability_2025()
            if tasks is not None:
                caps["tasks"] = tasks
        return caps

    # life -------------------------------------------------------------------------------

    #: Seconds requests still running at shutdown (stdin closed, SIGTERM, SIGINT) get to
    #: finish; then they are cancelled, each answered -32000 "Server shutting down".
    shutdown_grace: Forwarded[float] = Forwarded("engine")
    #: The frame connections being served (stdio, WebSocket, legacy SSE), as the registry
    #: holds them: a graceful shutdown answers their calls before their sockets close.
    open_connections: Forwarded[set[ServerConnection]] = Forwarded("engine")
    #: Set when the app stops: long-lived requests (subscriptions) end gracefully.
    shutting_down: Forwarded[asyncio.Event] = Forwarded("engine")
    #: True between ``start()`` and ``stop()``.
    started: Forwarded[bool] = Forwarded("engine")

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
        ``endpoint``, ``stateless``, ...). It says where it serves on stderr, as ``mcpkit
        run`` does. The process is yours: its garbage collector and uvicorn's HTTP protocol
        are left as they are. Blocks; inside an event loop of your own, ``await
        serve_stdio(app)`` or mount ``create_asgi_app(app)`` instead."""
        if transport not in _RUN_TRANSPORTS:
            raise ValueError(
                f"app.run(): unknown transport {transport!r}; use one of {', '.join(_RUN_TRANSPORTS)}"
            )
        _outside_event_loop()
        if transport == "stdio":
            if options:
                raise TypeError(f"app.run() on stdio takes no options; got {', '.join(options)}")
            from mcpkit.transports._announce import announce_stdio
            from mcpkit.transports._stdio import serve_stdio

            announce_stdio(self.name)
            run_async(serve_stdio(self))
            return
        from mcpkit.transports.http import StreamableHttpServerOptions
        from mcpkit.transports.http._server.serve import serve_announced

        serve_announced(self, StreamableHttpServerOptions(**options))

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


add_their_names(McpServerApp)


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
