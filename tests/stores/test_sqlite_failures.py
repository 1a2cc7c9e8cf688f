"""The SQLite session and event stores when a row was spoiled (edited by hand, cut
short), served over Streamable HTTP: the server restarts on the files, as after a deploy,
and what the spoiled row held is taken as gone while the rest is served."""

from __future__ import annotations

import contextlib
import sqlite3
import sys
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from mcpkit.stores import FileEventStore, FileSessionStore, SqliteTaskStore
from tests.http_server import serving
from tests.stores.test_redis_failures import PROGRESS_CALL, open_session
from tests.stores.test_scale_out import EXAMPLE, events_of

pytestmark = pytest.mark.timeout(60)

PING = {"jsonrpc": "2.0", "id": 2, "method": "ping"}


@contextlib.asynccontextmanager
async def served(folder: Path) -> AsyncIterator[str]:
    """everything.py on a session and an event store in ``folder``; its endpoint URL.
    The stores are closed when it stops, as a restarted process's would be."""
    sys.path.insert(0, str(EXAMPLE.parent))
    from mcpkit.cli._loader import load_app

    sessions = FileSessionStore(folder / "sessions.db")
    events = FileEventStore(folder / "events.db")
    try:
        async with serving(load_app(str(EXAMPLE)), session_store=sessions, event_store=events) as (
            url,
            _,
        ):
            yield url
    finally:
        await sessions.close()
        await events.close()


def write(database: Path, statement: str, *values: object) -> None:
    """One statement on the file, behind the stores' back."""
    with contextlib.closing(sqlite3.connect(database, isolation_level=None)) as conn:
        assert conn.execute(statement, values).rowcount == 1


@pytest.mark.parametrize("data", ['{"session_id": "cut sh', "[1, 2]", "not json"])
async def test_an_unreadable_session_row_is_an_unknown_session(tmp_path, data):
    """A session's row that is not a record: the restarted server, which must adopt the
    session from it, answers 404 as for an expired session, so the client starts a new
    one, where every request of the session failed with a 500 internal error."""
    async with httpx.AsyncClient(timeout=30) as http:
        async with served(tmp_path) as url:
            headers = await open_session(http, url)
        session_id = headers["mcp-session-id"]
        write(
            tmp_path / "sessions.db",
            "UPDATE mcp_sessions SET data = ? WHERE session_id = ?",
            data,
            session_id,
        )
        async with served(tmp_path) as url:
            unknown = await http.post(url, json=PING, headers=headers)
            assert unknown.status_code == 404, unknown.text
            assert unknown.json()["error"]["data"] == {"sessionId": session_id}
            fresh = await open_session(http, url)
            assert (await http.post(url, json=PING, headers=fresh)).status_code == 200


async def test_an_unreadable_event_row_is_passed_over_and_the_rest_replayed(tmp_path):
    """Two stored events of a session spoiled: a stream resumed after a restart replays
    the events around them and ends with the call's answer, where it failed at the first
    spoiled one and replayed nothing."""
    call = PROGRESS_CALL
    async with httpx.AsyncClient(timeout=30) as http:
        async with served(tmp_path) as url:
            headers = await open_session(http, url)
            assert (await http.post(url, json=call, headers=headers)).status_code == 200
        session_id = headers["mcp-session-id"]
        with contextlib.closing(sqlite3.connect(tmp_path / "events.db")) as conn:
            rows = conn.execute(
                "SELECT seq FROM mcp_events WHERE session_id = ? ORDER BY seq", (session_id,)
            ).fetchall()
        assert len(rows) == 5  # priming, three progress notifications, the answer
        for seq, spoiled in ((3, "{not json"), (4, '{"jsonrpc": "2.0", "meth')):
            write(
                tmp_path / "events.db",
                "UPDATE mcp_events SET message = ? WHERE session_id = ? AND seq = ?",
                spoiled,
                session_id,
                seq,
            )
        async with served(tmp_path) as url:
            resumed = await http.get(
                url,
                headers={
                    **headers,
                    "accept": "text/event-stream",
                    "last-event-id": f"{session_id}:1",
                },
            )
            assert resumed.status_code == 200, resumed.text
            replayed = events_of(resumed.content)
            assert [event_id for event_id, _ in replayed] == [
                f"{session_id}:2",
                f"{session_id}:5",
            ]
            assert replayed[0][1]["params"]["progress"] == 0
            assert replayed[1][1]["id"] == 3 and "result" in replayed[1][1]
            assert (await http.post(url, json=PING, headers=headers)).status_code == 200


async def test_a_closed_sqlite_store_leaves_no_thread_of_its_own(tmp_path):
    """Each SQLite store runs its calls on a thread of its own; closing it joins that thread,
    so a host that closed it finds none of the store's left."""

    def store_threads() -> list[str]:
        return [t.name for t in threading.enumerate() if t.name.startswith("mcpkit-sqlite")]

    sessions = FileSessionStore(tmp_path / "sessions.db")
    events = FileEventStore(tmp_path / "events.db")
    tasks = SqliteTaskStore(tmp_path / "tasks.db")
    for store, use in (
        (sessions, sessions.count()),
        (events, events.evict_session("none")),
        (tasks, tasks.count()),
    ):
        await use
        assert store_threads()
        await store.close()
        assert store_threads() == []
