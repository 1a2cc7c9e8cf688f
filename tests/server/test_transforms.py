"""Tool transformation (``transform_tool``): a tool served renamed, described anew, its
arguments renamed, defaulted or hidden behind a fixed value, its call wrapped; for the
app's own tool, a mounted app's and a proxied server's alike, kept when the tool is
registered again; the original's checks still run. In both eras, and with the official
client over HTTP."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit import McpCallError, McpClient, McpServerApp
from mcpkit.proxy import McpProxy
from mcpkit.server.transforms import ArgTransform, transform_tool
from mcpkit.testing import connected
from tests.official_client import official_session

ERAS = ["2025-11-25", "2026-07-28"]


def search_app(name: str = "search-app") -> McpServerApp:
    app = McpServerApp(name)

    @app.tool()
    def search(q: str, limit: int, region: str = "eu") -> str:
        """Search the index."""
        return f"{q}|{limit}|{region}"

    return app


def transform(app: McpServerApp, tool: str = "search", calls: list[str] | None = None) -> None:
    async def count(context: Any, call_next: Any) -> Any:
        if calls is not None:
            calls.append(context.tool_name)
        return await call_next()

    transform_tool(
        app,
        tool,
        name="find",
        description="Find documents.",
        arguments={
            "q": ArgTransform(name="query", description="What to look for"),
            "limit": ArgTransform(default=5),
            "region": ArgTransform(hide=True, default="us"),
        },
        wrap=count,
    )


@pytest.mark.parametrize("era", ERAS)
async def test_an_apps_own_tool_transformed(era: str) -> None:
    app = search_app()
    calls: list[str] = []
    transform(app, calls=calls)
    async with connected(app, protocol_version=era) as client:
        (tool,) = await client.list_tools()
        assert tool.name == "find" and tool.description == "Find documents."
        assert tool.input_schema["properties"]["query"]["description"] == "What to look for"
        assert tool.input_schema["properties"]["limit"]["default"] == 5
        assert "region" not in tool.input_schema["properties"]
        assert tool.input_schema["required"] == ["query"]
        found = await client.call_tool("find", {"query": "mcp"})
        assert found.content[0].text == "mcp|5|us"  # type: ignore[union-attr]
        pinned = await client.call_tool("find", {"query": "x", "limit": 2, "region": "eu"})
        assert pinned.content[0].text == "x|2|us"  # type: ignore[union-attr]  # hidden: fixed
        refused = await client.call_tool("find", {"query": "x", "limit": "many"})
        assert refused.is_error  # the original's checks still run
        with pytest.raises(McpCallError):  # the old name is gone
            await client.call_tool("search", {"q": "x", "limit": 1})
    assert calls == ["find", "find"]


def test_an_argument_the_tool_lacks_is_refused_and_changes_nothing() -> None:
    app = search_app()
    with pytest.raises(ValueError, match="has no argument 'nope'"):
        transform_tool(app, "search", arguments={"nope": ArgTransform(name="x")})
    assert app.catalog.get_tool("search") is not None
    with pytest.raises(ValueError, match="needs the default"):
        ArgTransform(hide=True)


async def test_a_mounted_tool_transformed_and_kept_when_it_comes_back() -> None:
    child = search_app("child")
    parent = McpServerApp("parent")
    parent.mount(child, prefix="c")
    transform(parent, "c_search")
    async with connected(parent) as client:
        assert [tool.name for tool in await client.list_tools()] == ["find"]
        assert (await client.call_tool("find", {"query": "a"})).content[0].text == "a|5|us"  # type: ignore[union-attr]
        child.disable("search")  # the mounted tool goes, then comes back
        await child.catalog.announced()
        assert await client.list_tools() == []
        child.enable("search")
        await child.catalog.announced()
        assert [tool.name for tool in await client.list_tools()] == ["find"]


async def test_a_proxied_tool_transformed() -> None:
    backend = search_app("backend")
    proxy = McpProxy(lambda **options: McpClient.in_memory(backend, **options)).app
    transform(proxy)
    async with connected(proxy) as client:
        assert [tool.name for tool in await client.list_tools()] == ["find"]
        result = await client.call_tool("find", {"query": "p", "limit": 1})
        assert result.content[0].text == "p|1|us"  # type: ignore[union-attr]


async def test_the_official_client_over_http() -> None:
    app = search_app()
    transform(app)
    async with official_session(app) as session:
        tools = (await session.list_tools()).tools
        result = await session.call_tool("find", {"query": "o"})
    assert [tool.name for tool in tools] == ["find"]
    assert result.content[0].text == "o|5|us"  # type: ignore[union-attr]
