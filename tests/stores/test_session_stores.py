"""The SessionStore contract, one suite for every backend: memory, SQLite, Redis (a real
redis-server). Records round-trip, the idle timeout and the cap hold for every store
sharing a backend, and an outage is reported as ``StoreUnavailableError``."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from mcpkit.stores import (
    FileSessionStore,
    InMemorySessionStore,
    RedisHub,
    RedisSessionStore,
    SessionLimitReached,
    SessionRecord,
    SessionStore,
    StoreUnavailableError,
)
from tests.redis_server import needs_redis

IDLE = 30.0


@pytest.fixture(params=["memory", "sqlite", pytest.param("redis", marks=needs_redis)])
async def make(
    request: pytest.FixtureRequest, tmp_path: Any
) -> AsyncIterator[Callable[[], SessionStore]]:
    """``make()``: a store of the backend under test; every store it makes shares one
    backend (the same object in memory, the same file, the same Redis), as instances do."""
    made: list[SessionStore] = []
    hubs: list[RedisHub] = []
    memory = InMemorySessionStore()
    if request.param == "redis":
        server = request.getfixturevalue("redis_server")
        server.flush()

    def factory() -> SessionStore:
        if request.param == "memory":
            return memory
        if request.param == "sqlite":
            store: SessionStore = FileSessionStore(tmp_path / "sessions.db")
        else:
            hub = RedisHub(server.url)
            hubs.append(hub)
            store = RedisSessionStore(hub)
        made.append(store)
        return store

    yield factory
    for store in made:
        await store.close()
    for hub in hubs:
        await hub.aclose()


def record(session_id: str = "s1", **fields: Any) -> SessionRecord:
    return SessionRecord(
        session_id,
        protocol_version="2025-11-25",
        client_capabilities={"elicitation": {}},
        client_info={"name": "t", "version": "1"},
        created_at=1700000000.5,
        **fields,
    )


async def test_store_round_trips_a_record_for_every_instance(make):
    a, b = make(), make()
    await a.create(
        record(log_level="info", subscriptions=["test://x"]), max_sessions=10, idle_timeout=IDLE
    )
    got = await b.get("s1", idle_timeout=IDLE)
    assert got == record(log_level="info", subscriptions=["test://x"])
    assert await b.get("nope", idle_timeout=IDLE) is None


async def test_store_saves_changes_and_refuses_to_save_a_missing_session(make):
    a, b = make(), make()
    await a.create(record(), max_sessions=10, idle_timeout=IDLE)
    changed = record(initialized=True, log_level="error")
    assert await b.save(changed, idle_timeout=IDLE) is True
    assert await a.get("s1", idle_timeout=IDLE) == changed
    assert await a.save(record("ghost"), idle_timeout=IDLE) is False
    assert await a.get("ghost", idle_timeout=IDLE) is None


async def test_store_deletes_for_every_instance(make):
    a, b = make(), make()
    await a.create(record(), max_sessions=10, idle_timeout=IDLE)
    assert await b.delete("s1") is True
    assert await a.delete("s1") is False
    assert await a.get("s1", idle_timeout=IDLE) is None
    assert await a.touch("s1", idle_timeout=IDLE) is False


async def test_store_expires_idle_sessions_and_touch_keeps_them(make):
    a, b = make(), make()
    await a.create(record("busy"), max_sessions=10, idle_timeout=0.3)
    await a.create(record("idle"), max_sessions=10, idle_timeout=0.3)
    for _ in range(4):
        await asyncio.sleep(0.1)
        assert await b.touch("busy", idle_timeout=0.3) is True
    assert await a.get("idle", idle_timeout=0.3) is None
    assert await a.touch("idle", idle_timeout=0.3) is False
    assert await a.get("busy", idle_timeout=0.3) is not None
    assert await b.count() == 1


async def test_store_caps_live_sessions_across_instances(make):
    a, b = make(), make()
    await a.create(record("one"), max_sessions=2, idle_timeout=IDLE)
    await b.create(record("two"), max_sessions=2, idle_timeout=IDLE)
    with pytest.raises(SessionLimitReached):
        await a.create(record("three"), max_sessions=2, idle_timeout=IDLE)
    with pytest.raises(SessionLimitReached):
        await b.create(record("three"), max_sessions=2, idle_timeout=IDLE)
    assert await a.count() == 2
    await b.delete("one")
    await a.create(record("three"), max_sessions=2, idle_timeout=IDLE)
    assert await b.count() == 2


async def test_store_frees_the_cap_as_sessions_expire(make):
    a = make()
    await a.create(record("old"), max_sessions=1, idle_timeout=0.2)
    with pytest.raises(SessionLimitReached):
        await a.create(record("new"), max_sessions=1, idle_timeout=0.2)
    await asyncio.sleep(0.3)
    await a.create(record("new"), max_sessions=1, idle_timeout=IDLE)
    assert await a.get("new", idle_timeout=IDLE) is not None


async def test_concurrent_creates_never_pass_the_cap(make):
    stores = [make() for _ in range(3)]
    results = await asyncio.gather(
        *(
            stores[i % 3].create(record(f"s{i}"), max_sessions=5, idle_timeout=IDLE)
            for i in range(12)
        ),
        return_exceptions=True,
    )
    assert sum(r is None for r in results) == 5
    assert all(isinstance(r, SessionLimitReached) for r in results if r is not None)
    assert await stores[0].count() == 5


async def test_file_store_keeps_sessions_across_a_restart(tmp_path):
    before = FileSessionStore(tmp_path / "s.db")
    await before.create(record(), max_sessions=10, idle_timeout=IDLE)
    await before.close()
    after = FileSessionStore(tmp_path / "s.db")
    assert await after.get("s1", idle_timeout=IDLE) == record()
    await after.close()


@needs_redis
async def test_redis_store_reports_an_outage_and_works_again_after(redis_to_break):
    server, hub = redis_to_break
    store = RedisSessionStore(hub)
    await store.create(record(), max_sessions=10, idle_timeout=IDLE)
    server.stop(save=True)
    with pytest.raises(StoreUnavailableError):
        await store.get("s1", idle_timeout=IDLE)
    with pytest.raises(StoreUnavailableError):
        await store.create(record("s2"), max_sessions=10, idle_timeout=IDLE)
    server.start()
    assert await store.get("s1", idle_timeout=IDLE) == record()
    await store.create(record("s2"), max_sessions=10, idle_timeout=IDLE)
