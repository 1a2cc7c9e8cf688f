"""An mcpkit app is a guest in its host's process: mounted in FastAPI and started through the
host's lifespan, or served as the top-level app by the host's uvicorn, it answers calls and
leaves the host's garbage collector unfrozen and uvicorn's HTTP protocol as uvicorn chose it.
Only a process mcpkit runs (``run_http_server``) freezes the collector after start-up."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import sys
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest
import uvicorn
from fastapi import FastAPI

from mcpkit import McpClient, McpServerApp, StdioClientTransportOptions, mcp_tool
from mcpkit.transports.http import McpAsgiApp, StreamableHttpServerOptions, create_asgi_app
from tests.http_server import POST_HEADERS, free_port
from tests.wire import initialize_request


@mcp_tool
def add(a: int, b: int) -> int:
    return a + b


@pytest.fixture(autouse=True)
def unfrozen() -> Iterator[None]:
    gc.unfreeze()
    yield
    gc.unfreeze()


@contextlib.asynccontextmanager
async def served(asgi: object) -> AsyncIterator[tuple[str, uvicorn.Server]]:
    """``asgi`` served by uvicorn as a host serves it (its defaults: ``--http auto``, the
    lifespan on), on 127.0.0.1."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(asgi, host="127.0.0.1", port=port, log_level="warning"))
    task = asyncio.create_task(server.serve())
    try:
        async with asyncio.timeout(10):
            while not server.started:
                await asyncio.sleep(0.01)
        yield f"http://127.0.0.1:{port}", server
    finally:
        server.should_exit = True
        async with asyncio.timeout(10):
            await asyncio.gather(task, return_exceptions=True)


async def initialize(url: str) -> None:
    async with httpx.AsyncClient(timeout=10) as http:
        answer = await http.post(url, json=initialize_request(), headers=POST_HEADERS)
    assert answer.status_code == 200, answer.text
    assert answer.json()["result"]["serverInfo"]["name"]


async def test_a_fastapi_host_keeps_its_collector_and_its_protocol():
    mcp = create_asgi_app(McpServerApp(add))
    api = FastAPI(lifespan=mcp.lifespan)
    api.mount("/tools", mcp)
    async with served(api) as (base, server):
        protocol = server.config.http_protocol_class
        await initialize(f"{base}/tools/mcp")
        assert gc.get_freeze_count() == 0
        assert server.config.http_protocol_class is protocol
        assert protocol.__module__.startswith("uvicorn.")


async def test_served_by_the_hosts_uvicorn_it_changes_nothing():
    async with served(create_asgi_app(McpServerApp(add))) as (base, server):
        await initialize(f"{base}/mcp")
        assert gc.get_freeze_count() == 0
        assert server.config.http_protocol_class.__module__.startswith("uvicorn.")


@pytest.mark.parametrize(
    ("owns_process", "freeze", "frozen"),
    [(False, None, False), (True, None, True), (True, False, False), (False, True, True)],
)
async def test_the_collector_is_frozen_only_where_asked_or_owned(owns_process, freeze, frozen):
    asgi = McpAsgiApp(McpServerApp(add), StreamableHttpServerOptions(freeze_gc_at_startup=freeze))
    asgi.owns_process = owns_process  # what run_http_server sets
    await asgi.startup()
    try:
        assert (gc.get_freeze_count() > 0) is frozen
    finally:
        await asgi.shutdown()


STDIO_SERVER = """
import asyncio, gc, sys
from mcpkit import McpServerApp, mcp_tool, serve_stdio

@mcp_tool
def frozen() -> int:
    return gc.get_freeze_count()

asyncio.run(serve_stdio(McpServerApp(frozen), freeze_gc=sys.argv[1] == "freeze"))
"""


@pytest.mark.parametrize("freeze", [True, False], ids=["the-program", "beside-other-work"])
async def test_serve_stdio_freezes_the_collector_unless_told_not_to(tmp_path, freeze):
    """``serve_stdio`` takes stdin, stdout and the signals: it is the program and freezes
    what start-up left alive, unless its caller says it does work of its own beside."""
    script = tmp_path / "server.py"
    script.write_text(STDIO_SERVER)
    options = StdioClientTransportOptions(
        command=sys.executable, arguments=[str(script), "freeze" if freeze else "keep"]
    )
    async with asyncio.timeout(30), McpClient.stdio(options) as client:
        count = (await client.call_tool("frozen")).structured_content["result"]
    assert (count > 0) is freeze, count
