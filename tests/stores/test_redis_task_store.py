"""The tasks helper's ``TaskStore`` contract (tests/stores/test_task_stores.py), run again
against ``RedisTaskStore`` on a real redis-server, plus what sharing Redis adds: a task
created through one store object is seen, updated and capped through another."""

from __future__ import annotations

import inspect
import time
from collections.abc import AsyncIterator

import pytest

import tests.stores.test_task_stores as contract
from mcpkit.stores import RedisHub, RedisTaskStore, TaskRecord, TaskStoreFullError
from tests.redis_server import RedisServer, needs_redis

pytestmark = needs_redis

# Every contract test that takes the ``make_store`` fixture runs here with the one below.
globals().update(
    {
        name: test
        for name, test in vars(contract).items()
        if name.startswith("test_") and "make_store" in inspect.signature(test).parameters
    }
)


@pytest.fixture
async def make_store(redis_server: RedisServer) -> AsyncIterator[object]:
    redis_server.flush()
    made: list[RedisTaskStore] = []

    def make(**options: object) -> RedisTaskStore:
        store = RedisTaskStore(redis_server.url, **options)  # type: ignore[arg-type]
        made.append(store)
        return store

    yield make
    for store in made:
        await store.close()


def record(task_id: str) -> TaskRecord:
    now = time.time()
    return TaskRecord(task_id=task_id, created_at=now, last_updated_at=now, ttl_ms=60_000)


async def test_instances_share_tasks_and_their_bound(make_store):
    a, b = make_store(max_tasks=2), make_store(max_tasks=2)
    await a.create(record("one"))
    seen = await b.get("one")
    seen.status = "completed"
    assert await b.update(seen)
    assert (await a.get("one")).status == "completed"
    await b.create(record("two"))
    with pytest.raises(TaskStoreFullError):
        await a.create(record("three"))


async def test_a_store_on_a_shared_hub_leaves_the_hub_open(redis_server):
    hub = RedisHub(redis_server.url)
    store = RedisTaskStore(hub)
    await store.create(record("kept"))
    await store.close()
    assert await hub.ping()
    await hub.aclose()


async def test_listing_reads_the_owner_index_in_batches_and_drops_stale_members(
    make_store, monkeypatch
):
    import mcpkit.stores._redis_tasks as redis_tasks

    monkeypatch.setattr(redis_tasks, "LIST_BATCH", 2)
    store = make_store()
    now = time.time()
    for n in range(7):
        await store.create(
            TaskRecord(
                task_id=f"t{n}",
                created_at=now + n,
                last_updated_at=now,
                ttl_ms=60_000,
                owner="ada",
                listed=True,
            )
        )
    await store.delete("t1")
    await store.delete("t4")
    listed = await store.list_owned("ada", limit=10)
    assert [r.task_id for r in listed] == ["t0", "t2", "t3", "t5", "t6"]
    key = store._owner_key("ada")
    assert await store.hub.client.zcard(key) == 5  # the deleted ones' members are gone
    after = await store.list_owned("ada", after=listed[1].position, limit=2)
    assert [r.task_id for r in after] == ["t3", "t5"]


@pytest.mark.parametrize("unreadable", [b"{cut sh", b"[1, 2]", b'{"status": "working"}'])
async def test_an_unreadable_task_record_does_not_keep_the_others_from_failing(
    make_store, unreadable
):
    """Two tasks a dead runner left, one record not a record (written by hand, cut short):
    the other is failed all the same, and the store's first call works, where the sweep
    stopped at the bad record and raised, every time it looked."""
    store = make_store()
    seeded = make_store()  # a runner named "ghost" never registered: dead to every store
    now = time.time()
    for task_id in ("bad", "good"):
        await seeded.create(
            TaskRecord(
                task_id=task_id,
                status="working",
                created_at=now,
                last_updated_at=now,
                ttl_ms=60_000,
                runner_id="ghost",
            )
        )
    await seeded.hub.client.set("mcpkit:task:bad", unreadable)
    good = await store.get("good")  # the store's first call: it fails what the dead left
    assert good is not None and good.status == "failed"
    assert await store.fail_abandoned() == []
