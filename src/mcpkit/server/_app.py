"""``McpServerApp``: the engine's singletons, the server classes built on them, and the
handlers that serve them. Transports take an app and feed it messages."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
from typing import Any, AsyncIterator, Callable, Iterable

from mcpkit.protocol._versions import MODERN_VERSIONS, V2024_11_05
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
    RESOURCE_ATTR,
    SERVER_ATTR,
    TOOL_ATTR,
    Pipeline,
    ServerSpec,
)
from mcpkit.server._dispatcher import DEFAULT_MAX_IN_FLIGHT_PER_CONNECTION, McpDispatcher
from mcpkit.server._entries import CompletionEntry
from mcpkit.server._handlers import MethodHandlers
from mcpkit.server._modern import ModernEra
from mcpkit.server._mrtr import RequestStateCodec
from mcpkit.server._pagination import DEFAULT_PAGE_SIZE
from mcpkit.server._registry import McpConnectionRegistry
from mcpkit.server._subscriptions import ResourceSubscriptionManager
from mcpkit.server._tasks import DEFAULT_MAX_RUNNING_TASKS, TASKS_EXTENSION, TaskManager
from mcpkit.stores._tasks import TaskStore

logger = logging.getLogger("mcpkit.server")

SDK_VERSION = "0.1.0"
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


class McpServerApp:
    """The server engine.

    ``McpServerApp(MyServer, OtherServer, providers=[db])`` instantiates each ``@mcp_server``
    class, giving its constructor the engine's singletons and the providers by type, and
    registers every decorated tool, resource, prompt and completion.
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
        cache_ttl_ms: int = DEFAULT_CACHE_TTL_MS,
        cache_scope: str = "public",
        request_state_secret: bytes | None = None,
        task_store: TaskStore | None = None,
        max_running_tasks: int = DEFAULT_MAX_RUNNING_TASKS,
    ) -> None:
        self.catalog = McpCatalogManager()
        self.connections = McpConnectionRegistry()
        self.subscriptions = ResourceSubscriptionManager()
        self.dispatcher = McpDispatcher(max_in_flight_per_connection=max_in_flight_per_connection)
        self.page_size = page_size
        #: The tasks extension (SEP-2663): ``task_store`` keeps tasks (memory by default);
        #: at most ``max_running_tasks`` run at once.
        self.tasks = TaskManager(self, task_store, max_running=max_running_tasks)
        self.builder = EntryBuilder((McpToolContext,))
        self.catalog.set_entry_builder(self.builder)
        self._providers: dict[type, Any] = {
            McpCatalogManager: self.catalog,
            McpConnectionRegistry: self.connections,
            ResourceSubscriptionManager: self.subscriptions,
            McpDispatcher: self.dispatcher,
            TaskManager: self.tasks,
            McpServerApp: self,
        }
        for provider in providers:
            self._providers[type(provider)] = provider
        self.lifespan_context: Any = None
        self._lifespans: list[Callable[[], Any]] = []
        self._exit_stack: contextlib.AsyncExitStack | None = None
        self.instances = [self._instantiate(server) for server in servers]
        spec = self._first_spec()
        self.name = name or spec.name or "mcpkit-server"
        self.version = version or spec.version or SDK_VERSION
        self.title = title or spec.title
        self.instructions = instructions or spec.instructions
        self.website_url = spec.website_url
        self.icons = spec.icons
        for instance in self.instances:
            self._collect(instance)
        MethodHandlers(self).install()
        self.catalog.set_broadcast_fn(self.connections.broadcast_method)
        self.dispatcher.modern = ModernEra(
            self, ttl_ms=cache_ttl_ms, cache_scope=cache_scope, codec=RequestStateCodec(request_state_secret)
        )
        self._shutting_down: asyncio.Event | None = None

    # construction -----------------------------------------------------------------------

    def _first_spec(self) -> ServerSpec:
        for instance in self.instances:
            spec = getattr(type(instance), SERVER_ATTR, None)
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

    def _instantiate(self, target: Any) -> Any:
        if not isinstance(target, type):
            return target
        hints = inspect.signature(target).parameters
        try:
            annotations = inspect.get_annotations(target.__init__, eval_str=True)
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
                raise TypeError(f"cannot build {target.__name__}: nothing provides parameter {name!r}")
        instance = target(**kwargs)
        self._providers.setdefault(target, instance)
        return instance

    def _pipeline(self, cls: type, fn: Any) -> Pipeline:
        def gather(attr: str) -> tuple[Any, ...]:
            items = tuple(cls.__dict__.get(attr, ())) + tuple(getattr(fn, attr, ()))
            return tuple(self._instantiate(item) for item in items)

        metadata = dict(cls.__dict__.get(METADATA_ATTR) or {})
        metadata.update(getattr(fn, METADATA_ATTR, None) or {})
        return Pipeline(
            gather(GUARDS_ATTR), gather(INTERCEPTORS_ATTR), gather(EXCEPTION_HANDLERS_ATTR), metadata
        )

    def _collect(self, instance: Any) -> None:
        cls = type(instance)
        for attr_name, raw in _members_in_declaration_order(cls):
            fn = getattr(raw, "__func__", raw)
            if not callable(fn):
                continue
            bound = getattr(instance, attr_name)
            if (spec := getattr(fn, TOOL_ATTR, None)) is not None:
                self.catalog.register_tool(self.builder.tool(bound, spec, pipeline=self._pipeline(cls, fn), server_class=cls))
            if (spec := getattr(fn, RESOURCE_ATTR, None)) is not None:
                self.catalog.register_resource(self.builder.resource(bound, spec, pipeline=self._pipeline(cls, fn), server_class=cls))
            if (spec := getattr(fn, PROMPT_ATTR, None)) is not None:
                self.catalog.register_prompt(self.builder.prompt(bound, spec, pipeline=self._pipeline(cls, fn), server_class=cls))
            if (spec := getattr(fn, COMPLETION_ATTR, None)) is not None:
                ref_type = "ref/prompt" if spec.prompt is not None else "ref/resource"
                accepts = frozenset(inspect.signature(bound).parameters)
                self.catalog.register_completion(
                    CompletionEntry(ref_type, spec.prompt or spec.resource, spec.argument, bound, accepts)
                )
            if getattr(fn, LIFESPAN_ATTR, False):
                self._lifespans.append(bound)

    # description ------------------------------------------------------------------------

    def server_info(self, version: str | None = None) -> dict[str, Any]:
        info: dict[str, Any] = {"name": self.name, "version": self.version}
        if version != V2024_11_05:
            if self.title:
                info["title"] = self.title
            if self.website_url:
                info["websiteUrl"] = self.website_url
            if self.icons:
                info["icons"] = list(self.icons)
        return info

    def capabilities(self, version: str | None = None) -> dict[str, Any]:
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
        return caps

    # life -------------------------------------------------------------------------------

    @property
    def shutting_down(self) -> asyncio.Event:
        """Set when the app stops: long-lived requests (subscriptions) end gracefully."""
        if self._shutting_down is None:
            self._shutting_down = asyncio.Event()
        return self._shutting_down

    async def start(self) -> None:
        """Run the lifespans' start-up halves (idempotent)."""
        if self._exit_stack is not None:
            return
        self._shutting_down = None
        stack = contextlib.AsyncExitStack()
        contexts = []
        for lifespan in self._lifespans:
            manager = contextlib.asynccontextmanager(lifespan)()
            contexts.append(await stack.enter_async_context(manager))
        self.lifespan_context = contexts[0] if len(contexts) == 1 else (contexts or None)
        self._exit_stack = stack

    async def stop(self) -> None:
        """Run the lifespans' shutdown halves."""
        self.shutting_down.set()
        await self.tasks.stop()
        stack, self._exit_stack = self._exit_stack, None
        if stack is not None:
            await stack.aclose()

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[McpServerApp]:
        await self.start()
        try:
            yield self
        finally:
            await self.stop()
