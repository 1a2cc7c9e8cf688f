"""``result.data`` of the tool's own output type: once ``list_tools()`` has shown a tool's
output schema, the client makes a type of it and ``data`` is an instance (attribute
access, nested objects, lists, enums, optional members), without the caller declaring a
class; ``output_type=`` still wins; a result that does not conform, or a schema the client
cannot make a type of, leaves ``data`` the plain value, said in a debug log. Against
mcpkit servers in both eras, in memory and over Streamable HTTP, and against the official
``mcp`` 2.3.0 server, whose schemas pydantic writes."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Literal

import msgspec
import pydantic
import pytest
from mcp.server.mcpserver import MCPServer
from typing_extensions import TypedDict  # pydantic reads typing.TypedDict from 3.12 on

from mcpkit import McpServerApp
from mcpkit.client import McpClient
from mcpkit.testing import connected
from tests.http_server import http_client, serve_asgi

ERAS = ["2025-11-25", "2026-07-28"]


@dataclass
class Stop:
    city: str
    nights: int = 1


@dataclass
class Route:
    name: str
    stops: list[Stop]
    mode: Literal["train", "bus"]
    note: str | None = None


def build() -> McpServerApp:
    app = McpServerApp("routes")

    @app.tool()
    def route(name: str) -> Route:
        return Route(name, [Stop("Oslo"), Stop("Bergen", 2)], "train")

    @app.tool()
    def stops() -> list[Stop]:
        return [Stop("Oslo")]

    @app.tool(output_schema={"type": "object", "properties": {"a": {"type": "integer"}}})
    def more_than_declared() -> dict[str, int]:
        return {"a": 1, "b": 2}

    @app.tool(output_schema={"type": "object", "not": {"required": ["x"]}})
    def odd_schema() -> dict[str, int]:
        return {"a": 1}

    @app.tool(output_schema={"type": "object", "properties": {"a": {"type": "string"}}})
    def wrong_type() -> dict[str, int]:
        return {"a": 1}

    return app


async def check_routes(client: McpClient) -> None:
    await client.list_tools()
    made = (await client.call_tool("route", {"name": "west"})).data
    assert (made.name, made.mode, made.note) == ("west", "train", None)
    assert [(stop.city, stop.nights) for stop in made.stops] == [("Oslo", 1), ("Bergen", 2)]
    assert made == (await client.call_tool("route", {"name": "west"})).data
    listed = (await client.call_tool("stops", {})).data  # unwrapped, then typed
    assert [stop.city for stop in listed] == ["Oslo"]
    mine = await client.call_tool("route", {"name": "west"}, output_type=Route)
    assert isinstance(mine.data, Route) and mine.data.stops[1] == Stop("Bergen", 2)
    as_sent = await client.call_tool("route", {"name": "west"}, output_type=dict)
    assert as_sent.data["stops"][0] == {"city": "Oslo", "nights": 1}


@pytest.mark.parametrize("era", ERAS)
async def test_data_is_of_the_schema_s_type_in_memory(era: str) -> None:
    async with connected(build(), protocol_version=era) as client:
        before = (await client.call_tool("route", {"name": "west"})).data
        assert before["name"] == "west"  # no schema seen yet: the plain value
        await check_routes(client)


@pytest.mark.parametrize("era", ERAS)
async def test_data_is_of_the_schema_s_type_over_http(era: str) -> None:
    async with http_client(build(), era) as client:
        await check_routes(client)


async def test_what_cannot_be_typed_stays_plain_and_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="mcpkit.client")
    async with connected(build()) as client:
        await client.list_tools()
        assert (await client.call_tool("more_than_declared", {})).data == {"a": 1, "b": 2}
        assert (await client.call_tool("odd_schema", {})).data == {"a": 1}
        assert (await client.call_tool("wrong_type", {})).data == {"a": 1}
    said = [record.getMessage() for record in caplog.records]
    assert any("more_than_declared: its result does not conform" in line for line in said)
    assert any("odd_schema: no type made of its output schema (uses not)" in line for line in said)
    assert any("wrong_type: its result does not conform" in line for line in said)


async def test_a_tool_listed_again_with_another_schema_gets_another_type() -> None:
    app = build()
    async with connected(app) as client:
        await client.list_tools()
        first = type((await client.call_tool("route", {"name": "a"})).data)
        await client.list_tools()  # the same schema: the type made once is kept
        assert type((await client.call_tool("route", {"name": "a"})).data) is first

        @app.tool(name="route")
        def route_v2(name: str) -> Stop:
            return Stop(name)

        await client.list_tools()
        again = (await client.call_tool("route", {"name": "a"})).data
        assert type(again) is not first and again.city == "a"


class Place(pydantic.BaseModel):
    city: str
    country: str = "NO"


class Weather(pydantic.BaseModel):
    place: Place
    sky: Literal["clear", "cloudy"]
    temperatures: list[float]
    wind: float | None = None


class Reading(TypedDict):
    sensor: str
    value: int


def official() -> MCPServer:
    server = MCPServer("official-typed", version="2.3.0-test")

    @server.tool(description="The weather of a city")
    def weather(city: str) -> Weather:
        return Weather(place=Place(city=city), sky="clear", temperatures=[12.5, 14])

    @server.tool(description="One sensor's reading")
    def reading(sensor: str) -> Reading:
        return Reading(sensor=sensor, value=7)

    @server.tool(description="Several readings")
    def readings() -> list[Reading]:
        return [Reading(sensor="a", value=1)]

    return server


@pytest.mark.parametrize("mode", ["legacy", "modern"])
async def test_the_official_server_s_pydantic_schemas(mode: str) -> None:
    asgi = official().streamable_http_app()
    async with serve_asgi(asgi, lifespan="on") as base:
        async with McpClient.http(f"{base}/mcp", protocol_mode=mode) as client:
            tools = {tool.name: tool for tool in await client.list_tools()}
            assert "$defs" in tools["weather"].output_schema  # pydantic's references
            weather = (await client.call_tool("weather", {"city": "Oslo"})).data
            assert type(weather).__name__ == "Weather"
            assert (weather.place.city, weather.place.country, weather.sky) == (
                "Oslo",
                "NO",
                "clear",
            )
            assert weather.temperatures == [12.5, 14.0] and weather.wind is None
            assert msgspec.to_builtins(weather)["place"] == {"city": "Oslo", "country": "NO"}
            reading = (await client.call_tool("reading", {"sensor": "s1"})).data
            assert (reading.sensor, reading.value) == ("s1", 7)
            (first,) = (await client.call_tool("readings", {})).data
            assert (first.sensor, first.value) == ("a", 1)
            mine = await client.call_tool("weather", {"city": "Oslo"}, output_type=Weather)
            assert isinstance(mine.data, Weather) and mine.data.place == Place(city="Oslo")
