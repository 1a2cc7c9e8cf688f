"""The ``mcpkit`` command: call and inspect against a file and against running servers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conformance._suite import running_server

ROOT = Path(__file__).resolve().parents[2]


def mcpkit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcpkit", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_call_runs_a_tool_of_a_file():
    done = mcpkit(
        "call",
        "examples/everything.py",
        "calculate",
        '{"a": 6, "b": 7, "operation": "multiply"}',
        "--json",
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["structuredContent"] == {"result": 42.0}


def test_call_prints_text_content_as_text_by_default():
    done = mcpkit(
        "call", "examples/everything.py", "calculate", '{"a": 6, "b": 7, "operation": "multiply"}'
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "42.0\n"


def test_call_exits_non_zero_when_the_tool_fails():
    done = mcpkit("call", "examples/everything.py", "test_error_handling", "--json")
    assert done.returncode == 1 and json.loads(done.stdout)["isError"] is True
    done = mcpkit("call", "examples/everything.py", "test_error_handling")
    assert done.returncode == 1
    assert done.stdout == "This tool intentionally returns an error for testing\n"
    # the server's log line and traceback only with --debug
    assert done.stderr.splitlines() == [
        "error: the tool 'test_error_handling' reported an error",
        "hint: mcpkit --debug call ... shows where it raised",
    ]
    done = mcpkit("--debug", "call", "examples/everything.py", "test_error_handling")
    assert done.returncode == 1
    assert "tool test_error_handling raised; the client got an isError result" in done.stderr
    assert 'raise RuntimeError("This tool intentionally' in done.stderr


def test_call_of_a_tool_error_prints_its_text_with_no_traceback_hint(tmp_path):
    """A ``ToolError`` is the tool's answer, not a bug: nothing to look for with --debug."""
    server = tmp_path / "refusing.py"
    server.write_text(
        "from mcpkit import McpServerApp, ToolError\n"
        "app = McpServerApp('refusing')\n"
        "@app.tool()\n"
        "def forecast(city: str) -> str:\n"
        "    raise ToolError(f'no forecast for {city}')\n"
    )
    done = mcpkit("call", str(server), "forecast", '{"city": "Oslo"}')
    assert done.returncode == 1
    assert done.stdout == "no forecast for Oslo\n"
    assert done.stderr.splitlines() == ["error: the tool 'forecast' reported an error"]


def test_call_gives_up_after_its_timeout(tmp_path):
    server = tmp_path / "slow.py"
    server.write_text(
        "import asyncio\n"
        "from mcpkit import McpServerApp\n"
        "app = McpServerApp('slow')\n"
        "@app.tool()\n"
        "async def nap(seconds: float) -> str:\n"
        "    await asyncio.sleep(seconds)\n"
        "    return 'awake'\n"
    )
    done = mcpkit("call", str(server), "nap", '{"seconds": 30}', "--timeout", "0.5")
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        "error: the tool 'nap' did not answer in 0.5 s",
        "hint: give it longer with --timeout SECONDS",
    ]
    done = mcpkit("call", str(server), "nap", '{"seconds": 0.1}', "--timeout", "5")
    assert done.returncode == 0 and done.stdout == "awake\n"


def test_inspect_lists_a_file():
    done = mcpkit("inspect", "examples/everything.py", "--json")
    listing = json.loads(done.stdout)
    assert {"test_simple_text", "calculate"} <= {tool["name"] for tool in listing["tools"]}
    assert listing["resourceTemplates"][0]["uriTemplate"] == "test://template/{id}/data"


@pytest.mark.parametrize(
    "suffix", ["", "/sse", "/ws"], ids=["streamable-http", "legacy-sse", "websocket"]
)
def test_call_and_inspect_reach_a_running_server(suffix):
    with running_server() as url:
        target = (url.replace("http://", "ws://") if suffix == "/ws" else url) + suffix
        done = mcpkit("call", target, "test_simple_text", "--json")
        assert done.returncode == 0, done.stderr
        assert (
            json.loads(done.stdout)["content"][0]["text"]
            == "This is a simple text response for testing."
        )
        done = mcpkit("call", target, "test_simple_text")
        assert done.stdout == "This is a simple text response for testing.\n"
        listing = json.loads(mcpkit("inspect", target, "--json").stdout)
        assert listing["server"]["serverInfo"]["name"] == "mcpkit-everything"


def test_run_refuses_a_file_without_a_server():
    done = mcpkit("run", "README.md")
    assert done.returncode != 0
