"""``app.run()``: a server file that serves itself (``python server.py``), on stdio and
over HTTP, as other SDKs taught their users; run as a real process."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import httpx
import pytest

from mcpkit import McpServerApp
from tests.ports import announced_server
from tests.wire import initialize_request

SERVER = textwrap.dedent(
    """
    import sys
    from mcpkit import McpServerApp

    app = McpServerApp("adder")

    @app.tool(name="add", description="Add two integers.")
    def add(a: int, b: int) -> int:
        return a + b

    if __name__ == "__main__":
        if len(sys.argv) > 1:
            app.run("http", host="127.0.0.1", port=int(sys.argv[1]))  # 0: a free port
        else:
            app.run()
    """
)

INITIALIZE = initialize_request()
CALL = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "tools/call",
    "params": {"name": "add", "arguments": {"a": 2, "b": 3}},
}


@pytest.fixture
def server_file(tmp_path: Path) -> Path:
    path = tmp_path / "server.py"
    path.write_text(SERVER)
    return path


def test_run_serves_stdio_until_stdin_closes(server_file: Path):
    lines = [INITIALIZE, {"jsonrpc": "2.0", "method": "notifications/initialized"}, CALL]
    done = subprocess.run(
        [sys.executable, str(server_file)],
        input="".join(json.dumps(line) + "\n" for line in lines),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # stdin is a pipe: a client's, told nothing
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert answers[0]["result"]["serverInfo"]["name"] == "adder"
    assert answers[1]["result"]["structuredContent"] == {"result": 5}


def test_run_serves_http(server_file: Path):
    with announced_server([sys.executable, str(server_file), "0"]) as served:
        headers = {"accept": "application/json, text/event-stream"}
        answer = httpx.post(served.url, json=INITIALIZE, headers=headers, timeout=5)
        headers["mcp-session-id"] = answer.headers["mcp-session-id"]
        httpx.post(
            served.url,
            json={"jsonrpc": "2.0", "method": "notifications/initialized"},
            headers=headers,
        )
        result = httpx.post(served.url, json=CALL, headers=headers, timeout=5).json()["result"]
        assert result["structuredContent"] == {"result": 5}


def test_run_names_where_it_serves_once_it_accepts_connections(server_file: Path):
    """The line ``mcpkit run -t http`` writes, with the port bound (0 asked for a free one);
    connecting to the URL it names cannot be refused."""
    process = subprocess.Popen(
        [sys.executable, str(server_file), "0"], stderr=subprocess.PIPE, text=True
    )
    try:
        line = process.stderr.readline()  # type: ignore[union-attr]
        prefix = "mcpkit: serving adder on http://127.0.0.1:"
        assert line.startswith(prefix) and line.endswith("/mcp\n"), line
        url = line.split(" on ", 1)[1].strip()
        assert int(url.rsplit(":", 1)[1].split("/")[0]) != 0
        headers = {"accept": "application/json, text/event-stream"}
        answer = httpx.post(url, json=INITIALIZE, headers=headers, timeout=5)
        assert answer.status_code == 200
        assert "adder" in answer.text
    finally:
        process.terminate()
        process.wait(15)


def test_run_on_a_terminal_says_it_waits(server_file: Path):
    """stdin a terminal (a pty): one line on stderr, as ``mcpkit run`` writes it."""
    import os
    import pty

    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, str(server_file)],
        stdin=follower,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    os.close(follower)
    try:
        line = process.stderr.readline()  # type: ignore[union-attr]
        assert line == "mcpkit: serving adder on stdio; waiting for a client (Ctrl-C to stop)\n"
    finally:
        process.terminate()
        process.wait(15)
        os.close(leader)


def test_run_refuses_what_it_cannot_serve():
    app = McpServerApp("adder")
    with pytest.raises(ValueError, match="unknown transport 'grpc'; use one of stdio, http"):
        app.run("grpc")
    with pytest.raises(TypeError, match="on stdio takes no options; got port"):
        app.run(port=3000)

    async def inside_a_loop() -> None:
        app.run()

    with pytest.raises(RuntimeError, match="await serve_stdio"):
        asyncio.run(inside_a_loop())
