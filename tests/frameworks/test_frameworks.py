"""The framework recipes (docs/frameworks.md), served by uvicorn on real ports: FastAPI,
Starlette and Lauren each mount an mcpkit app behind the host's own API-key check
(``HostAuth``). Without a key the host answers 401 before MCP sees the request (HTTP and
the WebSocket upgrade); with one, mcpkit's client and the official ``mcp`` client call tools
that see the identity on ``ctx.auth`` and guards that judge it; the host's lifespan runs the
MCP app's, and a session belongs to the identity that opened it."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import httpx
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import InvalidStatus

from mcpkit import HttpClientTransportOptions, McpCallError, McpClient
from mcpkit.auth import HostAuth
from mcpkit.client import WebSocketClientTransportOptions
from tests.frameworks._hosts import HOSTS, Hosted, mcp_app
from tests.http_server import serve_asgi

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")

WAIT = 10.0
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


@pytest.fixture(params=sorted(HOSTS))
def host_name(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@contextlib.asynccontextmanager
async def hosted(host_name: str) -> AsyncIterator[tuple[str, Hosted]]:
    """Serve the named host (its lifespan on); yields ``http://127.0.0.1:PORT`` and the MCP
    server instance, whose ``phase`` says whether its lifespan ran."""
    mcp = mcp_app()
    server = mcp.app.instances[0]
    assert server.phase == "never started"
    async with asyncio.timeout(30), serve_asgi(HOSTS[host_name](mcp), lifespan="on") as base:
        yield base, server
    assert server.phase == "stopped"  # the host's shutdown ran the MCP app's


def mcpkit_client(base: str, key: str | None) -> McpClient:
    headers = {"x-api-key": key} if key else {}
    return McpClient.http(
        HttpClientTransportOptions(endpoint=f"{base}/tools/mcp", additional_headers=headers)
    )


@contextlib.asynccontextmanager
async def official_client(base: str, key: str) -> AsyncIterator[ClientSession]:
    http = httpx2.AsyncClient(headers={"x-api-key": key}, timeout=WAIT)
    async with (
        http,
        streamable_http_client(f"{base}/tools/mcp", http_client=http) as (read, write),
        ClientSession(read, write, read_timeout_seconds=WAIT) as session,
    ):
        await session.initialize()
        yield session


def texts(result: Any) -> list[str]:
    return [item.text for item in result.content]


async def test_without_the_hosts_key_the_host_answers_401(host_name):
    async with hosted(host_name) as (base, server), httpx.AsyncClient(timeout=WAIT) as http:
        assert server.phase == "running"
        for headers in ({}, {"x-api-key": "wrong"}):
            refused = await http.post(f"{base}/tools/mcp", json=INIT, headers={**ACCEPT, **headers})
            assert refused.status_code == 401
            assert refused.json() == {"error": "unauthorized"}
            assert refused.headers["www-authenticate"] == "Bearer"
        # the host's own route, checked by the same function its own way
        assert (await http.get(f"{base}/me")).status_code == 401
        me = await http.get(f"{base}/me", headers={"x-api-key": "key-bob"})
        assert me.json() == {"user": "bob"}
        with pytest.raises(Exception) as caught:
            async with mcpkit_client(base, None) as client:
                await client.list_tools()
        assert "401" in str(caught.value)


async def test_mcpkit_client_with_a_key_calls_tools_as_that_user(host_name):
    async with hosted(host_name) as (base, _), mcpkit_client(base, "key-ada") as client:
        assert {tool.name for tool in await client.list_tools()} == {"whoami", "purge"}
        assert texts(await client.call_tool("whoami", {})) == ["ada connected"]
        assert texts(await client.call_tool("purge", {})) == ["purged"]  # ada is an admin


async def test_official_client_with_a_key_and_the_guard_on_its_identity(host_name):
    async with hosted(host_name) as (base, _), official_client(base, "key-bob") as session:
        assert texts(await session.call_tool("whoami", {})) == ["bob connected"]
        with pytest.raises(MCPError) as refused:  # bob lacks the "admin" scope
            await session.call_tool("purge", {})
        assert refused.value.error.data == {"type": "FORBIDDEN", "guard": "admins_only"}


async def test_mcpkit_client_guard_refuses_a_user_without_the_scope(host_name):
    async with hosted(host_name) as (base, _), mcpkit_client(base, "key-bob") as client:
        with pytest.raises(McpCallError) as refused:
            await client.call_tool("purge", {})
        assert refused.value.code == -32603
        assert refused.value.data == {"type": "FORBIDDEN", "guard": "admins_only"}


async def test_a_session_belongs_to_the_user_who_opened_it(host_name):
    async with hosted(host_name) as (base, _), httpx.AsyncClient(timeout=WAIT) as http:
        opened = await http.post(
            f"{base}/tools/mcp", json=INIT, headers={**ACCEPT, "x-api-key": "key-ada"}
        )
        assert opened.status_code == 200
        session = opened.headers["mcp-session-id"]
        listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
        for key, status in (("key-bob", 404), ("key-ada", 200)):
            answer = await http.post(
                f"{base}/tools/mcp",
                json=listing,
                headers={
                    **ACCEPT,
                    "x-api-key": key,
                    "mcp-session-id": session,
                    "mcp-protocol-version": "2025-11-25",
                },
            )
            assert answer.status_code == status, (key, answer.text)


async def test_websocket_upgrade_is_checked_too(host_name):
    async with hosted(host_name) as (base, _):
        url = base.replace("http://", "ws://", 1) + "/tools/mcp/ws"
        with pytest.raises(InvalidStatus) as refused:
            async with ws_connect(url, subprotocols=["mcp"]):  # type: ignore[list-item]
                pass
        assert refused.value.response.status_code == 401
        options = WebSocketClientTransportOptions(url, additional_headers={"x-api-key": "key-ada"})
        async with McpClient.websocket(options) as client:
            assert texts(await client.call_tool("whoami", {})) == ["ada connected"]


async def test_a_verifier_returning_something_else_is_a_clear_type_error():
    async def verify(headers: Any) -> Any:
        return "ada"

    app = HostAuth(mcp_app(), verify)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
        with pytest.raises(TypeError, match="must return an AuthInfo or None, not str"):
            await http.post("/mcp", json=INIT, headers=ACCEPT)


async def test_legacy_sse_stream_and_its_posts_are_checked(host_name):
    async with hosted(host_name) as (base, _):
        async with httpx.AsyncClient(timeout=WAIT) as http:
            refused = await http.get(
                f"{base}/tools/mcp/sse", headers={"accept": "text/event-stream"}
            )
            assert refused.status_code == 401
        async with (
            sse_client(f"{base}/tools/mcp/sse", headers={"x-api-key": "key-bob"}, timeout=WAIT) as (
                read,
                write,
            ),
            ClientSession(read, write, read_timeout_seconds=WAIT) as session,
        ):
            await session.initialize()  # its POSTs went to the endpoint event's /tools/... URL
            assert texts(await session.call_tool("whoami", {})) == ["bob connected"]
