"""How a 2025-11-25 task's tool talks to its client while it runs in the background: its
notifications go to the session's own channel, and its requests (``ctx.elicit``,
``ctx.sample``, ``ctx.list_roots``) wait, the task ``input_required``, for a ``tasks/result``
request of the task to carry them, as the spec's "input required" flow has it. Both carry
``_meta["io.modelcontextprotocol/related-task"]``.

An input request fails (``TaskInputError``, the tool's to catch, else its ``isError``
result) rather than wait forever: when no ``tasks/result`` comes to carry it, or the client
does not answer it, within the request's timeout; at once for a session-less (stateless)
call, which has nowhere to be answered.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterator
from typing import Any

from mcpkit._codes import ErrorCode
from mcpkit._exceptions import McpCallError, RequestTimeoutError
from mcpkit.server._engine.binding import TransportBinding
from mcpkit.server._engine.session import DEFAULT_CLIENT_REQUEST_TIMEOUT, McpSession
from mcpkit.server._tasks.records import TaskRecords
from mcpkit.server._tasks.wire_2025 import INPUT_REQUIRED_MESSAGE, with_related_meta

logger = logging.getLogger("mcpkit.server.tasks")


class TaskInputError(McpCallError):
    """A 2025-11-25 task's request to its client could not be made or was not answered."""

    def __init__(self, message: str) -> None:
        super().__init__(message, ErrorCode.INTERNAL_ERROR)


class _Carriers:
    """The ``tasks/result`` requests of one task open now, and who waits for one."""

    __slots__ = ("bindings", "ready", "waiters")

    def __init__(self) -> None:
        self.bindings: list[TransportBinding] = []
        self.ready = asyncio.Event()
        self.waiters = 0


class TaskInputs:
    """The input requests of this process's 2025-11-25 task runs, and the ``tasks/result``
    requests that carry them; one per ``TaskManager``."""

    def __init__(self, records: TaskRecords) -> None:
        self._records = records
        self._carriers: dict[str, _Carriers] = {}
        self._asking: dict[str, int] = {}  # task id -> input requests outstanding

    # the tasks/result side ----------------------------------------------------------------

    @contextlib.contextmanager
    def carrying(self, task_id: str, binding: TransportBinding) -> Iterator[None]:
        """While the block runs, ``binding`` (a ``tasks/result`` request of the task) may
        carry the task's input requests to the client."""
        slot = self._carriers.get(task_id)
        if slot is None:
            slot = self._carriers[task_id] = _Carriers()
        slot.bindings.append(binding)
        slot.ready.set()
        try:
            yield
        finally:
            slot.bindings.remove(binding)
            if not slot.bindings:
                slot.ready.clear()
                self._forget(task_id, slot)

    def _forget(self, task_id: str, slot: _Carriers) -> None:
        if not slot.bindings and not slot.waiters and self._carriers.get(task_id) is slot:
            del self._carriers[task_id]

    async def _carrier(self, task_id: str) -> TransportBinding:
        """The latest ``tasks/result`` request of the task, once there is one."""
        slot = self._carriers.get(task_id)
        if slot is None:
            slot = self._carriers[task_id] = _Carriers()
        slot.waiters += 1
        try:
            while not slot.bindings:
                await slot.ready.wait()
            return slot.bindings[-1]
        finally:
            slot.waiters -= 1
            self._forget(task_id, slot)

    # the run's side -----------------------------------------------------------------------

    async def ask(
        self,
        task_id: str,
        session: McpSession | None,
        method: str,
        params: dict[str, Any] | None,
        timeout: float | None,
    ) -> Any:
        """Send ``method`` to the client on a ``tasks/result`` of the task and wait for its
        answer, the task ``input_required`` meanwhile."""
        if session is None or session.ephemeral:
            raise TaskInputError(
                f"{method} from a task needs a session: a stateless request's task cannot ask "
                "its client for input"
            )
        budget = timeout if timeout is not None else session.client_request_timeout
        budget = budget if budget is not None else DEFAULT_CLIENT_REQUEST_TIMEOUT
        loop = asyncio.get_running_loop()
        deadline = loop.time() + budget
        await self._asking_more(task_id)
        try:
            try:
                async with asyncio.timeout(budget):
                    carrier = await self._carrier(task_id)
            except TimeoutError:
                raise TaskInputError(
                    f"task {task_id} needed {method}, but no tasks/result request came to "
                    f"carry it within {budget:g} s"
                ) from None
            channel = carrier.session if carrier.session is not None else session
            try:
                return await channel.request(
                    method,
                    with_related_meta(params, task_id),
                    send=carrier.send,
                    timeout=max(deadline - loop.time(), 0.001),
                )
            except RequestTimeoutError:
                raise TaskInputError(
                    f"the client did not answer {method} for task {task_id} within {budget:g} s"
                ) from None
        finally:
            await self._asking_less(task_id)

    async def _asking_more(self, task_id: str) -> None:
        count = self._asking.get(task_id, 0)
        self._asking[task_id] = count + 1
        if count == 0:
            await self._records.move(task_id, "input_required", INPUT_REQUIRED_MESSAGE)

    async def _asking_less(self, task_id: str) -> None:
        count = self._asking.pop(task_id, 1) - 1
        if count > 0:
            self._asking[task_id] = count
            return
        try:
            await self._records.move(task_id, "working", None)
        except Exception:  # the store failed: the run goes on, its end is recorded
            logger.warning("task %s: could not record it working again", task_id, exc_info=True)


class TaskRunBinding(TransportBinding):
    """The binding a 2025-11-25 task's tool runs with: the creating request's session and
    identity, notifications to the session's own channel, requests through ``TaskInputs``."""

    inputs: TaskInputs | None = None

    async def client_rpc(
        self, method: str, params: dict[str, Any] | None = None, *, timeout: float | None = None
    ) -> Any:
        assert self.inputs is not None and self.task_id is not None
        return await self.inputs.ask(self.task_id, self.session, method, params, timeout)


def run_binding(binding: TransportBinding, task_id: str, inputs: TaskInputs) -> TaskRunBinding:
    """The binding of the run of a task created by the request of ``binding``."""
    session = binding.session

    async def send(message: dict[str, Any]) -> None:
        # The creating request's answer is gone: the session's own channel (the GET stream,
        # the pipe). A task outlives its client: what cannot be sent is dropped.
        if session is None or session.send is None or session.closed:
            return
        if "id" not in message:
            message = {**message, "params": with_related_meta(message.get("params"), task_id)}
        try:
            await session.send(message)
        except Exception:
            logger.debug("task %s: a notification could not be sent", task_id, exc_info=True)

    return TaskRunBinding(
        session=session,
        send=send,
        headers=binding.headers,
        execution_context=binding.execution_context,
        connection_key=f"task:{task_id}",
        auth=binding.auth,
        task_id=task_id,
        inputs=inputs,
    )
