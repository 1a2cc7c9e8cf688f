"""Picking a version of a tool from the client: ``call_tool(..., version=...)`` (and
``call_tool_as_task``) names it in the call's ``_meta``; ``tool_versions(tool)`` reads the
versions a server lists. Against an mcpkit server keeping three versions of one tool, in
both eras, in memory and over Streamable HTTP, and through ``ServerGroup`` (a proxy),
which hands the version to the server that keeps them."""

from __future__ import annotations

import pytest

from mcpkit import McpCallError, McpServerApp
from mcpkit.client import McpClient, tool_versions
from mcpkit.proxy import ServerGroup
from mcpkit.testing import connected
from tests.http_server import http_client, serving
from tests.server.test_tool_versions import build as versioned_app

ERAS = ["2025-11-25", "2026-07-28"]


def build() -> McpServerApp:
    """The server tests' greet (1.9, 1.10rc1 and 1.10, the highest served) and a tool of
    one version."""
    app = versioned_app()

    @app.tool()
    def plain() -> str:
        return "plain"

    return app


def text(result: object) -> str:
    return result.content[0].text  # type: ignore[attr-defined, no-any-return]


async def check_versions(client: McpClient, tool: str = "greet") -> None:
    tools = {listed.name: listed for listed in await client.list_tools()}
    assert tool_versions(tools[tool]) == ("1.9", "1.10rc1", "1.10")
    assert tools[tool].meta is not None and tools[tool].meta["mcpkit/version"] == "1.10"
    assert text(await client.call_tool(tool, {"name": "a"})) == "hi a"
    assert text(await client.call_tool(tool, {"name": "a"}, version="1.9")) == "hello a"
    assert text(await client.call_tool(tool, {"name": "a"}, version="1.10rc1")) == "rc a"
    with pytest.raises(McpCallError, match=r"Unknown version '9\.0'") as unknown:
        await client.call_tool(tool, {"name": "a"}, version="9.0")
    assert unknown.value.code == -32602


@pytest.mark.parametrize("era", ERAS)
async def test_a_call_picks_a_version_in_memory(era: str) -> None:
    async with connected(build(), protocol_version=era) as client:
        await check_versions(client)
        (plain,) = [tool for tool in await client.list_tools() if tool.name == "plain"]
        assert tool_versions(plain) == ()
        kept = await client.call_tool("greet", {"name": "b"}, meta={"trace": "t"}, version="1.9")
        assert text(kept) == "hello b"


@pytest.mark.parametrize("era", ERAS)
async def test_a_call_picks_a_version_over_http(era: str) -> None:
    async with http_client(build(), era) as client:
        await check_versions(client)


@pytest.mark.parametrize("era", ERAS)
async def test_through_a_server_group_the_backend_picks(era: str) -> None:
    async with serving(build()) as (url, _):
        config = {"mcpServers": {"web": {"type": "http", "url": url}}}
        async with ServerGroup(config, connect_timeout=10, protocol_version=era) as group:
            await check_versions(group.client, "web_greet")


async def test_a_task_runs_the_version_asked() -> None:
    app = McpServerApp("tasks")

    @app.tool(name="count", version="1", task=True)
    async def count_old() -> str:
        return "one"

    @app.tool(name="count", version="2", task=True)
    async def count_new() -> str:
        return "two"

    async with connected(app) as client:
        task = await client.call_tool_as_task("count", version="1")
        assert text(await task.result()) == "one"


async def test_a_version_given_twice_or_not_a_string_is_refused() -> None:
    async with connected(build()) as client:
        with pytest.raises(ValueError, match="differ: give one"):
            await client.call_tool("greet", {}, meta={"mcpkit/version": "1.9"}, version="1.10")
        with pytest.raises(TypeError, match="version must be a string"):
            await client.call_tool("greet", {}, version=2)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="must not be empty"):
            await client.call_tool("greet", {}, version="")
        same = await client.call_tool(
            "greet", {"name": "c"}, meta={"mcpkit/version": "1.9"}, version="1.9"
        )
        assert text(same) == "hello c"
