"""A parameter typed ``McpRequestScope`` (or ``McpRequestScope | None``) is the HTTP request
the call came on, injected like ``McpToolContext``: never in the input schema; over real
Streamable HTTP (both eras) the request's path, query and headers; in memory None, or a
``-32603`` naming the parameter when it is a plain ``McpRequestScope`` (it promises a
request). Functions that do not take it keep no injection plan (nothing on their calls)."""

import asyncio
from typing import Any

import pytest

from mcpkit import (
    HttpClientTransportOptions,
    HttpTransportMode,
    McpCallError,
    McpClient,
    McpServerApp,
    McpToolContext,
    mcp_prompt,
    mcp_resource,
    mcp_server,
    mcp_tool,
)
from mcpkit.server import Depends, McpRequestScope
from tests.http_server import serving

HANDSHAKE = "2025-11-25"
MODERN = "2026-07-28"


def _seen(request: McpRequestScope | None) -> dict[str, Any] | None:
    if request is None:
        return None
    return {
        "method": request.method,
        "path": request.path,
        "query": {name: list(values) for name, values in request.query.items()},
        "tenant": request.headers.get("x-tenant"),
        "client": request.client is not None and request.client[0],
    }


def user_agent(request: McpRequestScope | None) -> str:
    return request.headers.get("user-agent", "") if request is not None else "none"


def path_of(request: McpRequestScope) -> str:
    return request.path


def make_app() -> McpServerApp:
    @mcp_server(name="scoped")
    class Scoped:
        @mcp_tool()
        def where(self, label: str, request: McpRequestScope | None) -> dict[str, Any]:
            return {"label": label, "request": _seen(request)}

        @mcp_tool()
        def strict(self, request: McpRequestScope) -> str:
            return request.path

        @mcp_tool()
        async def mixed(
            self,
            ctx: McpToolContext,
            agent: str = Depends(user_agent),
            request: McpRequestScope | None = None,
        ) -> dict[str, Any]:
            return {"method": ctx.method, "agent": agent.split("/")[0], "http": request is not None}

        @mcp_tool()
        def routed(self, path: str = Depends(path_of)) -> str:
            return path

        @mcp_tool()
        def plain(self, text: str) -> str:
            return text

        @mcp_resource("scope://{topic}")
        def topic(self, topic: str, request: McpRequestScope | None = None) -> str:
            return f"{topic} via {request.path if request is not None else 'memory'}"

        @mcp_prompt()
        def ask(self, question: str, request: McpRequestScope | None = None) -> str:
            tenant = request.headers.get("x-tenant") if request is not None else None
            return f"{question} ({tenant})"

    return McpServerApp(Scoped)


async def _left_out_of_schemas(client: McpClient) -> None:
    tools = {tool.name: tool for tool in await client.list_tools()}
    assert tools["where"].input_schema["properties"].keys() == {"label"}
    assert tools["where"].input_schema["required"] == ["label"]
    assert tools["strict"].input_schema["properties"] == {}
    assert tools["mixed"].input_schema["properties"] == {}
    prompts = {prompt.name: prompt for prompt in await client.list_prompts()}
    assert [argument.name for argument in prompts["ask"].arguments] == ["question"]


def test_the_plan_is_made_only_for_functions_that_take_it():
    catalog = make_app().catalog
    assert catalog.get_tool("plain").injection is None  # the plain path, as before
    assert catalog.get_tool("plain").injected == {}
    for name in ("where", "strict", "mixed"):
        plan = catalog.get_tool(name).injection
        assert plan is not None and "request" in plan.names
    mixed = catalog.get_tool("mixed").injection
    assert mixed is not None and set(mixed.names) == {"ctx", "agent", "request"}


async def test_in_memory_there_is_no_request(connect):
    async with connect(make_app()) as client:
        await _left_out_of_schemas(client)
        result = await client.call_tool("where", {"label": "x"})
        assert result.structured_content == {"label": "x", "request": None}
        mixed = (await client.call_tool("mixed")).structured_content
        assert mixed == {"method": "tools/call", "agent": "none", "http": False}
        text = (await client.read_resource("scope://tea")).contents[0].text
        assert text == "tea via memory"
        prompt = await client.get_prompt("ask", {"question": "why"})
        assert prompt.messages[0].content.text == "why (None)"


async def test_a_plain_request_scope_without_http_fails_naming_the_parameter(connect):
    # It promises a request: failing names the fix, where a None would fail inside the tool.
    async with connect(make_app()) as client:
        with pytest.raises(McpCallError) as missing:
            await client.call_tool("strict")
    assert missing.value.code == -32603
    assert "'request'" in missing.value.message
    assert "McpRequestScope | None" in missing.value.message
    async with connect(make_app()) as client:  # a provider's plain one: the same
        with pytest.raises(McpCallError) as in_provider:
            await client.call_tool("routed")
    assert in_provider.value.code == -32603
    assert "path_of: parameter 'request'" in in_provider.value.message


def _http_client(url: str, era: str) -> McpClient:
    options = HttpClientTransportOptions(
        endpoint=url,
        transport_mode=HttpTransportMode.STREAMABLE_HTTP,
        additional_headers={"x-tenant": "acme", "user-agent": "probe/1.0"},
    )
    return McpClient.http(options, protocol_version=era)


@pytest.mark.parametrize("era", [HANDSHAKE, MODERN])
async def test_over_streamable_http_the_tool_sees_the_request(era):
    async with asyncio.timeout(30), serving(make_app()) as (url, _):
        async with _http_client(f"{url}?team=blue&team=red", era) as client:
            await _left_out_of_schemas(client)
            result = await client.call_tool("where", {"label": "x"})
            assert result.structured_content == {
                "label": "x",
                "request": {
                    "method": "POST",
                    "path": "/mcp",
                    "query": {"team": ["blue", "red"]},
                    "tenant": "acme",
                    "client": "127.0.0.1",
                },
            }
            assert (await client.call_tool("strict")).content[0].text == "/mcp"
            assert (await client.call_tool("routed")).content[0].text == "/mcp"
            mixed = (await client.call_tool("mixed")).structured_content
            assert mixed == {"method": "tools/call", "agent": "probe", "http": True}
            text = (await client.read_resource("scope://tea")).contents[0].text
            assert text == "tea via /mcp"
            prompt = await client.get_prompt("ask", {"question": "why"})
            assert prompt.messages[0].content.text == "why (acme)"


async def test_a_request_scope_annotation_left_as_text_is_still_injected(connect):
    # Written as text (a `from __future__ import annotations` module): resolved, or when
    # it cannot be, recognised by name, None-admitting by its spelling.
    @mcp_tool
    def spelled(
        request: "McpRequestScope | None",
        other: "Optional[McpRequestScope]",  # noqa: F821 - Optional is not imported here
    ) -> str:
        return f"{request} {other}"

    app = McpServerApp(spelled)
    entry = app.catalog.get_tool("spelled")
    assert entry.input_schema["properties"] == {}
    assert entry.injection is not None and set(entry.injection.names) == {"request", "other"}
    async with connect(app) as client:
        assert (await client.call_tool("spelled")).content[0].text == "None None"
