"""A host that serves an mcpkit app in its own event loop, and stops it, finds no task of
mcpkit's left in that loop: not the request sweeper (which lingers between requests while
the app serves), not a session's, not a client's once it is closed. Served by the host's
own uvicorn with the lifespan on, called over every HTTP transport with mcpkit's clients
(2026-07-28, a Streamable HTTP session with its GET stream, legacy SSE, WebSocket)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import mcpkit
from mcpkit import McpClient, McpServerApp, mcp_server, mcp_tool
from mcpkit.client import HttpClientTransportOptions, HttpTransportMode
from tests.http_server import serving

pytestmark = pytest.mark.timeout(60)

#: Loop iterations given to what stopping the app set going (a closing store's task).
SETTLE_STEPS = 20
PACKAGE = str(Path(mcpkit.__file__).parent)


@mcp_server(name="no-task-left")
class Adder:
    @mcp_tool()
    def add(self, a: int, b: int) -> int:
        return a + b

    @mcp_tool()
    async def double(self, n: int) -> int:
        return 2 * n


def mcpkit_tasks() -> list[str]:
    """The tasks of this loop not done whose coroutine is mcpkit's."""
    found = []
    for task in asyncio.all_tasks():
        coro = task.get_coro()
        code = getattr(coro, "cr_code", None)
        if not task.done() and code is not None and code.co_filename.startswith(PACKAGE):
            found.append(getattr(coro, "__qualname__", repr(coro)))
    return found


async def call_every_way(url: str) -> None:
    async with McpClient.http(url, protocol_mode="modern") as client:
        assert (await client.call_tool("add", {"a": 1, "b": 2})).structured_content == {"result": 3}
    async with McpClient.http(url, protocol_mode="legacy") as client:
        assert (await client.call_tool("double", {"n": 4})).structured_content == {"result": 8}
    legacy = HttpClientTransportOptions(endpoint=f"{url}/sse", transport_mode=HttpTransportMode.SSE)
    async with McpClient.http(legacy, protocol_mode="legacy") as client:
        assert (await client.call_tool("add", {"a": 2, "b": 2})).structured_content == {"result": 4}
    ws_url = url.replace("http://", "ws://") + "/ws"
    async with McpClient.websocket(ws_url) as client:
        assert (await client.call_tool("double", {"n": 5})).structured_content == {"result": 10}


async def test_an_app_stopped_leaves_no_task_in_its_hosts_loop():
    async with serving(McpServerApp(Adder), enable_legacy_sse=True, enable_websocket=True) as (
        url,
        _,
    ):
        await call_every_way(url)
        assert mcpkit_tasks()  # serving: the request sweeper lingers, as it should
    for _ in range(SETTLE_STEPS):
        await asyncio.sleep(0)
    assert mcpkit_tasks() == []
