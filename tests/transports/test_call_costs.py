"""What a quick POSTed call costs beyond its own work: no task of its own for the disconnect
watch. One sweeper serves every call and stays while calls keep coming, so quick calls
never start (and end) a task each; a slow call whose client hangs up is still cancelled,
by that same sweeper, however many quick calls came before it."""

from __future__ import annotations

import asyncio

import httpx

from mcpkit import McpServerApp, mcp_server, mcp_tool
from tests.http_server import serving
from tests.waiting import wait_until

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


async def test_quick_calls_share_one_disconnect_sweeper():
    app, _, _ = _app()
    async with (
        asyncio.timeout(20),
        serving(app, stateless=True) as (url, asgi),
        httpx.AsyncClient(timeout=10) as http,
    ):
        watch = asgi.streamable._disconnects
        first = await http.post(url, json=_call("quick", 1), headers=HEADERS)
        assert first.json()["result"]["content"][0]["text"] == "ok"
        sweeper = watch._sweeper
        assert sweeper is not None and not sweeper.done()
        for request_id in range(2, 202):
            answer = await http.post(url, json=_call("quick", request_id), headers=HEADERS)
            assert answer.json()["id"] == request_id
        assert watch._sweeper is sweeper and not sweeper.done()
        assert not watch._calls and not watch._watchers


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
        watch = asgi.streamable._disconnects
        await wait_until(lambda: bool(watch._watchers), "the slow call's disconnect watcher")
        post.cancel()  # the client hangs up: its connection closes
        await asyncio.gather(post, return_exceptions=True)
        await asyncio.wait_for(cancelled.wait(), 5)
        await wait_until(lambda: app.dispatcher.in_flight_count() == 0, "the call released")
        await wait_until(lambda: not watch._watchers, "its watcher gone")
