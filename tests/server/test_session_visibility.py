"""What one session is shown: ``ctx.enable_components(...)`` / ``ctx.disable_components(...)``
from a tool change that session's lists and lookups alone (another session keeps the
app's), show it components the app set aside, and tell its client ``list_changed``; in
memory and over Streamable HTTP with the official ``mcp`` client. A 2026-07-28 call has no
session to keep them on, and is told so."""

from __future__ import annotations

import asyncio

import pytest

from mcpkit import McpCallError, McpServerApp, McpToolContext
from mcpkit.testing import connected
from tests.official_client import official_session


def build() -> McpServerApp:
    app = McpServerApp("views")

    @app.tool()
    async def unlock(ctx: McpToolContext) -> str:
        await ctx.enable_components(tags={"advanced"})
        await ctx.disable_components("unlock")
        return "unlocked"

    @app.tool()
    def basic() -> str:
        return "basic"

    @app.tool(tags={"advanced"}, enabled=False)
    def expert() -> str:
        return "expert"

    @app.prompt(tags={"advanced"}, enabled=False)
    def deep_dive() -> str:
        return "Dig in"

    @app.resource("docs://{page}", tags={"advanced"}, enabled=False)
    def manual(page: str) -> str:
        return f"manual {page}"

    return app


async def tool_names(client) -> list[str]:  # type: ignore[no-untyped-def]
    return sorted(tool.name for tool in await client.list_tools())


async def test_a_session_is_shown_what_its_tool_unlocked_and_no_other_is() -> None:
    app = build()
    changed: list[str] = []
    async with (
        connected(app, on_list_changed=changed.append) as one,
        connected(app) as other,
    ):
        assert await tool_names(one) == ["basic", "unlock"]
        with pytest.raises(McpCallError):
            await one.call_tool("expert", {})
        assert (await one.call_tool("unlock", {})).content[0].text == "unlocked"  # type: ignore[union-attr]
        assert await tool_names(one) == ["basic", "expert"]
        assert (await one.call_tool("expert", {})).content[0].text == "expert"  # type: ignore[union-attr]
        assert [p.name for p in await one.list_prompts()] == ["deep_dive"]
        assert [t.name for t in await one.list_resource_templates()] == ["manual"]
        read = await one.read_resource("docs://intro")
        assert read.contents[0].text == "manual intro"  # type: ignore[union-attr]
        with pytest.raises(McpCallError) as hidden:
            await one.call_tool("unlock", {})
        assert hidden.value.code == -32602
        # the other session sees the app as it is
        assert await tool_names(other) == ["basic", "unlock"]
        assert await other.list_prompts() == []
        await asyncio.sleep(0.05)
    assert {"tools", "prompts", "resources"} <= set(changed)


async def test_a_2026_07_28_call_is_told_it_has_no_session() -> None:
    async with connected(build(), protocol_version="2026-07-28") as client:
        result = await client.call_tool("unlock", {})
    assert result.is_error and "no session" in result.content[0].text  # type: ignore[union-attr]


async def test_the_official_client_over_http_sees_its_session_view() -> None:
    async with official_session(build()) as session:
        await session.call_tool("unlock", {})
        names = sorted(tool.name for tool in (await session.list_tools()).tools)
        called = await session.call_tool("expert", {})
    assert names == ["basic", "expert"]
    assert called.content[0].text == "expert"  # type: ignore[union-attr]
