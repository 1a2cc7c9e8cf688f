"""uvicorn's command line serving an mcpkit app on mcpkit's HTTP protocol: named
(``--http mcpkit.transports.http.protocol:McpHttpProtocol``), or taken at lifespan
start-up under ``--http auto`` (uvicorn's default) and ``--http httptools``
(``own_http_protocol``), which uvicorn's log then says. Calls are answered, and the
default header bound holds. ``--http h11``, or ``own_http_protocol=False``, keeps uvicorn's
protocol (its httptools one has no bound: it reads on)."""

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
    kept = create_asgi_app(
        McpServerApp(add), StreamableHttpServerOptions(stateless=True, own_http_protocol=False)
    )
"""
PROTOCOL = "mcpkit.transports.http.protocol:McpHttpProtocol"
#: How uvicorn is started, and whether mcpkit's protocol then serves.
STARTS = {
    "--http mcpkit": (["server:app", "--http", PROTOCOL], True),
    "--http auto": (["server:app"], True),
    "--http httptools": (["server:app", "--http", "httptools"], True),
    "--http h11": (["server:app", "--http", "h11"], False),
    "own_http_protocol=False": (["server:kept", "--http", "httptools"], False),
}
#: The starts where the app takes the protocol at start-up (not named by the command).
TAKING = ("--http auto", "--http httptools")
#: What uvicorn's log says when the app took the protocol at start-up.
TAKEN = b"mcpkit serves on its own HTTP protocol"


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cli")
    (path / "server.py").write_text(textwrap.dedent(SERVER))
    return path


@pytest.fixture(scope="module", params=list(STARTS))
def started(request: pytest.FixtureRequest, folder: Path) -> Iterator[tuple[int, bool, Path, bool]]:
    arguments, ours = STARTS[request.param]
    taken = request.param in TAKING
    port = free_port()
    command = [sys.executable, "-m", "uvicorn", "--app-dir", str(folder), *arguments]
    command += ["--port", str(port), "--log-level", "info", "--no-access-log"]
    log = folder / f"{port}.log"
    with log.open("wb") as out:
        with server_process(command, port, cwd=Path(__file__).parents[2], stderr=out):
            yield port, ours, log, taken


def test_the_log_says_when_the_protocol_was_taken(started):
    _, _, log, taken = started
    said = log.read_bytes()
    assert b"Application startup complete" in said
    assert (TAKEN in said) is taken


def test_a_call_is_answered(started):
    port, _, _, _ = started
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
    port, ours, _, _ = started
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
