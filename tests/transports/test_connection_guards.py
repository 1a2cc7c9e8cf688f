"""Connection guards on every HTTP entry point: Streamable HTTP POST and GET, legacy SSE GET
and POST, the WebSocket upgrade. A refusal is 403 (close 1008 before the handshake for
WebSocket) and no MCP message is handled; the guard sees ``kind == "connection"`` and the
request scope. Real clients over real sockets for each."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import InvalidStatus

from mcpkit import (
    HttpClientTransportOptions,
    HttpTransportMode,
    McpClient,
    McpExecutionContext,
    McpServerApp,
    mcp_server,
    mcp_tool,
    use_guards,
)
from tests.http_server import serving
from tests.websocket_client import NO_PROXY
from tests.wire import initialize_request

ALLOWED = {"x-tenant": "acme"}
DENIED = {"x-tenant": "intruder"}


class TenantGuard:
    """A class-level guard that checks connections and calls: ``can_connect`` for the
    former, ``can_activate`` for the latter. ``deny_methods`` refuses by HTTP method."""

    seen: list[McpExecutionContext] = []
    deny_methods: set[str] = set()
    calls = 0

    def can_connect(self, ctx: McpExecutionContext) -> bool:
        TenantGuard.seen.append(ctx)
        assert ctx.is_connection and ctx.request is not None
        if ctx.request.method in TenantGuard.deny_methods:
            return False
        return ctx.request.headers.get("x-tenant") == "acme"

    def can_activate(self, ctx: McpExecutionContext) -> bool:
        assert not ctx.is_connection
        TenantGuard.calls += 1
        return True


@pytest.fixture(autouse=True)
def _reset_guard() -> None:
    TenantGuard.seen = []
    TenantGuard.deny_methods = set()
    TenantGuard.calls = 0


def guarded_app() -> tuple[McpServerApp, list[str]]:
    ran: list[str] = []

    @mcp_server(name="gated")
    @use_guards(TenantGuard)
    class Gated:
        @mcp_tool()
        def hello(self) -> str:
            ran.append("hello")
            return "hello"

    return McpServerApp(Gated), ran


def _client(url: str, mode: HttpTransportMode, headers: dict[str, str]) -> McpClient:
    options = HttpClientTransportOptions(
        endpoint=url, transport_mode=mode, additional_headers=headers, enable_listen_stream=False
    )
    return McpClient.http(options, protocol_version="2025-11-25")


async def test_streamable_post_is_refused_403_before_any_message():
    app, ran = guarded_app()
    async with asyncio.timeout(30), serving(app) as (url, _):
        async with httpx.AsyncClient() as http:
            answer = await http.post(
                url,
                json=initialize_request("2025-11-25", 1),
                headers={**DENIED, "accept": "application/json, text/event-stream"},
            )
        assert answer.status_code == 403
        assert answer.json()["error"]["data"] == {"type": "FORBIDDEN", "guard": "TenantGuard"}
        assert len(app.connections) == 0  # no session was made: initialize never ran
        with pytest.raises(Exception, match="403"):
            async with _client(url, HttpTransportMode.STREAMABLE_HTTP, DENIED):
                pass
        async with _client(url, HttpTransportMode.STREAMABLE_HTTP, ALLOWED) as client:
            assert (await client.call_tool("hello")).content[0].text == "hello"
    assert ran == ["hello"] and TenantGuard.calls == 1
    posts = [c for c in TenantGuard.seen if c.request and c.request.method == "POST"]
    assert posts and all(c.request.path == "/mcp" for c in posts if c.request)


async def test_streamable_get_is_refused_403():
    app, _ = guarded_app()
    accept = {"accept": "application/json, text/event-stream"}
    async with asyncio.timeout(30), serving(app) as (url, _), httpx.AsyncClient() as http:
        opened = await http.post(
            url, json=initialize_request("2025-11-25", 1), headers={**ALLOWED, **accept}
        )
        assert opened.status_code == 200
        session = {
            "mcp-session-id": opened.headers["mcp-session-id"],
            "mcp-protocol-version": "2025-11-25",
        }
        TenantGuard.deny_methods = {"GET"}
        answer = await http.get(url, headers={**ALLOWED, **session, "accept": "text/event-stream"})
        assert answer.status_code == 403
        assert answer.json()["error"]["data"]["type"] == "FORBIDDEN"
        # POSTs of the session still pass: the guard refused by method only
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        posted = await http.post(url, json=note, headers={**ALLOWED, **session, **accept})
        assert posted.status_code == 202
    assert any(c.request and c.request.method == "GET" for c in TenantGuard.seen)


async def test_legacy_sse_get_is_refused_403():
    app, ran = guarded_app()
    async with asyncio.timeout(30), serving(app, enable_legacy_sse=True) as (url, _):
        async with httpx.AsyncClient() as http:
            answer = await http.get(f"{url}/sse", headers={**DENIED, "accept": "text/event-stream"})
        assert answer.status_code == 403
        assert app.open_connections == set()
        with pytest.raises(Exception, match="403"):
            async with _client(f"{url}/sse", HttpTransportMode.SSE, DENIED):
                pass
        async with _client(f"{url}/sse", HttpTransportMode.SSE, ALLOWED) as client:
            assert (await client.call_tool("hello")).content[0].text == "hello"
    assert ran == ["hello"]
    assert any(c.request and c.request.path == "/mcp/sse" for c in TenantGuard.seen)


async def test_legacy_sse_post_is_refused_403():
    app, ran = guarded_app()
    async with asyncio.timeout(30), serving(app, enable_legacy_sse=True) as (url, _):
        async with _client(f"{url}/sse", HttpTransportMode.SSE, ALLOWED) as client:
            assert (await client.call_tool("hello")).content[0].text == "hello"
            TenantGuard.deny_methods = {"POST"}
            with pytest.raises(Exception, match="403"):
                await client.call_tool("hello", timeout=10)
    assert ran == ["hello"]  # the refused POST never reached the tool
    assert any(
        c.request and c.request.method == "POST" and c.request.path == "/mcp/messages"
        for c in TenantGuard.seen
    )


async def test_websocket_upgrade_is_refused_before_the_handshake():
    app, ran = guarded_app()
    async with asyncio.timeout(30), serving(app) as (url, _):
        ws = url.replace("http://", "ws://") + "/ws"
        with pytest.raises(InvalidStatus) as refused:
            async with ws_connect(ws, additional_headers=DENIED, subprotocols=["mcp"], **NO_PROXY):  # type: ignore[list-item]
                pass
        assert refused.value.response.status_code == 403  # uvicorn: close before accept
        assert len(app.connections) == 0
        async with McpClient.websocket(_ws_options(ws)) as client:
            assert (await client.call_tool("hello")).content[0].text == "hello"
    assert ran == ["hello"]
    upgrades = [c for c in TenantGuard.seen if c.request and c.request.transport == "websocket"]
    assert len(upgrades) == 2 and upgrades[0].request.headers["x-tenant"] == "intruder"  # type: ignore[union-attr]


def _ws_options(url: str) -> Any:
    from mcpkit import WebSocketClientTransportOptions

    return WebSocketClientTransportOptions(url=url, additional_headers=dict(ALLOWED))


async def test_app_level_connection_guards_option():
    seen: list[str] = []

    def only_local(ctx: McpExecutionContext) -> bool:
        assert ctx.request is not None and ctx.is_connection
        seen.append(ctx.request.method)
        return ctx.request.query.get("key") == ("open-sesame",)

    @mcp_tool
    def ping_me() -> str:
        return "pong"

    app = McpServerApp(ping_me)
    async with asyncio.timeout(30), serving(app, connection_guards=(only_local,)) as (url, _):
        async with httpx.AsyncClient() as http:
            refused = await http.post(url, json=initialize_request("2025-11-25", 1))
            assert refused.status_code == 403
            assert refused.json()["error"]["data"]["guard"] == "only_local"
            preflight = await http.options(url)
            assert preflight.status_code != 403  # CORS preflights are not connections
        async with _client(f"{url}?key=open-sesame", HttpTransportMode.STREAMABLE_HTTP, {}) as c:
            assert (await c.call_tool("ping_me")).content[0].text == "pong"
    assert "POST" in seen and "OPTIONS" not in seen


async def test_a_call_only_guard_does_not_gate_connections():
    def calls_only(ctx: McpExecutionContext) -> bool:
        assert not ctx.is_connection
        return True

    @mcp_server(name="plain")
    @use_guards(calls_only)
    class Plain:
        @mcp_tool()
        def hi(self) -> str:
            return "hi"

    async with asyncio.timeout(30), serving(McpServerApp(Plain)) as (url, asgi):
        assert asgi.connection_gate is None  # nothing wrapped: requests pay nothing
        async with _client(url, HttpTransportMode.STREAMABLE_HTTP, {}) as client:
            assert (await client.call_tool("hi")).content[0].text == "hi"


class ConnectionsOnly:
    """A class-level guard with ``can_connect`` and no ``can_activate``."""

    def can_connect(self, ctx: McpExecutionContext) -> bool:
        return ctx.request is not None and ctx.request.headers.get("x-tenant") == "acme"


@mcp_server(name="connections-only")
@use_guards(ConnectionsOnly)
class ConnectionsOnlyTools:
    @mcp_tool()
    def hi(self) -> str:
        return "hi"


async def test_a_connection_only_guard_checks_connections_and_leaves_calls_alone():
    """It refused every call ("Guard 'ConnectionsOnly' denied the call"): the call path
    fell back to calling the guard object itself, whose TypeError counted as a refusal."""
    app = McpServerApp(ConnectionsOnlyTools)
    async with asyncio.timeout(30), serving(app) as (url, _):
        async with _client(url, HttpTransportMode.STREAMABLE_HTTP, ALLOWED) as client:
            assert (await client.call_tool("hi")).content[0].text == "hi"
        async with httpx.AsyncClient(timeout=10) as http:
            refused = await http.post(url, json=initialize_request(), headers=DENIED)
        assert refused.status_code == 403
    async with McpClient.in_memory(app) as client:  # no connection to check: the call runs
        assert (await client.call_tool("hi")).content[0].text == "hi"
