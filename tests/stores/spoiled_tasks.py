"""Task records spoiled as a hand or a cut-short write would leave them, in SQLite and
Redis: valid JSON that is not a record (SQLite's indexes read its members, so its rows
are JSON)."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable
from typing import Any

import msgspec

from mcpkit.stores import RedisTaskStore, SqliteTaskStore, TaskStore

#: How a record's JSON is spoiled, by name: each keeps its owner and its runner, so the
#: listing and the sweep for dead runners still meet it.
SPOILED: dict[str, Callable[[dict[str, Any]], Any]] = {
    "no task id": lambda raw: {k: v for k, v in raw.items() if k != "task_id"},
    "a time that is text": lambda raw: {**raw, "created_at": "yesterday"},
    "input requests that are a list": lambda raw: {**raw, "input_requests": []},
}


async def overwrite(store: TaskStore, task_id: str, data: bytes) -> None:
    """Write ``data`` as the task's stored record, behind the store's back."""
    if isinstance(store, SqliteTaskStore):
        with contextlib.closing(sqlite3.connect(store.path, isolation_level=None)) as conn:
            conn.execute(
                "UPDATE mcp_tasks SET data = ? WHERE task_id = ?", (data.decode(), task_id)
            )
    elif isinstance(store, RedisTaskStore):
        await store.hub.client.set(store.hub.key("task", task_id), data, keepttl=True)
    else:  # memory keeps only what it wrote itself
        raise TypeError(f"cannot spoil a record of {type(store).__name__}")


async def spoil(store: TaskStore, task_id: str, how: str) -> None:
    """Spoil the task's stored record the way ``SPOILED[how]`` says."""
    found = await store.get(task_id)
    assert found is not None
    raw = msgspec.json.decode(found.to_json())
    await overwrite(store, task_id, msgspec.json.encode(SPOILED[how](raw)))
