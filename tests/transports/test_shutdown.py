"""Graceful shutdown, black-box against ``mcpkit run``: stdin EOF and SIGTERM/SIGINT on
stdio, SIGTERM/SIGINT over HTTP. Calls shorter than the grace get their results; longer
ones get -32000 "Server shutting down"; the process exits 0 in bounded time. Also: a last
stdio line without its newline, ``< /dev/null``, and a POST body trickled past
``body_read_timeout`` (408)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcpkit import McpServerApp, mcp_tool
from mcpkit.server._engine.shutdown import SERVER_SHUTTING_DOWN
from tests.http_server import post_head, serving, trickled_post
from tests.wire import initialize_request

ROOT = Path(__file__).resolve().parents[2]
GRACE = 1.0
#: What a shutdown may take past the grace: cancelling, answering, stopping the app, exit.
MARGIN = 2.5

SERVER = """
import asyncio
from mcpkit import McpServerApp, McpToolContext, mcp_tool

@mcp_tool
async def slow(seconds: float) -> str:
    \"\"\"Sleep, then answer.\"\"\"
    await asyncio.sleep(seconds)
    return "slept"

@mcp_tool
async def chatty(seconds: float, ctx: McpToolContext) -> str:
    \"\"\"Log first (over HTTP that opens the call's SSE answer), then sleep.\"\"\"
    await ctx.info("started")
    await asyncio.sleep(seconds)
    return "slept"

