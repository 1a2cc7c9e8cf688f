"""The EventStore contract, one suite for every backend: memory, SQLite, Redis (a real
redis-server). Ids, per-stream replay, bounds, eviction, the live feed, storing a
broadcast once per session, and what each backend adds (SQLite survives a restart,
Redis reports an outage and recovers)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from mcpkit.stores import (
    EventStore,
    FileEventStore,
    InMemoryEventStore,
    RedisEventStore,
    RedisHub,
    StoredEvent,
    StoreUnavailableError,
)
from mcpkit.stores._bus import DELIVERY_ID
from mcpkit.stores._events import parse_event_id
from tests.redis_server import needs_redis

Factory = Callable[..., EventStore]


@pytest.fixture(params=["memory", "sqlite", pytest.param("redis", marks=needs_redis)])
async def make(request: pytest.FixtureRequest, tmp_path: Any) -> AsyncIterator[Factory]:
    """``make(**options)``: a store of the backend under test; stores made twice share
    their backend (the same file, the same Redis) except in memory."""
    made: list[EventStore] = []
    hubs: list[RedisHub] = []
    if request.param == "redis":
        server = request.getfixturevalue("redis_server")
        server.flush()

    def factory(**options: Any) -> EventStore:
        if request.param == "memory":
            store: EventStore = InMemoryEventStore(**options)
        elif request.param == "sqlite":
            store = FileEventStore(tmp_path / "events.db", **options)
        else:
            hub = RedisHub(server.url)
            hubs.append(hub)
            store = RedisEventStore(hub, **options)
        made.append(store)
        return store

    factory.backend = request.param  # type: ignore[attr-defined]
    yield factory
    for store in made:
        await store.close()
    for hub in hubs:
        await hub.aclose()


async def replay(
    store: EventStore, session_id: str, last_id: str
) -> tuple[str | None, list[StoredEvent]]:
    got: list[StoredEvent] = []

    async def send(event: StoredEvent) -> None:
        got.append(event)

    stream = await store.replay_events_after(session_id, last_id, send)
    return stream, got


def msg(n: int) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "notifications/message",
        "params": {"level": "info", "data": n},
    }


async def test_store_issues_increasing_ids_per_session(make):
    store = make()
    ids = [await store.store_event("s1", "_get", msg(i)) for i in range(3)]
    other = await store.store_event("s2", "_get", msg(0))
    assert [parse_event_id(i) for i in ids] == [("s1", 1), ("s1", 2), ("s1", 3)]
    assert parse_event_id(other) == ("s2", 1)


async def test_store_replays_only_the_stream_of_the_last_event_id(make):
    store = make()
    prime = await store.store_event("s", "p1", None)
    first = await store.store_event("s", "p1", msg(1))
    await store.store_event("s", "_get", msg(99))
    await store.store_event("s", "p1", msg(2))
    await store.store_event("s", "p1", {"jsonrpc": "2.0", "id": 7, "result": {}})
    stream, events = await replay(store, "s", prime)
    assert stream == "p1"
    assert [e.message for e in events] == [
        msg(1),
        msg(2),
        {"jsonrpc": "2.0", "id": 7, "result": {}},
    ]
    stream, events = await replay(store, "s", first)
    assert [e.message for e in events][:1] == [msg(2)]
    assert all(e.stream_id == "p1" for e in events)


@pytest.mark.parametrize("last_id", ["s:99", "other:1", "garbage", "s:"])
async def test_store_refuses_unknown_or_foreign_ids(make, last_id):
    store = make()
    await store.store_event("s", "_get", msg(1))
    await store.store_event("other", "_get", msg(1))
    assert await replay(store, "s", last_id) == (None, [])


async def test_store_keeps_at_most_max_events_per_session(make):
    store = make(max_events=3)
    ids = [await store.store_event("s", "_get", msg(i)) for i in range(5)]
    assert await replay(store, "s", ids[0]) == (None, [])  # evicted
    stream, events = await replay(store, "s", ids[2])
    assert stream == "_get" and [e.message["params"]["data"] for e in events] == [3, 4]


async def test_store_evicts_a_session(make):
    store = make()
    first = await store.store_event("s", "_get", msg(1))
    await store.store_event("s", "_get", msg(2))
    kept = await store.store_event("t", "_get", msg(1))
    await store.evict_session("s")
    assert await replay(store, "s", first) == (None, [])
    assert (await replay(store, "t", kept))[0] == "_get"


async def test_store_evicts_a_session_at_once_or_says_it_cannot(make):
    """``evict_session_now``: the store in memory forgets at once; the others say False
    (the caller then runs ``evict_session``) and keep the events until it does."""
    store = make()
    first = await store.store_event("s", "_get", msg(1))
    evicted = store.evict_session_now("s")
    assert evicted == isinstance(store, InMemoryEventStore)
    if evicted:
        assert await replay(store, "s", first) == (None, [])
    else:
        assert (await replay(store, "s", first))[0] == "_get"
        await store.evict_session("s")
        assert await replay(store, "s", first) == (None, [])


async def test_store_feeds_listeners_in_order_until_stopped(make):
    store = make()
    seen: list[StoredEvent | None] = []
    stop = await store.listen("s", seen.append)
    ids = [await store.store_event("s", "_get", msg(i)) for i in range(3)]
    await store.store_event("other", "_get", msg(9))
    async with asyncio.timeout(5):
        while len(seen) < 3:
            await asyncio.sleep(0.01)
    assert [e.event_id for e in seen if e] == ids
    assert [e.message for e in seen if e] == [msg(0), msg(1), msg(2)]
    await stop()
    await store.store_event("s", "_get", msg(3))
    await asyncio.sleep(0.1)
    assert len(seen) == 3


async def test_store_keeps_one_event_per_delivery_and_session(make):
    """A broadcast delivered by several replicas of one session is stored once."""
    store = make()
    token = DELIVERY_ID.set("d1")
    try:
        first = await store.store_event("s", "_get", msg(1))
        again = await store.store_event("s", "_get", msg(1))
        other_session = await store.store_event("t", "_get", msg(1))
    finally:
        DELIVERY_ID.reset(token)
    plain = await store.store_event("s", "_get", msg(2))
    assert first is not None and again is None and other_session is not None
    assert parse_event_id(plain) == ("s", 2)


# Memory stores share nothing: only the backends two stores can share.
@pytest.mark.parametrize(
    "make", ["sqlite", pytest.param("redis", marks=needs_redis)], indirect=True
)
async def test_stores_sharing_a_backend_see_each_others_events(make):
    writer, reader = make(), make()
    seen: list[StoredEvent | None] = []
    stop = await reader.listen("s", seen.append)
    first = await writer.store_event("s", "_get", msg(1))
    await writer.store_event("s", "_get", msg(2))
    stream, events = await replay(reader, "s", first)
    assert stream == "_get" and [e.message for e in events] == [msg(2)]
    if make.backend == "redis":  # the SQLite feed is in-process only
        async with asyncio.timeout(5):
            while len(seen) < 2:
                await asyncio.sleep(0.01)
        assert [e.message for e in seen if e] == [msg(1), msg(2)]
    await stop()


async def test_file_store_replays_after_a_restart(tmp_path):
    before = FileEventStore(tmp_path / "e.db")
    last = await before.store_event("s", "_get", msg(1))
    await before.store_event("s", "_get", msg(2))
    await before.close()
    after = FileEventStore(tmp_path / "e.db")
    stream, events = await replay(after, "s", last)
    assert stream == "_get" and [e.message for e in events] == [msg(2)]
    assert parse_event_id(await after.store_event("s", "_get", msg(3))) == ("s", 3)
    await after.close()


@needs_redis
async def test_redis_store_reports_an_outage_then_recovers_and_resyncs_listeners(redis_to_break):
    server, hub = redis_to_break
    store = RedisEventStore(hub)
    seen: list[StoredEvent | None] = []
    await store.listen("s", seen.append)
    first = await store.store_event("s", "_get", msg(1))
    server.stop(save=True)
    with pytest.raises(StoreUnavailableError):
        await store.store_event("s", "_get", msg(2))
    with pytest.raises(StoreUnavailableError):
        await replay(store, "s", first)
    server.start()
    async with asyncio.timeout(10):
        while None not in seen:  # the listener is told to re-read the store
            await asyncio.sleep(0.05)
    second = await store.store_event("s", "_get", msg(3))
    assert parse_event_id(second) == ("s", 2)
    async with asyncio.timeout(5):
        while not any(e is not None and e.event_id == second for e in seen):
            await asyncio.sleep(0.02)
