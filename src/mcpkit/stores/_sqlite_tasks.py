"""Tasks (``TaskStore``, see ``_tasks/manager.py``) in one SQLite file: they and their results
survive a restart, and several processes of one machine may share the file.

One row per task (the record as JSON, with its status and expiry beside it for the
queries), and one row per runner (``_sqlite_task_runners.py``): a task left unfinished by a
process that died is failed when a store opens the file, and by the live stores' heartbeat.
"""

from __future__ import annotations

import functools
import logging
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from mcpkit.stores._heartbeat import ThreadHeartbeat
from mcpkit.stores._own_thread import OwnThread
from mcpkit.stores._sqlite_task_runners import SqliteTaskRunners
from mcpkit.stores._task_runners import (
    DEFAULT_HEARTBEAT_GRACE,
    DEFAULT_HEARTBEAT_INTERVAL,
    LeasedRunners,
)
from mcpkit.stores._tasks import (
    DEFAULT_LIST_LIMIT,
    DEFAULT_MAX_TASKS,
    ListPosition,
    TaskExistsError,
    TaskRecord,
    TaskStore,
    TaskStoreError,
    TaskStoreFullError,
    read_record,
)

logger = logging.getLogger("mcpkit.stores")

T = TypeVar("T")

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


class SqliteTaskStore(LeasedRunners, TaskStore):
    """Tasks in one SQLite file (stdlib ``sqlite3``; every call runs in a thread of its own).

    Tasks and their results survive a restart: open the same ``path`` again. Several
    processes may share the file (SQLite locks it; WAL journal). ``max_tasks`` bounds the
    unexpired tasks kept (None: no bound).

    The tasks a process runs name its store (``runner_id``). When the store opens the file,
    it fails the unfinished tasks of processes that have ended (a ``kill -9``, a crash), and
    so does every ``heartbeat_interval`` seconds while open, renewing its own lease. A
    process of this machine (same boot and pid namespace) is dead once its pid is gone;
    one it cannot check (another container; off Linux) once its lease is older than
    ``heartbeat_interval + heartbeat_grace`` seconds. ``close`` fails the tasks the store
    still ran.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        max_tasks: int | None = DEFAULT_MAX_TASKS,
        timeout: float = 30.0,
        heartbeat_interval: float = DEFAULT_HEARTBEAT_INTERVAL,
        heartbeat_grace: float = DEFAULT_HEARTBEAT_GRACE,
    ) -> None:
        if heartbeat_interval <= 0 or heartbeat_grace < 0:
            raise ValueError("heartbeat_interval must be positive and heartbeat_grace not negative")
        self.path = str(path)
        self.max_tasks = max_tasks
        self.timeout = timeout
        self._runners: SqliteTaskRunners = SqliteTaskRunners(heartbeat_interval, heartbeat_grace)
        self._heartbeat: ThreadHeartbeat | None = None
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        self._closed = False
        self._thread = OwnThread("mcpkit-sqlite-tasks")

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
            try:
                for statement in _SCHEMA:
                    conn.execute(statement)
                # Registered before any task names this runner; what dead ones left fails.
                self._runners.open(conn)
            except BaseException:
                conn.close()
                raise
            self._conn = conn
            if self.path != ":memory:":  # nobody else can share an in-memory database
                self._heartbeat = ThreadHeartbeat(
                    self._beat, self._runners.interval, name=f"mcp-task-heartbeat-{self.path}"
                )
                self._heartbeat.start()
        return self._conn

    def _beat(self) -> None:
        with self._lock:
            if self._conn is None or self._closed:
                return
            try:
                self._runners.beat(self._conn)
            except sqlite3.Error as exc:
                logger.warning("task store %r: heartbeat failed: %s", self.path, exc)

    def _locked(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        with self._lock:
            try:
                return fn(self._connection())
            except sqlite3.Error as exc:
                raise TaskStoreError(f"task store {self.path!r} failed: {exc}") from exc

    async def _run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        if self._closed:
            raise TaskStoreError("the task store is closed")
        return await self._thread.run(self._locked, fn)

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
        return read_record(task_id, row[0]) if row is not None else None

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
        start: tuple[Any, str] = after if after is not None else (float("-inf"), "")
        query = (
            f"SELECT {_CREATED}, task_id, data FROM mcp_tasks WHERE {_OWNER} IS ?"
            " AND json_extract(data, '$.listed') AND (expires_at IS NULL OR expires_at > ?)"
            f" AND ({_CREATED}, task_id) > (?, ?) ORDER BY {_CREATED}, task_id LIMIT ?"
        )

        def select(conn: sqlite3.Connection, start: tuple[Any, str], wanted: int) -> list[Any]:
            return conn.execute(query, (owner, time.time(), *start, wanted)).fetchall()

        found: list[TaskRecord] = []
        while len(found) < limit:
            wanted = limit - len(found)
            rows = await self._run(functools.partial(select, start=start, wanted=wanted))
            # An unreadable record is passed over: the page reads on past it.
            found += filter(None, (read_record(task_id, data) for _, task_id, data in rows))
            if len(rows) < wanted:
                break
            start = (rows[-1][0], rows[-1][1])
        return found

    async def count(self) -> int:
        """How many tasks the file holds (expired ones not yet purged included)."""
        return await self._run(
            lambda conn: conn.execute("SELECT COUNT(*) FROM mcp_tasks").fetchone()[0]
        )

    async def fail_abandoned(self) -> list[str]:
        return await self._run(self._runners.sweep)

    async def close(self) -> None:
        def shut() -> None:
            if self._heartbeat is not None:
                self._heartbeat.stop()  # outside the lock: a beat under way needs it
                self._heartbeat = None
            with self._lock:
                self._closed = True
                if self._conn is not None:
                    try:
                        self._runners.retire(self._conn)
                    except sqlite3.Error as exc:  # its lease lapses: others fail them later
                        logger.warning("task store %r: could not retire: %s", self.path, exc)
                    self._conn.close()
                    self._conn = None

        if self._closed:
            return
        await self._thread.aclose(shut)
