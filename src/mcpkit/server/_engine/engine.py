"""``McpEngine``: what serves an app over any transport, apart from what the app serves.

It owns the dispatcher (method handlers and requests in flight), the open connections and
their lifecycle, resource subscriptions and open listens, per-session state, the worker
threads of sync functions, and the app's life: start, the shutdown signal, stop. It knows
no catalog, no decorator and no transport: the programming model (``McpServerApp``)
installs its handlers into the dispatcher and its start-up into ``on_start``; transports
take the engine (or an app, whose ``engine`` they read) and feed it messages.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, NamedTuple, Protocol

from mcpkit.server._engine.dispatcher import DEFAULT_MAX_IN_FLIGHT_PER_CONNECTION, McpDispatcher
from mcpkit.server._engine.identities import SessionIdentities
from mcpkit.server._engine.listen import DEFAULT_MAX_LISTENS_PER_CONNECTION, OpenListens
from mcpkit.server._engine.registry import McpConnectionRegistry
from mcpkit.server._engine.session_state import SessionStates
from mcpkit.server._engine.shutdown import DEFAULT_SHUTDOWN_GRACE, check_grace
from mcpkit.server._engine.subscriptions import ResourceSubscriptionManager
from mcpkit.server._engine.sync_calls import DEFAULT_MAX_SYNC_WORKERS, SyncWorkers

#: What runs around the engine's life: entered at start, exited (in reverse) at stop.
LifeHook = Callable[[], contextlib.AbstractAsyncContextManager[Any]]


class ConnectionGuard(NamedTuple):
    """A guard that checks connections: ``check(ctx)`` returns (or awaits) a bool; the
    class that declared it (None for one given to the transport) and that class's
    ``set_metadata`` values, which its context carries."""

    guard: Any
    check: Callable[..., Any]
    server_class: type | None = None
    metadata: dict[str, Any] | None = None


class McpEngine:
    """The server engine: one per app, shared by every transport serving it.

    ``max_in_flight_per_connection`` bounds each connection's requests running at once,
    ``max_listens_per_connection`` its open ``subscriptions/listen`` (always fewer),
    ``max_sync_workers`` the threads of sync functions, ``shutdown_grace`` the seconds
    requests still running at shutdown get to finish."""

    def __init__(
        self,
        *,
        max_in_flight_per_connection: int = DEFAULT_MAX_IN_FLIGHT_PER_CONNECTION,
        max_listens_per_connection: int = DEFAULT_MAX_LISTENS_PER_CONNECTION,
        max_sync_workers: int = DEFAULT_MAX_SYNC_WORKERS,
        shutdown_grace: float = DEFAULT_SHUTDOWN_GRACE,
        expose_internal_errors: bool = False,
        on_loop: Callable[[asyncio.AbstractEventLoop], None] | None = None,
    ) -> None:
        #: Every open connection (``lifecycle`` opens and closes them), frame ones included.
        self.connections = McpConnectionRegistry()
        #: Who each session's requests came as: a new token's view announced (list_changed).
        self.identities = SessionIdentities(self.connections)
        self.subscriptions = ResourceSubscriptionManager()
        self.dispatcher = McpDispatcher(
            max_in_flight_per_connection=max_in_flight_per_connection,
            expose_internal_errors=expose_internal_errors,
        )
        #: The ``subscriptions/listen`` requests open on each connection, and their bound.
        self.listens = OpenListens(max_listens_per_connection, self.dispatcher)
        #: What ``ctx.set_state`` keeps, per session, in this process; freed with the session.
        self.session_state = SessionStates()
        self.dispatcher.session_state = self.session_state
        #: The worker threads of sync functions (made on first use, closed at stop).
        self.sync_workers = SyncWorkers(max_sync_workers, on_loop=on_loop)
        #: Seconds requests still running at shutdown get to finish; then they are
        #: cancelled, each answered -32000 "Server shutting down".
        self._shutdown_grace = check_grace(shutdown_grace)
        #: The in-memory clients open that started this engine: the last to close stops it.
        self.in_memory_clients = 0
        #: The name and version a transport announces instead of the served app's
        #: (``StreamableHttpServerOptions.server_name``/``server_version``); None: the app's.
        self.announced_name: str | None = None
        self.announced_version: str | None = None
        #: The ``x-mcp-header`` parameters of a tool, by name and the caller's identity (none
        #: for a tool that identity may not call), for the HTTP transport to compare a
        #: 2026-07-28 call's headers with (the served app sets it).
        self.tool_header_params: Callable[[str, Any], Any] = _no_header_params
        #: The scopes a signed-in caller must step up to before a request ``(method,
        #: params, auth)``, None when it need not, for the HTTP transport to answer 403
        #: ``insufficient_scope`` (the served app sets it).
        self.step_up_scopes: Callable[[str, Any, Any], tuple[str, ...] | None] = _no_step_up
        #: The guards the served classes declare for connections (``can_connect``), checked
        #: by the HTTP transports on each one.
        self.connection_guards: list[ConnectionGuard] = []
        #: The engines of what the served app mounts: they share its ``requestState``
        #: secret across workers.
        self.mounted: Callable[[], list[McpEngine]] = list
        self._on_start: list[tuple[LifeHook, Callable[[], bool] | None]] = []
        self._before_stop: list[Callable[[], Awaitable[None]]] = []
        self._exit_stack: contextlib.AsyncExitStack | None = None
        self._shutting_down: asyncio.Event | None = None

    @property
    def shutdown_grace(self) -> float:
        """Seconds requests still running at shutdown (stdin closed, SIGTERM, SIGINT) get
        to finish; then they are cancelled, each answered -32000 "Server shutting down"."""
        return self._shutdown_grace

    @shutdown_grace.setter
    def shutdown_grace(self, grace: float) -> None:
        self._shutdown_grace = check_grace(grace)

    def on_start(self, hook: LifeHook, needed: Callable[[], bool] | None = None) -> None:
        """Run ``hook()`` (an async context manager) around the engine's life: entered at
        each ``start()``, in the order given, exited in reverse at ``stop()``. ``needed()``
        says whether it has work to do now (None: always), for ``needs_startup``."""
        self._on_start.append((hook, needed))

    @property
    def needs_startup(self) -> bool:
        """True when ``start()`` has work to do: a transport must then not serve requests
        before it (one with nothing to do is started by the first request)."""
        return any(needed is None or needed() for _, needed in self._on_start)

    def before_stop(self, hook: Callable[[], Awaitable[None]]) -> None:
        """Await ``hook()`` at each ``stop()``, once the shutdown signal is set and before
        the start hooks are exited (what runs on the engine ends first: tasks)."""
        self._before_stop.append(hook)

    @property
    def started(self) -> bool:
        """True between ``start()`` and ``stop()``."""
        return self._exit_stack is not None

    @property
    def life(self) -> contextlib.AsyncExitStack | None:
        """While the engine runs, the stack its start hooks were entered on (what else
        enters it is exited at ``stop()`` too: a mount made late); None when stopped."""
        return self._exit_stack

    @property
    def shutting_down(self) -> asyncio.Event:
        """Set when the engine stops: long-lived requests (subscriptions) end gracefully."""
        if self._shutting_down is None:
            self._shutting_down = asyncio.Event()
        return self._shutting_down

    @property
    def open_connections(self) -> set[Any]:
        """The frame connections being served (stdio, WebSocket, legacy SSE): a graceful
        shutdown answers their calls before their sockets close."""
        return set(self.connections.served())

    async def start(self) -> None:
        """Enter the start hooks (idempotent); what entered is exited again if one fails
        or the start is cancelled."""
        if self._exit_stack is not None:
            return
        self._shutting_down = None
        stack = contextlib.AsyncExitStack()
        try:
            for hook, _ in self._on_start:
                await stack.enter_async_context(hook())
        except BaseException:
            await stack.aclose()
            raise
        self._exit_stack = stack

    async def stop(self) -> None:
        """Signal the shutdown, run the stop hooks, exit the start hooks, close the
        worker threads."""
        self.shutting_down.set()
        for hook in self._before_stop:
            await hook()
        stack, self._exit_stack = self._exit_stack, None
        if stack is not None:
            await stack.aclose()
        await self.sync_workers.aclose()

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[McpEngine]:
        """``async with engine.running():`` starts the engine and stops it on exit."""
        await self.start()
        try:
            yield self
        finally:
            await self.stop()

    def share_request_state_secret(self, secret: bytes) -> None:
        """Verify and sign ``requestState`` with ``secret`` (unless one was chosen), here
        and in the mounted engines: workers must accept each other's states."""
        self.dispatcher.modern.codec.share(secret)
        for engine in self.mounted():
            engine.share_request_state_secret(secret)


def _no_step_up(method: str, params: Any, auth: Any) -> None:
    return None


def _no_header_params(name: str, auth: Any) -> tuple[()]:
    return ()


class ServesAnEngine(Protocol):
    """What transports take besides an engine: an object holding one (an app)."""

    @property
    def engine(self) -> McpEngine: ...


def engine_of(served: McpEngine | ServesAnEngine) -> McpEngine:
    """The engine of what a transport was given: an engine, or an app holding one."""
    return served if isinstance(served, McpEngine) else served.engine


__all__ = ["ConnectionGuard", "LifeHook", "McpEngine", "ServesAnEngine", "engine_of"]
