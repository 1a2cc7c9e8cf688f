"""Several versions of one tool: all kept, the highest served under its name with every
version named in its ``_meta``; a rule (``catalog.use_tool_version``) pins another; a
call asks for one in its ``_meta``; an unversioned registration replaces them all. In
both eras, and with the official client over HTTP."""

from __future__ import annotations

import pytest

from mcpkit import McpCallError, McpServerApp
from mcpkit.server import VersionSpec
from mcpkit.server._versions import version_key
from mcpkit.testing import connected
from tests.official_client import official_session

ERAS = ["2025-11-25", "2026-07-28"]


def build() -> McpServerApp:
    app = McpServerApp("versioned")

    @app.tool(name="greet", version="1.9")
    def greet_old(name: str) -> str:
        return f"hello {name}"

    @app.tool(name="greet", version="1.10")
    def greet_new(name: str, polite: bool = False) -> str:
        return f"{'good day' if polite else 'hi'} {name}"

    @app.tool(name="greet", version="1.10rc1")
    def greet_candidate(name: str) -> str:
        return f"rc {name}"

    return app


def test_versions_order_as_numbers() -> None:
    ordered = sorted(["1.10", "1.9", "2.0rc1", "2.0.1", "1.10rc1"], key=version_key)
    assert ordered == ["1.9", "1.10rc1", "1.10", "2.0rc1", "2.0.1"]


@pytest.mark.parametrize("era", ERAS)
async def test_the_highest_is_served_and_a_call_or_rule_picks_another(era: str) -> None:
    app = build()
    async with connected(app, protocol_version=era) as client:
        (tool,) = await client.list_tools()
        assert tool.meta is not None
        assert tool.meta["mcpkit/version"] == "1.10"
        assert tool.meta["mcpkit/versions"] == ["1.9", "1.10rc1", "1.10"]
        assert "polite" in tool.input_schema["properties"]
        assert (await client.call_tool("greet", {"name": "a"})).content[0].text == "hi a"  # type: ignore[union-attr]
        old = await client.call_tool("greet", {"name": "a"}, meta={"mcpkit/version": "1.9"})
        assert old.content[0].text == "hello a"  # type: ignore[union-attr]
        with pytest.raises(McpCallError) as unknown:
            await client.call_tool("greet", {"name": "a"}, meta={"mcpkit/version": "9"})
        assert unknown.value.code == -32602
        app.catalog.use_tool_version("greet", "1.9")
        assert (await client.call_tool("greet", {"name": "b"})).content[0].text == "hello b"  # type: ignore[union-attr]
        app.catalog.use_tool_version("greet", None)
        assert (await client.call_tool("greet", {"name": "c"})).content[0].text == "hi c"  # type: ignore[union-attr]
        with pytest.raises(KeyError):
            app.catalog.use_tool_version("greet", "3.0")

        @app.tool(name="greet")
        def greet_plain(name: str) -> str:
            return f"plain {name}"

        (tool,) = await client.list_tools()
        assert tool.meta is None or "mcpkit/versions" not in tool.meta
        assert (await client.call_tool("greet", {"name": "d"})).content[0].text == "plain d"  # type: ignore[union-attr]


async def test_the_official_client_over_http() -> None:
    async with official_session(build()) as session:
        tools = (await session.list_tools()).tools
        result = await session.call_tool("greet", {"name": "o", "polite": True})
    assert tools[0].meta is not None and tools[0].meta["mcpkit/version"] == "1.10"
    assert result.content[0].text == "good day o"  # type: ignore[union-attr]


@pytest.mark.parametrize("era", ERAS)
async def test_disable_by_version_serves_the_highest_left(era: str) -> None:
    app = build()
    async with connected(app, protocol_version=era) as client:
        assert app.disable("greet", version="1.10") == 1
        (tool,) = await client.list_tools()
        assert tool.meta is not None and tool.meta["mcpkit/version"] == "1.10rc1"
        assert (await client.call_tool("greet", {"name": "a"})).content[0].text == "rc a"  # type: ignore[union-attr]
        with pytest.raises(McpCallError) as refused:  # a disabled version cannot be asked for
            await client.call_tool("greet", {"name": "a"}, meta={"mcpkit/version": "1.10"})
        assert refused.value.code == -32602

        app.disable(version=VersionSpec(gte="1.10rc1", lt="2"))  # every tool's 1.10 line
        (tool,) = await client.list_tools()
        assert tool.meta is not None and tool.meta["mcpkit/version"] == "1.9"

        app.disable("greet", version="1.9")  # none left: the tool is gone
        assert await client.list_tools() == []
        with pytest.raises(McpCallError) as gone:
            await client.call_tool("greet", {"name": "a"})
        assert gone.value.code == -32602

        app.enable("greet", version="1.10")
        (tool,) = await client.list_tools()
        assert tool.meta is not None and tool.meta["mcpkit/version"] == "1.10"
        assert (await client.call_tool("greet", {"name": "b"})).content[0].text == "hi b"  # type: ignore[union-attr]


def test_a_version_spec_matches_as_versions_order() -> None:
    spec = VersionSpec(gte="1.9", lt="1.10")
    assert spec.matches("1.9") and spec.matches("1.10rc1")
    assert not spec.matches("1.10") and not spec.matches("1.8") and not spec.matches(None)
    assert VersionSpec(eq="2.0").matches("2.0") and not VersionSpec(eq="2.0").matches("2.0.0")
    with pytest.raises(TypeError):
        McpServerApp("x").disable("greet", version=2)  # type: ignore[arg-type]
