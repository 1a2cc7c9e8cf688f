"""The task records in the ``TaskStore``: making one for a call, storing it, who may see
it, this process's lock per task, and the changes a run makes (settled, parked, moved
between ``working`` and ``input_required``).

A record names the runner (the store's ``runner_id``) whose process runs it, from its
creation (or its resumption by ``tasks/update``) until it is final or parked for input, so
the store can fail it should this process die.

Every change made here reaches the task's watchers. Running tools is ``TaskRunner``'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

from mcpkit._exceptions import InternalError, InvalidParamsError
from mcpkit.protocol._jsonrpc import JsonRpcRequest
from mcpkit.server._engine.binding import TransportBinding
from mcpkit.server._eras.mrtr import RoundInputs, round_inputs
from mcpkit.server._tasks.expiry import TaskExpiry
from mcpkit.server._tasks.watchers import TaskWatchers
from mcpkit.server._tasks.wire import CANCELLED_MESSAGE, TaskSettings
from mcpkit.server._tasks.wire_2025 import is_handshake_record
from mcpkit.stores._tasks import TaskRecord, TaskStoreFullError


def mark_cancelled(record: TaskRecord) -> None:
    """Make a record ``cancelled`` at the client's request, dropping its pending input."""
    record.status, record.status_message = "cancelled", CANCELLED_MESSAGE
    record.input_requests, record.responses, record.state = {}, {}, None
    record.runner_id = None


class TaskRecords:
    """Reads and writes the records of the tasks; one per ``TaskManager``."""

    def __init__(self, settings: TaskSettings, watchers: TaskWatchers, expiry: TaskExpiry) -> None:
        self._settings = settings
        self._watchers = watchers
        self._expiry = expiry
        self._locks: dict[str, list[Any]] = {}  # task id -> [lock, users]

    def new(self, request: JsonRpcRequest, binding: TransportBinding) -> TaskRecord:
        """A ``working`` record for this ``tools/call``, with the answers it gathered."""
        params = request.params or {}
        session = binding.session
        now = time.time()
        record = TaskRecord(
            task_id=str(uuid.uuid4()),
            status="working",
            created_at=now,
            last_updated_at=now,
            ttl_ms=self._settings.ttl_ms,
            poll_interval_ms=self._settings.poll_interval_ms,
            method=request.method,
            params={"name": params.get("name"), "arguments": params.get("arguments") or {}},
            protocol_version=session.protocol_version if session is not None else None,
            client_capabilities=dict(binding.client_capabilities or {}),
            client_info=session.client_info if session is not None else None,
            owner=self._settings.principal(binding),
            runner_id=self._settings.store.runner_id,  # this process runs it
        )
        inputs = round_inputs(binding)
        if isinstance(inputs, RoundInputs):
            record.responses = dict(inputs.responses)
            record.issued = dict(inputs.issued)
            record.state = inputs.state
        return record

    async def create(self, record: TaskRecord) -> None:
        """Store a new record. Raises ``InternalError`` when the store is full."""
        try:
            await self._settings.store.create(record)
        except TaskStoreFullError:
            raise InternalError("Server busy: too many tasks; try again later") from None
        self._expiry.ensure_sweeping()

    async def get(self, task_id: str) -> TaskRecord | None:
        """The stored record, whoever owns it; None when there is none."""
        return await self._settings.store.get(task_id)

    def claim(self, record: TaskRecord) -> None:
        """Name this process as the one that runs the task (then ``save`` it)."""
        record.runner_id = self._settings.store.runner_id

    async def save(self, record: TaskRecord) -> None:
        """Write back a record changed under ``locked``."""
        await self._settings.store.update(record)

    @contextlib.asynccontextmanager
    async def locked(self, task_id: str) -> AsyncIterator[None]:
        """Serializes this process's read-modify-write cycles on one task."""
        slot = self._locks.get(task_id)
        if slot is None:
            slot = self._locks[task_id] = [asyncio.Lock(), 0]
        slot[1] += 1
        try:
            async with slot[0]:
                yield
        finally:
            slot[1] -= 1
            if slot[1] == 0 and self._locks.get(task_id) is slot:
                del self._locks[task_id]

    async def lookup(self, task_id: str, binding: TransportBinding) -> TaskRecord | None:
        """The SEP-2663 task when it exists and this request's principal may see it (a
        2025-11-25 task is not one: its owner and its shapes are another's)."""
        record = await self._settings.store.get(task_id)
        if record is None or is_handshake_record(record):
            return None
        if record.owner is not None and record.owner != self._settings.principal(binding):
            return None
        return record

    async def visible(self, task_id: str, binding: TransportBinding) -> TaskRecord:
        """``lookup``, raising ``InvalidParamsError`` when the task is not there to see."""
        record = await self.lookup(task_id, binding)
        if record is None:
            raise InvalidParamsError(
                "Failed to retrieve task: Task not found or expired", {"taskId": task_id}
            )
        return record

    async def settle(
        self,
        task_id: str,
        status: str,
        *,
        result: dict[str, Any] | None = None,
        error: dict[str, Any] | None = None,
        message: str | None = None,
    ) -> None:
        """Move a task to a final status (never out of one)."""
        async with self.locked(task_id):
            record = await self._settings.store.get(task_id)
            if record is None or record.terminal:
                return
            if record.cancel_requested and status != "cancelled":
                status, result, error, message = "cancelled", None, None, CANCELLED_MESSAGE
            record.status = status
            # (2025-11-25: a tool's isError result ends its task failed, the result kept)
            record.result = result if status != "cancelled" else None
            record.error = error if status == "failed" else None
            record.status_message = message
            record.input_requests = {}
            record.responses, record.state = {}, None  # the answers are not needed any more
            record.runner_id = None
            record.last_updated_at = time.time()
            await self._settings.store.update(record)
        await self._watchers.notify(record)

    async def move(self, task_id: str, status: str, message: str | None) -> None:
        """Between ``working`` and ``input_required`` (2025-11-25: the run itself waits for
        its input); never out of a final status."""
        async with self.locked(task_id):
            record = await self._settings.store.get(task_id)
            if record is None or record.terminal or record.status == status:
                return
            record.status, record.status_message = status, message
            record.last_updated_at = time.time()
            await self._settings.store.update(record)
        await self._watchers.notify(record)

    async def park(self, task_id: str, inputs: Any, requests: dict[str, dict[str, Any]]) -> None:
        """The run needs input: keep what it gathered, wait for ``tasks/update``."""
        async with self.locked(task_id):
            record = await self._settings.store.get(task_id)
            if record is None or record.terminal:
                return
            if record.cancel_requested:
                mark_cancelled(record)
            else:
                if isinstance(inputs, RoundInputs):
                    record.responses = dict(inputs.responses)
                    record.issued.update(inputs.issued)
                    record.state = inputs.state
                for key, wanted in requests.items():
                    record.issued[key] = wanted.get("method", "")
                record.input_requests = dict(requests)
                record.status = "input_required"
                record.status_message = "Waiting for input from the client"
                # No process runs it now: whichever takes the tasks/update runs it again.
                record.runner_id = None
            record.last_updated_at = time.time()
            await self._settings.store.update(record)
        await self._watchers.notify(record)
