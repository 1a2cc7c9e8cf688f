"""``max_concurrent_requests``: an endpoint serves at most that many requests at once, so a
flood of stateless or 2026-07-28 POSTs (each a connection of its own, which no per-session
bound adds up) cannot grow the server without bound. One more is answered 503 with
``Retry-After`` at once, its body unread; the requests in progress go on, and once one ends
the next is served. Real sockets on 127.0.0.1."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urljoin

import httpx
import pytest

from mcpkit import McpCallError, McpClient, McpServerApp
from mcpkit.transports.http import StreamableHttpServerOptions, create_asgi_app
from mcpkit.transports.http._options import DEFAULT_MAX_CONCURRENT_REQUESTS
from tests.http_server import POST_HEADERS, open_session, serving
from tests.legacy_sse_client import LegacyStream

LIMIT = 3
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
}


class Gate:
    """A tool that waits until the test opens the gate, counting the calls inside it."""

    def __init__(self) -> None:
        self.inside = 0
        self.opened = asyncio.Event()

    def app(self) -> McpServerApp:
        app = McpServerApp(name="gated")

        @app.tool()
        async def wait(n: int) -> int:
            """Waits for the gate, then answers ``n``."""
            self.inside += 1
            await self.opened.wait()
            return n

        return app

    async def until_inside(self, count: int) -> None:
        async with asyncio.timeout(5):
            while self.inside < count:
                await asyncio.sleep(0.01)


def call(n: int, modern: bool = False) -> tuple[dict[str, Any], dict[str, str]]:
    """A tools/call of ``wait`` and its headers (2025-11-25, or 2026-07-28)."""
    params: dict[str, Any] = {"name": "wait", "arguments": {"n": n}}
    headers = {**POST_HEADERS, "mcp-protocol-version": "2025-11-25"}
    if modern:
        params["_meta"] = MODERN_META
        headers.update(
            {"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "wait"}
        )
    return {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": params}, headers


def assert_busy(response: httpx.Response) -> None:
    assert response.status_code == 503, response.text
    assert response.headers["retry-after"] == "1"
    error = response.json()["error"]
    assert error["code"] == -32603
    assert error["message"] == f"Server busy: {LIMIT} requests in progress; try again later"
    assert error["data"] == {"retryable": True}


def answered(response: httpx.Response) -> int:
    assert response.status_code == 200, response.text
    result: int = response.json()["result"]["structuredContent"]["result"]
    return result


@contextlib.asynccontextmanager
async def held(
    http: httpx.AsyncClient, url: str, headers_of: Any, count: int, gate: Gate
) -> AsyncIterator[list[asyncio.Task[httpx.Response]]]:
    """``count`` calls in progress (inside the gate) until the block ends; then the gate
    opens and they are answered."""
    calls = []
    for n in range(count):
        body, headers = call(n)
        calls.append(asyncio.create_task(http.post(url, json=body, headers=headers_of(headers))))
    await gate.until_inside(count)
    try:
        yield calls
    finally:
        gate.opened.set()
        await asyncio.wait(calls, timeout=5)


@pytest.mark.parametrize("modern", [False, True], ids=["2025-11-25", "2026-07-28"])
async def test_a_stateless_post_past_the_bound_is_refused_503_and_the_others_go_on(
    modern: bool,
) -> None:
    gate = Gate()
    async with (
        serving(gate.app(), stateless=True, max_concurrent_requests=LIMIT) as (url, _),
        httpx.AsyncClient(timeout=10) as http,
    ):
        async with held(http, url, lambda headers: headers, LIMIT, gate) as calls:
            body, headers = call(99, modern)
            assert_busy(await http.post(url, json=body, headers=headers))
            assert gate.inside == LIMIT  # refused before it ran: the tool never saw it
        assert sorted(answered(task.result()) for task in calls) == list(range(LIMIT))
        # The slots are free again: the next call is served.
        body, headers = call(7, modern)
        assert answered(await http.post(url, json=body, headers=headers)) == 7


async def test_calls_in_sessions_count_too_and_the_session_goes_on() -> None:
    gate = Gate()
    async with (
        serving(gate.app(), max_concurrent_requests=LIMIT) as (url, _),
        httpx.AsyncClient(timeout=10) as http,
    ):
        session = await open_session(http, url)
        async with held(http, url, lambda headers: {**headers, **session}, LIMIT, gate):
            body, _ = call(99)
            assert_busy(await http.post(url, json=body, headers=session))
        body, _ = call(8)
        assert answered(await http.post(url, json=body, headers=session)) == 8


async def test_mcpkit_client_is_told_the_server_is_busy() -> None:
    gate = Gate()
    async with (
        serving(gate.app(), stateless=True, max_concurrent_requests=LIMIT) as (url, _),
        httpx.AsyncClient(timeout=10) as http,
        McpClient.http(url, protocol_mode="modern") as client,
    ):
        async with held(http, url, lambda headers: headers, LIMIT, gate):
            with pytest.raises(McpCallError) as refused:
                await client.call_tool("wait", {"n": 1})
            assert refused.value.code == -32603
            assert str(refused.value).startswith(
                "Server busy: 3 requests in progress; try again later (HTTP 503)"
            )
        assert (await client.call_tool("wait", {"n": 2})).structured_content == {"result": 2}


async def _trickled_legacy_post(endpoint: str) -> asyncio.StreamWriter:
    """A legacy SSE POST whose body never arrives in full: it holds one watched slot."""
    host, rest = endpoint.split("//", 1)[1].split("/", 1)
    name, port = host.split(":")
    reader, writer = await asyncio.open_connection(name, int(port))
    writer.write(
        f"POST /{rest} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
        "Content-Length: 1000\r\n\r\n{".encode()
    )
    await writer.drain()
    return writer


async def test_legacy_sse_posts_whose_bodies_are_read_count_against_the_bound() -> None:
    gate = Gate()
    async with (
        serving(gate.app(), enable_legacy_sse=True, max_concurrent_requests=LIMIT) as (url, _),
        httpx.AsyncClient(timeout=10) as http,
        LegacyStream(http, url) as stream,
    ):
        endpoint = urljoin(url, stream.endpoint)
        writers = [await _trickled_legacy_post(endpoint) for _ in range(LIMIT)]
        try:
            async with asyncio.timeout(5):  # until all three bodies are being read
                while True:
                    answer = await http.post(endpoint, json={"jsonrpc": "2.0", "method": "ping"})
                    if answer.status_code == 503:
                        break
                    await asyncio.sleep(0.02)
            assert_busy(answer)
        finally:
            for writer in writers:
                writer.close()
        async with asyncio.timeout(5):  # the bodies that never came are let go
            while (
                await http.post(endpoint, json={"jsonrpc": "2.0", "method": "ping"})
            ).status_code != 202:
                await asyncio.sleep(0.02)


def test_the_bound_has_a_default_and_must_be_positive() -> None:
    assert StreamableHttpServerOptions().max_concurrent_requests == DEFAULT_MAX_CONCURRENT_REQUESTS
    with pytest.raises(ValueError, match="max_concurrent_requests must be at least 1, not 0"):
        create_asgi_app(
            McpServerApp(name="x"), StreamableHttpServerOptions(max_concurrent_requests=0)
        )
