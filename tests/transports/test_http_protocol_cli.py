"""uvicorn's command line serving an mcpkit app on mcpkit's HTTP protocol
(``--http mcpkit.transports.http.protocol:McpHttpProtocol``): calls are answered, and the
default header bound holds (uvicorn's own protocol has none: it would read on)."""

from __future__ import annotations

import asyncio
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from mcpkit.transports.http import StreamableHttpServerOptions
from tests.http_server import free_port, server_process

SERVER = """
    from mcpkit import McpServerApp, mcp_tool
    from mcpkit.transports.http import StreamableHttpServerOptions, create_asgi_app

    @mcp_tool
    def add(a: int, b: int) -> int:
        return a + b

    app = create_asgi_app(McpServerApp(add), StreamableHttpServerOptions(stateless=True))
"""
PROTOCOL = "mcpkit.transports.http.protocol:McpHttpProtocol"


@pytest.fixture(scope="module")
def port(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    folder = tmp_path_factory.mktemp("cli")
    (folder / "server.py").write_text(textwrap.dedent(SERVER))
    port = free_port()
    command = [sys.executable, "-m", "uvicorn", "--app-dir", str(folder), "server:app"]
    command += ["--port", str(port), "--http", PROTOCOL, "--log-level", "warning"]
    with server_process(command, port, cwd=Path(__file__).parents[2]):
        yield port


def test_a_call_is_answered(port):
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
    call["params"] = {"name": "add", "arguments": {"a": 2, "b": 3}}
    headers = {
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2025-11-25",
    }
    answer = httpx.post(f"http://127.0.0.1:{port}/mcp", json=call, headers=headers, timeout=10)
    assert answer.status_code == 200
    assert answer.json()["result"]["structuredContent"] == {"result": 5}


async def test_headers_past_the_default_bound_get_431(port):
    bound = StreamableHttpServerOptions().max_header_bytes
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * (bound + 1000))
    await writer.drain()
    async with asyncio.timeout(5):
        answer = await reader.read()
    writer.close()
    assert answer.startswith(b"HTTP/1.1 431 "), answer[:80]
