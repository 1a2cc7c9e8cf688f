"""uvicorn's command line serving an mcpkit app: on mcpkit's HTTP protocol only when the
command names it (``--http mcpkit.transports.http.protocol:McpHttpProtocol``); under
``--http auto`` (uvicorn's default), ``httptools`` or ``h11`` the app serves on the protocol
uvicorn chose and leaves it alone. Calls are answered either way; the default header bound
holds on mcpkit's protocol only (uvicorn's httptools protocol has none: it reads on)."""

from __future__ import annotations

import asyncio
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import uvicorn

from mcpkit.transports.http import StreamableHttpServerOptions
from mcpkit.transports.http._server.protocol import protocol_refusal
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
#: How uvicorn is started, and whether mcpkit's protocol is named (it serves when this uvicorn
#: is one it is tested with; else uvicorn's own serves, and the log says why).
STARTS = {
    "--http mcpkit": (["server:app", "--http", PROTOCOL], True),
    "--http auto": (["server:app"], False),
    "--http httptools": (["server:app", "--http", "httptools"], False),
    "--http h11": (["server:app", "--http", "h11"], False),
}


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cli")
    (path / "server.py").write_text(textwrap.dedent(SERVER))
    return path


@pytest.fixture(
    scope="module",
    params=[
        # uvicorn takes a protocol class on its command line only from 0.35: mcpkit's is
        # named where its gate lets it serve.
        pytest.param(start, marks=pytest.mark.mcpkit_protocol) if STARTS[start][1] else start
        for start in STARTS
    ],
)
def started(request: pytest.FixtureRequest, folder: Path) -> Iterator[tuple[int, bool, Path]]:
    arguments, named = STARTS[request.param]
    ours = named and protocol_refusal(uvicorn.__version__) is None
    port = free_port()
    command = [sys.executable, "-m", "uvicorn", "--app-dir", str(folder), *arguments]
    command += ["--port", str(port), "--log-level", "info", "--no-access-log"]
    log = folder / f"{port}.log"
    with log.open("wb") as out:
        with server_process(command, port, cwd=Path(__file__).parents[2], stderr=out):
            yield port, ours, log


def test_the_log_says_why_when_a_named_protocol_cannot_serve(started, request):
    _, ours, log = started
    said = log.read_bytes()
    assert b"Application startup complete" in said
    refused = STARTS[request.node.callspec.params["started"]][1] and not ours
    assert (b"is not a release mcpkit's HTTP protocol is tested with" in said) is refused


def test_a_call_is_answered(started):
    port, _, _ = started
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
    call["params"] = {"name": "add", "arguments": {"a": 2, "b": 3}}
    headers = {
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2025-11-25",
    }
    answer = httpx.post(f"http://127.0.0.1:{port}/mcp", json=call, headers=headers, timeout=10)
    assert answer.status_code == 200
    assert answer.json()["result"]["structuredContent"] == {"result": 5}


async def test_headers_past_the_default_bound_get_431_on_mcpkits_protocol(started):
    port, ours, _ = started
    bound = StreamableHttpServerOptions().max_header_bytes
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * (bound + 1000))
    await writer.drain()
    try:
        async with asyncio.timeout(5 if ours else 1):
            answer = await reader.read()
    except TimeoutError:
        answer = b"(nothing: still reading)"
    except ConnectionError:
        answer = b"(closed)"
    writer.close()
    if ours:
        assert answer.startswith(b"HTTP/1.1 431 "), answer[:80]
    else:
        assert not answer.startswith(b"HTTP/1.1 431 "), answer[:80]
