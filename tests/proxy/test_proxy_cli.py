"""``mcpkit proxy`` as a process: a stdio front over a stdio backend, the backend given as one
quoted command string, and a usage error for a bad config."""

from __future__ import annotations

import asyncio
import json
import shlex
import subprocess
import sys

import pytest

from mcpkit.client import McpClient, StdioClientTransportOptions
from tests.proxy._running import EVERYTHING, ROOT

pytestmark = pytest.mark.interop


async def test_stdio_front_over_a_stdio_backend_given_as_one_string():
    options = StdioClientTransportOptions(
        command=sys.executable,
        arguments=["-m", "mcpkit", "proxy", "--transport", "stdio", shlex.join(EVERYTHING)],
        working_directory=str(ROOT),
    )
    async with asyncio.timeout(30), McpClient.stdio(options, protocol_mode="legacy") as client:
        assert client.server_info is not None
        assert client.server_info.server_info.name != "mcpkit-proxy"  # the backend's own name
        result = await client.call_tool("calculate", {"a": 6, "b": 7, "operation": "multiply"})
        assert not result.is_error and "42" in result.content[0].text  # type: ignore[union-attr]


def test_a_config_without_servers_is_a_usage_error(tmp_path):
    config = tmp_path / "servers.json"
    config.write_text(json.dumps({"mcpServers": {}}))
    done = subprocess.run(
        [sys.executable, "-m", "mcpkit", "proxy", str(config)],
        capture_output=True,
        text=True,
        timeout=20,
        check=False,
    )
    assert done.returncode == 2
    assert "mcpServers" in done.stderr


def run_proxy(*args: str, cwd: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcpkit", "proxy", *args],
        capture_output=True,
        text=True,
        timeout=20,
        check=False,
        stdin=subprocess.DEVNULL,
        cwd=cwd,
    )


def test_a_quoted_command_before_the_options_is_a_usage_error_saying_the_order():
    """README's own order: the quoted command was run as a program named
    "python server.py", which failed as "FileNotFoundError: [Errno 2] No such file"."""
    done = run_proxy("python server.py", "--transport", "http")
    assert done.returncode == 2
    assert "options come before the target" in done.stderr
    assert "mcpkit proxy --transport http 'python server.py'" in done.stderr


def test_a_missing_config_or_a_python_file_is_a_usage_error(tmp_path):
    (tmp_path / "server.py").write_text("")
    missing = run_proxy("servers.json", cwd=str(tmp_path))
    assert missing.returncode == 2 and "no such servers file: servers.json" in missing.stderr
    python_file = run_proxy("server.py", cwd=str(tmp_path))
    assert python_file.returncode == 2
    assert "mcpkit proxy python server.py" in python_file.stderr


def test_a_config_whose_second_backend_fails_names_it_in_one_line(tmp_path):
    """The first backend was left running when the second failed to start: garbage
    collected later, with "aclose(): asynchronous generator is already running" tracebacks."""
    config = tmp_path / "servers.json"
    config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "ok": {"command": EVERYTHING[0], "args": EVERYTHING[1:]},
                    "broken": {"command": "mcpkit-test-no-such-command"},
                }
            }
        )
    )
    done = run_proxy(str(config), cwd=str(ROOT))
    assert done.returncode == 1
    assert "error: Backend server unavailable (broken: mcpkit-test-no-such-command)" in done.stderr
    assert "Traceback" not in done.stderr
