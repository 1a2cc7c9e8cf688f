"""Slow and hostile clients at the HTTP front door, against ``mcpkit run -t http`` (the
program, which bounds request headers around uvicorn's protocol): headers that never end, or end too late, or are too large, are
bounded by ``header_read_timeout`` and ``max_header_bytes``; ordinary requests, kept-alive
connections and WebSocket upgrades are not affected."""

from __future__ import annotations

import asyncio
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.environment import child_environment
from tests.ports import announced_server
from tests.wire import initialize_request

SERVER = """
    from mcpkit import McpServerApp, mcp_tool

    @mcp_tool
    def echo(text: str) -> str:
        return text

    app = McpServerApp(echo)
"""
#: The bounds, set as ``mcpkit run``'s settings.
BOUNDS = {"MCPKIT_HEADER_READ_TIMEOUT": "0.5", "MCPKIT_MAX_HEADER_BYTES": "8192"}

INITIALIZE = initialize_request()
ACCEPT = {"accept": "application/json, text/event-stream"}


@pytest.fixture(scope="module")
def port(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    script = tmp_path_factory.mktemp("slow") / "server.py"
    script.write_text(textwrap.dedent(SERVER))
    command = [sys.executable, "-m", "mcpkit", "run", str(script), "-t", "http", "--port", "0"]
    env = child_environment(**BOUNDS, PYTHONPATH=str(Path(__file__).parents[2]))
    with announced_server(command, env=env) as served:
        yield served.port


async def closed_within(reader: asyncio.StreamReader, seconds: float) -> bytes:
    """What the server sent before it closed the connection (a reset counts as closed)."""
    async with asyncio.timeout(seconds):
        try:
            return await reader.read()
        except ConnectionResetError:
            return b""


async def test_a_connection_that_sends_nothing_is_closed(port):
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    started = time.monotonic()
    assert await closed_within(reader, 5) == b""
    assert 0.4 < time.monotonic() - started < 3
    writer.close()


async def test_headers_trickled_past_the_timeout_close_the_connection(port):
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    started = time.monotonic()

    async def trickle() -> None:
        while True:  # a header line every 0.1 s: never idle, never done
            await asyncio.sleep(0.1)
            writer.write(b"X-Slow: 1\r\n")
            await writer.drain()

    trickling = asyncio.create_task(trickle())
    try:
        assert await closed_within(reader, 5) == b""
        assert 0.4 < time.monotonic() - started < 3
    finally:
        trickling.cancel()
        await asyncio.gather(trickling, return_exceptions=True)
        writer.close()


async def test_headers_past_the_size_bound_get_431(port):
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n" + b"X-Big: " + b"a" * 20_000)
    await writer.drain()
    answer = await closed_within(reader, 5)
    writer.close()
    assert answer.startswith(b"HTTP/1.1 431 "), answer[:80]
    assert b"max_header_bytes" in answer


async def test_ordinary_requests_and_kept_alive_connections_are_served(port):
    async with httpx.AsyncClient(timeout=10) as http:
        url = f"http://127.0.0.1:{port}/mcp"
        first = await http.post(url, json=INITIALIZE, headers=ACCEPT)
        assert first.status_code == 200 and "result" in first.json()
        session = {**ACCEPT, "mcp-session-id": first.headers["mcp-session-id"]}
        await asyncio.sleep(1)  # idle longer than header_read_timeout, within keep-alive
        ping = await http.post(
            url, json={"jsonrpc": "2.0", "id": 2, "method": "ping"}, headers=session
        )
        assert ping.status_code == 200 and ping.json()["result"] == {}
        headers = {**session, "x-large-but-allowed": "a" * 6000}
        ping = await http.post(
            url, json={"jsonrpc": "2.0", "id": 3, "method": "ping"}, headers=headers
        )
        assert ping.status_code == 200


async def test_a_websocket_upgrade_outlives_the_header_timeout(port):
    import websockets

    async with websockets.connect(f"ws://127.0.0.1:{port}/mcp/ws", subprotocols=["mcp"]) as ws:
        await asyncio.sleep(1)  # past header_read_timeout: the upgraded socket stays
        await ws.send(
            '{"jsonrpc":"2.0","id":1,"method":"initialize","params":'
            '{"protocolVersion":"2025-11-25","capabilities":{},'
            '"clientInfo":{"name":"t","version":"1"}}}'
        )
        assert '"result"' in await asyncio.wait_for(ws.recv(), 5)
