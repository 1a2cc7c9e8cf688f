"""``SqliteProxyStore``: the proxy's state in one SQLite file, for several workers of one
machine (``--workers N``): give each the same path.

One row per entry (table, key, JSON value, expiry, taken), and a count per table kept in
step by every change (``COUNT(*)`` would read them all). Each step is one ``BEGIN
IMMEDIATE`` transaction on the file's own thread (``SqliteWorker``), so taking a code or a
refresh token reads it and marks it in one step no other process can come between: two
workers given the same code at once answer one of them as a second use.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcpkit.auth._proxy._store import TABLES, StoreFullError, TableProxyStore
from mcpkit.auth._sqlite import SqliteWorker

#: Seconds a statement waits for another process's write lock before the store reports
#: itself unavailable (``StoreUnavailableError``).
DEFAULT_PROXY_BUSY_TIMEOUT = 5.0

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS oauth_entries (tbl TEXT NOT NULL, key TEXT NOT NULL,"
    " value TEXT NOT NULL, until REAL NOT NULL, taken INTEGER NOT NULL DEFAULT 0,"
    " PRIMARY KEY (tbl, key)) WITHOUT ROWID",
    "CREATE INDEX IF NOT EXISTS oauth_entries_until ON oauth_entries (tbl, until)",
    "CREATE TABLE IF NOT EXISTS oauth_counts (tbl TEXT PRIMARY KEY, n INTEGER NOT NULL)",
    *(f"INSERT OR IGNORE INTO oauth_counts (tbl, n) VALUES ('{t}', 0)" for t in TABLES),
)


def _count(conn: sqlite3.Connection, table: str, change: int) -> int:
    (n,) = conn.execute(
        "UPDATE oauth_counts SET n = n + ? WHERE tbl = ? RETURNING n", (change, table)
    ).fetchone()
    return int(n)


class SqliteProxyStore(TableProxyStore):
    """``ProxyStore`` in the SQLite file at ``path``, shared by every process that opens
    it. Every table is bounded as in ``MemoryProxyStore`` (the same keyword arguments);
    past a bound the entries expiring soonest make room (registered clients excepted:
    ``StoreFullError``), and expired rows are deleted as the table is written. The file
    unreachable or locked past ``busy_timeout``: ``StoreUnavailableError``."""

    def __init__(
        self,
        path: str | Path,
        *,
        busy_timeout: float = DEFAULT_PROXY_BUSY_TIMEOUT,
        **bounds: Any,
    ) -> None:
        super().__init__(**bounds)
        self.path = str(path)
        self._worker = SqliteWorker(path, _SCHEMA, busy_timeout, "OAuth proxy store")

    async def put(self, table: str, key: str, value: str, until: float, *, evict: bool) -> None:
        """Keep ``value`` under ``key`` until ``until``, within the table's bound."""
        now, limit = self.clock(), self.limits[table]

        def write(conn: sqlite3.Connection) -> None:
            gone = conn.execute(
                "DELETE FROM oauth_entries WHERE tbl = ? AND (until <= ? OR key = ?)",
                (table, now, key),
            ).rowcount
            over = _count(conn, table, -gone) - limit + 1
            if over > 0:
                if not evict:
                    raise StoreFullError(f"the {table} table is full ({limit} entries)")
                dropped = conn.execute(
                    "DELETE FROM oauth_entries WHERE tbl = ? AND key IN (SELECT key FROM"
                    " oauth_entries WHERE tbl = ? ORDER BY until LIMIT ?)",
                    (table, table, over),
                ).rowcount
                _count(conn, table, -dropped)
            conn.execute(
                "INSERT INTO oauth_entries (tbl, key, value, until) VALUES (?, ?, ?, ?)",
                (table, key, value, until),
            )
            _count(conn, table, 1)

        await self._worker.run(write)

    async def get(self, table: str, key: str) -> tuple[str, bool] | None:
        """(value, taken), None when absent or expired."""
        return await self._worker.run(self._reader(table, key, mark=False))

    async def take(self, table: str, key: str) -> tuple[str, bool] | None:
        """(value, taken before), the entry marked taken in the same transaction."""
        return await self._worker.run(self._reader(table, key, mark=True))

    def _reader(
        self, table: str, key: str, *, mark: bool
    ) -> Callable[[sqlite3.Connection], tuple[str, bool] | None]:
        now = self.clock()

        def read(conn: sqlite3.Connection) -> tuple[str, bool] | None:
            row = conn.execute(
                "SELECT value, taken FROM oauth_entries WHERE tbl = ? AND key = ? AND until > ?",
                (table, key, now),
            ).fetchone()
            if row is None:
                return None
            if mark and not row[1]:
                conn.execute(
                    "UPDATE oauth_entries SET taken = 1 WHERE tbl = ? AND key = ?", (table, key)
                )
            return str(row[0]), bool(row[1])

        return read

    async def pop(self, table: str, key: str) -> str | None:
        """The entry's value, deleted in the same transaction."""
        now = self.clock()

        def remove(conn: sqlite3.Connection) -> str | None:
            row = conn.execute(
                "DELETE FROM oauth_entries WHERE tbl = ? AND key = ? RETURNING value, until",
                (table, key),
            ).fetchone()
            if row is None:
                return None
            _count(conn, table, -1)
            return str(row[0]) if row[1] > now else None

        return await self._worker.run(remove)

    async def close(self) -> None:
        """Close the file (the store cannot be used after)."""
        await self._worker.close()


__all__ = ["DEFAULT_PROXY_BUSY_TIMEOUT", "SqliteProxyStore"]
