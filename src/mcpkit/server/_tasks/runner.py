"""Running a task's tool: in a background asyncio task owned by the app, at most
``max_running`` at once, again from the top each time ``tasks/update`` completes its input;
how each run ends goes to ``TaskRecords``. Runs stop at the client's request (cancelled),
on expiry (nothing recorded) and when the server stops (failed).

Does not answer requests (``TaskRequestHandlers``) nor handle a ``@deferred_task`` call
before its task exists (``DeferredTaskCall``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

from mcpkit._exceptions import InternalError, InvalidParamsError, ProtocolError
from mcpkit.protocol._jsonrpc import JsonRpcRequest
from mcpkit.server._engine.binding import CURRENT_BINDING, TransportBinding
from mcpkit.server._engine.session import McpSession
from mcpkit.server._engine.unexpected import internal_error
from mcpkit.server._eras.mrtr import InputRequired, RoundInputs, round_inputs
from mcpkit.server._tasks.records import TaskRecords
from mcpkit.server._tasks.wire import (
    CANCELLED_MESSAGE,
    ExecuteTool,
    TaskSettings,
    discard,
)
from mcpkit.stores._tasks import TaskRecord

logger = logging.getLogger("mcpkit.server.tasks")


def uncancel_current() -> None:
    """Take back the cancellation the current asyncio task just caught."""
    task = asyncio.current_task()
    if task is not None:
        task.uncancel()


def task_binding(record: TaskRecord) -> TransportBinding:
    """A call's binding for a task run: the creating request's capabilities, the answers
    gathered so far, and no channel (tasks send no progress or log notifications)."""
    session = McpSession(None, key=f"task:{record.task_id}")
    session.ephemeral = session.modern = True
    session.initialize_seen = session.initialized = True
    session.protocol_version = record.protocol_version
    session.client_capabilities = record.client_capabilities
    session.client_info = record.client_info
    name = record.params.get("name")
    inputs = RoundInputs(
        record.method,
        name if isinstance(name, str) else None,
        responses=dict(record.responses),
        state=record.state,
        issued=dict(record.issued),
    )
    return TransportBinding(
        session=session,
        send=discard,
        connection_key=f"task:{record.task_id}",
        modern=True,
        round_inputs=inputs,
        task_id=record.task_id,
    )


class TaskSlots:
    """At most ``max_running`` tasks run their tool at once; the others wait here."""

    def __init__(self, max_running: int) -> None:
        self._slots = asyncio.Semaphore(max_running)
        self._running = 0

    @property
    def running(self) -> int:
        """Tasks whose tool is running now."""
        return self._running

    async def acquire(self) -> None:
        """Wait for a free slot and take it."""
        await self._slots.acquire()
        self._running += 1

    def release(self) -> None:
        """Give back a slot taken with ``acquire``."""
        self._running -= 1
        self._slots.release()

    @contextlib.asynccontextmanager
    async def held(self) -> AsyncIterator[None]:
        """A slot for the duration of the block."""
        await self.acquire()
        try:
            yield
        finally:
            self.release()

    def reset(self, max_running: int) -> None:
        """Start afresh with every slot free (a later start may use another loop)."""
        self._slots = asyncio.Semaphore(max_running)
        self._running = 0


class TaskRunner:
    """Runs the tools of tasks in the background and records how each run ends."""

    def __init__(self, settings: TaskSettings, records: TaskRecords) -> None:
        self._settings = settings
        self._records = records
        self.slots = TaskSlots(settings.max_running)
        self._runners: dict[str, asyncio.Task[Any]] = {}
        self._cancelling: set[str] = set()
        self._stopping = False

    def tool_executor(self) -> ExecuteTool:
        """What runs a tool to its ``CallToolResult`` (the method handlers install it)."""
        assert self._settings.execute_tool is not None
        return self._settings.execute_tool

    def track(self, task_id: str, runner: asyncio.Task[Any]) -> None:
        """Know ``runner`` as the one running the task until it is done."""
        self._runners[task_id] = runner

        def forget(done: asyncio.Task[Any]) -> None:
            if self._runners.get(task_id) is done:
                del self._runners[task_id]

        runner.add_done_callback(forget)

    def launch(self, task_id: str) -> None:
        """Run (or run again) a task's tool in the background."""
        previous = self._runners.get(task_id)
        runner = asyncio.get_running_loop().create_task(
            self._run(task_id, previous), name=f"mcp-task-{task_id}"
        )
        self.track(task_id, runner)

    async def _run(self, task_id: str, previous: asyncio.Task[Any] | None) -> None:
        try:
            if previous is not None and not previous.done():
                await asyncio.wait({previous})  # the run that parked the task is still wrapping up
            async with self.slots.held():
                await self._run_once(task_id)
        except asyncio.CancelledError:
            uncancel_current()
            await self.on_cancelled(task_id)
        except Exception:  # the store failed while recording the outcome
            logger.exception("task %s: could not record its outcome", task_id)

    async def _run_once(self, task_id: str) -> None:
        record = await self._records.get(task_id)
        if record is None or record.terminal or record.status != "working":
            return
        if record.cancel_requested:
            await self._records.settle(task_id, "cancelled", message=CANCELLED_MESSAGE)
            return
        binding = task_binding(record)
        # The identity of the request that launched this run (the context was copied then).
        launching = CURRENT_BINDING.get()
        binding.auth = launching.auth if launching is not None else None
        CURRENT_BINDING.set(binding)
        execute_tool = self.tool_executor()
        try:
            name = record.params.get("name")
            entry = self._settings.app.catalog.get_tool(name) if isinstance(name, str) else None
            if entry is None:
                raise InvalidParamsError(f"Unknown tool: {name}", {"name": name})
            arguments = record.params.get("arguments") or {}
            kwargs = (
                entry.signature.validate(arguments)
                if entry.signature is not None
                else dict(arguments)
            )
            request = JsonRpcRequest(f"task:{task_id}", record.method, dict(record.params))
            result = await execute_tool(entry, kwargs, request, binding)
        except Exception as exc:
            await self.conclude(task_id, binding, exc)
        else:
            await self._records.settle(task_id, "completed", result=result)

    async def conclude(self, task_id: str, binding: TransportBinding, exc: Exception) -> None:
        """Record how a run that raised ended."""
        if isinstance(exc, InputRequired):
            await self._records.park(task_id, round_inputs(binding), exc.requests)
        elif isinstance(exc, ProtocolError):
            await self._records.settle(task_id, "failed", error=exc.to_error(), message=exc.message)
        else:
            error = internal_error(
                exc,
                f"task {task_id}",
                expose=self._settings.app.engine.dispatcher.expose_internal_errors,
                logger=logger,
            )
            await self._records.settle(
                task_id, "failed", error=error.to_error(), message=error.message
            )

    async def on_cancelled(self, task_id: str) -> None:
        """Record a run that was cancelled: at the client's request, or by ``stop``."""
        if task_id in self._cancelling:
            self._cancelling.discard(task_id)
            await self._records.settle(task_id, "cancelled", message=CANCELLED_MESSAGE)
        elif self._stopping:
            error = InternalError("The server stopped before the task finished")
            await self._records.settle(
                task_id, "failed", error=error.to_error(), message=error.message
            )
        # else: the task expired and was deleted; nothing to record

    def active(self, task_id: str) -> asyncio.Task[Any] | None:
        """The run of the task in this process, when one is still going."""
        runner = self._runners.get(task_id)
        return runner if runner is not None and not runner.done() else None

    def cancel(self, task_id: str, runner: asyncio.Task[Any]) -> None:
        """Cancel the task's run (``active``) at the client's request."""
        self._cancelling.add(task_id)
        runner.cancel()

    def expire(self, task_id: str) -> None:
        """Stop the run of a task that expired; nothing is recorded for it."""
        runner = self._runners.get(task_id)
        if runner is not None:
            runner.cancel()

    async def stop(self) -> None:
        """Stop every run on this loop (each task ends ``failed``) and wait for them."""
        self._stopping = True
        try:
            loop = asyncio.get_running_loop()
            runners = [r for r in self._runners.values() if r.get_loop() is loop and not r.done()]
            for runner in runners:
                runner.cancel()
            if runners:
                await asyncio.gather(*runners, return_exceptions=True)
        finally:
            self._stopping = False
            self._runners.clear()
            self._cancelling.clear()
            self.slots.reset(self._settings.max_running)
