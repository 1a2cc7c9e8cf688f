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
