"""A prompt or a resource that asks the client something (here: sampling) and gets a
JSON-RPC error back fails its own request with -32603 naming what the client answered
(``data.clientError``), not with a generic internal error behind an error id: it is not a
bug of the server. A tool's failure stays its ``isError`` result."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit import (
    McpCallError,
    McpServerApp,
    McpToolContext,
    ProtocolError,
    mcp_prompt,
    mcp_resource,
    mcp_tool,
)

QUESTION = {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}]}


async def declines(params: dict[str, Any]) -> dict[str, Any]:
    raise ProtocolError("User rejected sampling", {"reason": "busy"}, code=-1)


def build_app() -> McpServerApp:
    async def ask(ctx: McpToolContext) -> str:
        result = await ctx.sample("Say hi", max_tokens=5)
        return str(result)

    @mcp_prompt()
    async def greeting(ctx: McpToolContext) -> str:
        return await ask(ctx)

    @mcp_resource("memo://greeting")
    async def memo(ctx: McpToolContext) -> str:
        return await ask(ctx)

    @mcp_tool()
    async def greet(ctx: McpToolContext) -> str:
        return await ask(ctx)

    return McpServerApp(greeting, memo, greet)


@pytest.mark.parametrize("kind", ["prompt", "resource"])
async def test_a_client_error_fails_the_request_with_what_the_client_said(connect, kind):
    async with connect(build_app(), sampling_handler=declines) as client:
        with pytest.raises(McpCallError) as failed:
            if kind == "prompt":
                await client.get_prompt("greeting")
            else:
                await client.read_resource("memo://greeting")
    error = failed.value
    assert error.code == -32603
    assert error.message == "A request to the client failed: User rejected sampling"
    assert error.data == {
        "clientError": {"code": -1, "message": "User rejected sampling", "data": {"reason": "busy"}}
    }
    assert "errorId" not in error.data  # not logged as a bug


async def test_a_tools_client_error_is_its_is_error_result(connect):
    async with connect(build_app(), sampling_handler=declines) as client:
        result = await client.call_tool("greet")
    assert result.is_error and "User rejected sampling" in result.content[0].text


async def test_the_server_keeps_serving_after_it(connect):
    async with connect(build_app(), sampling_handler=declines) as client:
        with pytest.raises(McpCallError):
            await client.get_prompt("greeting")
        assert [p.name for p in await client.list_prompts()] == ["greeting"]
