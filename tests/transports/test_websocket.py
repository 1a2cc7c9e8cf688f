"""WebSocket server transport at ``{base}/ws``: handshake and subprotocol, the initialized
gate, concurrent dispatch, oversized and malformed messages, the connection guard, and
disconnects, with the ``websockets`` client over real sockets."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Mapping
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from mcpkit import McpServerApp, McpToolContext, mcp_server, mcp_tool
from mcpkit.transports.http import StreamableHttpServerOptions
from tests.http_server import serving
from tests.transports._tools import CancellableTools, ElicitingTool
from tests.waiting import wait_until
from tests.websocket_client import NO_PROXY
from tests.wire import SchemaChecker

WAIT = 5.0


@mcp_server(name="ws-test", version="0.0.1")
class WsTest(CancellableTools, ElicitingTool):
    @mcp_tool()
    async def slow(self, seconds: float = 0.5) -> str:
        await asyncio.sleep(seconds)
        return "slow done"

    @mcp_tool()
    async def steps(self, ctx: McpToolContext, count: int = 3) -> str:
        for step in range(count):
            await ctx.report_progress(step + 1, count)
            await ctx.info(f"step {step + 1}")
        return f"{count} steps"


@pytest.fixture
def app() -> McpServerApp:
    return McpServerApp(WsTest)


def ws_url(http_url: str) -> str:
    return http_url.replace("http://", "ws://", 1) + "/ws"


class Peer:
    """A raw JSON-RPC peer on one WebSocket; schema-checks every server message."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.checker = SchemaChecker()

    async def send(self, message: dict[str, Any]) -> None:
        self.checker.outgoing_from_client(message)
        await self.ws.send(json.dumps(message))

    async def receive(self) -> dict[str, Any]:
        async with asyncio.timeout(WAIT):
            raw = await self.ws.recv()
        message = json.loads(raw)
        self.checker.from_server(message)
        return message

    async def request(
        self, request_id: Any, method: str, params: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)
        return await self.receive()

    async def initialize(self, *, initialized: bool = True) -> dict[str, Any]:
        reply = await self.request(
            0,
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {"elicitation": {}},
                "clientInfo": {"name": "ws", "version": "1"},
            },
        )
        assert "result" in reply, reply
        if initialized:
            await self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return reply


@contextlib.asynccontextmanager
async def peer(url: str, **kwargs: Any) -> AsyncIterator[Peer]:
    kwargs.setdefault("subprotocols", ["mcp"])
    async with connect(ws_url(url), **NO_PROXY, open_timeout=WAIT, close_timeout=1, **kwargs) as ws:
        yield Peer(ws)


def call(request_id: Any, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments or {}},
    }


async def test_initialize_list_and_call_with_the_mcp_subprotocol(app):
    async with asyncio.timeout(30), serving(app) as (url, _), peer(url) as p:
        assert p.ws.subprotocol == "mcp"
        init = await p.initialize()
        assert init["result"]["serverInfo"]["name"] == "ws-test"
        tools = await p.request(1, "tools/list")
        assert {"add", "slow", "hang"} <= {tool["name"] for tool in tools["result"]["tools"]}
        added = await p.request(2, "tools/call", {"name": "add", "arguments": {"a": 2, "b": 40}})
        assert added["result"]["structuredContent"] == {"result": 42}
        await p.send(
            {
                **call(3, "steps", {"count": 2}),
                "params": {
                    "name": "steps",
                    "arguments": {"count": 2},
                    "_meta": {"progressToken": "t"},
                },
            }
        )
        seen = [await p.receive() for _ in range(5)]
        assert [m.get("method") for m in seen[:4]] == [
            "notifications/progress",
            "notifications/message",
        ] * 2
        assert seen[4]["id"] == 3 and seen[4]["result"]["content"][0]["text"] == "2 steps"


async def test_no_subprotocol_offered_is_accepted_without_one(app):
    async with asyncio.timeout(30), serving(app) as (url, _), peer(url, subprotocols=None) as p:
        assert p.ws.subprotocol is None
        await p.initialize()
        assert (await p.request(1, "ping"))["result"] == {}


async def test_requests_before_initialized_are_invalid(app):
    async with asyncio.timeout(30), serving(app) as (url, _), peer(url) as p:
        early = await p.request(1, "tools/list")
        assert early["id"] == 1 and early["error"]["code"] == -32600
        assert (await p.request(2, "ping"))["result"] == {}  # ping is always allowed
        await p.initialize(initialized=False)
        between = await p.request(3, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 1}})
        assert between["error"]["code"] == -32600
        await p.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        after = await p.request(4, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 1}})
        assert after["result"]["content"][0]["text"] == "2"


async def test_slow_tool_does_not_hold_up_a_ping(app):
    async with asyncio.timeout(30), serving(app) as (url, _), peer(url) as p:
        await p.initialize()
        await p.send(call(1, "slow", {"seconds": 0.5}))
        await p.send({"jsonrpc": "2.0", "id": 2, "method": "ping"})
        first, second = await p.receive(), await p.receive()
        assert first == {"jsonrpc": "2.0", "id": 2, "result": {}}
        assert second["id"] == 1 and second["result"]["content"][0]["text"] == "slow done"


