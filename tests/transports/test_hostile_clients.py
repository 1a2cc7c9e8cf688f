"""Clients that misbehave on purpose against the frame transports (WebSocket, legacy
HTTP+SSE) over real sockets: they stop reading, flood requests, or post while their
stream goes away. The server bounds what it holds for them and keeps serving others."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from mcpkit import McpServerApp, McpToolContext, mcp_server, mcp_tool
from mcpkit.transports.http._legacy_sse import LegacySseHandler
from tests.http_server import serving
from tests.legacy_sse_client import LegacyStream
from tests.transports._tools import CancellableTools
from tests.transports.test_websocket import call, ws_url
from tests.waiting import wait_until
from tests.websocket_client import RawWebSocket
from tests.wire import initialize_request

WAIT = 5.0
PAD = "x" * 65536


@mcp_server(name="hostile-test", version="0.0.1")
class Hostile(CancellableTools):
    def __init__(self) -> None:
        super().__init__()
        self.flood_error: BaseException | None = None

    @mcp_tool()
    async def flood(self, ctx: McpToolContext, count: int = 400) -> str:
        """Writes ``count`` large messages: more than socket buffers hold."""
        try:
            for n in range(count):
                await ctx.info(f"{n} {PAD}")
        except BaseException as exc:
            self.flood_error = exc
            raise
        return "flooded"


@pytest.fixture
def app() -> McpServerApp:
    return McpServerApp(Hostile)


async def ws_initialize(ws: RawWebSocket) -> None:
    ws.send_json(initialize_request(request_id=0))
    async with asyncio.timeout(WAIT):
        assert "result" in await ws.receive_json()
    ws.send_json({"jsonrpc": "2.0", "method": "notifications/initialized"})


async def test_a_websocket_client_that_stops_reading_is_dropped_not_waited_for(app):
    async with asyncio.timeout(30), serving(app, sse_write_timeout=0.5) as (url, asgi):
        server = app.instances[0]
        ws = await RawWebSocket.open(ws_url(url), receive_buffer=4096)
        try:
            await ws_initialize(ws)
            ws.send_json(call(1, "flood"))  # and never read again
            await wait_until(lambda: len(app.connections) == 0, "the connection dropped", 10)
            assert server.flood_error is not None  # the tool was told, not blocked
            assert asgi.streamable.sessions.live == 0  # its place under max_sessions freed
            await wait_until(lambda: app.dispatcher.in_flight_count() == 0, "no call in flight")
        finally:
            ws.close()


async def test_a_websocket_client_that_floods_requests_unread_is_dropped_at_the_queue_bound(app):
    # The blocked write never times out here: only the bound on waiting writes drops it.
    async with (
        asyncio.timeout(30),
        serving(app, sse_write_timeout=60, max_queued_messages=8) as (url, _),
    ):
        ws = await RawWebSocket.open(ws_url(url), receive_buffer=4096)
        try:
            await ws_initialize(ws)
            ws.send_json(call(1, "flood"))
            for n in range(2000):  # pings whose answers can only wait
                ws.send_json({"jsonrpc": "2.0", "id": 100 + n, "method": "ping"})
            await wait_until(lambda: len(app.connections) == 0, "the connection dropped", 10)
            await wait_until(lambda: app.dispatcher.in_flight_count() == 0, "no call in flight")
        finally:
            ws.close()
        # and the server serves others meanwhile
        other = await RawWebSocket.open(ws_url(url))
        try:
            await ws_initialize(other)
            other.send_json({"jsonrpc": "2.0", "id": 1, "method": "ping"})
            async with asyncio.timeout(WAIT):
                assert await other.receive_json() == {"jsonrpc": "2.0", "id": 1, "result": {}}
        finally:
            other.close()


# legacy HTTP+SSE -------------------------------------------------------------------------


def legacy_handler(asgi: Any) -> LegacySseHandler:
    return asgi.routes[f"{asgi.options.base_path}/sse"].__self__


async def test_a_legacy_post_whose_stream_ends_while_its_body_arrives_is_refused(app):
    async with (
        asyncio.timeout(30),
        serving(app) as (url, asgi),
        httpx.AsyncClient(timeout=WAIT, trust_env=False) as http,
    ):
        server = app.instances[0]
        stream = LegacyStream(http, url)
        await stream.__aenter__()
        try:
            await stream.initialize()
            body = json.dumps(call(2, "hang")).encode()
            host, port = url.split("//", 1)[1].split("/", 1)[0].split(":")
            reader, writer = await asyncio.open_connection(host, int(port))
            writer.write(
                (
                    f"POST {stream.endpoint} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    "Content-Type: application/json\r\n"
                    f"Content-Length: {len(body)}\r\n\r\n"
                ).encode()
                + body[:10]
            )
            await writer.drain()
            await wait_until(lambda: len(legacy_handler(asgi).requests) == 1, "body read")
        finally:
            await stream.close()
        await wait_until(lambda: len(legacy_handler(asgi)) == 0, "session removed")
        writer.write(body[10:])  # the rest, for a session that is gone
        async with asyncio.timeout(WAIT):
            head = await reader.readuntil(b"\r\n\r\n")
        writer.close()
        assert head.startswith(b"HTTP/1.1 404"), head
        assert not server.started.is_set()  # the call never ran
        assert len(app.connections) == 0
