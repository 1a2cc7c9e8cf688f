"""A ``@deferred_task`` call: an ordinary call (multi round-trip input included) until the
tool calls ``await start_task(ctx)``; from then on the client has its ``CreateTaskResult``
and the rest of the tool runs as the task.

Made per call. Later runs of the task (after ``tasks/update``) are ``TaskRunner``'s.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from mcpkit.protocol._jsonrpc import JsonRpcRequest
from mcpkit.server._engine.binding import TransportBinding
from mcpkit.server._tasks.records import TaskRecords
from mcpkit.server._tasks.runner import TaskRunner, uncancel_current
from mcpkit.server._tasks.wire import create_task_result, discard

logger = logging.getLogger("mcpkit.server.tasks")


class DeferredTaskCall:
    """One ``tools/call`` of a ``@deferred_task`` tool, from its request to its end."""

    def __init__(
        self,
        runner: TaskRunner,
        records: TaskRecords,
        entry: Any,
        kwargs: dict[str, Any],
        request: JsonRpcRequest,
        binding: TransportBinding,
    ) -> None:
        self._runner = runner
        self._records = records
        self._entry = entry
        self._kwargs = kwargs
        self._request = request
        self._binding = binding
        self._handoff: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._task_id: str | None = None  # set once the task exists

    async def run(self) -> dict[str, Any]:
        """The call's answer: the ``CreateTaskResult`` once the task exists, else the
        tool's own result."""
        self._binding.task_start = self._start
        child: asyncio.Task[dict[str, Any]]
        child = asyncio.create_task(self._drive())
        try:
            await asyncio.wait({child, self._handoff}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            if not self._handoff.done():
                child.cancel()
            raise
        if self._handoff.done():
            return self._handoff.result()
        return child.result()

    async def _start(self) -> None:
        """``start_task``: create the task and hand the client its ``CreateTaskResult``."""
        binding = self._binding
        if self._task_id is not None or binding.task_start is None:
            return
        binding.task_start = None
        await self._runner.slots.acquire()
        try:
            record = self._records.new(self._request, binding)
            await self._records.create(record)
        except BaseException:
            self._runner.slots.release()
            raise
        self._task_id = record.task_id
        # From here on the call belongs to the task, not to the request.
        binding.send = discard
        binding.close_stream = None
        binding.task_id = record.task_id
        me = asyncio.current_task()
        if me is not None:
            self._runner.track(record.task_id, me)
        self._handoff.set_result(create_task_result(record))

    async def _drive(self) -> Any:
        """Run the tool; once the task exists, record how it ended."""
        execute_tool = self._runner.tool_executor()
        result: Any = None
        outcome: BaseException | None = None
        try:
            result = await execute_tool(self._entry, self._kwargs, self._request, self._binding)
        except BaseException as exc:
            if self._task_id is None:
                raise
            outcome = exc
        if self._task_id is None:
            return result
        self._runner.slots.release()
        task_id = self._task_id
        try:
            if outcome is None:
                await self._records.settle(task_id, "completed", result=result)
            elif isinstance(outcome, asyncio.CancelledError):
                uncancel_current()
                await self._runner.on_cancelled(task_id)
            elif isinstance(outcome, Exception):
                await self._runner.conclude(task_id, self._binding, outcome)
            else:
                raise outcome
        except asyncio.CancelledError:
            uncancel_current()
            await self._runner.on_cancelled(task_id)
        except Exception:  # the store failed while recording the outcome
            logger.exception("task %s: could not record its outcome", task_id)
        return None
