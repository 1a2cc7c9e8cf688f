"""A server request the server gives up on is cancelled at the client too: a server whose
request (an elicitation) timed out sends ``notifications/cancelled`` for it, as the spec asks
of a sender that stops waiting, and mcpkit's client cancels the handler answering it and
sends no answer. The handler's place among those the client answers at once is free again.

mcpkit on both sides, in memory and over Streamable HTTP (real uvicorn on 127.0.0.1); and
the client's session alone, fed the notification by a scripted peer.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from mcpkit import McpClient, McpServerApp, McpToolContext, mcp_server, mcp_tool
from mcpkit._exceptions import RequestTimeoutError
from mcpkit.client import ClientSession
from tests.client._peers import ScriptedPeer
from tests.http_server import serving
from tests.waiting import wait_until

WAIT = 10.0

pytestmark = pytest.mark.timeout(60)


@mcp_server(name="impatient")
class Impatient:
    @mcp_tool()
    async def ask(self, ctx: McpToolContext, wait: float) -> str:
        try:
            await ctx.elicit("Your name?", str, timeout=wait)
        except RequestTimeoutError:
            return "gave up"
        return "answered"


class Asked:
    """An elicitation handler that never answers, and notes being cancelled."""

    def __init__(self) -> None:
        self.started = 0
        self.cancelled = asyncio.Event()

    async def __call__(self, params: dict[str, Any]) -> dict[str, Any]:
        self.started += 1
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        raise AssertionError("never answered")


@contextlib.asynccontextmanager
async def client_of(transport: str, handler: Asked) -> AsyncIterator[McpClient]:
    app = McpServerApp(Impatient)
    if transport == "memory":
        async with McpClient.in_memory(app, elicitation_handler=handler) as client:
            yield client
        return
    async with (
        serving(app) as (url, _),
        McpClient.http(url, protocol_mode="legacy", elicitation_handler=handler) as client,
    ):
        yield client


@pytest.mark.parametrize("transport", ["memory", "http"])
async def test_a_request_the_server_gave_up_on_is_cancelled_at_the_client(transport):
    handler = Asked()
    async with asyncio.timeout(30), client_of(transport, handler) as client:
        client.session.max_server_requests = 1
        result = await client.call_tool("ask", {"wait": 0.3})
        assert result.content[0].text == "gave up"  # type: ignore[union-attr]
        async with asyncio.timeout(WAIT):
            await handler.cancelled.wait()
        # Its place is free (freed as it was cancelled): the next request is handled, not
        # refused as one too many.
        handler.cancelled.clear()
        result = await client.call_tool("ask", {"wait": 0.3})
        assert result.content[0].text == "gave up"  # type: ignore[union-attr]
        async with asyncio.timeout(WAIT):
            await handler.cancelled.wait()
        assert handler.started == 2


def cancelled(request_id: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": request_id, "reason": "gave up"},
    }


async def test_the_cancelled_handler_sends_no_answer_and_others_go_on():
    handler = Asked()
    noted: list[str] = []

    async def on_request(method: str, params: dict[str, Any]) -> dict[str, Any]:
        if params.get("slow"):
            return await handler(params)
        return {"roots": []}

    async def on_notification(method: str, params: dict[str, Any]) -> None:
        noted.append(method)

    peer = ScriptedPeer(
        [{"jsonrpc": "2.0", "id": 7, "method": "roots/list", "params": {"slow": True}}]
    )
    session = ClientSession(peer, on_request=on_request, on_notification=on_notification)  # type: ignore[arg-type]
    session.start()
    await wait_until(lambda: handler.started == 1, "the slow handler's start")
    # Ids naming nothing (another, unhashable, none) change nothing.
    for request_id in (8, ["7"], None):
        peer.inbound.put_nowait(json.dumps(cancelled(request_id)).encode())
    peer.inbound.put_nowait(json.dumps({"jsonrpc": "2.0", "id": 9, "method": "ping"}).encode())
    await wait_until(lambda: [m["id"] for m in peer.sent] == [9], "the ping's answer")
    assert not handler.cancelled.is_set()
    peer.inbound.put_nowait(json.dumps(cancelled(7)).encode())
    async with asyncio.timeout(WAIT):
        await handler.cancelled.wait()
    await wait_until(lambda: noted.count("notifications/cancelled") == 4, "every notification")
    assert [m["id"] for m in peer.sent] == [9]  # none for 7
    await session.aclose()
