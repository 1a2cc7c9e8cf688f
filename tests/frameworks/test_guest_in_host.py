"""An mcpkit app is a guest in its host's process: mounted in FastAPI and started through the
host's lifespan, or served as the top-level app by the host's uvicorn, it answers calls and
leaves the host's garbage collector unfrozen and uvicorn's HTTP protocol as uvicorn chose it.
Only a process mcpkit runs (``run_http_server``) freezes the collector after start-up."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import subprocess
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


@pytest.mark.parametrize("freeze", [True, False])
async def test_an_app_a_host_starts_never_freezes_the_collector(freeze):
    asgi = McpAsgiApp(McpServerApp(add), StreamableHttpServerOptions(freeze_gc_at_startup=freeze))
    await asgi.startup()
    try:
        assert gc.get_freeze_count() == 0
    finally:
        await asgi.shutdown()


def test_importing_and_making_the_app_loads_nothing_of_uvicorns_internals():
    """mcpkit's HTTP protocol builds on uvicorn's protocol classes: only whoever serves with
    it (mcpkit run, serve_http, a user naming it) loads it, never an app a host serves."""
    code = (
        "import sys\n"
        "from mcpkit import McpServerApp\n"
        "from mcpkit.transports.http import create_asgi_app\n"
        "create_asgi_app(McpServerApp('x'))\n"
        "print([m for m in sys.modules if m.startswith('uvicorn.protocols')"
        " or m.endswith('._http_cycle')])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


HTTP_SERVER = """
import gc
from mcpkit import McpServerApp, mcp_tool

@mcp_tool
def frozen() -> int:
    return gc.get_freeze_count()

app = McpServerApp(frozen)
"""


@pytest.mark.parametrize(
    "setting", ["", "false"], ids=["default", "MCPKIT_FREEZE_GC_AT_STARTUP=false"]
)
def test_mcpkit_run_freezes_the_collector_unless_told_not_to(tmp_path, setting):
    """``mcpkit run -t http`` runs the process: it freezes what start-up left alive, unless
    ``freeze_gc_at_startup`` is false."""
    (tmp_path / "server.py").write_text(HTTP_SERVER)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCPKIT_")}
    if setting:
        env["MCPKIT_FREEZE_GC_AT_STARTUP"] = setting
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcpkit", "run", "server.py", "-t", "http", "--port", "0"]
        + ["--stateless"],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        banner = proc.stderr.readline()
        assert banner.startswith("mcpkit: serving"), banner
        url = banner.split(" on ", 1)[1].strip()
        with httpx.Client(timeout=10) as http:
            call = {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "frozen", "arguments": {}},
            }
            answer = http.post(url, json=call, headers=POST_HEADERS)
        count = answer.json()["result"]["structuredContent"]["result"]
    finally:
        proc.terminate()
        proc.communicate(timeout=20)
    assert (count > 0) is (setting == "")


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
