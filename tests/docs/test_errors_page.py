"""docs/errors.md against the code: its code table names every code mcpkit answers with,
each under the name the code has, and the failures it describes get those codes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mcpkit import (
    InvalidParamsError,
    McpCallError,
    McpServerApp,
    McpToolContext,
    ResourceNotFoundError,
    ToolError,
)
from mcpkit._codes import ErrorCode
from mcpkit.server._engine.shutdown import SERVER_SHUTTING_DOWN
from mcpkit.server.middleware import RATE_LIMITED
from mcpkit.testing import connected

PAGE = Path(__file__).resolve().parents[2] / "docs" / "errors.md"
ROW = re.compile(r"^\| `(-32\d\d\d)` \| ([^|]+) \|", re.M)


def test_the_table_lists_every_code_and_no_other():
    listed = {int(code): name.strip() for code, name in ROW.findall(PAGE.read_text())}
    codes = {int(code) for code in ErrorCode} | {SERVER_SHUTTING_DOWN, RATE_LIMITED}
    assert set(listed) == codes
    for code in ErrorCode:  # PARSE_ERROR is "parse error", and so on
        words = code.name.lower().replace("_", " ")
        assert listed[int(code)].lower() == words, (code, listed)


def app_failing_every_way() -> McpServerApp:
    app = McpServerApp("errors")

    @app.tool()
    def refuse() -> str:
        raise InvalidParamsError("bad thing")

    @app.tool()
    async def ask(ctx: McpToolContext) -> str:
        return (await ctx.elicit("name?", str)).content

    @app.resource("r://{name}")
    def read(name: str) -> str:
        if name == "gone":
            raise ResourceNotFoundError("r://gone")
        if name == "told":
            raise ToolError("told you so")
        raise RuntimeError("secret")

    return app


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
async def test_the_failures_the_page_names_get_their_codes(version):
    async def code_of(call) -> tuple[int, str]:
        with pytest.raises(McpCallError) as caught:
            await call
        return caught.value.code, caught.value.message

    async with connected(app_failing_every_way(), protocol_version=version) as client:
        assert (await code_of(client.call_tool("nope", {})))[0] == -32602
        assert (await code_of(client.call_tool("refuse", {}))) == (-32602, "bad thing")
        assert (await code_of(client.call_tool("ask", {})))[0] == -32021
        assert (await code_of(client.get_prompt("nope", {})))[0] == -32602
        assert (await code_of(client.request("no/such", {})))[0] == -32601
        modern = version == "2026-07-28"
        assert (await code_of(client.read_resource("r://gone")))[0] == (
            -32602 if modern else -32002
        )
        assert (await code_of(client.read_resource("r://told"))) == (-32603, "told you so")
        code, message = await code_of(client.read_resource("r://crash"))
        assert code == -32603 and "see the server log" in message and "secret" not in message
