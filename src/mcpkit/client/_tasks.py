"""Tasks on the client side: a tool call answered with a task handle, polled to its result.

2025-11-25 (handshake era; the spec's experimental ``tasks`` utility):
``call_tool_as_task`` sends ``params.task`` (``{"ttl": ms}``), but only to a server that
declares ``tasks.requests.tools.call`` (the spec forbids it otherwise); the server answers a
``CreateTaskResult`` (``{"task": Task}``). ``tasks/get`` polls, ``tasks/result`` gives the
tool's result (the server holds it until the task ends), ``tasks/cancel`` and ``tasks/list``
need ``tasks.cancel`` and ``tasks.list``. A task in ``input_required`` is followed with
``tasks/result``, as the spec says: the server sends its elicitation or sampling requests
alongside it, and the client's handlers answer them.

2026-07-28 (the ``io.modelcontextprotocol/tasks`` extension, SEP-2663; what mcpkit's
server implements): the call declares the extension in its capabilities and the server
decides, per call, between a ``CallToolResult`` and a flat ``CreateTaskResult``
(``resultType: "task"``). ``tasks/get`` carries the result, error or ``inputRequests``
inline; the handlers answer ``inputRequests`` through ``tasks/update``. There is no
``tasks/result``, no ``tasks/list``, no client-chosen ttl.

Either way ``ToolTask.result()`` polls ``tasks/get`` at the interval the server suggests
(``pollInterval`` / ``pollIntervalMs``), waking early on a task status notification, and
gives a ``CallToolResult`` like ``call_tool`` does: a tool error is ``is_error=True``, a
JSON-RPC error ``McpCallError``.
"""

from __future__ import annotations

import asyncio
import inspect
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mcpkit._codes import ErrorCode
from mcpkit._exceptions import McpCallError, RequestTimeoutError
from mcpkit.client._errors import ProtocolEraError, TaskCancelledError, TasksNotSupportedError
from mcpkit.client._results import convert
from mcpkit.client._task_state import TaskState, dict_or_none
from mcpkit.protocol import types as t
from mcpkit.protocol._versions import Era

if TYPE_CHECKING:
    from mcpkit.client._modern_requests import RequestChannel
    from mcpkit.client._server_messages import ServerMessageHandler
    from mcpkit.client._state import ClientState
    from mcpkit.client._tool_headers import ToolHeaderMirror

__all__ = [
    "DEFAULT_TASK_POLL_INTERVAL",
    "TASKS_EXTENSION",
    "TaskClient",
    "TaskWatchers",
    "ToolTask",
]

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
#: Seconds between two ``tasks/get`` when the server suggests no interval.
DEFAULT_TASK_POLL_INTERVAL = 1.0
#: The shortest wait between two polls, whatever the server suggests.
MIN_TASK_POLL_INTERVAL = 0.01
#: Pages of ``tasks/list`` one call follows before it stops (a server looping its cursor).
MAX_TASK_LIST_PAGES = 1000
#: Task status notifications: 2025-11-25, and the 2026-07-28 extension's.
TASK_STATUS_NOTIFICATIONS = frozenset({"notifications/tasks/status", "notifications/tasks"})

StatusCallback = Callable[["TaskState"], Any]


class _Outcome:
    """What following a 2025-11-25 ``input_required`` task with ``tasks/result`` gave."""

    __slots__ = ("error", "payload")

    def __init__(self) -> None:
        self.payload: dict[str, Any] | None = None
        self.error: McpCallError | None = None


