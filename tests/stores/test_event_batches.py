"""Events stored in batches (a fan-out: one notification for many sessions): every backend's
``store_events`` numbers each session's events in order and replays them by Last-Event-ID;
Redis stores a batch in one script call, groups the ``store_event`` calls made together
into batches, and feeds other instances a batch in one pub/sub message; two app instances
sharing a real redis-server deliver one ``list_changed`` to the GET streams of both."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Sequence
from typing import Any

import httpx
import pytest

from mcpkit import McpServerApp, mcp_server, mcp_tool
from mcpkit._exceptions import StoreUnavailableError
from mcpkit.protocol import SseDecoder
from mcpkit.stores import (
    FileEventStore,
    InMemoryEventStore,
    RedisEventStore,
    RedisHub,
    StoredEvent,
    redis_options,
)
from mcpkit.stores._bus import DELIVERY_ID
from mcpkit.stores._event_batches import EventBatcher
from mcpkit.stores._events import EventStore, NewEvent
from tests.http_server import open_session, serving
from tests.redis_server import RedisServer, needs_redis
from tests.waiting import wait_until

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(params=["memory", "sqlite", pytest.param("redis", marks=needs_redis)])
async def store(request: pytest.FixtureRequest, tmp_path: Any) -> AsyncIterator[EventStore]:
    made: EventStore
    if request.param == "memory":
        made = InMemoryEventStore()
    elif request.param == "sqlite":
        made = FileEventStore(tmp_path / "events.db")
    else:
        server: RedisServer = request.getfixturevalue("redis_server")
        server.flush()
        made = RedisEventStore(server.url)
    try:
        yield made
    finally:
        await made.close()


async def replayed(store: EventStore, session_id: str, last_id: str) -> list[StoredEvent]:
    got: list[StoredEvent] = []

    async def send(event: StoredEvent) -> None:
        got.append(event)

    assert await store.replay_events_after(session_id, last_id, send) is not None
    return got


def note(n: int) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "notifications/message", "params": {"n": n}}


async def test_a_batch_numbers_each_sessions_events_in_order_and_replays_them(store):
    primes = [await store.store_event(sid, "_get", None) for sid in ("a", "b", "c")]
    assert primes == ["a:1", "b:1", "c:1"]
    shared = note(0)  # a fan-out hands every session the same message
    ids = await store.store_events(
        [
            NewEvent("a", "_get", shared),
            NewEvent("b", "_get", shared),
            NewEvent("a", "_get", note(1)),
            NewEvent("c", "_get", shared),
            NewEvent("a", "post-1", note(2)),  # another stream of a: numbered, not replayed
            NewEvent("b", "_get", note(3)),
        ]
    )
    assert ids == ["a:2", "b:2", "a:3", "c:2", "a:4", "b:3"]
    got = await replayed(store, "a", "a:1")
    assert [(e.event_id, e.message) for e in got] == [("a:2", shared), ("a:3", note(1))]
    assert [e.message for e in await replayed(store, "b", "b:2")] == [note(3)]
    assert [e.event_id for e in await replayed(store, "c", "c:1")] == ["c:2"]
    # numbering goes on where the batch left it
    assert await store.store_event("a", "_get", note(4)) == "a:5"


async def test_a_batch_stores_a_delivery_once_per_session(store):
    token = DELIVERY_ID.set("d1")
    try:
        assert await store.store_event("a", "_get", note(0)) == "a:1"
    finally:
        DELIVERY_ID.reset(token)
    ids = await store.store_events(
        [
            NewEvent("a", "_get", note(0), delivery="d1"),  # a replica delivered it already
            NewEvent("b", "_get", note(0), delivery="d1"),
            NewEvent("b", "_get", note(0), delivery="d1"),  # twice in one batch
            NewEvent("b", "_get", note(1)),  # no delivery id: always stored
        ]
    )
    assert ids == [None, "b:1", None, "b:2"]


# --- Redis: round trips and the live feed ---------------------------------------------------


def script_calls(server: RedisServer) -> int:
    """How many scripts the redis-server has run (EVALSHA and EVAL)."""
    import redis

    client = redis.Redis.from_url(server.url)
    try:
        stats = client.info("commandstats")
    finally:
        client.close()
    return sum(stats.get(f"cmdstat_{name}", {}).get("calls", 0) for name in ("evalsha", "eval"))


@needs_redis
async def test_redis_stores_a_batch_in_one_script_call_per_max_batch(redis_server):
    redis_server.flush()
    store = RedisEventStore(redis_server.url, max_batch=4)
    try:
        await store.store_event("warm", "_get", None)  # the script is loaded
        before = script_calls(redis_server)
        ids = await store.store_events([NewEvent(f"s{i}", "_get", note(i)) for i in range(10)])
        assert ids == [f"s{i}:1" for i in range(10)]
        assert script_calls(redis_server) - before == 3  # 4 + 4 + 2
    finally:
        await store.close()


@needs_redis
async def test_redis_groups_store_event_calls_made_together(redis_server):
    redis_server.flush()
    store = RedisEventStore(redis_server.url, max_batch=100)
    try:
        await store.store_event("warm", "_get", None)
        before = script_calls(redis_server)
        message = note(7)
        ids = await asyncio.gather(
            *(store.store_event(f"s{i}", "_get", message) for i in range(250))
        )
        assert ids == [f"s{i}:1" for i in range(250)]
        # 250 events in 100-event batches: 3 calls, where one call per event made 250
        assert script_calls(redis_server) - before == 3
        got = await replayed(store, "s249", "s249:1")
        assert got == []  # nothing after the last; and the event itself is there:
        await store.store_event("s249", "_get", note(8))
        assert [e.message for e in await replayed(store, "s249", "s249:1")] == [note(8)]
    finally:
        await store.close()


@needs_redis
async def test_another_instance_hears_a_batch_in_order_and_only_its_sessions(redis_server):
    redis_server.flush()
    writer = RedisEventStore(RedisHub(redis_server.url))
    reader = RedisEventStore(RedisHub(redis_server.url))  # another instance's
    heard: dict[str, list[tuple[str, Any]]] = {"a": [], "b": []}
    stops = []
    try:
        for sid in heard:

            def listener(event: StoredEvent | None, sid: str = sid) -> None:
                assert event is not None
                heard[sid].append((event.event_id, event.message))

            stops.append(await reader.listen(sid, listener))
        await writer.store_event("a", "_get", note(0))  # alone: on the session's channel
        await writer.store_events(  # a batch: one message on the batch channel
            [NewEvent(sid, "_get", note(1)) for sid in ("a", "x", "b", "y")]
            + [NewEvent("a", "_get", note(2))]
        )
        await writer.store_event("a", "_get", note(3))
        await wait_until(lambda: len(heard["a"]) == 4 and len(heard["b"]) == 1, "the events")
        assert heard["a"] == [
            ("a:1", note(0)),
            ("a:2", note(1)),
            ("a:3", note(2)),
            ("a:4", note(3)),
        ]
        assert heard["b"] == [("b:1", note(1))]
    finally:
        for stop in stops:
            await stop()
        await writer.close()
        await reader.close()
        await writer.hub.aclose()
        await reader.hub.aclose()


@needs_redis
async def test_redis_down_fails_every_event_of_the_batch(redis_to_break):
    server, hub = redis_to_break
    store = RedisEventStore(hub)
    await store.store_event("a", "_get", None)
    server.stop()
    results = await asyncio.gather(
        *(store.store_event(f"s{i}", "_get", note(i)) for i in range(5)), return_exceptions=True
    )
    assert all(isinstance(r, StoreUnavailableError) for r in results), results
    server.start()
    # back (a fresh Redis: no persistence, the numbering starts again)
    assert await store.store_event("a", "_get", note(1)) == "a:1"
    await store.close()


async def test_the_batcher_refuses_past_its_pending_bound():
    release = asyncio.Event()
    batches: list[int] = []

    async def slow_store(events: Sequence[NewEvent]) -> list[str | None]:
        batches.append(len(events))
        await release.wait()
        return [f"{e.session_id}:1" for e in events]

    batcher = EventBatcher(slow_store, max_batch=10, max_pending=2)
    first = asyncio.ensure_future(batcher.submit(NewEvent("a", "_get", None)))
    await wait_until(lambda: batches == [1], "the first batch")  # in flight, not pending
    waiting = [asyncio.ensure_future(batcher.submit(NewEvent(s, "_get", None))) for s in "bc"]
    await wait_until(lambda: batcher.pending == 2, "two waiting")
    with pytest.raises(StoreUnavailableError, match="2 events are waiting"):
        await batcher.submit(NewEvent("d", "_get", None))
    release.set()
    assert await first == "a:1"
    assert await asyncio.gather(*waiting) == ["b:1", "c:1"]
    assert batches == [1, 2]  # what waited went in one batch


# --- two app instances sharing Redis --------------------------------------------------------


def make_app() -> McpServerApp:
    added = 0

    @mcp_server(name="batch-fanout")
    class Fanout:
        @mcp_tool()
        async def grow(self) -> int:
            """Add a tool: every session, on every instance, hears tools/list_changed."""
            nonlocal added
            added += 1

            async def extra() -> str:
                return "extra"

            app.tool(f"extra_{added}", description="An added tool.")(extra)
            return added

    app = McpServerApp(Fanout)
    return app


@contextlib.asynccontextmanager
async def two_instances(redis_url: str) -> AsyncIterator[list[str]]:
    """Two apps in this process, each with its own Redis hub (as two processes would)."""
    async with contextlib.AsyncExitStack() as stack:
        urls = []
        for _ in range(2):
            options = redis_options(redis_url, prefix="batch-test")
            hub = options["event_store"].hub
            stack.push_async_callback(hub.aclose)
            url, _ = await stack.enter_async_context(serving(make_app(), **options))
            urls.append(url)
        yield urls


class Stream:
    """One GET stream read in the background: (event id, message) as they come."""

    def __init__(
        self, http: httpx.AsyncClient, url: str, headers: dict[str, str], **extra: str
    ) -> None:
        self.events: list[tuple[str | None, dict[str, Any] | None]] = []
        self._task = asyncio.ensure_future(self._read(http, url, {**headers, **extra}))

    async def _read(self, http: httpx.AsyncClient, url: str, headers: dict[str, str]) -> None:
        decoder = SseDecoder()
        async with http.stream(
            "GET", url, headers={**headers, "accept": "text/event-stream"}
        ) as response:
            assert response.status_code == 200
            async for chunk in response.aiter_bytes():
                for event in decoder.feed(chunk):
                    self.events.append((event.id, json.loads(event.data) if event.data else None))

    def methods(self) -> list[str]:
        return [m["method"] for _, m in self.events if m is not None and "method" in m]

    async def close(self) -> None:
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)


@needs_redis
async def test_list_changed_reaches_the_streams_of_both_instances_once(redis_server):
    redis_server.flush()
    async with two_instances(redis_server.url) as (a, b), httpx.AsyncClient(timeout=30) as http:
        # Sessions made on either; one made on A whose stream is on B.
        placed = [(a, a), (a, a), (b, b), (b, b), (a, b)]
        streams: list[Stream] = []
        for made_on, read_on in placed:
            headers = await open_session(http, made_on)
            streams.append(Stream(http, read_on, headers))
        await wait_until(lambda: all(s.events for s in streams), "primed streams")
        trigger = await open_session(http, a)
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "grow"}}
        reply = await http.post(a, json=call, headers=trigger)
        assert reply.status_code == 200 and '"result"' in reply.text
        changed = "notifications/tools/list_changed"
        await wait_until(lambda: all(changed in s.methods() for s in streams), changed, 10)
        prime_of_last = streams[-1].events[0][0]
        for stream in streams:
            await stream.close()
        assert all(s.methods() == [changed] for s in streams)  # once each, nothing else
        ids = [next(i for i, m in s.events if m is not None) for s in streams]
        assert all(i is not None and i.endswith(":2") for i in ids)  # after each one's prime
        # The client of the last session comes back on A: the store replays what B relayed.
        assert prime_of_last is not None
        headers = {**trigger, "mcp-session-id": prime_of_last.rsplit(":", 1)[0]}
        resumed = Stream(http, a, headers, **{"last-event-id": prime_of_last})
        await wait_until(lambda: changed in resumed.methods(), "the replay", 10)
        await resumed.close()
        assert resumed.events[0][0] == ids[-1]
