"""The ``TaskStore`` contract, for memory and SQLite alike; SQLite's durability across a
restart."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time

import pytest

from mcpkit.stores import (
    InMemoryTaskStore,
    SqliteTaskStore,
    TaskExistsError,
    TaskRecord,
    TaskStoreError,
    TaskStoreFullError,
)
from tests.stores.spoiled_tasks import SPOILED, spoil
from tests.waiting import wait_until


def record(
    task_id: str, *, ttl_ms: int | None = 60_000, created_at: float | None = None, **changes
) -> TaskRecord:
    now = time.time() if created_at is None else created_at
    return TaskRecord(
        task_id=task_id,
        created_at=now,
        last_updated_at=now,
        ttl_ms=ttl_ms,
        poll_interval_ms=500,
        **changes,
    )


@pytest.fixture(params=["memory", "sqlite"])
async def make_store(request, tmp_path):
    made = []

    def make(**options):
        store = (
            InMemoryTaskStore(**options)
            if request.param == "memory"
            else SqliteTaskStore(tmp_path / "t.db", **options)
        )
        made.append(store)
        return store

    yield make
    for store in made:
        await store.close()


async def test_create_get_update_delete(make_store):
    store = make_store()
    await store.create(
        record(
            "a",
            params={"name": "tool", "arguments": {"x": 1}},
            responses={"k": {"action": "accept"}},
        )
    )
    got = await store.get("a")
    assert got.status == "working" and got.params == {"name": "tool", "arguments": {"x": 1}}
    assert got.responses == {"k": {"action": "accept"}}
    got.status, got.result = "completed", {"content": [{"type": "text", "text": "done"}]}
    assert await store.update(got)
    again = await store.get("a")
    assert again.status == "completed" and again.result["content"][0]["text"] == "done"
    assert again.terminal
    assert await store.delete("a")
    assert await store.get("a") is None
    assert not await store.delete("a")
    assert not await store.update(again)


async def test_records_handed_out_are_copies(make_store):
    store = make_store()
    await store.create(record("a", input_requests={"q": {"method": "elicitation/create"}}))
    got = await store.get("a")
    got.input_requests.clear()
    got.status = "failed"
    fresh = await store.get("a")
    assert fresh.status == "working" and fresh.input_requests == {
        "q": {"method": "elicitation/create"}
    }


async def test_ids_are_unique(make_store):
    store = make_store()
    await store.create(record("a"))
    with pytest.raises(TaskExistsError):
        await store.create(record("a"))


async def test_expired_tasks_are_invisible_listed_and_purged(make_store):
    store = make_store()
    past = time.time() - 10
    await store.create(record("old", ttl_ms=1000, created_at=past))
    await store.create(record("fresh", ttl_ms=60_000))
    await store.create(record("forever", ttl_ms=None, created_at=past - 10_000))
    assert await store.get("old") is None
    assert (await store.get("forever")).ttl_ms is None
    assert await store.list_expired() in ([], ["old"])  # a later create may purge it
    assert await store.list_expired(now=time.time() + 120) in (
        ["fresh"],
        ["old", "fresh"],
        ["fresh", "old"],
    )
    await store.purge_expired()
    assert await store.list_expired() == []
    assert await store.get("fresh") is not None and await store.get("forever") is not None


async def test_the_store_is_bounded_but_expired_tasks_make_room(make_store):
    store = make_store(max_tasks=2)
    await store.create(record("a"))
    await store.create(record("b", ttl_ms=1000, created_at=time.time() - 5))
    await store.create(record("c"))  # "b" had expired: its place is free
    with pytest.raises(TaskStoreFullError):
        await store.create(record("d"))
    assert await store.get("a") is not None and await store.get("c") is not None


async def test_concurrent_creates_all_land(make_store):
    store = make_store()
    await asyncio.gather(*(store.create(record(f"t{i}")) for i in range(50)))
    found = await asyncio.gather(*(store.get(f"t{i}") for i in range(50)))
    assert all(r is not None for r in found)


async def test_sqlite_keeps_a_completed_task_across_a_restart(tmp_path):
    path = tmp_path / "durable.db"
    first = SqliteTaskStore(path)
    done = record("job-1", params={"name": "report", "arguments": {}}, owner="alice")
    await first.create(done)
    done.status = "completed"
    done.result = {"content": [{"type": "text", "text": "42"}], "isError": False}
    done.last_updated_at = time.time()
    assert await first.update(done)
    await first.close()
    with pytest.raises(TaskStoreError):
        await first.get("job-1")

    second = SqliteTaskStore(path)
    try:
        reread = await second.get("job-1")
        assert reread is not None
        assert reread.status == "completed" and reread.terminal
        assert reread.result == {"content": [{"type": "text", "text": "42"}], "isError": False}
        assert reread.owner == "alice" and reread.params["name"] == "report"
        assert reread.created_at == pytest.approx(done.created_at)
        assert await second.count() == 1
    finally:
        await second.close()


async def test_list_owned_pages_one_owners_listed_tasks(make_store):
    store = make_store()
    base = time.time()
    for n in range(5):
        await store.create(record(f"a{n}", created_at=base + n, owner="ada", listed=True))
    await store.create(record("same-time", created_at=base + 1, owner="ada", listed=True))
    await store.create(record("b0", created_at=base, owner="bo", listed=True))
    await store.create(record("unlisted", created_at=base, owner="ada"))
    await store.create(record("anonymous", created_at=base, listed=True))
    await store.create(record("old", created_at=base - 120, ttl_ms=1, owner="ada", listed=True))
    first = await store.list_owned("ada", limit=3)
    assert [r.task_id for r in first] == ["a0", "a1", "same-time"]
    rest = await store.list_owned("ada", after=first[-1].position, limit=10)
    assert [r.task_id for r in rest] == ["a2", "a3", "a4"]
    assert await store.list_owned("ada", after=rest[-1].position) == []
    assert [r.task_id for r in await store.list_owned("bo")] == ["b0"]
    assert [r.task_id for r in await store.list_owned(None)] == ["anonymous"]
    # a task gone (deleted, or expired) leaves no gap in the pages
    await store.delete("a1")
    assert [r.task_id for r in await store.list_owned("ada", limit=2)] == ["a0", "same-time"]


@pytest.fixture
async def sqlite_store(tmp_path):
    """A SQLite task store, closed after the test (memory has no record to spoil: it keeps
    only what it wrote)."""
    store = SqliteTaskStore(tmp_path / "t.db")
    yield lambda: store
    await store.close()


@pytest.mark.parametrize("how", list(SPOILED))
async def test_an_unreadable_record_is_an_unknown_task_and_the_others_are_served(
    sqlite_store, how, caplog
):
    """One task's record spoiled (by hand, a cut-short write): that task is unknown, with a
    warning naming it; the others are read, listed and paged past it, and it goes at its
    expiry. Reading it raised, listing its owner's tasks raised for every one of them, and
    a page that met it came back short, as if the listing ended there."""
    store = sqlite_store()
    base = time.time()
    for n, task_id in enumerate(["a", "bad", "c"]):
        await store.create(record(task_id, created_at=base + n, owner="ada", listed=True))
    await spoil(store, "bad", how)
    assert await store.get("bad") is None
    assert "bad" in caplog.text
    assert (await store.get("a")).task_id == "a"
    assert [r.task_id for r in await store.list_owned("ada")] == ["a", "c"]
    first = await store.list_owned("ada", limit=1)
    assert [r.task_id for r in first] == ["a"]
    assert [r.task_id for r in await store.list_owned("ada", after=first[0].position, limit=1)] == [
        "c"
    ]
    assert "bad" in await store.purge_expired(now=time.time() + 120)


@pytest.mark.parametrize("how", list(SPOILED))
async def test_sqlite_fails_a_dead_runners_tasks_past_an_unreadable_record(tmp_path, how):
    """Two tasks a dead runner left, one record spoiled: a store opening the file fails the
    other and serves, where the sweep raised at the spoiled record and took the whole
    opening with it, so every call of the store failed; closing a store whose own task is
    spoiled closes it, where it raised and left the file open."""
    path = tmp_path / "tasks.db"
    seeded = SqliteTaskStore(path)
    for task_id in ("bad", "good"):
        await seeded.create(record(task_id, runner_id="ghost"))  # never registered: dead
    await spoil(seeded, "bad", how)
    store = SqliteTaskStore(path)
    try:
        good = await store.get("good")  # the store's first call: it fails what the dead left
        assert good is not None and good.status == "failed"
        assert await store.fail_abandoned() == []
        await seeded.create(record("mine", runner_id=seeded.runner_id))
        await spoil(seeded, "mine", how)
        await seeded.close()
        with pytest.raises(TaskStoreError, match="closed"):
            await seeded.get("good")
    finally:
        await store.close()
        await seeded.close()


async def test_sqlite_waiting_for_a_locked_file_leaves_the_hosts_default_executor_free(tmp_path):
    """Another process holds the file's write lock: the store's calls wait for it, and the
    host's own work on the loop's default executor (``asyncio.to_thread``, name lookups)
    still runs, where every thread of that executor sat waiting on the lock with them."""
    path = tmp_path / "tasks.db"
    store = SqliteTaskStore(path, timeout=60.0)
    await store.create(record("first"))  # the file is set up
    other = sqlite3.connect(path, isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")  # another writer, for as long as it likes
        # More calls than the default executor has threads (at most 32).
        waiting = [asyncio.create_task(store.create(record(f"t{n}"))) for n in range(40)]
        await asyncio.sleep(0)  # each has handed its work to a thread
        async with asyncio.timeout(20):
            assert await asyncio.to_thread(lambda: "the host's work") == "the host's work"
        assert not any(task.done() for task in waiting)
        other.execute("ROLLBACK")
        await asyncio.gather(*waiting)
        assert await store.count() == 41
    finally:
        other.close()
        await store.close()
    await wait_until(
        lambda: not any(t.name.startswith("mcpkit-sqlite-tasks") for t in threading.enumerate()),
        "the store's thread to end",
    )
