"""Tasks (the ``io.modelcontextprotocol/tasks`` extension, SEP-2663) kept behind a small
interface, so a task and its result can outlive the request, the connection and, with a
durable backend, the process that created them.

A ``TaskRecord`` holds what ``tasks/get`` shows (status, timestamps, result or error,
outstanding input requests) and what the server needs to run the call again (the tool's
name and arguments, the client's capabilities, the answers and state gathered so far).
Stores hand out copies: change a record, then ``update`` it.

Backends: ``InMemoryTaskStore`` (bounded, in this process; here), ``SqliteTaskStore`` (one
SQLite file; survives a restart; ``_sqlite_tasks.py``) and ``RedisTaskStore`` (several
instances; ``_redis_tasks.py``). The durable two also fail the tasks a dead process left
unfinished (``runner_id``, ``fail_abandoned``; ``_task_runners.py``).

``list_owned`` pages through one owner's ``listed`` tasks (2025-11-25 ``tasks/list``), in
creation order: a page starts after a ``(created_at, task_id)`` position, so tasks created
or expiring between two pages never shift the others.
"""

from __future__ import annotations

import logging
import time
from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass, field
from typing import Any

import msgspec

from mcpkit._exceptions import MCPError

logger = logging.getLogger("mcpkit.stores")

#: Statuses a task may have; the last three are final.
TASK_STATUSES = ("working", "input_required", "completed", "failed", "cancelled")
TERMINAL_STATUSES = frozenset({"completed", "failed", "cancelled"})

#: Tasks one store keeps at once (expired ones are dropped first to make room).
DEFAULT_MAX_TASKS = 10_000
#: Tasks one ``list_owned`` call returns when the caller names no limit.
DEFAULT_LIST_LIMIT = 100

#: Where a page of ``list_owned`` starts: after the task at this (created_at, task_id).
ListPosition = tuple[float, str]


class TaskStoreError(MCPError):
    """A store refused an operation."""


class TaskStoreFullError(TaskStoreError):
    """The store holds ``max_tasks`` unexpired tasks; none can be added until some expire."""


class TaskExistsError(TaskStoreError):
    """``create`` was given an id the store already holds."""


@dataclass(slots=True)
class TaskRecord:
    """One task. Times are epoch seconds; ``ttl_ms`` None means no expiry."""

    task_id: str
    status: str = "working"
    created_at: float = 0.0
    last_updated_at: float = 0.0
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None
    status_message: str | None = None
    #: The final result (``completed``) or JSON-RPC error object (``failed``).
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    #: Input requests still waiting for an answer: key -> {"method", "params"}.
    input_requests: dict[str, Any] = field(default_factory=dict)
    # What it takes to run the call (again) ----------------------------------------------
    method: str = "tools/call"
    params: dict[str, Any] = field(default_factory=dict)  # {"name", "arguments"}
    protocol_version: str | None = None
    client_capabilities: dict[str, Any] = field(default_factory=dict)
    client_info: dict[str, Any] | None = None
    #: Who may see the task (an authenticated principal); None when unauthenticated.
    owner: str | None = None
    #: Answers received so far (multi round-trip phase and tasks/update), by key.
    responses: dict[str, Any] = field(default_factory=dict)
    #: Every input request ever issued: key -> method (keys are never reused).
    issued: dict[str, str] = field(default_factory=dict)
    #: The call's own state across runs (``McpToolContext.request_state``).
    state: Any = None
    cancel_requested: bool = False
    #: Kept in its owner's listing (``list_owned``; 2025-11-25 ``tasks/list``).
    listed: bool = False
    #: The runner (``TaskStore.runner_id``: one store object, in one process) whose process
    #: runs the task; None when no process does (final, or parked until ``tasks/update``).
    #: Should that process die, the task is failed rather than left unfinished for ever.
    runner_id: str | None = None

    @property
    def terminal(self) -> bool:
        """Whether the task has reached a final status (completed, failed, cancelled)."""
        return self.status in TERMINAL_STATUSES

    @property
    def position(self) -> ListPosition:
        """Where the task stands in its owner's listing."""
        return (self.created_at, self.task_id)

    @property
    def expires_at(self) -> float | None:
        """When the task's record may be dropped (epoch seconds), None without a TTL."""
        return None if self.ttl_ms is None else self.created_at + self.ttl_ms / 1000

    def expired(self, now: float | None = None) -> bool:
        """Whether the task's TTL has run out at ``now`` (default: the current time)."""
        expires = self.expires_at
        return expires is not None and (time.time() if now is None else now) >= expires

    def to_json(self) -> bytes:
        """The record as JSON bytes (what ``from_json`` reads back)."""
        return msgspec.json.encode(asdict(self))

    @classmethod
    def from_json(cls, data: bytes | str) -> TaskRecord:
        """A record from ``to_json``'s output; members it does not know are ignored.
        Raises ``ValueError`` (``msgspec.DecodeError``) for data that is not a record: not
        JSON, no ``task_id``, a member of the wrong type."""
        # Typed: a record spoiled by hand fails here, not later in whatever reads it.
        return msgspec.json.decode(data, type=cls, strict=False)


