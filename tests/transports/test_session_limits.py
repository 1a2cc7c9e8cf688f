"""``max_sessions`` is one bound for the whole app: Streamable HTTP sessions, legacy SSE
sessions and WebSocket connections count together. Past it a Streamable HTTP ``initialize``
and a legacy SSE GET are answered 503, a WebSocket upgrade is refused (HTTP 503 where the
server can answer it, as uvicorn can); one that ends makes room. Real sockets."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import InvalidStatus

from mcpkit import McpServerApp, mcp_tool
from mcpkit.transports.http import McpAsgiApp
from tests.http_server import POST_HEADERS, open_session, serving
from tests.legacy_sse_client import LegacyStream
from tests.waiting import wait_until
from tests.websocket_client import NO_PROXY
from tests.wire import initialize_request

WAIT = 5.0
LIMIT = 3


@mcp_tool
def echo(text: str) -> str:
    """Echo."""
    return text


@contextlib.asynccontextmanager
async def websocket(url: str) -> AsyncIterator[ClientConnection]:
    ws_url = url.replace("http://", "ws://", 1) + "/ws"
    async with connect(
        ws_url, **NO_PROXY, subprotocols=["mcp"], open_timeout=WAIT, close_timeout=1
    ) as ws:
        yield ws


async def initialize_status(http: httpx.AsyncClient, url: str) -> int:
    answer = await http.post(url, json=initialize_request("2025-11-25"), headers=POST_HEADERS)
    return answer.status_code


async def legacy_status(http: httpx.AsyncClient, url: str) -> int:
    async with http.stream("GET", f"{url}/sse", headers={"accept": "text/event-stream"}) as got:
        return got.status_code


async def refused_upgrade(url: str) -> InvalidStatus:
    with pytest.raises(InvalidStatus) as refused:
        async with websocket(url):
            pass
    return refused.value


async def assert_every_kind_refused(http: httpx.AsyncClient, url: str) -> None:
    assert await initialize_status(http, url) == 503
    assert await legacy_status(http, url) == 503
    refused = await refused_upgrade(url)
    assert refused.response.status_code == 503
    body = json.loads(refused.response.body)
    assert body["error"]["message"] == "Too many sessions; try again later"


def counted(asgi: McpAsgiApp) -> int:
    return asgi.streamable.sessions.live


async def test_websockets_count_against_max_sessions() -> None:
    async with (
        asyncio.timeout(30),
        serving(McpServerApp(echo), max_sessions=LIMIT, enable_legacy_sse=True) as (url, asgi),
        httpx.AsyncClient(timeout=WAIT) as http,
        contextlib.AsyncExitStack() as sockets,
    ):
        opened = [await sockets.enter_async_context(websocket(url)) for _ in range(LIMIT)]
        assert counted(asgi) == LIMIT
        await assert_every_kind_refused(http, url)
        # one socket closed: its place is free again
        await opened[0].close()
        await wait_until(lambda: counted(asgi) == LIMIT - 1, "the socket uncounted", WAIT)
        async with websocket(url) as again:
            await again.send(json.dumps(initialize_request("2025-11-25")))
            assert json.loads(await asyncio.wait_for(again.recv(), WAIT))["id"] == 1
        await wait_until(lambda: counted(asgi) == LIMIT - 1, "the socket uncounted", WAIT)


async def test_every_kind_counts_in_one_bound() -> None:
    async with (
        asyncio.timeout(30),
        serving(McpServerApp(echo), max_sessions=LIMIT, enable_legacy_sse=True) as (url, asgi),
        httpx.AsyncClient(timeout=WAIT) as http,
        LegacyStream(http, url),
        websocket(url),
    ):
        headers = await open_session(http, url)
        assert counted(asgi) == LIMIT
        await assert_every_kind_refused(http, url)
        # a Streamable HTTP session ended (DELETE) makes room for a legacy SSE session
        assert (await http.delete(url, headers=headers)).status_code == 200
        async with LegacyStream(http, url) as legacy:
            await legacy.initialize()
            assert counted(asgi) == LIMIT
            assert await initialize_status(http, url) == 503
        await wait_until(lambda: counted(asgi) == LIMIT - 1, "the stream uncounted", WAIT)
        assert await initialize_status(http, url) == 200


async def test_many_upgrades_past_the_bound_are_all_refused() -> None:
    """The probe's case (300 sockets accepted with a bound of 50), scaled down."""
    async with (
        asyncio.timeout(30),
        serving(McpServerApp(echo), max_sessions=LIMIT, enable_legacy_sse=False) as (url, asgi),
        contextlib.AsyncExitStack() as sockets,
    ):

        async def attempt() -> bool:
            try:
                await sockets.enter_async_context(websocket(url))
            except InvalidStatus as refused:
                assert refused.response.status_code == 503
                return False
            return True

        accepted = await asyncio.gather(*(attempt() for _ in range(4 * LIMIT)))
        assert sum(accepted) == LIMIT
        assert counted(asgi) == LIMIT
    assert counted(asgi) == 0


async def test_a_refused_upgrade_without_the_http_response_extension_closes_1013() -> None:
    """Where the server cannot answer an upgrade over HTTP: close 1013 before accepting."""
    from mcpkit.transports.http._streamable.sessions import StreamableSessionStore
    from mcpkit.transports.http._websocket import TRY_AGAIN_LATER, serve_websocket

    table = StreamableSessionStore(max_sessions=0)
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "websocket.connect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    options = McpAsgiApp(McpServerApp(echo)).options
    scope: dict[str, Any] = {"type": "websocket", "path": "/mcp/ws", "headers": []}
    await serve_websocket(McpServerApp(echo), scope, receive, send, {}, options, None, table)
    assert sent == [
        {"type": "websocket.close", "code": TRY_AGAIN_LATER, "reason": "try again later"}
    ]
    assert table.connections == 0