app = McpServerApp(slow, chatty, name="shutdown-test")
"""


def initialize(request_id: int = 1) -> dict[str, Any]:
    return initialize_request("2025-06-18", request_id)


INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def call(request_id: int, tool: str, seconds: float) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": tool, "arguments": {"seconds": seconds}},
    }


def stdin(proc: asyncio.subprocess.Process) -> asyncio.StreamWriter:
    assert proc.stdin is not None
    return proc.stdin


def line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


@pytest.fixture(scope="module")
def server_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("shutdown") / "server.py"
    path.write_text(SERVER)
    return path


def run_command(server_file: Path, *options: str) -> list[str]:
    return [sys.executable, "-m", "mcpkit", "run", str(server_file), *options]


def by_id(output: bytes) -> dict[Any, dict[str, Any]]:
    messages = [json.loads(text) for text in output.decode().splitlines() if text.strip()]
    return {message["id"]: message for message in messages if "id" in message}


async def stdio_server(server_file: Path, grace: float = GRACE) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        *run_command(server_file, "--shutdown-grace", str(grace)),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=ROOT,
    )


async def start_stdio_session(server_file: Path, grace: float = GRACE) -> Any:
    proc = await stdio_server(server_file, grace)
    assert proc.stdin is not None and proc.stdout is not None
    stdin(proc).write(line(initialize()) + line(INITIALIZED))
    await stdin(proc).drain()
    async with asyncio.timeout(20):
        assert json.loads(await proc.stdout.readline())["id"] == 1
    return proc


async def finish(proc: asyncio.subprocess.Process, within: float) -> tuple[bytes, bytes, float]:
    """Wait for the exit (at most ``within`` seconds); the rest of stdout, stderr, the time."""
    started = time.monotonic()
    try:
        async with asyncio.timeout(within):
            out, err = await proc.communicate()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    return out, err, time.monotonic() - started


# --------------------------------------------------------------------------- stdio: EOF


async def test_a_last_line_without_newline_is_answered(server_file: Path) -> None:
    proc = await stdio_server(server_file)
    ping = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "ping"}).encode()
    stdin(proc).write(line(initialize()) + ping)
    stdin(proc).close()
    out, err, _ = await finish(proc, 20)
    assert proc.returncode == 0, err
    assert by_id(out)[2] == {"jsonrpc": "2.0", "id": 2, "result": {}}


async def test_at_eof_a_call_shorter_than_the_grace_gets_its_result(server_file: Path) -> None:
    proc = await start_stdio_session(server_file)
    stdin(proc).write(line(call(2, "slow", 0.3)))
    stdin(proc).close()
    out, err, _ = await finish(proc, 20)
    assert proc.returncode == 0, err
    assert by_id(out)[2]["result"]["content"][0]["text"] == "slept"


async def test_at_eof_a_call_longer_than_the_grace_gets_a_shutting_down_error(
    server_file: Path,
) -> None:
    proc = await start_stdio_session(server_file)
    stdin(proc).write(line(call(2, "slow", 30)) + line(call(3, "slow", 0.1)))
    await stdin(proc).drain()
    stdin(proc).close()
    out, err, took = await finish(proc, GRACE + MARGIN + 5)
    assert proc.returncode == 0, err
    assert took < GRACE + MARGIN
    answers = by_id(out)
    assert answers[2]["error"] == {"code": SERVER_SHUTTING_DOWN, "message": "Server shutting down"}
    assert answers[3]["result"]["content"][0]["text"] == "slept"
    assert err == b""


@pytest.mark.parametrize("devnull", ["stdin", "stdin and stdout"])
def test_dev_null_exits_0(server_file: Path, devnull: str) -> None:
    """``mcpkit run x.py < /dev/null`` (uvloop aborted: its pipe transport cannot watch it)."""
    done = subprocess.run(
        run_command(server_file),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL if "stdout" in devnull else subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
        timeout=20,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == b"" and not done.stdout


# --------------------------------------------------------------------------- stdio: signals


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
async def test_a_signal_on_stdio_answers_the_running_call_and_exits_0(
    server_file: Path, sig: int
) -> None:
    proc = await start_stdio_session(server_file)
    stdin(proc).write(line(call(2, "slow", 30)))
    await stdin(proc).drain()
    await asyncio.sleep(0.2)
    proc.send_signal(sig)
    out, err, took = await finish(proc, GRACE + MARGIN + 5)
    assert proc.returncode == 0, err
    assert took < GRACE + MARGIN
    assert by_id(out)[2]["error"]["code"] == SERVER_SHUTTING_DOWN
    assert err == b""


async def test_a_second_signal_ends_the_grace_at_once(server_file: Path) -> None:
    proc = await start_stdio_session(server_file, grace=30)
    stdin(proc).write(line(call(2, "slow", 60)))
    await stdin(proc).drain()
    await asyncio.sleep(0.2)
    proc.send_signal(signal.SIGTERM)
    await asyncio.sleep(0.2)
    proc.send_signal(signal.SIGTERM)
    out, err, took = await finish(proc, 10)
    assert proc.returncode == 0, err
    assert took < MARGIN
    assert by_id(out)[2]["error"]["code"] == SERVER_SHUTTING_DOWN


# --------------------------------------------------------------------------- HTTP: signals


class HttpServer:
    """``mcpkit run FILE -t http --port 0 --shutdown-grace GRACE`` and a session on it."""

    def __init__(self, server_file: Path, grace: float = GRACE) -> None:
        self.proc = subprocess.Popen(
            run_command(server_file, "-t", "http", "--port", "0", "--shutdown-grace", str(grace)),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=ROOT,
        )
        assert self.proc.stderr is not None
        self.stderr = self.proc.stderr
        banner = self.stderr.readline().decode()
        if not banner.startswith("mcpkit: serving"):
            self.proc.kill()  # a failed start leaves no server behind
            self.proc.wait(10)
            raise AssertionError(f"no banner: {banner!r}")
        self.url = banner.split(" on ", 1)[1].strip()
        self.headers = {"accept": "application/json, text/event-stream"}

    async def initialize(self, http: httpx.AsyncClient) -> None:
        response = await http.post(self.url, json=initialize(), headers=self.headers)
        self.headers["mcp-session-id"] = response.headers["mcp-session-id"]
        self.headers["mcp-protocol-version"] = "2025-06-18"
        await http.post(self.url, json=INITIALIZED, headers=self.headers)

    async def call(
        self, http: httpx.AsyncClient, request: dict[str, Any], accept: str | None = None
    ) -> dict[str, Any]:
        """The call's answer: its JSON body, or the last message of its SSE stream."""
        headers = dict(self.headers, **({"accept": accept} if accept else {}))
        response = await http.post(self.url, json=request, headers=headers, timeout=60)
        if response.headers["content-type"].startswith("application/json"):
            answer: dict[str, Any] = response.json()
            return answer
        data = [
            json.loads(text[5:]) for text in response.text.splitlines() if text.startswith("data:")
        ]
        assert data and data[0]["method"] == "notifications/message", response.text
        last: dict[str, Any] = data[-1]
        return last

    async def stop(self, sig: int, within: float) -> float:
        started = time.monotonic()
        self.proc.send_signal(sig)
        try:
            await asyncio.to_thread(self.proc.wait, within)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
        return time.monotonic() - started

    def errors(self) -> str:
        return self.stderr.read().decode()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