class ToolTask:
    """What ``McpClient.call_tool_as_task`` answers: the task the server created, or (when
    the server ran the call at once, which a 2026-07-28 server may always do) its result in
    ``immediate``. ``await task.result()`` gives the ``CallToolResult`` in both cases."""

    def __init__(
        self,
        client: TaskClient,
        name: str,
        state: TaskState | None,
        immediate: t.CallToolResult | None = None,
        meta: dict[str, Any] | None = None,
    ) -> None:
        self._client = client
        #: The tool called.
        self.name = name
        #: The latest state seen (None: no task was created, see ``immediate``).
        self.state = state
        #: The result, when the server answered the call without a task.
        self.immediate = immediate
        #: The ``_meta`` of the ``CreateTaskResult`` (e.g. 2025-11-25's
        #: ``io.modelcontextprotocol/model-immediate-response``).
        self.meta = meta
        self._outcome = _Outcome()

    @property
    def is_task(self) -> bool:
        """Whether the server ran the call as a task (else the result is here)."""
        return self.state is not None

    @property
    def task_id(self) -> str | None:
        """The task's id, None when the call was not run as a task."""
        return self.state.task_id if self.state is not None else None

    def __repr__(self) -> str:
        if self.state is None:
            return f"<ToolTask {self.name!r}: answered at once>"
        return f"<ToolTask {self.name!r} {self.state.task_id} {self.state.status}>"

    async def refresh(self, *, timeout: float | None = None) -> TaskState | None:
        """``tasks/get`` now (None when there is no task)."""
        if self.state is None:
            return None
        self.state = await self._client.get_task(self.state.task_id, timeout=timeout)
        return self.state

    async def wait(
        self,
        *,
        timeout: float | None = None,
        poll_interval: float | None = None,
        on_status: StatusCallback | None = None,
    ) -> TaskState | None:
        """Poll until the task ends (see ``McpClient.wait_for_task``); its final state, or
        None when there is no task."""
        if self.state is None:
            return None
        self.state = await self._client._wait_for_task(
            self.state.task_id, timeout, poll_interval, on_status, self._outcome
        )
        return self.state

    async def result(
        self,
        *,
        timeout: float | None = None,
        poll_interval: float | None = None,
        on_status: StatusCallback | None = None,
    ) -> t.CallToolResult:
        """Wait for the task to end and give the tool's result: ``is_error=True`` for a tool
        error; ``McpCallError`` when the call failed with a JSON-RPC error;
        ``TaskCancelledError`` for a cancelled 2026-07-28 task (a 2025-11-25 server says
        itself what ``tasks/result`` of a cancelled task is). ``timeout`` bounds it all."""
        if self.state is None:
            assert self.immediate is not None
            return self.immediate
        deadline = _deadline(timeout)
        state = self.state
        if not state.terminal:
            state = await self._client._wait_for_task(
                state.task_id, timeout, poll_interval, on_status, self._outcome
            )
            self.state = state
        outcome = self._outcome
        if outcome.error is not None:
            raise outcome.error
        if outcome.payload is not None:
            return convert(outcome.payload, t.CallToolResult)
        return await self._client._final_result(state, _remaining(deadline, state.task_id))

    async def cancel(self, *, timeout: float | None = None) -> TaskState | None:
        """``tasks/cancel`` (see ``McpClient.cancel_task``)."""
        if self.state is None:
            return None
        state = await self._client.cancel_task(self.state.task_id, timeout=timeout)
        if state is not None:
            self.state = state
        return state


def _deadline(timeout: float | None) -> float | None:
    return None if timeout is None else asyncio.get_running_loop().time() + timeout


def _remaining(deadline: float | None, task_id: str) -> float | None:
    """Seconds left before ``deadline`` (None: no deadline); raises once it has passed."""
    if deadline is None:
        return None
    left = deadline - asyncio.get_running_loop().time()
    if left <= 0:
        raise RequestTimeoutError(f"task {task_id} did not end in time")
    return left


class TaskWatchers:
    """Who waits on which task: a task status notification wakes the waiters of its task
    early, instead of at their next poll."""

    def __init__(self) -> None:
        self._events: dict[str, set[asyncio.Event]] = {}

    def watch(self, task_id: str) -> asyncio.Event:
        """An event set whenever a status notification for ``task_id`` arrives."""
        woken = asyncio.Event()
        self._events.setdefault(task_id, set()).add(woken)
        return woken

    def unwatch(self, task_id: str, woken: asyncio.Event) -> None:
        """Stop ``woken`` being set (the waiter is done)."""
        watchers = self._events.get(task_id)
        if watchers is not None:
            watchers.discard(woken)
            if not watchers:
                del self._events[task_id]

    def status_changed(self, params: dict[str, Any]) -> None:
        """A task status notification: wake whoever waits on that task."""
        task_id = params.get("taskId")
        if isinstance(task_id, str):
            for woken in self._events.get(task_id, ()):
                woken.set()


