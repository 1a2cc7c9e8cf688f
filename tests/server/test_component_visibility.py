"""Components turned on and off: ``tags=`` and ``enabled=`` on every decorator, and
``app.enable(...)`` / ``app.disable(...)`` by name or tag. What is set aside is absent from
the lists and called, read or got as an unknown one, in both eras, in a mounted app too;
each list it changes sends its ``list_changed``. Driven by mcpkit's client in memory and
by the official ``mcp`` client over Streamable HTTP."""

from __future__ import annotations

import asyncio

import pytest
from mcp.shared.exceptions import MCPError

from mcpkit import McpCallError, McpServerApp, mcp_server, mcp_tool
from mcpkit.testing import connected
from tests.official_client import official_session

ERAS = ["2025-11-25", "2026-07-28"]


@mcp_server(name="ops")
class Ops:
    @mcp_tool(tags={"admin"})
    def restart(self) -> str:
        return "restarted"


def build() -> McpServerApp:
    app = McpServerApp(Ops, name="visible")

    @app.tool(tags=["public"])
    def hello() -> str:
        return "hello"

    @app.tool(tags="admin", enabled=False)
    def purge() -> str:
        return "purged"

    @app.resource("audit://log", tags={"admin"})
    def audit() -> str:
        return "log"

    @app.prompt(tags={"admin"})
    def incident() -> str:
        return "Write the incident report"

    return app


async def names(client) -> tuple[list[str], list[str], list[str]]:  # type: ignore[no-untyped-def]
    tools = sorted(tool.name for tool in await client.list_tools())
    resources = sorted(resource.uri for resource in await client.list_resources())
    prompts = sorted(prompt.name for prompt in await client.list_prompts())
    return tools, resources, prompts


async def code_of(call) -> int:  # type: ignore[no-untyped-def]
    with pytest.raises(McpCallError) as raised:
        await call
    return raised.value.code


@pytest.mark.parametrize("era", ERAS)
async def test_disabled_components_are_unknown_until_enabled(era: str) -> None:
    app = build()
    changed: list[str] = []
    async with connected(app, protocol_version=era, on_list_changed=changed.append) as client:
        assert await names(client) == (["hello", "restart"], ["audit://log"], ["incident"])
        assert await code_of(client.call_tool("purge", {})) == -32602  # enabled=False
        assert app.enable("purge") == 1
        assert (await client.call_tool("purge", {})).content[0].text == "purged"  # type: ignore[union-attr]

        assert app.disable(tags=["admin"]) == 4  # restart, purge, the log, the prompt
        assert await names(client) == (["hello"], [], [])
        assert await code_of(client.call_tool("restart", {})) == -32602
        assert await code_of(client.get_prompt("incident")) == -32602
        not_found = -32002 if era == "2025-11-25" else -32602
        assert await code_of(client.read_resource("audit://log")) == not_found
        assert app.disable("never-registered") == 0

        assert app.enable("restart", tags=["nothing"]) == 1
        assert await names(client) == (["hello", "restart"], [], [])
        await app.catalog.announced()
        await asyncio.sleep(0.1)
    if era == "2025-11-25":  # the handshake era hears list_changed on the session
        assert {"tools", "resources", "prompts"} <= set(changed)


async def test_a_mounted_apps_disabled_components_are_absent_in_the_parent() -> None:
    child = build()
    parent = McpServerApp("parent")
    parent.mount(child, prefix="c")
    async with connected(parent) as client:
        assert "c_restart" in [tool.name for tool in await client.list_tools()]
        child.disable("restart")
        await child.catalog.announced()
        assert "c_restart" not in [tool.name for tool in await client.list_tools()]
        assert await code_of(client.call_tool("c_restart", {})) == -32602
        child.enable("restart")
        await child.catalog.announced()
        assert "c_restart" in [tool.name for tool in await client.list_tools()]


async def test_the_official_client_sees_what_is_enabled_over_http() -> None:
    app = build()
    async with official_session(app) as session:
        before = sorted(tool.name for tool in (await session.list_tools()).tools)
        app.disable("hello")
        after = sorted(tool.name for tool in (await session.list_tools()).tools)
        with pytest.raises(MCPError, match="Unknown tool: hello") as refused:
            await session.call_tool("hello", {})
    assert before == ["hello", "restart"] and after == ["restart"]
    assert refused.value.error.code == -32602


def test_tags_are_strings() -> None:
    app = McpServerApp("tags")
    with pytest.raises(TypeError, match="tags are non-empty strings"):
        app.tool(tags=[1])(lambda: "x")


async def test_through_the_proxy_disabled_is_absent_on_either_side() -> None:
    from mcpkit import McpClient
    from mcpkit.proxy import McpProxy

    backend = build()
    proxy = McpProxy(lambda **options: McpClient.in_memory(backend, **options)).app
    async with connected(proxy) as client:
        assert sorted(tool.name for tool in await client.list_tools()) == ["hello", "restart"]
        proxy.disable("hello")  # the proxy's own choice
        assert [tool.name for tool in await client.list_tools()] == ["restart"]
        assert await code_of(client.call_tool("hello", {})) == -32602
        backend.disable("restart")  # the backend's: the proxy hears list_changed
        await backend.catalog.announced()
        for _ in range(50):
            if not await client.list_tools():
                break
            await asyncio.sleep(0.02)
        assert await client.list_tools() == []
        assert await code_of(client.call_tool("restart", {})) == -32602