async def test_a_signal_over_http_answers_calls_longer_than_the_grace(
    server_file: Path, sig: int
) -> None:
    """A JSON-only call gets the error as its JSON body; a call whose SSE answer is open
    gets it as the stream's last event, and the stream ends."""
    server = HttpServer(server_file)
    async with httpx.AsyncClient(timeout=20) as http:
        await server.initialize(http)
        as_json = asyncio.create_task(server.call(http, call(2, "slow", 30), "application/json"))
        as_sse = asyncio.create_task(server.call(http, call(3, "chatty", 30)))
        await asyncio.sleep(0.3)
        took = await server.stop(sig, GRACE + MARGIN + 5)
        answers = await asyncio.gather(as_json, as_sse)
    assert server.proc.returncode == 0
    assert GRACE - 0.1 < took < GRACE + MARGIN
    for answer, request_id in zip(answers, (2, 3), strict=True):
        assert answer == {
            "jsonrpc": "2.0",
            "id": request_id,
            "error": {"code": SERVER_SHUTTING_DOWN, "message": "Server shutting down"},
        }
    assert "Traceback" not in server.errors()


async def test_sigterm_over_http_lets_a_call_shorter_than_the_grace_finish(
    server_file: Path,
) -> None:
    server = HttpServer(server_file, grace=5)
    async with httpx.AsyncClient(timeout=20) as http:
        await server.initialize(http)
        running = asyncio.create_task(server.call(http, call(2, "slow", 0.5)))
        await asyncio.sleep(0.2)
        took = await server.stop(signal.SIGTERM, 10)
        answer = await running
    assert server.proc.returncode == 0
    assert took < 0.5 + MARGIN  # not the whole 5 s grace: it ends with the last call
    assert answer["result"]["content"][0]["text"] == "slept"
    assert "Traceback" not in server.errors()


# --------------------------------------------------------------------------- WebSocket, legacy SSE


async def websocket_calls(server: HttpServer, calls: list[dict[str, Any]], sig: int) -> list[Any]:
    """Over ``/mcp/ws``: a session, ``calls`` sent, ``sig`` to the server; the answers to
    the calls, in their order, as they came before the socket closed."""
    import websockets

    url = server.url.replace("http://", "ws://") + "/ws"
    answers: dict[Any, Any] = {}
    async with websockets.connect(url, subprotocols=["mcp"]) as ws:  # type: ignore[list-item]
        await ws.send(json.dumps(initialize()))
        assert json.loads(await ws.recv())["id"] == 1
        await ws.send(json.dumps(INITIALIZED))
        for request in calls:
            await ws.send(json.dumps(request))
        await asyncio.sleep(0.3)
        stopping = asyncio.create_task(server.stop(sig, GRACE + MARGIN + 5))
        with contextlib.suppress(websockets.ConnectionClosed):
            async for frame in ws:
                message = json.loads(frame)
                if "id" in message:
                    answers[message["id"]] = message
        await stopping
    return [answers.get(request["id"]) for request in calls]