def read_record(task_id: str, data: bytes | str) -> TaskRecord | None:
    """The stored record of ``task_id``; None, with a warning, when ``data`` is not one
    (written by hand, cut short): that task is unknown, the others are served."""
    try:
        return TaskRecord.from_json(data)
    except ValueError as exc:
        logger.warning(
            "task %s: unreadable record in the task store, taken as unknown: %s", task_id, exc
        )
        return None


class TaskStore(ABC):
    """Where tasks live. ``create`` is strongly consistent: once it returns, ``get`` finds
    the task (SEP-2663 forbids answering with a task a poll could not find)."""

    @property
    def runner_id(self) -> str | None:
        """The id this store object gives the tasks its process runs (``TaskRecord.runner_id``);
        None for a store whose tasks cannot outlive the process (memory)."""
        return None

    @abstractmethod
    async def create(self, record: TaskRecord) -> None:
        """Add a new task. Raises ``TaskExistsError`` or ``TaskStoreFullError``."""

    @abstractmethod
    async def get(self, task_id: str) -> TaskRecord | None:
        """A copy of the task; None when unknown or past its TTL."""

    @abstractmethod
    async def update(self, record: TaskRecord) -> bool:
        """Replace a task's stored state; False when it is no longer there."""

    @abstractmethod
    async def list_expired(self, now: float | None = None, limit: int = 1000) -> list[str]:
        """Ids of tasks past their TTL (at most ``limit``)."""

    @abstractmethod
    async def delete(self, task_id: str) -> bool:
        """Forget a task; False when it was not there."""

    async def list_owned(
        self,
        owner: str | None,
        *,
        after: ListPosition | None = None,
        limit: int = DEFAULT_LIST_LIMIT,
    ) -> list[TaskRecord]:
        """The unexpired ``listed`` tasks of ``owner`` in creation order (ties by id), those
        after ``after`` only, at most ``limit``. Stores that cannot list raise
        ``TaskStoreError`` (every other operation works without it)."""
        raise TaskStoreError(f"{type(self).__name__} cannot list tasks")

    async def purge_expired(self, now: float | None = None) -> list[str]:
        """Delete every task past its TTL; returns their ids."""
        purged: list[str] = []
        while True:
            batch = await self.list_expired(now)
            if not batch:
                return purged
            for task_id in batch:
                if await self.delete(task_id):
                    purged.append(task_id)
            if len(batch) < 1000:
                return purged

    async def fail_abandoned(self) -> list[str]:
        """Fail every unfinished task whose runner is dead (its process ended mid-run, or its
        lease lapsed); returns their ids. Durable stores do so by themselves when they open
        and at each heartbeat; this looks now. A no-op for memory."""
        return []

    async def close(self) -> None:
        """Release what the store holds open (a no-op for memory). A durable store fails
        the unfinished tasks its process still ran: nothing here will finish them."""


class InMemoryTaskStore(TaskStore):
    """Tasks in this process, at most ``max_tasks`` of them. Records are kept serialized,
    so what a caller does to a record it got never leaks into the store."""

    def __init__(self, *, max_tasks: int = DEFAULT_MAX_TASKS) -> None:
        self.max_tasks = max_tasks
        # id -> (expires_at, json, (owner, created_at) when listed): listing reads no JSON
        self._tasks: dict[str, tuple[float | None, bytes, tuple[str | None, float] | None]] = {}

    @staticmethod
    def _entry(
        record: TaskRecord,
    ) -> tuple[float | None, bytes, tuple[str | None, float] | None]:
        listing = (record.owner, record.created_at) if record.listed else None
        return (record.expires_at, record.to_json(), listing)

    async def create(self, record: TaskRecord) -> None:
        if record.task_id in self._tasks:
            raise TaskExistsError(record.task_id)
        if len(self._tasks) >= self.max_tasks:
            await self.purge_expired()
            if len(self._tasks) >= self.max_tasks:
                raise TaskStoreFullError(f"at most {self.max_tasks} tasks may be kept at once")
        self._tasks[record.task_id] = self._entry(record)

    async def get(self, task_id: str) -> TaskRecord | None:
        found = self._tasks.get(task_id)
        if found is None:
            return None
        expires, data, _ = found
        if expires is not None and time.time() >= expires:
            return None  # kept for the sweep, which stops what still runs it
        return TaskRecord.from_json(data)

    async def update(self, record: TaskRecord) -> bool:
        if record.task_id not in self._tasks:
            return False
        self._tasks[record.task_id] = self._entry(record)
        return True

    async def list_expired(self, now: float | None = None, limit: int = 1000) -> list[str]:
        now = time.time() if now is None else now
        expired = [
            key
            for key, (expires, _, _) in self._tasks.items()
            if expires is not None and now >= expires
        ]
        return expired[:limit]

    async def list_owned(
        self,
        owner: str | None,
        *,
        after: ListPosition | None = None,
        limit: int = DEFAULT_LIST_LIMIT,
    ) -> list[TaskRecord]:
        now = time.time()
        positions = sorted(
            (listing[1], key)
            for key, (expires, _, listing) in self._tasks.items()
            if listing is not None
            and listing[0] == owner
            and (expires is None or now < expires)
            and (after is None or (listing[1], key) > after)
        )
        return [TaskRecord.from_json(self._tasks[key][1]) for _, key in positions[:limit]]

    async def delete(self, task_id: str) -> bool:
        return self._tasks.pop(task_id, None) is not None

    def __len__(self) -> int:
        return len(self._tasks)
