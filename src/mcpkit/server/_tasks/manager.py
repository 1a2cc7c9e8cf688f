"""The tasks extension (``io.modelcontextprotocol/tasks``, SEP-2663) on the server side.

A ``tools/call`` for a tool declared with ``task_support="optional"`` or ``"required"``
from a client that declares the extension in the request's ``clientCapabilities`` is
answered with a ``CreateTaskResult`` (``resultType: "task"``) once the task is stored; the
tool then runs in a background asyncio task owned by the app (at most
``max_running`` at once; the others wait their turn in ``working``). The client polls
``tasks/get``, answers input requests with ``tasks/update`` and may ``tasks/cancel``.
``subscriptions/listen`` with ``notifications.taskIds`` streams ``notifications/tasks``.

Input during a task follows the multi round-trip model (SEP-2322): a tool that asks for
input it has no answer for raises ``InputRequired``; the task parks in ``input_required``
with those ``inputRequests``. When ``tasks/update`` has answered every one of them, the tool
runs again from the top and this time finds its answers (and its ``request_state``). All of
it lives in the ``TaskStore``, so a parked task resumes even on another process.

A tool that wants input *before* its task exists (MRTR first, task afterwards) is marked
``@deferred_task`` and calls ``await start_task(ctx)`` when the synchronous part is done:
until then its input requests are ordinary ``InputRequiredResult`` rounds; at that call the
client gets the ``CreateTaskResult`` and the tool keeps running as the task.

A client that does not declare the extension never gets a task: ``optional`` tools run
synchronously, ``required`` ones fail with -32021 naming the extension.

The handshake era's 2025-11-25 tasks utility is served too, by the same engine: a session
at 2025-11-25 whose server has a task-supporting tool gets the ``tasks`` capability; a
``tools/call`` with ``params.task`` is answered ``{"task": Task}``; ``tasks/get``,
``tasks/result`` (held until the task ends, carrying its input requests), ``tasks/list`` and
``tasks/cancel`` follow that version's rules (``requests_2025.py``).

This module holds the tool side and ``TaskManager``, the façade the app and the method
handlers use; the work is done by its parts in ``records.py`` (the store and the
per-task lock), ``runner.py`` (running tools, cancelling runs), ``deferred.py``
(``@deferred_task`` calls), ``watchers.py`` (status notifications),
``expiry.py`` (the TTL sweep), ``requests.py`` (the requests) and, for
2025-11-25, ``requests_2025.py`` with ``inputs_2025.py`` and
``wire_2025.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from mcpkit.protocol._jsonrpc import JsonRpcRequest
from mcpkit.server._engine.binding import TransportBinding
from mcpkit.server._tasks.expiry import TaskExpiry
from mcpkit.server._tasks.records import TaskRecords
from mcpkit.server._tasks.requests import TaskRequestHandlers
from mcpkit.server._tasks.requests_2025 import HandshakeTaskRequests
from mcpkit.server._tasks.runner import TaskRunner
from mcpkit.server._tasks.watchers import Deliver, TaskSubscription, TaskWatchers
from mcpkit.server._tasks.wire import (
    DEFERRED_ATTR,
    TASKS_EXTENSION,
    ExecuteTool,
    MissingTasksExtensionError,
    Principal,
    declares_tasks,
    default_principal,
    detailed_task,
)
from mcpkit.server._tasks.wire import iso_time as iso_time
from mcpkit.server._tasks.wire_2025 import HANDSHAKE_MODE, TASKS_CAPABILITY
from mcpkit.stores._tasks import InMemoryTaskStore, TaskRecord, TaskStore

if TYPE_CHECKING:
    from mcpkit.server._context import McpToolContext
    from mcpkit.server._host import CatalogHost

F = TypeVar("F", bound=Callable[..., Any])

#: Tasks whose tool runs at once; more wait in ``working`` for a free slot.
DEFAULT_MAX_RUNNING_TASKS = 32
#: How long a task stays retrievable after its creation (``ttlMs``).
DEFAULT_TASK_TTL_MS = 60 * 60 * 1000
#: The polling interval suggested to clients (``pollIntervalMs``).
DEFAULT_POLL_INTERVAL_MS = 500
#: Seconds between two sweeps of expired tasks.
DEFAULT_SWEEP_INTERVAL = 60.0


# --------------------------------------------------------------------------- the tool side


def deferred_task(fn: F) -> F:
    """Mark a task-supporting tool that starts its task itself: it runs as an ordinary call
    (multi round-trip input included) until it calls ``await start_task(ctx)``."""
    setattr(fn, DEFERRED_ATTR, True)
    return fn


async def start_task(ctx: McpToolContext) -> bool:
    """End the synchronous part of a ``@deferred_task`` call: the client gets its
    ``CreateTaskResult`` now and the rest of the tool runs as the task. Returns whether the
    call runs as a task (False: the client did not declare the extension, so it goes on
    synchronously). A no-op when the call already runs as a task."""
    start = ctx.binding.task_start
    if start is not None:
        await start()
    return ctx.binding.task_id is not None


def current_task_id(ctx: McpToolContext) -> str | None:
    """The id of the task this call runs as; None for an ordinary call."""
    return ctx.binding.task_id


# --------------------------------------------------------------------------- the engine


class TaskManager:
    """Creates, runs, parks, resumes and cancels tasks; serves ``tasks/get``,
    ``tasks/update`` and ``tasks/cancel`` (2026-07-28), and ``tasks/get``, ``tasks/result``,
    ``tasks/list`` and ``tasks/cancel`` (2025-11-25). One per app (``app.tasks``).

    A façade over its parts, which read its settings at each use: ``TaskRecords`` (the
    store), ``TaskRunner`` (the runs), ``TaskWatchers`` (status notifications),
    ``TaskExpiry`` (the TTL sweep), ``TaskRequestHandlers`` (the SEP-2663 requests) and
    ``HandshakeTaskRequests`` (the 2025-11-25 ones).
    """

    def __init__(
        self,
        app: CatalogHost,
        store: TaskStore | None = None,
        *,
        max_running: int = DEFAULT_MAX_RUNNING_TASKS,
        ttl_ms: int | None = DEFAULT_TASK_TTL_MS,
        poll_interval_ms: int | None = DEFAULT_POLL_INTERVAL_MS,
        sweep_interval: float = DEFAULT_SWEEP_INTERVAL,
        principal: Principal = default_principal,
    ) -> None:
        if max_running < 1:
            raise ValueError("max_running must be at least 1")
        self.app = app
        self.store: TaskStore = store if store is not None else InMemoryTaskStore()
        self.max_running = max_running
        self.ttl_ms = ttl_ms
        self.poll_interval_ms = poll_interval_ms
        self.sweep_interval = sweep_interval
        self.principal = principal
        #: Runs a tool to its ``CallToolResult``; installed by the method handlers.
        self.execute_tool: ExecuteTool | None = None
        self._watchers = TaskWatchers()
        self._expiry = TaskExpiry(self, self._expire)
        self._records = TaskRecords(self, self._watchers, self._expiry)
        self._runner = TaskRunner(self, self._records)
        self._requests = TaskRequestHandlers(self._records, self._runner, self._watchers)
        self._handshake = HandshakeTaskRequests(self, self._records, self._runner, self._watchers)

    @property
    def running(self) -> int:
        """Tasks whose tool is running now."""
        return self._runner.slots.running

    @property
    def list_page_size(self) -> int:
        """Tasks per 2025-11-25 ``tasks/list`` page."""
        return self._handshake.page_size

    @list_page_size.setter
    def list_page_size(self, size: int) -> None:
        if size < 1:
            raise ValueError("list_page_size must be at least 1")
        self._handshake.page_size = size

    def capability_2025(self) -> dict[str, Any] | None:
        """The 2025-11-25 ``tasks`` capability: declared when a tool may run as a task."""
        return dict(TASKS_CAPABILITY) if self._handshake.offered() else None

    def mode_for(
        self, entry: Any, binding: TransportBinding, request: JsonRpcRequest | None = None
    ) -> str | None:
        """How this call runs: None (synchronously), ``"task"`` (a task from the start),
        ``"deferred"`` (the tool starts its task itself) or, 2025-11-25, a task-augmented
        call's mode. Raises -32021 (2026-07-28) for a tool that runs only as a task when the
        client did not declare the extension, -32601 (2025-11-25) when the call and the
        tool's ``taskSupport`` disagree."""
        if binding.modern or request is None:
            return self._requests.mode_for(entry, binding)
        return self._handshake.mode_for(entry, binding, request)

    async def call_tool(
        self,
        mode: str,
        entry: Any,
        kwargs: dict[str, Any],
        request: JsonRpcRequest,
        binding: TransportBinding,
    ) -> dict[str, Any]:
        """Answer a task-eligible ``tools/call`` (see ``mode_for``)."""
        if mode == HANDSHAKE_MODE:
            return await self._handshake.call_tool(entry, kwargs, request, binding)
        return await self._requests.call_tool(mode, entry, kwargs, request, binding)

    async def lookup(self, task_id: str, binding: TransportBinding) -> TaskRecord | None:
        """The task when it exists and this request's principal may see it."""
        return await self._records.lookup(task_id, binding)

    async def get_task(self, request: JsonRpcRequest, binding: TransportBinding) -> dict[str, Any]:
        """``tasks/get``: the task's ``DetailedTask`` (2025-11-25: its ``Task``)."""
        if not binding.modern:
            return await self._handshake.get_task(request, binding)
        return await self._requests.get_task(request, binding)

    async def task_result(
        self, request: JsonRpcRequest, binding: TransportBinding
    ) -> dict[str, Any]:
        """``tasks/result`` (2025-11-25): held until the task ends, then the call's answer."""
        return await self._handshake.task_result(request, binding)

    async def list_tasks(
        self, request: JsonRpcRequest, binding: TransportBinding
    ) -> dict[str, Any]:
        """``tasks/list`` (2025-11-25): the requestor's tasks, a page at a time."""
        return await self._handshake.list_tasks(request, binding)

    async def update_task(
        self, request: JsonRpcRequest, binding: TransportBinding
    ) -> dict[str, Any]:
        """``tasks/update``: answers to the task's input requests."""
        return await self._requests.update_task(request, binding)

    async def cancel_task(
        self, request: JsonRpcRequest, binding: TransportBinding
    ) -> dict[str, Any]:
        """``tasks/cancel``: cancel the task (idempotent; 2025-11-25: the cancelled
        ``Task``, -32602 for a task already final)."""
        if not binding.modern:
            return await self._handshake.cancel_task(request, binding)
        return await self._requests.cancel_task(request, binding)

    def watch(self, task_id: str, key: str, deliver: Deliver) -> None:
        """Call ``deliver(detailed_task)`` whenever the task's status changes."""
        self._watchers.watch(task_id, key, deliver)

    def unwatch(self, key: str, task_ids: list[str]) -> None:
        """Stop the listener ``key`` watching ``task_ids``."""
        self._watchers.unwatch(key, task_ids)

    def subscription(self, request: JsonRpcRequest, binding: TransportBinding) -> TaskSubscription:
        """A ``subscriptions/listen`` that also honours ``notifications.taskIds``."""
        return TaskSubscription(self.app.engine, request, binding, self.lookup, self._watchers)

    async def sweep(self) -> list[str]:
        """Delete the tasks past their TTL (stopping any still running); returns their ids."""
        return await self._expiry.sweep()

    def _expire(self, task_id: str) -> None:
        self._runner.expire(task_id)
        self._watchers.forget(task_id)

    async def stop(self) -> None:
        """Stop every running task (each ends ``failed``: the server stopped) and the sweeper."""
        self._expiry.stop()
        await self._runner.stop()


__all__ = [
    "DEFAULT_MAX_RUNNING_TASKS",
    "DEFAULT_POLL_INTERVAL_MS",
    "DEFAULT_TASK_TTL_MS",
    "TASKS_EXTENSION",
    "MissingTasksExtensionError",
    "TaskManager",
    "TaskSubscription",
    "current_task_id",
    "declares_tasks",
    "deferred_task",
    "detailed_task",
    "start_task",
]
