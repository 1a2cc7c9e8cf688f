"""The official ``mcp`` 2.3.0 ``Client`` in its default ``auto`` mode (which speaks
2026-07-28: server/discover, per-request ``_meta``, multi round-trip requests) and in
``legacy`` mode, against one mcpkit server process, over Streamable HTTP and stdio."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters

from tests.conformance._suite import running_server

pytestmark = [
    pytest.mark.interop,
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

ROOT = Path(__file__).resolve().parents[2]


async def on_elicit(context: Any, params: Any) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"name": "Ada"})


async def on_sample(context: Any, params: Any) -> types.CreateMessageResult:
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text="Paris"),
        model="m",
        stop_reason="endTurn",
    )


def text_of(result: types.CallToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, types.TextContent))


async def exercise(client: Client) -> str:
    tools = {tool.name for tool in (await client.list_tools()).tools}
    assert "test_simple_text" in tools
    assert (
        text_of(await client.call_tool("test_simple_text", {}))
        == "This is a simple text response for testing."
    )
    return str(client.session.protocol_version)


def test_official_client_auto_and_legacy_modes_share_one_http_server():
    async def main() -> None:
        with running_server() as url:
            async with asyncio.timeout(30):
                async with Client(
                    url, elicitation_callback=on_elicit, sampling_callback=on_sample
                ) as modern:
                    assert await exercise(modern) == "2026-07-28"
                    # MRTR: the server's input request is answered by the same callback
                    answer = await modern.call_tool("test_input_required_result_elicitation", {})
                    assert text_of(answer) == "Hello, Ada!"
                    sampled = await modern.call_tool("test_input_required_result_sampling", {})
                    assert "Paris" in text_of(sampled)
                async with Client(url, mode="legacy", elicitation_callback=on_elicit) as legacy:
                    assert await exercise(legacy) == "2025-11-25"
                    elicited = await legacy.call_tool("test_elicitation", {"message": "who?"})
                    assert not elicited.is_error

    asyncio.run(main())


def test_official_client_auto_mode_over_stdio():
    async def main() -> None:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "mcpkit", "run", "examples/everything.py", "--transport", "stdio"],
            cwd=str(ROOT),
        )
        async with asyncio.timeout(30):
            async with Client(params, elicitation_callback=on_elicit) as modern:
                assert await exercise(modern) == "2026-07-28"
                answer = await modern.call_tool("test_input_required_result_elicitation", {})
                assert text_of(answer) == "Hello, Ada!"

    asyncio.run(main())
