"""``result.data`` of ``McpClient.call_tool``: the structured content as Python values,
unwrapped from ``{"result": value}`` once ``tools/list`` showed the tool wraps its result
(and of a type made from its output schema: see test_hydrated_data.py), converted to
``output_type`` (a dataclass, a ``msgspec.Struct``, a pydantic model), None
for a failure or a result without structured content; never a field of the wire. In both
eras, in memory and over Streamable HTTP."""

from __future__ import annotations

from dataclasses import dataclass

import msgspec
import pydantic
import pytest

from mcpkit import McpServerApp
from mcpkit.client import McpClient, ToolResult
from mcpkit.testing import connected
from tests.http_server import serving

ERAS = ["2025-11-25", "2026-07-28"]


@dataclass
class Forecast:
    city: str
    high: int


class ForecastStruct(msgspec.Struct):
    city: str
    high: int


class ForecastModel(pydantic.BaseModel):
    city: str
    high: int


def build() -> McpServerApp:
    app = McpServerApp("typed")

    @app.tool()
    def add(a: int, b: int) -> int:
        return a + b

    @app.tool()
    def forecast(city: str) -> Forecast:
        return Forecast(city, 21)

    @app.tool()
    def text() -> str:
        return "plain"

    @app.tool()
    def broken() -> int:
        raise RuntimeError("no")

    return app


@pytest.mark.parametrize("era", ERAS)
async def test_data_is_the_result_as_python_values(era: str) -> None:
    async with connected(build(), protocol_version=era) as client:
        before = await client.call_tool("add", {"a": 1, "b": 2})
        assert before.data == {"result": 3}  # the schema not seen yet: as it came
        await client.list_tools()
        added = await client.call_tool("add", {"a": 1, "b": 2})
        assert isinstance(added, ToolResult) and added.data == 3
        made = (await client.call_tool("forecast", {"city": "Oslo"})).data  # of the schema's type
        assert (made.city, made.high) == ("Oslo", 21)
        assert msgspec.to_builtins(made) == {"city": "Oslo", "high": 21}
        for output_type in (Forecast, ForecastStruct, ForecastModel):
            typed = await client.call_tool("forecast", {"city": "Oslo"}, output_type=output_type)
            assert isinstance(typed.data, output_type) and typed.data.high == 21
        assert (await client.call_tool("text", {})).data is None
        assert (await client.call_tool("broken", {})).data is None
        with pytest.raises(ValueError, match="is not a"):
            await client.call_tool("add", {"a": 1, "b": 2}, output_type=Forecast)
        assert b'"data"' not in msgspec.json.encode(added)


async def test_data_over_http() -> None:
    async with serving(build()) as (url, _), McpClient.http(url) as client:
        await client.list_tools()
        assert (await client.call_tool("add", {"a": 2, "b": 2})).data == 4
