"""What a tool author and the model see when a tool goes wrong: the ``isError`` text says
what failed, the traceback is in the server log, and a return value the output schema
refuses is an ``isError`` result instead of ``structuredContent`` that breaks the schema."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Annotated, Literal

import msgspec
import pydantic
import pytest

from mcpkit import McpServerApp, ToolError, mcp_tool


class QuotaExceeded(Exception):
    pass


@dataclass
class Point:
    x: int
    y: int


@mcp_tool
def empty_message() -> str:
    raise RuntimeError()


@mcp_tool
def missing_key() -> str:
    return {}["city"]  # type: ignore[no-any-return]


@mcp_tool
def custom() -> str:
    raise QuotaExceeded("quota exceeded for this key")


@mcp_tool
def says_int() -> int:
    return "not an int"  # type: ignore[return-value]


@mcp_tool
def says_point() -> Point:
    return {"x": "a"}  # type: ignore[return-value]


@mcp_tool
def says_literal() -> Literal["red", "green"]:
    return "blue"  # type: ignore[return-value]


@mcp_tool
def says_natural() -> Annotated[int, msgspec.Meta(ge=0)]:
    return -1


@mcp_tool
def says_float() -> float:
    return 2


@mcp_tool
def says_int_or_str(text: bool) -> int | str:
    return "two" if text else 2


@mcp_tool
def good_point() -> Point:
    return Point(1, 2)


app = McpServerApp(
    empty_message,
    missing_key,
    custom,
    says_int,
    says_point,
    says_literal,
    says_natural,
    says_float,
    says_int_or_str,
    good_point,
)


@pytest.mark.parametrize(
    ("tool", "text"),
    [
        ("empty_message", "RuntimeError"),
        ("missing_key", "KeyError: 'city'"),
        ("custom", "quota exceeded for this key"),
    ],
)
async def test_the_error_text_says_what_failed(connect, tool: str, text: str) -> None:
    async with connect(app) as client:
        result = await client.call_tool(tool)
    assert result.is_error is True
    assert result.content[0].text == text


async def test_the_traceback_is_in_the_server_log(connect, caplog) -> None:
    caplog.set_level(logging.WARNING, logger="mcpkit.server")
    async with connect(app) as client:
        await client.call_tool("custom")
    (record,) = [r for r in caplog.records if r.name == "mcpkit.server"]
    assert record.levelno == logging.WARNING
    assert "tool custom raised" in record.getMessage()
    assert record.exc_info is not None and isinstance(record.exc_info[1], QuotaExceeded)


@pytest.mark.parametrize(
    ("tool", "reason"),
    [
        ("says_int", "Expected `int`, got `str`"),
        ("says_point", "Expected `int`, got `str` - at `$.x`"),
        ("says_literal", "Invalid enum value 'blue'"),
        ("says_natural", "Expected `int` >= 0"),
    ],
)
async def test_a_value_the_output_schema_refuses_is_an_error(
    connect, caplog, tool: str, reason: str
) -> None:
    caplog.set_level(logging.WARNING, logger="mcpkit.server")
    async with connect(app) as client:
        result = await client.call_tool(tool)
    assert result.is_error is True and result.structured_content is None
    text = result.content[0].text
    assert text.startswith(f"Tool '{tool}' returned a value its output schema refuses")
    assert reason in text
    assert text in caplog.text


async def test_values_the_output_schema_takes_are_sent(connect) -> None:
    async with connect(app) as client:
        assert (await client.call_tool("says_float")).structured_content == {"result": 2}
        both = [await client.call_tool("says_int_or_str", {"text": t}) for t in (False, True)]
        assert [r.structured_content for r in both] == [{"result": 2}, {"result": "two"}]
        point = await client.call_tool("good_point")
    assert point.is_error is None and point.structured_content == {"x": 1, "y": 2}


class Reading(pydantic.BaseModel):
    celsius: float = pydantic.Field(ge=-273.15)


@mcp_tool
def reading(kelvin: float) -> Reading:
    if kelvin < 0:
        return {"celsius": kelvin - 273.15}  # type: ignore[return-value]
    return Reading(celsius=kelvin - 273.15)


async def test_a_pydantic_return_type_is_checked_too(connect) -> None:
    async with connect(McpServerApp(reading)) as client:
        good = await client.call_tool("reading", {"kelvin": 273.15})
        bad = await client.call_tool("reading", {"kelvin": -1})
    assert good.structured_content == {"celsius": 0.0}
    assert bad.is_error is True
    assert "returned a value its output schema refuses" in bad.content[0].text
    assert "greater than or equal to -273.15" in bad.content[0].text


# ToolError and mask_error_details: FastMCP's two ways of choosing what the model reads.


def _failing_app(**options: object) -> McpServerApp:
    app = McpServerApp("failing", **options)  # type: ignore[arg-type]

    @app.tool()
    def refuses(city: str) -> str:
        raise ToolError(f"no forecast for {city}")

    @app.tool()
    async def crashes() -> str:
        raise RuntimeError("password=hunter2 in the connection string")

    return app


@pytest.mark.parametrize("masked", [False, True])
async def test_a_tool_error_is_the_text_the_model_reads_and_logs_no_traceback(
    connect, caplog, masked: bool
) -> None:
    caplog.set_level(logging.DEBUG, logger="mcpkit.server")
    async with connect(_failing_app(mask_error_details=masked)) as client:
        result = await client.call_tool("refuses", {"city": "Oslo"})
    assert result.is_error is True
    assert [block.text for block in result.content] == ["no forecast for Oslo"]
    (record,) = [r for r in caplog.records if r.name == "mcpkit.server"]
    assert record.levelno == logging.INFO and record.exc_info is None
    assert record.getMessage() == "tool refuses raised ToolError: no forecast for Oslo"


async def test_mask_error_details_hides_other_exceptions_behind_an_error_id(
    connect, caplog
) -> None:
    caplog.set_level(logging.WARNING, logger="mcpkit.server")
    async with connect(_failing_app(mask_error_details=True)) as client:
        result = await client.call_tool("crashes")
    text = result.content[0].text
    assert result.is_error is True and "hunter2" not in text
    found = re.fullmatch(
        r"Tool 'crashes' failed \(error id ([0-9a-f]{12})\); see the server log", text
    )
    assert found is not None, text
    (record,) = [r for r in caplog.records if r.name == "mcpkit.server"]
    assert record.levelno == logging.WARNING and found.group(1) in record.getMessage()
    assert isinstance(record.exc_info[1], RuntimeError)  # type: ignore[index]


async def test_unmasked_exceptions_still_show_their_text(connect) -> None:
    async with connect(_failing_app()) as client:
        result = await client.call_tool("crashes")
    assert result.content[0].text == "password=hunter2 in the connection string"


def test_tool_error_is_exported_from_mcpkit() -> None:
    import mcpkit

    assert mcpkit.ToolError is ToolError and "ToolError" in mcpkit.__all__
    assert issubclass(ToolError, mcpkit.MCPError) and not issubclass(
        ToolError, mcpkit.ProtocolError
    )


async def test_a_tool_error_in_a_resource_or_a_prompt_sends_its_text(caplog, connect):
    """FastMCP's ResourceError / PromptError: the request fails (-32603) with the text the
    function gave, not the masked "Internal error (id ...)", and no traceback is logged."""
    from mcpkit import McpCallError

    app = McpServerApp("demo")

    @app.resource("notes://{name}")
    def note(name: str) -> str:
        raise ToolError(f"no note named {name}; try notes://todo")

    @app.prompt()
    def review(topic: str) -> str:
        raise ToolError("reviews are closed today")

    with caplog.at_level(logging.INFO, logger="mcpkit"):
        async with connect(app) as client:
            with pytest.raises(McpCallError) as read:
                await client.read_resource("notes://x")
            assert (read.value.code, read.value.message) == (
                -32603,
                "no note named x; try notes://todo",
            )
            with pytest.raises(McpCallError) as got:
                await client.get_prompt("review", {"topic": "a"})
            assert got.value.message == "reviews are closed today"
    assert not [r for r in caplog.records if r.exc_info]
