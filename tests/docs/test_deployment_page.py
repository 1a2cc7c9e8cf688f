"""docs/deployment.md's rule for several workers or instances: a 2026-07-28 call that asks
for input is retried with a ``requestState`` the asking process signed, so another process
takes the retry only when both apps share ``request_state_secret``; the refusal is the
-32602 the page quotes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from mcpkit import McpServerApp, McpToolContext
from mcpkit.transports.http import StreamableHttpServerOptions, create_asgi_app

PAGE = Path(__file__).resolve().parents[2] / "docs" / "deployment.md"
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
    "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
}
HEADERS = {
    "accept": "application/json, text/event-stream",
    "content-type": "application/json",
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": "tools/call",
    "mcp-name": "ask",
}


def worker(secret: bytes | None) -> Any:
    app = McpServerApp("ask", request_state_secret=secret)

    @app.tool()
    async def ask(ctx: McpToolContext) -> str:
        return f"hi {(await ctx.elicit('name?', str)).content}"

    return create_asgi_app(app, StreamableHttpServerOptions(stateless=True))


async def call(asgi: Any, params: dict[str, Any]) -> dict[str, Any]:
    transport = httpx.ASGITransport(app=asgi)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
        answer = await client.post("/mcp", headers=HEADERS, json=body)
    if answer.headers["content-type"].startswith("text/event-stream"):
        data = [line[5:] for line in answer.text.splitlines() if line.startswith("data:")]
        return json.loads(data[-1])  # type: ignore[no-any-return]
    return answer.json()  # type: ignore[no-any-return]


async def asked_here_answered_there(first: Any, second: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"name": "ask", "arguments": {}, "_meta": META}
    round_one = (await call(first, params))["result"]
    assert round_one["resultType"] == "input_required"
    answers = {
        key: {"action": "accept", "content": {"value": "Ada"}} for key in round_one["inputRequests"]
    }
    retry = {**params, "requestState": round_one["requestState"], "inputResponses": answers}
    return await call(second, retry)


async def test_a_retry_on_another_worker_needs_the_same_secret():
    shared = b"s" * 32
    answered = await asked_here_answered_there(worker(shared), worker(shared))
    assert answered["result"]["content"][0]["text"] == "hi Ada"

    refused = await asked_here_answered_there(worker(None), worker(None))
    assert refused["error"]["code"] == -32602
    message = refused["error"]["message"]
    assert message == "Invalid requestState: it was altered or not issued by this server"
    assert f'"{message}"' in " ".join(PAGE.read_text(encoding="utf-8").split())
