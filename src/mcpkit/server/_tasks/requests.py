"""The tasks extension's requests: a task-eligible ``tools/call`` (answered with a
``CreateTaskResult``), ``tasks/get``, ``tasks/update`` and ``tasks/cancel``.

Checks and answers each request; the records, the runs and the watchers do the work.
"""

from __future__ import annotations

import time
from typing import Any

from mcpkit._exceptions import InvalidParamsError, MethodNotFoundError
from mcpkit.protocol._jsonrpc import JsonRpcRequest
from mcpkit.server._engine.binding import TransportBinding
from mcpkit.server._eras.mrtr import valid_response
from mcpkit.server._tasks.deferred import DeferredTaskCall
from mcpkit.server._tasks.records import TaskRecords, mark_cancelled
from mcpkit.server._tasks.runner import TaskRunner
from mcpkit.server._tasks.watchers import TaskWatchers
from mcpkit.server._tasks.wire import (
    DEFERRED_ATTR,
    TASKS_EXTENSION,
    MissingTasksExtensionError,
    create_task_result,
    declares_tasks,
    detailed_task,
)
from mcpkit.stores._tasks import TaskRecord


class TaskRequestHandlers:
    """Answers the requests of the tasks extension; one per ``TaskManager``."""

    def __init__(self, records: TaskRecords, runner: TaskRunner, watchers: TaskWatchers) -> None:
        self._records = records
        self._runner = runner
        self._watchers = watchers

    @staticmethod
    def mode_for(entry: Any, binding: TransportBinding) -> str | None:
        """How this call runs: None (synchronously), ``"task"`` (a task from the start) or
        ``"deferred"`` (the tool starts its task itself). Raises -32021 for a tool that
        runs only as a task when the client did not declare the extension."""
        support = getattr(entry, "task_support", None)
        if support not in ("optional", "required") or not binding.modern:
            return None
        if binding.task_id is not None:
            return None
        if not declares_tasks(binding):
            if support == "required":
                raise MissingTasksExtensionError(
                    f"Tool '{entry.name}' runs only as a task: the client must declare the {TASKS_EXTENSION} extension"
                )
            return None
        return "deferred" if getattr(entry.fn, DEFERRED_ATTR, False) else "task"

    async def call_tool(
        self,
        mode: str,
        entry: Any,
        kwargs: dict[str, Any],
        request: JsonRpcRequest,
        binding: TransportBinding,
    ) -> dict[str, Any]:
        """Answer a task-eligible ``tools/call`` (see ``mode_for``)."""
        if mode == "deferred":
            call = DeferredTaskCall(self._runner, self._records, entry, kwargs, request, binding)
            return await call.run()
        record = self._records.new(request, binding)
        await self._records.create(record)
        self._runner.launch(record.task_id)
        return create_task_result(record)

    @staticmethod
    def _admit(request: JsonRpcRequest, binding: TransportBinding) -> str:
        """The task id of a tasks/* request from a client that declared the extension."""
        if not binding.modern:
            raise MethodNotFoundError(f"Method not found: {request.method}")
        if not declares_tasks(binding):
            raise MissingTasksExtensionError()
        task_id = (request.params or {}).get("taskId")
        if not isinstance(task_id, str) or not task_id:
            raise InvalidParamsError('"taskId" must be a non-empty string', {"param": "taskId"})
        return task_id

    async def get_task(self, request: JsonRpcRequest, binding: TransportBinding) -> dict[str, Any]:
        """``tasks/get``: the task's ``DetailedTask``."""
        task_id = self._admit(request, binding)
        return detailed_task(await self._records.visible(task_id, binding))

    async def update_task(
        self, request: JsonRpcRequest, binding: TransportBinding
    ) -> dict[str, Any]:
        """``tasks/update``: take the answers to the task's open input requests; when
        none is left open, run the tool again."""
        task_id = self._admit(request, binding)
        responses = (request.params or {}).get("inputResponses")
        if not isinstance(responses, dict):
            raise InvalidParamsError(
                '"inputResponses" must be an object', {"param": "inputResponses"}
            )
        changed = resume = False
        async with self._records.locked(task_id):
            record = await self._records.visible(task_id, binding)
            if record.status == "input_required":
                for key, value in responses.items():
                    wanted = record.input_requests.get(key)
                    # Unknown, answered or malformed answers are ignored (the key stays open).
                    if wanted is None or not valid_response(wanted.get("method", ""), value):
                        continue
                    record.responses[key] = value
                    del record.input_requests[key]
                    changed = True
                if changed:
                    if not record.input_requests:
                        record.status, record.status_message = "working", None
                        self._records.claim(record)  # this process runs it again
                        resume = True
                    record.last_updated_at = time.time()
                    await self._records.save(record)
        if changed:
            await self._watchers.notify(record)
        if resume:
            self._runner.launch(task_id)
        return {}

    async def cancel_task(
        self, request: JsonRpcRequest, binding: TransportBinding
    ) -> dict[str, Any]:
        """``tasks/cancel``: stop the task's run, or cancel it now when nothing here runs
        it. Idempotent."""
        task_id = self._admit(request, binding)
        settled: TaskRecord | None = None
        async with self._records.locked(task_id):
            record = await self._records.visible(task_id, binding)
            if record.terminal:
                return {}  # idempotent
            record.cancel_requested = True
            runner = self._runner.active(task_id)
            if runner is not None:
                await self._records.save(record)
                self._runner.cancel(task_id, runner)
            else:  # parked, or nobody here runs it: cancelled now
                mark_cancelled(record)
                record.last_updated_at = time.time()
                await self._records.save(record)
                settled = record
        if settled is not None:
            await self._watchers.notify(settled)
        return {}
