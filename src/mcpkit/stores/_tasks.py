"""Tasks (the ``io.modelcontextprotocol/tasks`` extension, SEP-2663) kept behind a small
interface, so a task and its result can outlive the request, the connection and, with a
durable backend, the process that created them.

A ``TaskRecord`` holds what ``tasks/get`` shows (status, timestamps, result or error,
outstanding input requests) and what the server needs to run the call again (the tool's
name and arguments, the client's capabilities, the answers and state gathered so far).
Stores hand out copies: change a record, then ``update`` it.

Two backends: ``InMemoryTaskStore`` (bounded, in this process) and ``SqliteTaskStore``
(one SQLite file; survives a restart).

``list_owned`` pages through one owner's ``listed`` tasks (2025-11-25 ``tasks/list``), in
creation order: a page starts after a ``(created_at, task_id)`` position, so tasks created
or expiring between two pages never shift the others.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from mcpkit._exceptions import MCPError

#: Statuses a task may have; the last three are final.
TASK_STATUSES = ("working", "input_required", "completed", "failed", "cancelled")
TERMINAL_STATUSES = frozenset({"completed", "failed", "cancelled"})

#: Tasks one store keeps at once (expired ones are dropped first to make room).
DEFAULT_MAX_TASKS = 10_000
#: Tasks one ``list_owned`` call returns when the caller names no limit.
DEFAULT_LIST_LIMIT = 100

#: Where a page of ``list_owned`` starts: after the task at this (created_at, task_id).
ListPosition = tuple[float, str]

T = TypeVar("T")


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
        """A record from ``to_json``'s output; members it does not know are ignored."""
        raw = msgspec.json.decode(data)
        known = {f.name for f in fields(cls)}
        return cls(**{key: value for key, value in raw.items() if key in known})


class TaskStore(ABC):
    """Where tasks live. ``create`` is strongly consistent: once it returns, ``get`` finds
    the task (SEP-2663 forbids answering with a task a poll could not find)."""

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

    async def close(self) -> None:
        """Release what the store holds open (a no-op for memory)."""


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
            del self._tasks[task_id]
            return None
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


_OWNER = "json_extract(data, '$.owner')"
_CREATED = "json_extract(data, '$.created_at')"
_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS mcp_tasks (
        task_id TEXT PRIMARY KEY,
        status TEXT NOT NULL,
        expires_at REAL,
        updated_at REAL NOT NULL,
        data TEXT NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS mcp_tasks_expires ON mcp_tasks (expires_at)",
    # list_owned reads the record's own members: files made before it need no migration.
    f"CREATE INDEX IF NOT EXISTS mcp_tasks_owner ON mcp_tasks ({_OWNER}, {_CREATED}, task_id)",
)


