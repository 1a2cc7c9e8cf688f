"""The 2025-11-25 tasks utility (handshake era, experimental): a task-augmented
``tools/call`` (``params.task``, answered with ``CreateTaskResult`` ``{task}``), ``tasks/get``,
``tasks/result``, ``tasks/list`` and ``tasks/cancel``, and ``notifications/tasks/status``
to the creating session.

The runs, the records, the TTL sweep, the store and the ``max_running`` bound are the
``TaskManager``'s, shared with the SEP-2663 flavour. What differs: a run goes once, on this
process, with the creating session at hand (its input requests travel on ``tasks/result``,
see ``inputs_2025.py``); a tool's ``isError`` result ends the task ``failed``; a task
belongs to the authenticated client, else to its session.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from typing import Any

from mcpkit._exceptions import InvalidParamsError, InvalidRequestError, MethodNotFoundError
from mcpkit.protocol._jsonrpc import JsonRpcRequest
from mcpkit.server._engine.binding import CURRENT_BINDING, TransportBinding
from mcpkit.server._tasks.inputs_2025 import TaskInputs, run_binding
from mcpkit.server._tasks.records import TaskRecords, mark_cancelled
from mcpkit.server._tasks.runner import TaskRunner, uncancel_current
from mcpkit.server._tasks.watchers import TaskWatchers
from mcpkit.server._tasks.wire import TaskSettings
from mcpkit.server._tasks.wire_2025 import (
    DEFAULT_TASK_LIST_PAGE_SIZE,
    HANDSHAKE_MODE,
    decode_list_cursor,
    encode_list_cursor,
    failure_message,
    has_tasks,
    is_handshake_record,
    owner_of,
    requested_ttl,
    task_2025,
    task_payload,
)
from mcpkit.stores._tasks import TaskRecord

logger = logging.getLogger("mcpkit.server.tasks")

#: Seconds between two store reads of a ``tasks/result`` waiting for a task that another
#: process may be running (a status change here wakes it at once).
RESULT_RECHECK_INTERVAL = 1.0

_TASK_SUPPORTING = ("optional", "required")


class HandshakeTaskRequests:
    """Answers the 2025-11-25 task requests; one per ``TaskManager``."""

    def __init__(
        self,
        settings: TaskSettings,
        records: TaskRecords,
        runner: TaskRunner,
        watchers: TaskWatchers,
    ) -> None:
        self._settings = settings
        self._records = records
        self._runner = runner
        self._watchers = watchers
        self.inputs = TaskInputs(records)
        #: Tasks per ``tasks/list`` page.
        self.page_size = DEFAULT_TASK_LIST_PAGE_SIZE
        self._offered = False
        self._offered_for: object = None

    def offered(self) -> bool:
        """Whether the app declares the ``tasks`` capability: it has a tool that may run as
        a task. (Without one, ``params.task`` is ignored, as the spec says of a receiver
        that declares nothing.)"""
        catalog = self._settings.app.catalog
        # Asked at every initialize: worked out again only when the tools changed (the
        # catalog then makes a new wire list).
        tools = catalog.tool_wire_list()
        if tools is not self._offered_for:
            self._offered = any(
                entry.task_support in _TASK_SUPPORTING for entry in catalog.list_tools()
            )
            self._offered_for = tools
        return self._offered

    # tools/call ---------------------------------------------------------------------------

    def mode_for(
        self, entry: Any, binding: TransportBinding, request: JsonRpcRequest
    ) -> str | None:
        """``HANDSHAKE_MODE`` for a task-augmented call of a tool that may run as a task,
        None for a plain call; -32601 (the spec's tool-level rules) for a plain call of a
        ``required`` tool and for a task-augmented one of a tool that forbids tasks."""
        if not has_tasks(binding) or binding.task_id is not None:
            return None  # older versions have no tasks: every call is a plain one
        wants = (request.params or {}).get("task") is not None
        if getattr(entry, "task_support", None) in _TASK_SUPPORTING:
            if wants:
                return HANDSHAKE_MODE
            if entry.task_support == "required":
                raise MethodNotFoundError(
                    f"Task augmentation required for tools/call requests: tool '{entry.name}' "
                    "runs only as a task (execution.taskSupport is 'required')",
                    {"name": entry.name},
                )
            return None
        if wants and self.offered():
            raise MethodNotFoundError(
                f"Tool '{entry.name}' does not run as a task (execution.taskSupport is "
                "'forbidden'): call it without params.task",
                {"name": entry.name},
            )
        return None

    async def call_tool(
        self, entry: Any, kwargs: dict[str, Any], request: JsonRpcRequest, binding: TransportBinding
    ) -> dict[str, Any]:
        """Store the task, start its run, answer ``CreateTaskResult``."""
        params = request.params or {}
        record = self._records.new(request, binding)
        record.ttl_ms = requested_ttl(params, self._settings.ttl_ms)
        record.owner = owner_of(self._settings.principal, binding)
        record.listed = True
        await self._records.create(record)
        task_id = record.task_id
        self._watch_status(task_id, binding)
        # The call as the client made it, less ``task``: its _meta (progressToken) holds.
        call = JsonRpcRequest(
            f"task:{task_id}",
            request.method,
            {key: value for key, value in params.items() if key != "task"},
        )
        run = run_binding(binding, task_id, self.inputs)
        runner = asyncio.get_running_loop().create_task(
            self._run(task_id, entry, kwargs, call, run), name=f"mcp-task-{task_id}"
        )
        self._runner.track(task_id, runner)
        return {"task": task_2025(record)}

    async def _run(
        self,
        task_id: str,
        entry: Any,
        kwargs: dict[str, Any],
        request: JsonRpcRequest,
        binding: TransportBinding,
    ) -> None:
        try:
            async with self._runner.slots.held():
                CURRENT_BINDING.set(binding)
                try:
                    result = await self._runner.tool_executor()(entry, kwargs, request, binding)
                except Exception as exc:
                    await self._runner.conclude(task_id, binding, exc)
                else:
                    if result.get("isError"):
                        message = failure_message(result)
                        await self._records.settle(
                            task_id, "failed", result=result, message=message
                        )
                    else:
                        await self._records.settle(task_id, "completed", result=result)
        except asyncio.CancelledError:
            uncancel_current()
            await self._runner.on_cancelled(task_id)
        except Exception:  # the store failed while recording the outcome
            logger.exception("task %s: could not record its outcome", task_id)

    def _watch_status(self, task_id: str, binding: TransportBinding) -> None:
        """``notifications/tasks/status`` to the creating session at each status change
        (the spec makes them optional: a session-less call gets none)."""
        session = binding.session
        if session is None or session.ephemeral or session.send is None:
            return
        key = f"status:{task_id}"

        async def deliver(task: dict[str, Any]) -> None:
            if task["status"] in ("completed", "failed", "cancelled") or session.closed:
                self._watchers.unwatch(key, [task_id])
            if not session.closed and session.send is not None:
                await session.send(
                    {"jsonrpc": "2.0", "method": "notifications/tasks/status", "params": task}
                )

        self._watchers.watch(task_id, key, deliver, task_2025)

    # tasks/* ------------------------------------------------------------------------------

    @staticmethod
    def _admit(request: JsonRpcRequest, binding: TransportBinding) -> str:
        """The task id of a tasks/* request, from a session whose version has tasks."""
        if not has_tasks(binding):
            raise MethodNotFoundError(f"Method not found: {request.method}")
        task_id = (request.params or {}).get("taskId")
        if not isinstance(task_id, str) or not task_id:
            raise InvalidParamsError('"taskId" must be a non-empty string', {"param": "taskId"})
        return task_id

    async def _visible(self, task_id: str, binding: TransportBinding) -> TaskRecord:
        """The task, when this requestor may see it; -32602 otherwise (unknown, expired or
        another's: the three are told apart to nobody)."""
        record = await self._records.get(task_id)
        if (
            record is None
            or not is_handshake_record(record)
            or record.owner != owner_of(self._settings.principal, binding)
        ):
            raise InvalidParamsError(
                "Failed to retrieve task: Task not found or expired", {"taskId": task_id}
            )
        return record

    async def get_task(self, request: JsonRpcRequest, binding: TransportBinding) -> dict[str, Any]:
        """``tasks/get``: the ``Task``."""
        return task_2025(await self._visible(self._admit(request, binding), binding))

    async def task_result(
        self, request: JsonRpcRequest, binding: TransportBinding
    ) -> dict[str, Any]:
        """``tasks/result``: held until the task ends (carrying its input requests
        meanwhile), then what the call would have answered."""
        task_id = self._admit(request, binding)
        record = await self._visible(task_id, binding)
        if not record.terminal:
            record = await self._until_final(task_id, binding)
        return task_payload(record)

    async def _until_final(self, task_id: str, binding: TransportBinding) -> TaskRecord:
        changed = asyncio.Event()
        key = f"result:{uuid.uuid4().hex}"

        async def wake(_: dict[str, Any]) -> None:
            changed.set()

        self._watchers.watch(task_id, key, wake)
        try:
            with self.inputs.carrying(task_id, binding):
                while True:
                    changed.clear()
                    record = await self._visible(task_id, binding)  # gone: expired meanwhile
                    if record.terminal:
                        return record
                    with contextlib.suppress(TimeoutError):
                        async with asyncio.timeout(RESULT_RECHECK_INTERVAL):
                            await changed.wait()
        finally:
            self._watchers.unwatch(key, [task_id])

    async def list_tasks(
        self, request: JsonRpcRequest, binding: TransportBinding
    ) -> dict[str, Any]:
        """``tasks/list``: the requestor's tasks, oldest first, ``page_size`` per page."""
        if not has_tasks(binding):
            raise MethodNotFoundError(f"Method not found: {request.method}")
        owner = owner_of(self._settings.principal, binding)
        if owner is None:
            # Listing for nobody in particular would show everybody's tasks.
            raise InvalidRequestError(
                "tasks/list needs a session or an authenticated client: the tasks of "
                "anonymous stateless requests are not listed"
            )
        after = decode_list_cursor((request.params or {}).get("cursor"))
        page = await self._settings.store.list_owned(owner, after=after, limit=self.page_size + 1)
        result: dict[str, Any] = {"tasks": [task_2025(r) for r in page[: self.page_size]]}
        if len(page) > self.page_size:
            result["nextCursor"] = encode_list_cursor(page[self.page_size - 1].position)
        return result

    async def cancel_task(
        self, request: JsonRpcRequest, binding: TransportBinding
    ) -> dict[str, Any]:
        """``tasks/cancel``: the task is ``cancelled`` before the answer (its run, when
        this process has it, is stopped); -32602 for a task already in a final status."""
        task_id = self._admit(request, binding)
        async with self._records.locked(task_id):
            record = await self._visible(task_id, binding)
            if record.terminal:
                raise InvalidParamsError(
                    f"Cannot cancel task: already in terminal status '{record.status}'",
                    {"taskId": task_id, "status": record.status},
                )
            record.cancel_requested = True
            mark_cancelled(record)
            record.last_updated_at = time.time()
            await self._records.save(record)
            runner = self._runner.active(task_id)
            if runner is not None:
                self._runner.cancel(task_id, runner)
        await self._watchers.notify(record)
        return task_2025(record)