class TaskClient:
    """The task API of one client (``McpClient.call_tool_as_task``, ``get_task``...): sends
    through its request channel, answers 2026-07-28 ``inputRequests`` with its handlers."""

    def __init__(
        self,
        channel: RequestChannel,
        state: ClientState,
        handlers: ServerMessageHandler,
        tool_headers: ToolHeaderMirror,
        watchers: TaskWatchers,
    ) -> None:
        self._channel = channel
        self._state = state
        self._handlers = handlers
        self._tool_headers = tool_headers
        self._watchers = watchers

    # the wire ---------------------------------------------------------------------------

    async def _task_rpc(
        self, method: str, params: dict[str, Any] | None, timeout: float | None
    ) -> Any:
        """A task request; 2026-07-28: declaring the extension, as every one must."""
        if self._state.era is Era.MODERN:
            return await self._channel.send(
                method, params, timeout=timeout, extensions={TASKS_EXTENSION: {}}
            )
        return await self._channel.send(method, params, timeout=timeout)

    def _require_task_capability(self, what: str, *path: str) -> None:
        """2025-11-25: refuse what the server's ``capabilities.tasks`` does not declare
        (unknown capabilities, as in a resumed session, refuse nothing)."""
        if self._state.era is Era.MODERN or self._state.server_info is None:
            return
        node: Any = self._state.server_info.capabilities.tasks
        for step in path:  # (the generated struct spells "list" as list_)
            node = getattr(node, "list_" if step == "list" else step, None) if node else None
        if node is None:
            raise TasksNotSupportedError(
                f"{what}: the server does not declare capabilities.tasks.{'.'.join(path)} "
                f"(protocol version {self._state.server_info.protocol_version})"
            )

    # the API ----------------------------------------------------------------------------

    async def call_tool_as_task(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        ttl_ms: int | None = None,
        timeout: float | None = None,
        meta: dict[str, Any] | None = None,
    ) -> ToolTask:
        """See ``McpClient.call_tool_as_task``."""
        params: dict[str, Any] = {"name": name, "arguments": arguments or {}}
        if meta:
            params["_meta"] = meta
        if self._state.era is Era.MODERN:
            await self._tool_headers.learn(name, timeout)
        else:
            self._require_task_capability(
                "a task-augmented tools/call", "requests", "tools", "call"
            )
            params["task"] = {} if ttl_ms is None else {"ttl": ttl_ms}
        raw = await self._task_rpc("tools/call", params, timeout)
        if self._state.era is Era.MODERN:
            if isinstance(raw, dict) and raw.get("resultType") == "task":
                return ToolTask(
                    self, name, TaskState.from_wire(raw), meta=dict_or_none(raw.get("_meta"))
                )
        elif isinstance(raw, dict) and isinstance(raw.get("task"), dict):
            return ToolTask(
                self, name, TaskState.from_wire(raw["task"]), meta=dict_or_none(raw.get("_meta"))
            )
        # The server ran it as an ordinary call (it may: 2025-11-25 when it ignores the
        # augmentation, 2026-07-28 whenever it likes).
        return ToolTask(self, name, None, immediate=convert(raw, t.CallToolResult))

    async def get_task(self, task_id: str, *, timeout: float | None = None) -> TaskState:
        """See ``McpClient.get_task``."""
        raw = await self._task_rpc("tasks/get", {"taskId": task_id}, timeout)
        return TaskState.from_wire(raw)

    async def get_task_result(
        self, task_id: str, *, timeout: float | None = None
    ) -> t.CallToolResult:
        """See ``McpClient.get_task_result``."""
        if self._state.era is Era.MODERN:
            state = await self._wait_for_task(task_id, timeout, None, None, None)
            return await self._final_result(state, None)
        raw = await self._task_rpc("tasks/result", {"taskId": task_id}, timeout)
        return convert(raw, t.CallToolResult)

    async def cancel_task(self, task_id: str, *, timeout: float | None = None) -> TaskState | None:
        """See ``McpClient.cancel_task``."""
        self._require_task_capability("tasks/cancel", "cancel")
        raw = await self._task_rpc("tasks/cancel", {"taskId": task_id}, timeout)
        if self._state.era is Era.MODERN or not (isinstance(raw, dict) and "taskId" in raw):
            return None
        return TaskState.from_wire(raw)

    async def list_tasks(self, *, timeout: float | None = None) -> list[TaskState]:
        """See ``McpClient.list_tasks``."""
        if self._state.era is Era.MODERN:
            raise ProtocolEraError(
                "tasks/list is not part of 2026-07-28 (the tasks extension, SEP-2663, has none): "
                "keep the task ids of the calls you made"
            )
        self._require_task_capability("tasks/list", "list")
        tasks: list[TaskState] = []
        cursor: str | None = None
        for _ in range(MAX_TASK_LIST_PAGES):
            raw = await self._task_rpc(
                "tasks/list", {"cursor": cursor} if cursor else None, timeout
            )
            tasks.extend(TaskState.from_wire(item) for item in raw.get("tasks") or [])
            cursor = raw.get("nextCursor")
            if not cursor:
                break
        return tasks

    async def wait_for_task(
        self,
        task_id: str,
        *,
        timeout: float | None = None,
        poll_interval: float | None = None,
        on_status: StatusCallback | None = None,
    ) -> TaskState:
        """See ``McpClient.wait_for_task``."""
        return await self._wait_for_task(task_id, timeout, poll_interval, on_status, None)

    # waiting ----------------------------------------------------------------------------

    async def _wait_for_task(
        self,
        task_id: str,
        timeout: float | None,
        poll_interval: float | None,
        on_status: StatusCallback | None,
        outcome: _Outcome | None,
    ) -> TaskState:
        deadline = _deadline(timeout)
        default_delay = DEFAULT_TASK_POLL_INTERVAL if poll_interval is None else poll_interval
        outcome = outcome if outcome is not None else _Outcome()
        answered: set[str] = set()
        followed = outcome.payload is not None or outcome.error is not None
        seen: tuple[str, str | None] | None = None
        woken = self._watchers.watch(task_id)
        try:
            while True:
                state = await self.get_task(task_id, timeout=_remaining(deadline, task_id))
                if on_status is not None and (state.status, state.status_message) != seen:
                    seen = (state.status, state.status_message)
                    value = on_status(state)
                    if inspect.isawaitable(value):
                        await value
                if state.terminal:
                    return state
                if state.status == "input_required":
                    if self._state.era is Era.MODERN:
                        if await self._give_input(state, answered, deadline):
                            continue  # answered: see where that got it without waiting
                    elif not followed:
                        followed = True
                        await self._follow_with_result(task_id, deadline, outcome)
                        continue
                woken.clear()
                delay = (
                    state.poll_interval_ms / 1000
                    if state.poll_interval_ms is not None
                    else default_delay
                )
                delay = max(delay, MIN_TASK_POLL_INTERVAL)
                left = _remaining(deadline, task_id)
                try:
                    async with asyncio.timeout(delay if left is None else min(delay, left)):
                        await woken.wait()
                except TimeoutError:
                    pass
        finally:
            self._watchers.unwatch(task_id, woken)

    async def _give_input(
        self, state: TaskState, answered: set[str], deadline: float | None
    ) -> bool:
        """2026-07-28: answer the ``inputRequests`` not answered yet (``tasks/update``);
        True when there were any."""
        fresh = {k: v for k, v in (state.input_requests or {}).items() if k not in answered}
        if not fresh:
            return False
        responses = await self._handlers.answer_inputs("tasks/get", fresh)
        answered.update(fresh)
        await self._task_rpc(
            "tasks/update",
            {"taskId": state.task_id, "inputResponses": responses},
            _remaining(deadline, state.task_id),
        )
        return True

    async def _follow_with_result(
        self, task_id: str, deadline: float | None, outcome: _Outcome
    ) -> None:
        """2025-11-25 ``input_required``: ``tasks/result``, alongside which the server sends
        the requests the client's handlers answer; it answers once the task ends."""
        left = _remaining(deadline, task_id)
        try:
            payload = await self._task_rpc(
                "tasks/result", {"taskId": task_id}, math.inf if left is None else left
            )
        except McpCallError as exc:
            outcome.error = exc  # what the call failed with: result() raises it
            return
        outcome.payload = payload if isinstance(payload, dict) else {}

    async def _final_result(self, state: TaskState, timeout: float | None) -> t.CallToolResult:
        """The tool's result once ``state`` is terminal."""
        if self._state.era is not Era.MODERN:
            raw = await self._task_rpc("tasks/result", {"taskId": state.task_id}, timeout)
            return convert(raw, t.CallToolResult)
        if state.status == "completed":
            return convert(state.result or {"content": []}, t.CallToolResult)
        if state.status == "failed":
            error = state.error or {}
            code = error.get("code")
            raise McpCallError(
                str(error.get("message") or state.status_message or "the task failed"),
                code if isinstance(code, int) else int(ErrorCode.INTERNAL_ERROR),
                error.get("data"),
            )
        raise TaskCancelledError(
            f"task {state.task_id} was cancelled"
            + (f": {state.status_message}" if state.status_message else ""),
            state,
        )