async def legacy_calls(server: HttpServer, calls: list[dict[str, Any]], sig: int) -> list[Any]:
    """The same over legacy HTTP+SSE (``/mcp/sse``, POSTs to its endpoint); also checks
    that the stream ends with a proper end of body."""
    answers: dict[Any, Any] = {}
    async with httpx.AsyncClient(timeout=20) as http:
        async with http.stream("GET", server.url + "/sse") as stream:
            lines = stream.aiter_lines()
            endpoint = ""
            async for text in lines:
                if text.startswith("data:"):
                    endpoint = text[5:].strip()
                    break
            post_url = str(httpx.URL(server.url).join(endpoint))
            for request in (initialize(), INITIALIZED, *calls):
                assert (await http.post(post_url, json=request)).status_code == 202
            await asyncio.sleep(0.3)
            stopping = asyncio.create_task(server.stop(sig, GRACE + MARGIN + 5))
            async for text in lines:  # to the end of body: no exception
                if text.startswith("data:"):
                    message = json.loads(text[5:])
                    if "id" in message:
                        answers[message["id"]] = message
            await stopping
    return [answers.get(request["id"]) for request in calls]


@pytest.mark.parametrize("transport", [websocket_calls, legacy_calls], ids=["ws", "legacy-sse"])
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
async def test_a_signal_answers_the_calls_of_websocket_and_legacy_sse(
    server_file: Path, transport: Any, sig: int
) -> None:
    """A call shorter than the grace gets its result, a longer one -32000, both before the
    socket or stream closes; the exit is 0 and in bounded time."""
    server = HttpServer(server_file)
    started = time.monotonic()
    short, long = await transport(server, [call(2, "slow", 0.6), call(3, "slow", 30)], sig)
    took = time.monotonic() - started
    assert server.proc.returncode == 0
    assert took < 0.3 + GRACE + MARGIN + 1
    assert short is not None and short["result"]["content"][0]["text"] == "slept"
    assert long == {
        "jsonrpc": "2.0",
        "id": 3,
        "error": {"code": SERVER_SHUTTING_DOWN, "message": "Server shutting down"},
    }
    assert "Traceback" not in server.errors()


# --------------------------------------------------------------------------- slow bodies


def _echo_app() -> McpServerApp:
    @mcp_tool
    def echo(text: str) -> str:
        return text

    return McpServerApp(echo)


async def test_a_body_trickled_past_body_read_timeout_gets_408() -> None:
    app = _echo_app()
    async with serving(app, body_read_timeout=0.5) as (url, _):
        head_lines, body, took, closed = await trickled_post(url)
        assert closed  # the rest of that body would otherwise be read as a request
        assert head_lines[0].startswith(b"http/1.1 408"), head_lines
        assert 0.4 < took < 2.0
        assert b"connection: close" in head_lines
        assert json.loads(body)["error"]["code"] == -32600
        # An ordinary POST, the body sent at once, is not affected.
        async with httpx.AsyncClient(timeout=10) as http:
            answer = await http.post(
                url, json=initialize(), headers={"accept": "application/json, text/event-stream"}
            )
        assert answer.status_code == 200 and "result" in answer.json()


async def test_a_body_that_never_starts_gets_408() -> None:
    """The headers come, the body never does: the wait for its first byte is under the
    deadline too (the whole read is)."""

    async with serving(_echo_app(), body_read_timeout=0.5) as (url, _):
        reader, writer = await post_head(url, 100)
        started = time.monotonic()
        try:
            async with asyncio.timeout(10):
                head_lines = (await reader.readuntil(b"\r\n\r\n")).lower().split(b"\r\n")
        finally:
            writer.close()
        assert head_lines[0].startswith(b"http/1.1 408"), head_lines
        assert 0.4 < time.monotonic() - started < 2.0