class SqliteTaskStore(TaskStore):
    """Tasks in one SQLite file (stdlib ``sqlite3``; every call runs in a worker thread).

    Tasks and their results survive a restart: open the same ``path`` again. Several
    processes may share the file (SQLite locks it; WAL journal). ``max_tasks`` bounds the
    unexpired tasks kept (None: no bound).
    """

    def __init__(
        self, path: str | Path, *, max_tasks: int | None = DEFAULT_MAX_TASKS, timeout: float = 30.0
    ) -> None:
        self.path = str(path)
        self.max_tasks = max_tasks
        self.timeout = timeout
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        self._closed = False

    # plumbing -----------------------------------------------------------------------------

    def _connection(self) -> sqlite3.Connection:
        if self._closed:
            raise TaskStoreError("the task store is closed")
        if self._conn is None:
            conn = sqlite3.connect(
                self.path, timeout=self.timeout, isolation_level=None, check_same_thread=False
            )
            if self.path != ":memory:":
                conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            for statement in _SCHEMA:
                conn.execute(statement)
            self._conn = conn
        return self._conn

    def _locked(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        with self._lock:
            try:
                return fn(self._connection())
            except sqlite3.Error as exc:
                raise TaskStoreError(f"task store {self.path!r} failed: {exc}") from exc

    async def _run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        return await asyncio.to_thread(self._locked, fn)

    # the contract -------------------------------------------------------------------------

    async def create(self, record: TaskRecord) -> None:
        data = record.to_json().decode()

        def insert(conn: sqlite3.Connection) -> None:
            conn.execute("BEGIN IMMEDIATE")
            try:
                if self.max_tasks is not None:
                    now = time.time()
                    (count,) = conn.execute(
                        "SELECT COUNT(*) FROM mcp_tasks WHERE expires_at IS NULL OR expires_at > ?",
                        (now,),
                    ).fetchone()
                    if count >= self.max_tasks:
                        raise TaskStoreFullError(
                            f"at most {self.max_tasks} tasks may be kept at once"
                        )
                    conn.execute(
                        "DELETE FROM mcp_tasks WHERE expires_at IS NOT NULL AND expires_at <= ?",
                        (now,),
                    )
                conn.execute(
                    "INSERT INTO mcp_tasks (task_id, status, expires_at, updated_at, data) VALUES (?, ?, ?, ?, ?)",
                    (
                        record.task_id,
                        record.status,
                        record.expires_at,
                        record.last_updated_at,
                        data,
                    ),
                )
            except sqlite3.IntegrityError:
                conn.execute("ROLLBACK")
                raise TaskExistsError(record.task_id) from None
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

        await self._run(insert)

    async def get(self, task_id: str) -> TaskRecord | None:
        def select(conn: sqlite3.Connection) -> Any:
            return conn.execute(
                "SELECT data FROM mcp_tasks WHERE task_id = ? AND (expires_at IS NULL OR expires_at > ?)",
                (task_id, time.time()),
            ).fetchone()

        row = await self._run(select)
        return TaskRecord.from_json(row[0]) if row is not None else None

    async def update(self, record: TaskRecord) -> bool:
        data = record.to_json().decode()

        def write(conn: sqlite3.Connection) -> bool:
            cursor = conn.execute(
                "UPDATE mcp_tasks SET status = ?, expires_at = ?, updated_at = ?, data = ? WHERE task_id = ?",
                (record.status, record.expires_at, record.last_updated_at, data, record.task_id),
            )
            return cursor.rowcount > 0

        return await self._run(write)

    async def list_expired(self, now: float | None = None, limit: int = 1000) -> list[str]:
        moment = time.time() if now is None else now

        def select(conn: sqlite3.Connection) -> list[str]:
            rows = conn.execute(
                "SELECT task_id FROM mcp_tasks WHERE expires_at IS NOT NULL AND expires_at <= ? LIMIT ?",
                (moment, limit),
            ).fetchall()
            return [row[0] for row in rows]

        return await self._run(select)

    async def delete(self, task_id: str) -> bool:
        def remove(conn: sqlite3.Connection) -> bool:
            return conn.execute("DELETE FROM mcp_tasks WHERE task_id = ?", (task_id,)).rowcount > 0

        return await self._run(remove)

    async def list_owned(
        self,
        owner: str | None,
        *,
        after: ListPosition | None = None,
        limit: int = DEFAULT_LIST_LIMIT,
    ) -> list[TaskRecord]:
        start = after if after is not None else (float("-inf"), "")
        query = (
            f"SELECT data FROM mcp_tasks WHERE {_OWNER} IS ? AND json_extract(data, '$.listed')"
            f" AND (expires_at IS NULL OR expires_at > ?) AND ({_CREATED}, task_id) > (?, ?)"
            f" ORDER BY {_CREATED}, task_id LIMIT ?"
        )

        def select(conn: sqlite3.Connection) -> list[Any]:
            return conn.execute(query, (owner, time.time(), *start, limit)).fetchall()

        return [TaskRecord.from_json(row[0]) for row in await self._run(select)]

    async def count(self) -> int:
        """How many tasks the file holds (expired ones not yet purged included)."""
        return await self._run(
            lambda conn: conn.execute("SELECT COUNT(*) FROM mcp_tasks").fetchone()[0]
        )

    async def close(self) -> None:
        def shut() -> None:
            with self._lock:
                self._closed = True
                if self._conn is not None:
                    self._conn.close()
                    self._conn = None

        await asyncio.to_thread(shut)
