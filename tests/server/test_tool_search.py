"""Tool search (``ToolSearch``): ``tools/list`` shows ``search_tools`` and ``call_tool``
(and the tools kept visible); a search ranks the caller's tools by BM25 over name,
description and arguments; ``call_tool`` runs one with its arguments through the tool's
own checks; the tools stay callable by name; a hidden tool is never found. In both eras,
and with the official client over HTTP."""

from __future__ import annotations

import json

import pytest

from mcpkit import McpServerApp
from mcpkit.server.middleware import ToolSearch
from mcpkit.server.middleware._tool_search import Bm25Index, words
from mcpkit.testing import connected
from tests.official_client import official_session

ERAS = ["2025-11-25", "2026-07-28"]


def build() -> McpServerApp:
    app = McpServerApp("catalog")

    @app.tool()
    def get_weather(city: str) -> str:
        """Current weather conditions and temperature for a city."""
        return f"sunny in {city}"

    @app.tool()
    def convert_currency(amount: float, to: str) -> str:
        """Convert an amount of money to another currency at today's exchange rate."""
        return f"{amount} {to}"

    @app.tool()
    def send_email(recipient: str, body: str) -> str:
        """Send an email message to a recipient."""
        return f"sent to {recipient}"

    @app.tool()
    def ping() -> str:
        return "pong"

    @app.tool(enabled=False)
    def secret_weather_station() -> str:
        """Weather of the secret station."""
        return "hidden"

    app.add_middleware(ToolSearch(app, max_results=2, always_visible=("ping",)))
    return app


def test_words_and_ranking() -> None:
    assert words("getWeather snake_case HTTP2") == ["get", "weather", "snake", "case", "http", "2"]
    tools = [
        {"name": "a_tool", "description": "weather weather"},
        {"name": "b_tool", "description": "currency exchange"},
    ]
    index = Bm25Index(tools)
    assert [tool["name"] for tool in index.search("exchange rates", 5)] == ["b_tool"]
    assert index.search("nothing matches", 5) == []


@pytest.mark.parametrize("era", ERAS)
async def test_search_then_call(era: str) -> None:
    async with connected(build(), protocol_version=era) as client:
        assert sorted(tool.name for tool in await client.list_tools()) == [
            "call_tool",
            "ping",
            "search_tools",
        ]
        found = await client.call_tool("search_tools", {"query": "temperature in a city"})
        best = json.loads(found.content[0].text)  # type: ignore[union-attr]
        assert best[0]["name"] == "get_weather" and best[0]["inputSchema"]["required"] == ["city"]
        assert "secret_weather_station" not in [tool["name"] for tool in best]
        assert len(best) <= 2
        money = json.loads(
            (await client.call_tool("search_tools", {"query": "exchange money"})).content[0].text  # type: ignore[union-attr]
        )
        assert money[0]["name"] == "convert_currency"
        called = await client.call_tool(
            "call_tool", {"name": "get_weather", "arguments": {"city": "Oslo"}}
        )
        assert called.content[0].text == "sunny in Oslo"  # type: ignore[union-attr]
        refused = await client.call_tool("call_tool", {"name": "get_weather", "arguments": {}})
        assert refused.is_error  # the tool's own checks
        direct = await client.call_tool("send_email", {"recipient": "a", "body": "b"})
        assert direct.content[0].text == "sent to a"  # type: ignore[union-attr]
        empty = await client.call_tool("search_tools", {"query": " "})
        assert empty.is_error


async def test_the_official_client_searches_over_http() -> None:
    async with official_session(build()) as session:
        found = await session.call_tool("search_tools", {"query": "send a message"})
    assert json.loads(found.content[0].text)[0]["name"] == "send_email"  # type: ignore[union-attr]
