"""uvicorn serving an mcpkit app: under its command line's ``--http auto`` (the default),
``httptools`` or ``h11`` the app serves on the protocol uvicorn chose and leaves it alone;
``mcpkit run``, the program, bounds request headers around uvicorn's protocol. Calls are
answered either way; the default header bound holds only under ``mcpkit run`` (uvicorn's
httptools protocol has none: it reads on)."""

from __future__ import annotations

import asyncio
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from mcpkit.transports.http import StreamableHttpServerOptions
from tests.environment import child_environment
from tests.ports import Announced, announced_server

SERVER = """
    from mcpkit import McpServerApp, mcp_tool
    from mcpkit.transports.http import StreamableHttpServerOptions, create_asgi_app

    @mcp_tool
    def add(a: int, b: int) -> int:
        return a + b

    server = McpServerApp(add)
    app = create_asgi_app(server, StreamableHttpServerOptions(stateless=True))
"""
#: How uvicorn is started, and whether request headers are bounded.
STARTS = {
    "mcpkit run -t http": (["-m", "mcpkit", "run", "server.py:server", "-t", "http"], True),
    "--http auto": (["-m", "uvicorn", "server:app"], False),
    "--http httptools": (["-m", "uvicorn", "server:app", "--http", "httptools"], False),
    "--http h11": (["-m", "uvicorn", "server:app", "--http", "h11"], False),
}


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cli")
    (path / "server.py").write_text(textwrap.dedent(SERVER))
    return path


@pytest.fixture(scope="module", params=list(STARTS))
def started(request: pytest.FixtureRequest, folder: Path) -> Iterator[tuple[int, bool, Announced]]:
    arguments, bounded = STARTS[request.param]
    env = child_environment()
    if bounded:
        command = [sys.executable, *arguments, "--port", "0", "--stateless"]
        env["PYTHONPATH"] = str(Path(__file__).parents[2])
        cwd = folder
    else:
        command = [sys.executable, *arguments, "--app-dir", str(folder), "--port", "0"]
        command += ["--log-level", "info", "--no-access-log"]
        cwd = Path(__file__).parents[2]
    with announced_server(command, cwd=cwd, env=env) as served:
        yield served.port, bounded, served


def test_the_app_starts_on_the_protocol_uvicorn_was_given(started):
    _, bounded, served = started
    said = served.output()
    assert ("mcpkit: serving" if bounded else "Application startup complete") in said
    assert "WARNING" not in said  # nothing taken over, nothing to warn of


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


async def test_headers_past_the_default_bound_get_431_where_bounded(started):
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
