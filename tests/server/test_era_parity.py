"""One behaviour per feature in both protocol eras (docs/eras.md), through the real
client: ``McpClient`` over the in-memory transport, with ``initialize`` (handshake era) or
per-request ``_meta`` (2026-07-28); every server message is schema-checked."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest

from mcpkit import (
    McpCallError,
    McpClient,
    McpServerApp,
    McpToolContext,
    MissingCapabilityError,
    mcp_prompt,
    mcp_server,
    mcp_tool,
)
from tests.conftest import connected
from tests.in_memory import serving_in_memory
from tests.wire import ModernWire, check

HANDSHAKE = "2025-11-25"
MODERN = "2026-07-28"
LEVELS = ["debug", "info", "warning", "error"]
NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


@mcp_server(name="parity")
class Parity:
    @mcp_tool()
    async def chatty(self, ctx: McpToolContext) -> str:
        for level in LEVELS:
            await ctx.log(level, f"{level} message", logger="parity")
        return "logged"

    @mcp_tool()
    async def bad_level(self, ctx: McpToolContext) -> str:
        await ctx.log("loud", "?")
        return "never"

    @mcp_tool()
    async def ask_user(self, ctx: McpToolContext) -> str:
        answer = await ctx.elicit("Your name?", NAME_SCHEMA)
        return f"{answer.action}:{(answer.content or {}).get('name')}"

    @mcp_tool()
    async def ask_model(self, ctx: McpToolContext) -> str:
        result = await ctx.sample("why?", max_tokens=10)
        return result["content"]["text"]

    @mcp_tool()
    async def roots(self, ctx: McpToolContext) -> str:
        return ",".join(root["uri"] for root in await ctx.list_roots())

    @mcp_tool()
    async def name_or_anonymous(self, ctx: McpToolContext) -> str:
        try:
            answer = await ctx.elicit("Your name?", NAME_SCHEMA)
        except MissingCapabilityError as exc:
            return f"anonymous (no {exc.capability})"
        return (answer.content or {}).get("name", "")

    @mcp_prompt()
    async def personal(self, ctx: McpToolContext) -> str:
        answer = await ctx.elicit("Your name?", NAME_SCHEMA)
        return f"Write to {(answer.content or {}).get('name')}"


async def elicitation(params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": {"name": "Ada"}}


async def sampling(params: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": {"type": "text", "text": "because"}, "model": "m"}


HANDLERS = {
    "elicitation": ("ask_user", {"elicitation_handler": elicitation}, "accept:Ada"),
    "sampling": ("ask_model", {"sampling_handler": sampling}, "because"),
    "roots": ("roots", {"roots": [{"uri": "file:///a"}]}, "file:///a"),
}

ERAS = [pytest.param(HANDSHAKE, id="handshake"), pytest.param(MODERN, id="2026-07-28")]


@contextlib.asynccontextmanager
async def connect_era(app: McpServerApp, era: str, **kwargs: Any) -> AsyncIterator[McpClient]:
    """A connected client of ``app`` speaking ``era``."""
    if era != MODERN:
        async with connected(app, protocol_version=era, **kwargs) as client:
            yield client
        return
    async with serving_in_memory(app) as client_end:
        client = McpClient(ModernWire(client_end), protocol_version=MODERN, **kwargs)
        try:
            async with asyncio.timeout(10):
                await client.connect()
            yield client
        finally:
            await client.aclose()


@pytest.fixture
def app() -> McpServerApp:
    return McpServerApp(Parity)


@pytest.fixture
def connect():
    return connect_era


async def logged(client: Any, logs: list[dict[str, Any]]) -> list[str]:
    assert (await client.call_tool("chatty")).content[0].text == "logged"
    await asyncio.sleep(0.02)  # notifications precede the result; let the handler finish
    levels = [message["level"] for message in logs]
    logs.clear()
    return levels


# ----------------------------------------------------------------------------- logging


async def test_handshake_era_logs_reach_the_client_unasked(app, connect):
    """2025-11-25: the server may send log messages; ``logging/setLevel`` sets the minimum."""
    logs: list[dict[str, Any]] = []
    async with connect(app, HANDSHAKE, logging_handler=logs.append) as client:
        assert await logged(client, logs) == LEVELS
        await client.set_logging_level("warning")
        assert await logged(client, logs) == ["warning", "error"]


async def test_modern_era_logs_only_for_requests_that_name_a_level(app, connect):
    """2026-07-28: the server MUST NOT emit notifications/message for a request without
    ``io.modelcontextprotocol/logLevel``; with one, the level is the minimum."""
    logs: list[dict[str, Any]] = []
    async with connect(app, MODERN, logging_handler=logs.append) as client:
        assert await logged(client, logs) == []
        await client.set_logging_level("warning")
        assert await logged(client, logs) == ["warning", "error"]


@pytest.mark.parametrize("era", ERAS)
async def test_a_requested_level_filters_the_same_in_both_eras(app, connect, era):
    logs: list[dict[str, Any]] = []
    async with connect(app, era, logging_handler=logs.append, log_level="info") as client:
        assert await logged(client, logs) == ["info", "warning", "error"]
        await client.set_logging_level("error")
        assert await logged(client, logs) == ["error"]


@pytest.mark.parametrize("era", ERAS)
async def test_an_unknown_requested_level_is_invalid_params_in_both_eras(app, connect, era):
    async with connect(app, era) as client:
        if era == MODERN:
            client.session.stream.check_sent = False  # McpClient sends the level unchecked
        with pytest.raises(McpCallError) as err:
            await client.set_logging_level("loud")  # handshake: logging/setLevel
            await client.call_tool("chatty")  # 2026-07-28: the level goes in _meta
        assert err.value.code == -32602


@pytest.mark.parametrize("era", ERAS)
async def test_a_tool_logging_at_an_unknown_level_fails_as_a_tool_in_both_eras(app, connect, era):
    async with connect(app, era, log_level="debug") as client:
        result = await client.call_tool("bad_level")
        assert result.is_error and "unknown log level" in result.content[0].text


# ----------------------------------------------------------------------------- a missing client handler


@pytest.mark.parametrize("capability", list(HANDLERS))
@pytest.mark.parametrize("era", ERAS)
async def test_a_missing_client_handler_is_32021_in_both_eras(app, connect, era, capability):
    tool, _, _ = HANDLERS[capability]
    async with connect(app, era) as client:
        with pytest.raises(McpCallError) as err:
            await client.call_tool(tool)
        assert err.value.code == -32021
        assert err.value.data == {"requiredCapabilities": {capability: {}}}
        if era == MODERN:
            [error] = client.session.stream.errors
            check(MODERN, "MissingRequiredClientCapabilityError", error)


@pytest.mark.parametrize("capability", list(HANDLERS))
@pytest.mark.parametrize("era", ERAS)
async def test_with_the_handler_the_call_succeeds_in_both_eras(app, connect, era, capability):
    tool, handler, expected = HANDLERS[capability]
    async with connect(app, era, **handler) as client:
        assert (await client.call_tool(tool)).content[0].text == expected


@pytest.mark.parametrize("era", ERAS)
async def test_a_tool_may_catch_the_missing_capability_in_both_eras(app, connect, era):
    async with connect(app, era) as client:
        result = await client.call_tool("name_or_anonymous")
        assert not result.is_error and result.content[0].text == "anonymous (no elicitation)"
    async with connect(McpServerApp(Parity), era, elicitation_handler=elicitation) as client:
        assert (await client.call_tool("name_or_anonymous")).content[0].text == "Ada"


@pytest.mark.parametrize("era", ERAS)
async def test_a_prompt_missing_a_client_handler_is_32021_too(app, connect, era):
    async with connect(app, era) as client:
        with pytest.raises(McpCallError) as err:
            await client.get_prompt("personal")
        assert err.value.code == -32021
    async with connect(McpServerApp(Parity), era, elicitation_handler=elicitation) as client:
        assert (await client.get_prompt("personal")).messages[0].content.text == "Write to Ada"