async def test_tool_awaiting_elicitation_does_not_block_the_socket(app):
    async with asyncio.timeout(30), serving(app) as (url, _), peer(url) as p:
        await p.initialize()
        await p.send(call(1, "ask"))
        request = await p.receive()
        assert request["method"] == "elicitation/create"
        # while the tool waits for our answer, other requests are served
        assert (await p.request(2, "ping"))["id"] == 2
        assert (await p.request(3, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}}))[
            "id"
        ] == 3
        await p.ws.send(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": request["id"],
                    "result": {"action": "accept", "content": {"name": "Ada"}},
                }
            )
        )
        result = await p.receive()
        assert result["id"] == 1 and result["result"]["content"][0]["text"] == "accept:Ada"


async def test_oversized_and_malformed_messages_are_answered_and_the_socket_keeps_serving(app):
    async with asyncio.timeout(30), serving(app, max_body_bytes=1000) as (url, _), peer(url) as p:
        await p.initialize()
        big = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "ping",
            "params": {"_meta": {"pad": "x" * 2000}},
        }
        await p.ws.send(json.dumps(big))
        too_large = await p.receive()
        assert too_large["error"]["code"] == -32600 and "1000" in too_large["error"]["message"]
        # the bound is in UTF-8 bytes: fewer than 1000 characters, more than 1200 bytes
        await p.ws.send(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 2,
                    "method": "ping",
                    "params": {"_meta": {"pad": "€" * 400}},
                },
                ensure_ascii=False,
            )
        )
        assert (await p.receive())["error"]["code"] == -32600
        await p.ws.send("{not json")
        assert (await p.receive())["error"]["code"] == -32700
        # binary frames carry messages too
        await p.ws.send(json.dumps({"jsonrpc": "2.0", "id": 3, "method": "ping"}).encode())
        assert await p.receive() == {"jsonrpc": "2.0", "id": 3, "result": {}}
        assert (await p.request(4, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 1}}))[
            "id"
        ] == 4


async def test_disconnect_cancels_running_work(app):
    async with asyncio.timeout(30), serving(app) as (url, _):
        server = app.instances[0]
        async with peer(url) as p:
            await p.initialize()
            await p.send(call(1, "hang"))
            await asyncio.wait_for(server.started.wait(), WAIT)
            assert app.dispatcher.in_flight_count() == 1
            assert len(app.connections) == 1
        await asyncio.wait_for(server.cancelled.wait(), WAIT)
        await wait_until(lambda: app.dispatcher.in_flight_count() == 0, "no call in flight", WAIT)
        await wait_until(lambda: len(app.connections) == 0, "the connection gone", WAIT)


async def test_disabled_websocket_refuses_the_handshake(app):
    async with asyncio.timeout(30), serving(app, enable_websocket=False) as (url, _):
        with pytest.raises(InvalidStatus) as refused:
            async with peer(url):
                pass
        assert refused.value.response.status_code == 403


# the connection guard --------------------------------------------------------------------


class GuardedOptions(StreamableHttpServerOptions):
    """Options with the ``websocket_guard`` hook (a subclass: the base class has slots)."""


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync-guard", "async-guard"])
async def test_guard_refuses_before_the_handshake(app, asynchronous):
    seen: list[Mapping[str, str]] = []

    def check(headers: Mapping[str, str]) -> bool:
        seen.append(headers)
        return headers.get("x-token") == "let-me-in"

    async def check_async(headers: Mapping[str, str]) -> bool:
        return check(headers)

    options = GuardedOptions(enable_legacy_sse=False)
    options.websocket_guard = check_async if asynchronous else check  # type: ignore[attr-defined]
    async with asyncio.timeout(30), serving(app, options) as (url, _):
        # ASGI: a close before accept refuses the upgrade itself (uvicorn answers HTTP 403),
        # so the client never gets an open socket to send anything on.
        with pytest.raises(InvalidStatus) as refused:
            async with peer(url, additional_headers={"x-token": "wrong"}):
                pass
        assert refused.value.response.status_code == 403
        assert len(app.connections) == 0
        async with peer(url, additional_headers={"x-token": "let-me-in"}) as p:
            await p.initialize()
            assert (await p.request(1, "ping"))["result"] == {}
        assert [h.get("x-token") for h in seen] == ["wrong", "let-me-in"]


async def test_guard_that_raises_refuses(app):
    def broken(headers: Mapping[str, str]) -> bool:
        raise RuntimeError("guard bug")

    options = GuardedOptions(enable_legacy_sse=False)
    options.websocket_guard = broken  # type: ignore[attr-defined]
    async with asyncio.timeout(30), serving(app, options) as (url, _):
        with pytest.raises(InvalidStatus):
            async with peer(url):
                pass


async def test_server_shutdown_closes_open_sockets(app):
    async with asyncio.timeout(30):
        async with serving(app) as (url, _):
            ws = await connect(ws_url(url), **NO_PROXY, open_timeout=WAIT, close_timeout=1)
            p = Peer(ws)
            await p.initialize()
        # leaving ``serving`` shut the server down without waiting for us
        with pytest.raises(ConnectionClosed):
            async with asyncio.timeout(WAIT):
                await ws.recv()
        await ws.close()
