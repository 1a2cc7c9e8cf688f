"""The runners of one SQLite task file (``_task_runners.py``): a row per runner (its
identity and how long its lease runs), and the sweep that fails the unfinished tasks of the
dead ones.

Every change is one ``BEGIN IMMEDIATE`` transaction: a runner registers before it writes a
task naming it, and a sweep reads the runners and fails their tasks under one write lock, so
it never takes a runner that registered meanwhile for dead.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import time
from collections.abc import Iterator

import msgspec

from mcpkit.stores._task_runners import (
    UNFINISHED_STATUSES,
    RunnerIdentity,
    abandon,
    runner_alive,
)
from mcpkit.stores._tasks import read_record

logger = logging.getLogger("mcpkit.stores")

_RUNNER = "json_extract(data, '$.runner_id')"
_UNFINISHED = f"status IN {UNFINISHED_STATUSES!r}"
SCHEMA = """CREATE TABLE IF NOT EXISTS mcp_task_runners (
    runner_id TEXT PRIMARY KEY,
    identity TEXT NOT NULL,
    lease_until REAL NOT NULL
)"""


@contextlib.contextmanager
def immediate(conn: sqlite3.Connection) -> Iterator[None]:
    """One write transaction (taken at once: no other writer in between)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


class SqliteTaskRunners:
    """This store's runner in the file, and the sweep for dead ones; every method takes
    the store's connection (and runs under its lock)."""

    def __init__(self, interval: float, grace: float) -> None:
        self.identity = RunnerIdentity.of_this_process()
        self.interval = interval
        self.grace = grace
        self._registered = False

    def open(self, conn: sqlite3.Connection) -> list[str]:
        """Register this runner, then fail what dead runners left; their ids."""
        conn.execute(SCHEMA)
        with immediate(conn):
            self._renew(conn)
            failed = self._sweep(conn, always=True)
        self._registered = True  # (once committed)
        return failed

    def beat(self, conn: sqlite3.Connection) -> list[str]:
        """Renew this runner's lease; fail what runners that died since left; their ids."""
        with immediate(conn):
            self._renew(conn)
            failed = self._sweep(conn, always=False)
        self._registered = True
        return failed

    def sweep(self, conn: sqlite3.Connection) -> list[str]:
        """Fail every unfinished task whose runner is not alive; their ids."""
        with immediate(conn):
            return self._sweep(conn, always=True)

    def retire(self, conn: sqlite3.Connection) -> list[str]:
        """This runner stops: its unfinished tasks fail (nothing will finish them), its row
        goes; their ids."""
        if not self._registered:
            return []
        with immediate(conn):
            rows = conn.execute(
                f"SELECT task_id FROM mcp_tasks WHERE {_UNFINISHED} AND {_RUNNER} = ?",
                (self.identity.runner_id,),
            ).fetchall()
            failed = self._abandon(conn, [row[0] for row in rows])
            conn.execute(
                "DELETE FROM mcp_task_runners WHERE runner_id = ?", (self.identity.runner_id,)
            )
        self._registered = False
        return failed

    # --------------------------------------------------------------------------------------

    def _renew(self, conn: sqlite3.Connection) -> None:
        me = self.identity
        lease_until = time.time() + self.interval + self.grace
        renewed = conn.execute(
            "UPDATE mcp_task_runners SET lease_until = ? WHERE runner_id = ?",
            (lease_until, me.runner_id),
        ).rowcount
        if renewed:
            return
        if self._registered:
            logger.warning(
                "this process's task lease had lapsed (no heartbeat for %g s): another "
                "process may have failed the tasks it runs",
                self.interval + self.grace,
            )
        conn.execute(
            "INSERT INTO mcp_task_runners (runner_id, identity, lease_until) VALUES (?, ?, ?)",
            (me.runner_id, me.to_json().decode(), lease_until),
        )

    def _sweep(self, conn: sqlite3.Connection, *, always: bool) -> list[str]:
        """Fail the tasks of runners not alive. Unless ``always``, only when a runner was
        found dead (cheap: the runners are few, the tasks are not)."""
        now = time.time()
        live: set[str] = set()
        dead: list[str] = []
        for runner_id, identity, lease_until in conn.execute(
            "SELECT runner_id, identity, lease_until FROM mcp_task_runners"
        ).fetchall():
            try:
                who = RunnerIdentity.from_json(identity)
            except (msgspec.DecodeError, KeyError, TypeError, ValueError):
                who = RunnerIdentity(runner_id, None, 0, None)  # the lease alone decides
            if runner_alive(who, lease_until, self.identity, now):
                live.add(runner_id)
            else:
                dead.append(runner_id)
        if not dead and not always:
            return []
        rows = conn.execute(
            f"SELECT task_id, {_RUNNER} FROM mcp_tasks WHERE {_UNFINISHED} AND {_RUNNER} IS NOT NULL"
        ).fetchall()
        # A runner without a row is no more: rows go only when their runner has died.
        failed = self._abandon(conn, [task_id for task_id, runner in rows if runner not in live])
        conn.executemany(
            "DELETE FROM mcp_task_runners WHERE runner_id = ?", [(runner,) for runner in dead]
        )
        if failed:
            logger.warning("%d task(s) failed: the server process that ran them ended", len(failed))
        return failed

    @staticmethod
    def _abandon(conn: sqlite3.Connection, task_ids: list[str]) -> list[str]:
        """Fail these tasks; the ids of those failed (an unreadable record is passed over:
        nothing can fail it, and it goes at its expiry)."""
        now = time.time()
        failed: list[str] = []
        for task_id in task_ids:
            (data,) = conn.execute(
                "SELECT data FROM mcp_tasks WHERE task_id = ?", (task_id,)
            ).fetchone()
            found = read_record(task_id, data)
            if found is None:
                continue
            record = abandon(found, now)
            conn.execute(
                "UPDATE mcp_tasks SET status = ?, updated_at = ?, data = ? WHERE task_id = ?",
                (record.status, record.last_updated_at, record.to_json().decode(), task_id),
            )
            failed.append(task_id)
        return failed
