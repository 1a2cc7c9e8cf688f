"""Async-generator tools: each value yielded but the last reaches the client as a progress
notification (its message the value as text), and the last is the result, typed by what
the annotation says is yielded; in both eras, in memory, and over Streamable HTTP to the
official ``mcp`` client. Sync generator tools, and generator resources and prompts, are
refused when registered; one that yields nothing fails its call, as the model reads it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

import pytest

from mcpkit import McpServerApp, McpToolContext, mcp_server, mcp_tool
from mcpkit.testing import connected
from tests.official_client import official_session

ERAS = ["2025-11-25", "2026-07-28"]


def build() -> McpServerApp:
    app = McpServerApp("streaming")

    @app.tool()
    async def count(n: int) -> AsyncIterator[int]:
        """Count to n, one step at a time."""
        for i in range(1, n + 1):
            await asyncio.sleep(0)
            yield i

    @app.tool()
    async def plan(goal: str, ctx: McpToolContext) -> AsyncGenerator[dict[str, Any], None]:
        await ctx.info(f"planning {goal}")  # its own context, used as any tool's
        yield {"step": "look"}
        yield {"step": "leap", "goal": goal}

    @app.tool()
    async def nothing() -> AsyncIterator[str]:
        if False:
            yield "never"

    return app


@mcp_server(name="class-based")
class Steps:
    @mcp_tool()
    async def walk(self, steps: int) -> AsyncIterator[str]:
        for i in range(steps):
            yield f"step {i + 1}"


@pytest.mark.parametrize("era", ERAS)
async def test_each_value_is_progress_and_the_last_the_result(era: str) -> None:
    progress: list[tuple[float, float | None, str | None]] = []

    def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, total, message))

    async with connected(build(), protocol_version=era) as client:
        tools = {tool.name: tool for tool in await client.list_tools()}
        assert tools["count"].input_schema["properties"] == {"n": {"type": "integer"}}
        assert tools["count"].output_schema["properties"]["result"] == {"type": "integer"}
        assert tools["count"].description == "Count to n, one step at a time."
        assert "ctx" not in tools["plan"].input_schema["properties"]
        result = await client.call_tool("count", {"n": 3}, progress=on_progress)
        assert result.structured_content == {"result": 3} and not result.is_error
        assert progress == [(1, None, "1"), (2, None, "2")]
        planned = await client.call_tool("plan", {"goal": "moon"})
        assert planned.structured_content == {"step": "leap", "goal": "moon"}
        empty = await client.call_tool("nothing", {})
        assert empty.is_error and "yielded no value" in empty.content[0].text  # type: ignore[union-attr]


async def test_a_class_based_generator_tool() -> None:
    messages: list[str | None] = []
    async with connected(McpServerApp(Steps)) as client:
        result = await client.call_tool(
            "walk", {"steps": 3}, progress=lambda value, total, message: messages.append(message)
        )
    assert result.content[0].text == "step 3"  # type: ignore[union-attr]  # a str: text only
    assert messages == ["step 1", "step 2"]


async def test_the_official_client_hears_the_progress_over_http() -> None:
    progress: list[tuple[float, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, message))

    async with official_session(build()) as session:
        result = await session.call_tool("count", {"n": 4}, progress_callback=on_progress)
    assert result.structured_content == {"result": 4}
    assert progress == [(1, "1"), (2, "2"), (3, "3")]


def test_generators_that_cannot_serve_are_refused_when_registered() -> None:
    app = McpServerApp("refusing")

    def steps():  # type: ignore[no-untyped-def]
        yield 1

    async def lines():  # type: ignore[no-untyped-def]
        yield "a"

    with pytest.raises(TypeError, match="sync generator function: write it as `async def`"):
        app.tool()(steps)
    with pytest.raises(TypeError, match="resource 'lines' is a generator function"):
        app.resource("text://lines")(lines)
    with pytest.raises(TypeError, match="prompt 'lines' is a generator function"):
        app.prompt()(lines)
