"""One SQLite file driven from a thread of its own, for the auth state kept on disk
(``FileDPoPState``, ``SqliteProxyStore``): stdlib ``sqlite3`` in WAL mode, so the event loop
never waits on the disk and a connection stays on the thread that made it. Every change is
one ``BEGIN IMMEDIATE`` transaction: two processes sharing the file never interleave one.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

from mcpkit._exceptions import StoreUnavailableError

T = TypeVar("T")


class SqliteWorker:
    """The file at ``path``, its ``schema`` applied on first use; ``run(fn)`` calls
    ``fn(connection)`` in one transaction on the worker thread. A statement waits
    ``busy_timeout`` seconds for another process's lock, then ``StoreUnavailableError``
    (naming ``what``)."""

    def __init__(
        self, path: str | Path, schema: Sequence[str], busy_timeout: float, what: str
    ) -> None:
        self.path = str(path)
        self.schema = tuple(schema)
        self.busy_timeout = busy_timeout
        self.what = what
        self._conn: sqlite3.Connection | None = None
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mcpkit-sqlite")

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            conn = sqlite3.connect(
                self.path,
                timeout=self.busy_timeout,
                isolation_level=None,
                check_same_thread=False,
            )
            try:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
                for statement in self.schema:
                    conn.execute(statement)
            except BaseException:
                conn.close()
                raise
            self._conn = conn
        return self._conn

    def _in_transaction(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        try:
            conn = self._connection()
            conn.execute("BEGIN IMMEDIATE")
            try:
                result = fn(conn)
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
            return result
        except sqlite3.OperationalError as exc:
            raise StoreUnavailableError(f"{self.what} {self.path}: {exc}") from exc

    async def run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """``fn(connection)`` in one ``BEGIN IMMEDIATE`` transaction (rolled back when it
        raises), on the worker thread."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self._in_transaction, fn)

    async def close(self) -> None:
        """Close the file (the worker cannot be used after)."""

        def shut() -> None:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

        await asyncio.get_running_loop().run_in_executor(self._executor, shut)
        self._executor.shutdown(wait=False)


__all__ = ["SqliteWorker"]
