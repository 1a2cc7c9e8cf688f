"""A served request leaves no reference cycle behind: everything it made is freed by
reference counting the moment it is answered, so the garbage collector has nothing to find
(cyclic garbage per request costs every collection under load). Driven through the ASGI app
directly, so what is measured is mcpkit's alone."""

from __future__ import annotations

import asyncio
import gc
from typing import Any

import pytest

from mcpkit import McpServerApp, McpToolContext, mcp_server, mcp_tool
from mcpkit.transports.http import StreamableHttpServerOptions, create_asgi_app

MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
}


@mcp_server(name="garbage")
class Tools:
    @mcp_tool()
    async def add(self, a: int, b: int) -> int:
        return a + b

    @mcp_tool()
    async def chatty(self, ctx: McpToolContext) -> str:
        await ctx.report_progress(1, 2, "half way")
        return "done"


class Asgi:
    """Calls the app as a server would, one request at a time."""

    def __init__(self, stateless: bool) -> None:
        self.app = create_asgi_app(
            McpServerApp(Tools), StreamableHttpServerOptions(stateless=stateless)
        )
        self.session: bytes | None = None

    async def post(
        self, body: bytes, version: bytes = b"2025-11-25", **extra: bytes
    ) -> list[dict[str, Any]]:
        headers = [
            (b"host", b"127.0.0.1:3001"),
            (b"accept", b"application/json, text/event-stream"),
            (b"content-type", b"application/json"),
            (b"mcp-protocol-version", version),
            *((name.replace("_", "-").encode(), value) for name, value in extra.items()),
        ]
        if self.session is not None:
            headers.append((b"mcp-session-id", self.session))
        scope = {
            "type": "http",
            "method": "POST",
            "path": "/mcp",
            "query_string": b"",
            "headers": headers,
        }
        pending = [{"type": "http.request", "body": body, "more_body": False}]
        done = asyncio.get_running_loop().create_future()
        sent: list[dict[str, Any]] = []

        async def receive() -> dict[str, Any]:
            if pending:
                return pending.pop()
            await done
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        await self.app(scope, receive, send)
        done.set_result(None)
        return sent


def call(tool: str, request_id: int = 1, meta: dict[str, Any] | None = None) -> bytes:
    import json

    params: dict[str, Any] = {"name": tool, "arguments": {"a": 1, "b": 2} if tool == "add" else {}}
    if meta:
        params["_meta"] = meta
    return json.dumps(
        {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
    ).encode()


async def cyclic_garbage_after(requests: int, one_request: Any) -> int:
    for _ in range(5):  # warm up: caches, lazily made tasks
        await one_request()
    gc.collect()
    gc.disable()
    try:
        for _ in range(requests):
            await one_request()
        await asyncio.sleep(0)
        return gc.collect()
    finally:
        gc.enable()


@pytest.mark.parametrize("tool", ["add", "chatty"])
async def test_stateless_calls_leave_no_cycles(tool: str) -> None:
    asgi = Asgi(stateless=True)

    async def one() -> None:
        sent = await asgi.post(call(tool))
        assert sent[0]["status"] == 200

    assert await cyclic_garbage_after(50, one) == 0


@pytest.mark.parametrize("tool", ["add", "chatty"])
async def test_session_calls_leave_no_cycles(tool: str) -> None:
    asgi = Asgi(stateless=False)
    init = b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
    sent = await asgi.post(init)
    asgi.session = dict(sent[0]["headers"])[b"mcp-session-id"]
    await asgi.post(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')

    async def one() -> None:
        sent = await asgi.post(call(tool))
        assert sent[0]["status"] == 200

    assert await cyclic_garbage_after(50, one) == 0


async def test_2026_calls_leave_no_cycles() -> None:
    asgi = Asgi(stateless=True)

    async def one() -> None:
        sent = await asgi.post(
            call("add", meta=MODERN_META),
            version=b"2026-07-28",
            mcp_method=b"tools/call",
            mcp_name=b"add",
        )
        assert sent[0]["status"] == 200 and b'"resultType":"complete"' in sent[-1]["body"]

    assert await cyclic_garbage_after(50, one) == 0


async def test_in_memory_client_and_server_calls_leave_no_cycles() -> None:
    from mcpkit import McpClient

    async with McpClient.in_memory(McpServerApp(Tools)) as client:

        async def one() -> None:
            result = await client.call_tool("add", {"a": 1, "b": 2})
            assert result.content[0].text == "3"

        assert await cyclic_garbage_after(50, one) == 0
