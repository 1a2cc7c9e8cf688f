"""The engine end to end over the in-memory transport, with schema-checked messages."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Literal

import pytest

from mcpkit import (
    McpCallError,
    McpCatalogManager,
    McpServerApp,
    McpToolContext,
    ResourceSubscriptionManager,
    mcp_completion,
    mcp_lifespan,
    mcp_prompt,
    mcp_resource,
    mcp_server,
    mcp_tool,
)


@dataclass
class Point:
    x: float
    y: float


@mcp_server(name="demo", version="1.2.3", instructions="Use the tools.")
class Demo:
    def __init__(self, catalog: McpCatalogManager, subs: ResourceSubscriptionManager) -> None:
        self.catalog = catalog
        self.subs = subs
        self.started = False

    @mcp_lifespan
    async def life(self):
        self.started = True
        yield {"db": "connected"}
        self.started = False

    @mcp_tool(annotations={"readOnlyHint": True})
    def add(self, a: int, b: int) -> int:
        """Add two integers.

        Args:
            a: the first
            b: the second
        """
        return a + b

    @mcp_tool()
    async def greet(self, name: str, style: Literal["short", "long"] = "short") -> str:
        """Greet someone."""
        return f"Hi {name}" if style == "short" else f"Hello there, {name}!"

    @mcp_tool()
    def midpoint(self, a: Point, b: Point) -> Point:
        """Midpoint of two points."""
        return Point((a.x + b.x) / 2, (a.y + b.y) / 2)

    @mcp_tool()
    def fail(self) -> str:
        """Always raises."""
        raise RuntimeError("boom")

    @mcp_tool(timeout=0.05)
    async def too_slow(self) -> str:
        await asyncio.sleep(5)
        return "never"

    @mcp_tool()
    async def slow(self, ctx: McpToolContext, seconds: float = 5.0) -> str:
        try:
            await asyncio.sleep(seconds)
        except asyncio.CancelledError:
            self.cancelled_seen = True
            raise
        return "done"

    @mcp_tool()
    async def progress(self, ctx: McpToolContext) -> str:
        for step in range(3):
            await ctx.report_progress(step + 1, 3, f"step {step + 1}")
        return "ok"

    @mcp_tool()
    async def chatty(self, ctx: McpToolContext) -> str:
        for level in ("debug", "info", "warning", "error"):
            await ctx.log(level, f"{level} message", logger="demo")
        return "logged"

    @mcp_tool()
    async def lifespan_value(self, ctx: McpToolContext) -> str:
        return ctx.lifespan_context["db"]

    @mcp_tool()
    async def ask_model(self, ctx: McpToolContext, question: str) -> str:
        result = await ctx.sample(question, max_tokens=50)
        return result["content"]["text"]

    @mcp_tool()
    async def ask_user(self, ctx: McpToolContext) -> str:
        answer = await ctx.elicit(
            "Your name?",
            {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
        )
        return f"{answer.action}:{(answer.content or {}).get('name')}"

    @mcp_tool()
    async def roots(self, ctx: McpToolContext) -> str:
        return ",".join(root["uri"] for root in await ctx.list_roots())

    @mcp_tool()
    async def add_tool(self, name: str) -> str:
        def dynamic() -> str:
            return f"I am {name}"

        dynamic.__name__ = name
        self.catalog.register_tool(dynamic)
        return "added"

    @mcp_tool()
    async def touch(self, uri: str) -> str:
        await self.subs.notify_updated(uri)
        return "touched"

    @mcp_resource("demo://readme", mime_type="text/plain", description="The readme")
    def readme(self) -> str:
        return "Read me."

    @mcp_resource("demo://logo", mime_type="image/png")
    def logo(self) -> bytes:
        return b"\x89PNG"

    @mcp_resource("demo://users/{user_id}/profile", mime_type="application/json")
    def profile(self, user_id: str) -> dict:
        return {"id": user_id}

    @mcp_prompt()
    def review(self, code: str, language: str = "python") -> str:
        """Review some code."""
        return f"Review this {language}: {code}"

    @mcp_completion(prompt="review", argument="language")
    def languages(self, value: str) -> list[str]:
        return [lang for lang in ("python", "perl", "rust") if lang.startswith(value)]


@pytest.fixture
def app() -> McpServerApp:
    return McpServerApp(Demo)


async def test_server_answers_initialize_with_info_and_capabilities(app, connect):
    async with connect(app) as client:
        info = client.server_info
        assert info.server_info.name == "demo" and info.server_info.version == "1.2.3"
        assert info.instructions == "Use the tools."
        assert info.protocol_version == "2025-11-25"
        assert info.capabilities.tools is not None


async def test_server_negotiates_older_and_unknown_versions(app, connect):
    async with connect(app, protocol_version="2024-11-05") as client:
        assert client.server_info.protocol_version == "2024-11-05"
        assert (await client.call_tool("add", {"a": 1, "b": 2})).content[0].text == "3"
    async with connect(McpServerApp(Demo), protocol_version="1999-01-01") as client:
        assert client.server_info.protocol_version == "2025-11-25"


async def test_tool_schema_comes_from_type_hints_and_docstring(app, connect):
    async with connect(app) as client:
        tools = {tool.name: tool for tool in await client.list_tools()}
        add = tools["add"]
        assert add.description == "Add two integers."
        assert add.input_schema["properties"]["a"]["type"] == "integer"
        assert add.input_schema["properties"]["a"]["description"] == "the first"
        assert add.input_schema["required"] == ["a", "b"]
        assert add.annotations.read_only_hint is True
        assert tools["greet"].input_schema["properties"]["style"]["enum"] == ["short", "long"]
        assert "ctx" not in tools["slow"].input_schema["properties"]


async def test_tool_call_returns_text_and_structured_content(app, connect):
    async with connect(app) as client:
        result = await client.call_tool("add", {"a": 2, "b": 40})
        assert result.content[0].text == "42"
        assert result.structured_content == {"result": 42}
        mid = await client.call_tool("midpoint", {"a": {"x": 0, "y": 0}, "b": {"x": 2, "y": 4}})
        assert mid.structured_content == {"x": 1.0, "y": 2.0}


async def test_arguments_the_schema_refuses_are_tool_errors_an_unknown_tool_invalid_params(
    app, connect
):
    """Every version's tools page: invalid input data is a tool execution error (isError,
    the model reads what was wrong); an unknown tool or a malformed request is -32602."""
    async with connect(app) as client:
        bad = await client.call_tool("add", {"a": "two", "b": 1})
        assert bad.is_error and "'a'" in bad.content[0].text
        assert "Expected `int`, got `str`" in bad.content[0].text
        missing = await client.call_tool("add", {"a": 1})
        assert missing.is_error and "'b'" in missing.content[0].text
        enum = await client.call_tool("greet", {"name": "x", "style": "medium"})
        assert enum.is_error and "'style'" in enum.content[0].text
        with pytest.raises(McpCallError) as unknown:
            await client.call_tool("nope", {})
        assert unknown.value.code == -32602
        with pytest.raises(McpCallError) as not_an_object:
            await client.request("tools/call", {"name": "add", "arguments": [1, 2]})
        assert not_an_object.value.code == -32602


async def test_tool_that_raises_returns_is_error(app, connect):
    async with connect(app) as client:
        result = await client.call_tool("fail")
        assert result.is_error is True
        assert "boom" in result.content[0].text
        assert (await client.call_tool("add", {"a": 1, "b": 1})).content[0].text == "2"


async def test_tool_timeout_returns_is_error(app, connect):
    async with connect(app) as client:
        result = await client.call_tool("too_slow")
        assert result.is_error is True and "timed out" in result.content[0].text


async def test_cancel_reaches_running_tool_and_ping_is_not_blocked(app, connect):
    async with connect(app) as client:
        call = asyncio.create_task(client.call_tool("slow", {"seconds": 10}))
        await asyncio.sleep(0.05)
        async with asyncio.timeout(1):
            await client.ping()
        assert app.dispatcher.in_flight_count() == 1
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        for _ in range(100):
            if app.dispatcher.in_flight_count() == 0:
                break
            await asyncio.sleep(0.01)
        assert app.dispatcher.in_flight_count() == 0
        assert app.instances[0].cancelled_seen is True


async def test_progress_notifications_reach_the_callback(app, connect):
    seen = []
    async with connect(app) as client:
        result = await client.call_tool(
            "progress", progress=lambda p, total, msg: seen.append((p, total, msg))
        )
        assert result.content[0].text == "ok"
        await asyncio.sleep(0.01)
    assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]


async def test_log_level_is_per_session(app, connect):
    logs_a: list = []
    logs_b: list = []
    async with (
        connect(app, logging_handler=logs_a.append) as a,
        connect(app, logging_handler=logs_b.append) as b,
    ):
        await a.set_logging_level("warning")
        await a.call_tool("chatty")
        await b.call_tool("chatty")
        await asyncio.sleep(0.02)
    assert [m["level"] for m in logs_a] == ["warning", "error"]
    assert [m["level"] for m in logs_b] == ["debug", "info", "warning", "error"]


async def test_set_level_rejects_unknown_level(app, connect):
    async with connect(app) as client:
        with pytest.raises(McpCallError) as err:
            await client.set_logging_level("loud")
        assert err.value.code == -32602


async def test_lifespan_context_reaches_tools(app, connect):
    async with connect(app) as client:
        assert (await client.call_tool("lifespan_value")).content[0].text == "connected"
        assert app.instances[0].started
    assert not app.instances[0].started


async def test_sampling_elicitation_and_roots_round_trip(app, connect):
    async def sampling(params):
        text = params["messages"][0]["content"]["text"]
        return {
            "role": "assistant",
            "content": {"type": "text", "text": f"answer to {text}"},
            "model": "m",
        }

    async def elicitation(params):
        assert params["requestedSchema"]["properties"]["name"]["type"] == "string"
        return {"action": "accept", "content": {"name": "Ada"}}

    async with connect(
        app,
        sampling_handler=sampling,
        elicitation_handler=elicitation,
        roots=[{"uri": "file:///a", "name": "a"}, {"uri": "file:///b"}],
    ) as client:
        assert (await client.call_tool("ask_model", {"question": "why"})).content[
            0
        ].text == "answer to why"
        assert (await client.call_tool("ask_user")).content[0].text == "accept:Ada"
        assert (await client.call_tool("roots")).content[0].text == "file:///a,file:///b"


async def test_sampling_without_client_capability_is_32021(app, connect):
    """As in 2026-07-28 (docs/eras.md): the request fails, it is not a tool error."""
    async with connect(app) as client:
        with pytest.raises(McpCallError) as err:
            await client.call_tool("ask_model", {"question": "why"})
        assert err.value.code == -32021 and err.value.data == {
            "requiredCapabilities": {"sampling": {}}
        }


async def test_resources_static_binary_and_template(app, connect):
    async with connect(app) as client:
        uris = {r.uri for r in await client.list_resources()}
        assert uris == {"demo://readme", "demo://logo"}
        templates = await client.list_resource_templates()
        assert templates[0].uri_template == "demo://users/{user_id}/profile"
        text = await client.read_resource("demo://readme")
        assert text.contents[0].text == "Read me." and text.contents[0].mime_type == "text/plain"
        blob = await client.read_resource("demo://logo")
        assert blob.contents[0].blob == "iVBORw=="
        profile = await client.read_resource("demo://users/42/profile")
        assert profile.contents[0].text == '{"id":"42"}'


async def test_unknown_resource_is_resource_not_found(app, connect):
    async with connect(app) as client:
        with pytest.raises(McpCallError) as err:
            await client.read_resource("demo://missing")
        assert err.value.code == -32002
        assert err.value.data == {"uri": "demo://missing"}


async def test_prompts_and_completion(app, connect):
    async with connect(app) as client:
        prompts = await client.list_prompts()
        assert prompts[0].name == "review"
        assert [(a.name, a.required) for a in prompts[0].arguments] == [
            ("code", True),
            ("language", False),
        ]
        result = await client.get_prompt("review", {"code": "x = 1"})
        assert result.messages[0].content.text == "Review this python: x = 1"
        completion = await client.complete(
            {"type": "ref/prompt", "name": "review"}, "language", "p"
        )
        assert completion.completion.values == ["python", "perl"]
        with pytest.raises(McpCallError) as err:
            await client.get_prompt("review", {})
        assert err.value.code == -32602


async def test_dynamic_tool_fires_list_changed_to_every_connection(app, connect):
    changed_a: list = []
    changed_b: list = []
    async with (
        connect(app, on_list_changed=changed_a.append) as a,
        connect(app, on_list_changed=changed_b.append) as b,
    ):
        await a.call_tool("add_tool", {"name": "hello"})
        for _ in range(100):
            if changed_a and changed_b:
                break
            await asyncio.sleep(0.01)
        assert changed_a == ["tools"] and changed_b == ["tools"]
        assert (await b.call_tool("hello")).content[0].text == "I am hello"


async def test_subscriptions_notify_and_go_away_on_disconnect(app, connect):
    updates: list = []
    async with connect(app, on_resource_updated=updates.append) as client:
        await client.subscribe_resource("demo://readme")
        await client.call_tool("touch", {"uri": "demo://readme"})
        await asyncio.sleep(0.02)
        assert updates == ["demo://readme"]
        await client.unsubscribe_resource("demo://readme")
        await client.call_tool("touch", {"uri": "demo://readme"})
        await client.subscribe_resource("demo://logo")
    assert app.subscriptions.get_subscribers("demo://logo") == {}
    assert updates == ["demo://readme"]


async def test_pagination_walks_every_page(connect):
    app = McpServerApp(Demo, page_size=3)
    async with connect(app) as client:
        page = await client.request("tools/list")
        assert len(page["tools"]) == 3 and page["nextCursor"]
        names = [tool.name for tool in await client.list_tools()]
        assert len(names) == len(app.catalog.list_tools()) and len(set(names)) == len(names)
        with pytest.raises(McpCallError) as err:
            await client.request("tools/list", {"cursor": "garbage!"})
        assert err.value.code == -32602


async def test_unknown_method_is_method_not_found(app, connect):
    async with connect(app) as client:
        with pytest.raises(McpCallError) as err:
            await client.request("tools/explode")
        assert err.value.code == -32601
