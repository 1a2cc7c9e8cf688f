"""``FileDPoPState``: the DPoP state (nonce keys, accepted proofs) in one SQLite file, for
several processes of one machine without Redis (``--workers N --stateless``): give each the
same path as ``BearerAuthConfig.dpop_store``.

Stdlib ``sqlite3`` in WAL mode on a thread of its own (``SqliteWorker``); every change is
one ``BEGIN IMMEDIATE`` transaction, so two processes recording the same proof at once
cannot both succeed.
"""

from __future__ import annotations

import secrets
import sqlite3
import time
from pathlib import Path

from mcpkit.auth._dpop import DEFAULT_REPLAY_CACHE_SIZE, Clock
from mcpkit.auth._sqlite import SqliteWorker

#: Seconds a statement waits for another process's write lock before the store reports
#: itself unavailable (the gate answers 503).
DEFAULT_DPOP_BUSY_TIMEOUT = 5.0

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS dpop_seen (key TEXT PRIMARY KEY, expires REAL NOT NULL)"
    " WITHOUT ROWID",
    "CREATE INDEX IF NOT EXISTS dpop_seen_expires ON dpop_seen (expires)",
    "CREATE TABLE IF NOT EXISTS dpop_nonce_keys"
    " (period INTEGER PRIMARY KEY, key BLOB NOT NULL, expires REAL NOT NULL)",
    # How many rows dpop_seen holds, kept in step by every change (COUNT(*) reads them all).
    "CREATE TABLE IF NOT EXISTS dpop_counts (name TEXT PRIMARY KEY, value INTEGER NOT NULL)",
    "INSERT OR IGNORE INTO dpop_counts (name, value) VALUES ('seen', 0)",
)


class FileDPoPState:
    """The DPoP state in the SQLite file at ``path``, shared by every process opening it;
    at most ``max_entries`` accepted proofs (those expiring soonest make room), each kept
    while it could still be accepted."""

    def __init__(
        self,
        path: str | Path,
        *,
        max_entries: int = DEFAULT_REPLAY_CACHE_SIZE,
        busy_timeout: float = DEFAULT_DPOP_BUSY_TIMEOUT,
        clock: Clock = time.time,
    ) -> None:
        self.path = str(path)
        self.max_entries = max(1, max_entries)
        self.busy_timeout = busy_timeout
        self.clock = clock
        self._worker = SqliteWorker(path, _SCHEMA, busy_timeout, "DPoP state")

    async def nonce_key(self, period: int, ttl: float) -> bytes:
        """The key nonces of ``period`` are made with (``DPoPStateStore.nonce_key``)."""
        fresh = secrets.token_bytes(32)
        now = self.clock()

        def get_or_make(conn: sqlite3.Connection) -> bytes:
            conn.execute("DELETE FROM dpop_nonce_keys WHERE expires <= ?", (now,))
            conn.execute(
                "INSERT OR IGNORE INTO dpop_nonce_keys (period, key, expires) VALUES (?, ?, ?)",
                (period, fresh, now + ttl),
            )
            (key,) = conn.execute(
                "SELECT key FROM dpop_nonce_keys WHERE period = ?", (period,)
            ).fetchone()
            return bytes(key)

        return await self._worker.run(get_or_make)

    async def first_use(self, key: str, ttl: float) -> bool:
        """Record a proof; False for a replay (``DPoPStateStore.first_use``)."""
        now = self.clock()

        def record(conn: sqlite3.Connection) -> bool:
            expired = conn.execute("DELETE FROM dpop_seen WHERE expires <= ?", (now,)).rowcount
            (count,) = conn.execute(
                "UPDATE dpop_counts SET value = value - ? WHERE name = 'seen' RETURNING value",
                (expired,),
            ).fetchone()
            if conn.execute("SELECT 1 FROM dpop_seen WHERE key = ?", (key,)).fetchone():
                return False
            over = count - self.max_entries + 1
            dropped = 0
            if over > 0:  # room for the new one, never dropped itself
                dropped = conn.execute(
                    "DELETE FROM dpop_seen WHERE key IN"
                    " (SELECT key FROM dpop_seen ORDER BY expires LIMIT ?)",
                    (over,),
                ).rowcount
            conn.execute("INSERT INTO dpop_seen (key, expires) VALUES (?, ?)", (key, now + ttl))
            conn.execute(
                "UPDATE dpop_counts SET value = value + ? WHERE name = 'seen'", (1 - dropped,)
            )
            return True

        return await self._worker.run(record)

    async def close(self) -> None:
        """Close the file (the store cannot be used after)."""
        await self._worker.close()


__all__ = ["DEFAULT_DPOP_BUSY_TIMEOUT", "FileDPoPState"]
