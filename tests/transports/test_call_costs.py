"""What a quick POSTed call costs beyond its own work. A call gets no task of its own for
the watch on its client hanging up: one sweeper serves every call and stays while calls
keep coming, so they never start (and end) a task each; a slow call whose client hangs up
is still cancelled, by that same sweeper, however many quick calls came before it. And a
session's DELETE evicts its events from a store in memory at once, with no task for it."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from mcpkit import McpServerApp, mcp_server, mcp_tool
from mcpkit.stores import InMemoryEventStore
from tests.http_server import serving
from tests.waiting import wait_until
from tests.wire import initialize_request

HEADERS = {
    "accept": "application/json, text/event-stream",
    "content-type": "application/json",
    "mcp-protocol-version": "2025-11-25",
}


def _call(name: str, request_id: int) -> dict[str, object]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": {}},
    }


def _app() -> tuple[McpServerApp, asyncio.Event, asyncio.Event]:
    started, cancelled = asyncio.Event(), asyncio.Event()

    @mcp_server(name="costs")
    class Costs:
        @mcp_tool()
        async def quick(self) -> str:
            """Answers at once."""
            return "ok"

        @mcp_tool()
        async def pause(self) -> str:
            """Waits once (a turn of the event loop), then answers."""
            await asyncio.sleep(0)
            return "ok"

        @mcp_tool()
        async def hang(self) -> str:
            """Runs until cancelled."""
            started.set()
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                cancelled.set()
                raise
            return "never"

    return McpServerApp(Costs), started, cancelled


async def _post_calls(tool: str, count: int) -> set[Any]:
    """``count`` stateless calls of ``tool``, each checked (and the disconnect watch empty
    after them); returns the sweepers the watch had after each call."""
    app, _, _ = _app()
    async with (
        asyncio.timeout(20),
        serving(app, stateless=True) as (url, asgi),
        httpx.AsyncClient(timeout=10) as http,
    ):
        watch = asgi.streamable.requests.of(asyncio.get_running_loop())
        sweepers = set()
        for request_id in range(1, count + 1):
            answer = await http.post(url, json=_call(tool, request_id), headers=HEADERS)
            assert answer.json()["result"]["content"][0]["text"] == "ok"
            sweepers.add(watch._sweeper)
        assert not watch._requests and not watch._watchers
        return sweepers


@pytest.mark.parametrize("tool", ["quick", "pause"])
async def test_calls_share_one_disconnect_sweeper(tool: str):
    sweepers = await _post_calls(tool, 200)
    (sweeper,) = sweepers  # the first call started it; every later one found it running
    assert sweeper is not None


async def test_a_slow_call_after_quick_ones_is_cancelled_when_its_client_leaves():
    app, started, cancelled = _app()
    async with (
        asyncio.timeout(20),
        serving(app, stateless=True) as (url, asgi),
        httpx.AsyncClient(timeout=10) as http,
    ):
        for request_id in range(1, 51):
            await http.post(url, json=_call("quick", request_id), headers=HEADERS)
        post = asyncio.create_task(http.post(url, json=_call("hang", 99), headers=HEADERS))
        await asyncio.wait_for(started.wait(), 5)
        watch = asgi.streamable.requests.of(asyncio.get_running_loop())
        await wait_until(lambda: bool(watch._watchers), "the slow call's disconnect watcher")
        post.cancel()  # the client hangs up: its connection closes
        await asyncio.gather(post, return_exceptions=True)
        await asyncio.wait_for(cancelled.wait(), 5)
        await wait_until(lambda: app.dispatcher.in_flight_count() == 0, "the call released")
        await wait_until(lambda: not watch._watchers, "its watcher gone")


class _Recording(InMemoryEventStore):
    """The store in memory, noting each eviction that took the waiting path."""

    def __init__(self) -> None:
        super().__init__()
        self.evicted_later: list[str] = []

    async def evict_session(self, session_id: str) -> None:
        await asyncio.sleep(0)
        self.evicted_later.append(session_id)
        await super().evict_session(session_id)


class _EvictsLater(_Recording):
    """A store that cannot evict without waiting (as Redis or a file cannot)."""

    def evict_session_now(self, session_id: str) -> bool:
        return False


async def _open_and_delete(store: _Recording) -> str:
    """A session opened and deleted over HTTP; its id."""
    app, _, _ = _app()
    async with (
        asyncio.timeout(20),
        serving(app, event_store=store) as (url, _),
        httpx.AsyncClient(timeout=10) as http,
    ):
        await store.store_event("other", "_get", None)  # a session that stays
        opened = await http.post(url, json=initialize_request(), headers=HEADERS)
        session_id = opened.headers["mcp-session-id"]
        await store.store_event(session_id, "_get", None)
        deleted = await http.delete(url, headers={**HEADERS, "mcp-session-id": session_id})
        assert deleted.status_code == 200
        await wait_until(lambda: session_id not in store._events, "the session's events gone")
        assert "other" in store._events
        return session_id


async def test_a_deleted_sessions_events_go_at_once_from_a_store_in_memory():
    store = _Recording()
    await _open_and_delete(store)
    assert store.evicted_later == []  # evicted in the DELETE itself: no task spawned for it


async def test_a_store_that_must_wait_still_gets_the_eviction():
    store = _EvictsLater()
    session_id = await _open_and_delete(store)
    assert store.evicted_later == [session_id]
