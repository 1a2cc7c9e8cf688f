"""Large answers over Streamable HTTP: a 5 MiB tool result and a 5 MiB resource come back
whole, as JSON and as SSE (a call that reports progress first), stateless and in a session,
to httpx and to the official client; and answering one costs at most 3x the payload in
memory beyond the text itself (an SSE frame writes the encoded JSON as it is, not copied),
the first answer and the ones after it alike."""

from __future__ import annotations

import asyncio
import gc
import json
import tracemalloc
from typing import Any

import httpx
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from mcpkit import McpServerApp, McpToolContext, mcp_resource, mcp_server, mcp_tool
from mcpkit.protocol._sse import SseDecoder
from mcpkit.transports.http import StreamableHttpServerOptions, create_asgi_app
from tests.http_server import serving
from tests.raw_asgi import post_scope
from tests.wire import initialize_request

PAYLOAD = 5 * 1024 * 1024
_LINE = 'a line with "quotes", a tab\there, a backslash \\ and é, to 64 chars.\n'
TEXT = (_LINE * (PAYLOAD // len(_LINE) + 1))[:PAYLOAD]
URI = "big://text"
HEADERS = {
    "accept": "application/json, text/event-stream",
    "content-type": "application/json",
    "mcp-protocol-version": "2025-11-25",
}


@mcp_server(name="large")
class Large:
    @mcp_tool()
    async def big(self, ctx: McpToolContext = None) -> str:  # type: ignore[assignment]
        """The large text (after one progress report, when asked for)."""
        await ctx.report_progress(1, 1)
        return TEXT

    @mcp_resource(URI, mime_type="text/plain")
    async def big_text(self, ctx: McpToolContext = None) -> str:  # type: ignore[assignment]
        """The large text as a resource."""
        await ctx.report_progress(1, 1)
        return TEXT


def _request(kind: str, sse: bool) -> dict[str, Any]:
    params: dict[str, Any] = {"name": "big", "arguments": {}} if kind == "tool" else {"uri": URI}
    if sse:
        params["_meta"] = {"progressToken": "p"}
    method = "tools/call" if kind == "tool" else "resources/read"
    return {"jsonrpc": "2.0", "id": 7, "method": method, "params": params}


def _text_of(message: dict[str, Any], kind: str) -> str:
    result = message["result"]
    item = result["content"][0] if kind == "tool" else result["contents"][0]
    return str(item["text"])


def _sse_messages(body: bytes) -> list[dict[str, Any]]:
    decoder = SseDecoder(max_event_bytes=None)
    return [json.loads(event.data) for event in decoder.feed(body) if event.data]


async def _session_headers(client: httpx.AsyncClient, url: str) -> dict[str, str]:
    init = initialize_request()
    response = await client.post(url, json=init, headers=HEADERS)
    headers = {**HEADERS, "mcp-session-id": response.headers["mcp-session-id"]}
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert (await client.post(url, json=note, headers=headers)).status_code == 202
    return headers


@pytest.mark.parametrize("stateless", [True, False], ids=["stateless", "session"])
async def test_large_answers_come_back_whole_as_json_and_as_sse(stateless):
    async with (
        asyncio.timeout(30),
        serving(McpServerApp(Large), stateless=stateless) as (url, _),
        httpx.AsyncClient(timeout=20) as client,
    ):
        headers = HEADERS if stateless else await _session_headers(client, url)
        for kind in ("tool", "resource"):
            json_only = {**headers, "accept": "application/json"}
            plain = await client.post(url, json=_request(kind, False), headers=json_only)
            assert plain.headers["content-type"] == "application/json"
            assert int(plain.headers["content-length"]) == len(plain.content) > PAYLOAD
            assert _text_of(plain.json(), kind) == TEXT

            streamed = await client.post(url, json=_request(kind, True), headers=headers)
            assert streamed.headers["content-type"].startswith("text/event-stream")
            messages = _sse_messages(streamed.content)
            assert messages[-2]["method"] == "notifications/progress"
            assert messages[-1]["id"] == 7 and _text_of(messages[-1], kind) == TEXT


async def test_the_official_client_reads_a_large_sse_answer():
    async with asyncio.timeout(30), serving(McpServerApp(Large)) as (url, _):
        # Its SSE events are bounded to 1 MiB by default: raised for this answer.
        async with streamable_http_client(url, max_sse_event_size=4 * PAYLOAD) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=20) as session:
                await session.initialize()
                reports: list[float] = []

                async def on_progress(value: float, total: float | None, msg: str | None) -> None:
                    reports.append(value)

                result = await session.call_tool("big", {}, progress_callback=on_progress)
                assert reports == [1] and not result.is_error
                assert result.content[0].text == TEXT  # type: ignore[union-attr]
                read_back = await session.read_resource(URI)  # type: ignore[arg-type]
                assert read_back.contents[0].text == TEXT  # type: ignore[union-attr]


async def _answer_in_process(asgi: Any, kind: str, sse: bool) -> tuple[int, int]:
    """One POST straight through the ASGI app: (body bytes sent, peak traced bytes)."""
    body = json.dumps(_request(kind, sse)).encode()
    scope = post_scope(HEADERS)
    incoming = [{"type": "http.request", "body": body, "more_body": False}]
    done = asyncio.Event()
    sent = 0

    async def receive() -> dict[str, Any]:
        if incoming:
            return incoming.pop()
        await done.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        nonlocal sent
        sent += len(message.get("body", b""))  # counted, not kept: the socket's part

    gc.collect()
    tracemalloc.start()
    try:
        await asgi(scope, receive, send)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        done.set()
    return sent, peak


@pytest.mark.parametrize("sse", [False, True], ids=["json", "sse"])
@pytest.mark.parametrize("kind", ["tool", "resource"])
async def test_answering_costs_at_most_three_times_the_payload(kind, sse):
    asgi = create_asgi_app(
        McpServerApp(Large), StreamableHttpServerOptions(stateless=True, enable_legacy_sse=False)
    )
    await _answer_in_process(asgi, kind, sse)  # first call: lazily built state, not measured
    for _ in range(3):  # the same text again: escaped again, at the same cost
        sent, peak = await _answer_in_process(asgi, kind, sse)
        assert sent > PAYLOAD
        assert peak <= 3 * PAYLOAD, f"peak {peak / PAYLOAD:.2f}x the payload"
