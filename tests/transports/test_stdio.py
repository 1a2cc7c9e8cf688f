"""stdio end to end with mcpkit's own client: concurrency, cancellation, timeouts, bad frames."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from mcpkit import McpClient, RequestTimeoutError, StdioClientTransportOptions
from tests.wire import initialize_request

ROOT = Path(__file__).resolve().parents[2]
#: 300 KiB with everything JSON escapes and UTF-8 of two to four bytes.
DOCUMENT = ('a "quoted" line, a tab\t, a backslash \\, é, € and 😀\n' * 8000)[: 300 * 1024]
SERVER = (
    """
import asyncio
from mcpkit import McpServerApp, McpToolContext, mcp_server, mcp_tool

@mcp_server(name="stdio-test")
class S:
    cancelled = 0

    @mcp_tool()
    async def slow(self, seconds: float) -> str:
        try:
            await asyncio.sleep(seconds)
        except asyncio.CancelledError:
            S.cancelled += 1
            raise
        return "slept"

    @mcp_tool()
    def cancellations(self) -> int:
        return S.cancelled

    @mcp_tool()
    async def document(self, number: int = -1) -> str:
        "A long text: the same object every call, or numbered (new every call)."
        return DOCUMENT if number < 0 else f"{number:06d}" + DOCUMENT[6:]

    @mcp_tool()
    def shout(self) -> str:
        print("this goes to stderr, never to the protocol stream")
        return "ok"

app = McpServerApp(S)
"""
    + f"DOCUMENT = {DOCUMENT!r}\n"
)


@pytest.fixture
def server_file(tmp_path: Path) -> Path:
    path = tmp_path / "server.py"
    path.write_text(SERVER)
    return path


def client_for(path: Path, **kwargs) -> McpClient:
    options = StdioClientTransportOptions(
        command=sys.executable,
        arguments=["-m", "mcpkit", "run", str(path)],
        working_directory=str(ROOT),
    )
    return McpClient.stdio(options, **kwargs)


async def assert_the_server_saw_one_cancellation(client: McpClient) -> None:
    """The cancellation reaches the server a little after the client gives up: poll its count."""
    for _ in range(100):
        if (await client.call_tool("cancellations")).structured_content == {"result": 1}:
            break
        await asyncio.sleep(0.02)
    assert (await client.call_tool("cancellations")).structured_content == {"result": 1}


async def test_slow_tool_does_not_block_ping_and_cancel_reaches_it(server_file):
    async with asyncio.timeout(20), client_for(server_file) as client:
        call = asyncio.create_task(client.call_tool("slow", {"seconds": 30}))
        await asyncio.sleep(0.1)
        started = asyncio.get_running_loop().time()
        await client.ping()
        assert asyncio.get_running_loop().time() - started < 1.0
        call.cancel()
        await asyncio.gather(call, return_exceptions=True)
        await assert_the_server_saw_one_cancellation(client)


async def test_request_timeout_cancels_the_remote_call(server_file):
    async with asyncio.timeout(20), client_for(server_file) as client:
        with pytest.raises(RequestTimeoutError):
            await client.call_tool("slow", {"seconds": 30}, timeout=0.2)
        await assert_the_server_saw_one_cancellation(client)


async def test_a_long_text_answered_again_comes_back_the_same(server_file):
    """A long text with everything JSON escapes, answered again and again, new ones
    between: every answer is the text."""
    async with asyncio.timeout(20), client_for(server_file) as client:
        for number in range(4):
            again = await client.call_tool("document")
            assert again.content[0].text == DOCUMENT
            new = await client.call_tool("document", {"number": number})
            assert new.content[0].text == f"{number:06d}" + DOCUMENT[6:]


async def test_prints_in_tools_never_corrupt_the_stream(server_file):
    async with asyncio.timeout(20), client_for(server_file) as client:
        assert (await client.call_tool("shout")).content[0].text == "ok"
        assert (await client.call_tool("shout")).content[0].text == "ok"


async def test_server_survives_garbage_lines(server_file):
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "mcpkit",
        "run",
        str(server_file),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        cwd=ROOT,
    )
    assert proc.stdin and proc.stdout
    proc.stdin.write(b'not json\n{"jsonrpc":"2.0","id":1,"method":"ping"}\n')
    await proc.stdin.drain()
    async with asyncio.timeout(10):
        first = await proc.stdout.readline()
        second = await proc.stdout.readline()
    assert b"-32700" in first and b'"id":1' in second
    proc.stdin.close()
    async with asyncio.timeout(10):
        assert await proc.wait() == 0


def test_what_a_lifespan_registers_is_not_announced_into_the_unopened_pipe(tmp_path):
    """A lifespan registering entries (as ``mcpkit proxy`` does with the backend's) scheduled
    list_changed broadcasts that reached the first connection before its pipe was open: a
    "could not deliver ... pipe is closed" traceback on every start."""
    path = tmp_path / "server.py"
    path.write_text(
        "from mcpkit import McpServerApp\n"
        "app = McpServerApp('registers')\n"
        "@app.lifespan\n"
        "async def life():\n"
        "    app.catalog.register_resource(lambda: 'x', uri='data://x', name='x')\n"
        "    yield\n"
    )
    initialize = json.dumps(initialize_request()) + "\n"
    done = subprocess.run(
        [sys.executable, "-m", "mcpkit", "run", str(path)],
        input=initialize.encode(),
        capture_output=True,
        cwd=ROOT,
        timeout=20,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[0])["result"]["serverInfo"]["name"] == "registers"
    assert done.stderr == b""
