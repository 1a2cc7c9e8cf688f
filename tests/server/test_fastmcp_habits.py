"""Servers written as FastMCP's documentation teaches, in mcpkit's names (docs/migrating.md):
what used to fail, send a malformed message or silently do something else now works.

Prompt arguments of other types than ``str`` arrive as text (all the spec lets a client
send); a prompt message may be ``{"role": ..., "content": "text"}``; ``output_schema=`` on a
tool returning a dict gives ``structuredContent``; ``ctx.elicit`` of a ``str``, ``bool``,
``Literal`` or Enum asks for one ``value``; ``Image``/``Audio``/``File`` read a path;
``ctx.read_resource`` reads the server's own resources; a template's typed variables are
converted, and its ``{path*}`` (FastMCP's wildcard) warns of ``{+path}``; a client request
timing out is not the tool's own timeout; FastMCP's decorator options say what does their
job."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pydantic
import pytest

from mcpkit import (
    Audio,
    File,
    Image,
    McpCallError,
    McpServerApp,
    McpToolContext,
    ToolError,
    mcp_prompt,
    mcp_tool,
)

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 8

# --------------------------------------------------------------------------- prompts


def prompts_app() -> McpServerApp:
    app = McpServerApp("prompts")

    @app.prompt()
    def plan(days: int, budget: float = 100.0, cities: list[str] | None = None) -> str:
        return f"{days} days ({type(days).__name__}), {budget} ({type(budget).__name__}), {cities}"

    @app.prompt()
    def tone(
        text: str,
        style: Literal["short", "long"] = "short",
        strict: bool = False,
        audience: str = pydantic.Field(default="all", description="Who reads it"),
    ) -> str:
        return f"{text!r} {style} {strict!r} {audience}"

    @app.prompt()
    def chat(code: str) -> list[dict[str, Any]]:
        return [
            {"role": "user", "content": f"Review this:\n{code}"},
            {"role": "assistant", "content": "Sure: what should I look for?"},
            {"role": "user", "content": Image(PNG)},
        ]

    return app


async def test_typed_prompt_arguments_are_read_from_their_text(connect) -> None:
    """Prompt arguments are strings on the wire: an ``int`` parameter was refused every
    value a client could send ("Invalid argument 'days': Expected `int`, got `str`")."""
    async with connect(prompts_app()) as client:
        got = await client.get_prompt("plan", {"days": "3", "budget": "2.5", "cities": '["Oslo"]'})
        assert got.messages[0].content.text == "3 days (int), 2.5 (float), ['Oslo']"
        got = await client.get_prompt("tone", {"text": "42", "style": "long", "strict": "true"})
        assert got.messages[0].content.text == "'42' long True all"  # a str stays text
        with pytest.raises(McpCallError) as refused:
            await client.get_prompt("plan", {"days": "three"})
        assert refused.value.code == -32602 and "'days'" in refused.value.message


@pytest.mark.parametrize("brackets", [65, 5000])
async def test_a_prompt_argument_nesting_too_deep_is_invalid_params(connect, brackets) -> None:
    """Its text was read as JSON without the message's depth bound: 5,000 brackets were a
    ``RecursionError`` (-32603 with a traceback in the log)."""
    deep = "[" * brackets + "]" * brackets
    async with connect(prompts_app()) as client:
        for text in (deep, "[" * brackets):
            with pytest.raises(McpCallError) as refused:
                await client.get_prompt("plan", {"days": "1", "cities": text})
            assert refused.value.code == -32602
            assert "'cities'" in refused.value.message and "deeper than 64" in refused.value.message
        nested = "[" * 63 + '"Oslo"' + "]" * 63  # within the bound: the validator refuses it
        with pytest.raises(McpCallError) as refused:
            await client.get_prompt("plan", {"days": "1", "cities": nested})
        assert refused.value.code == -32602 and "cities[0]" in refused.value.message
        got = await client.get_prompt("plan", {"days": "2", "cities": '["Oslo"]'})
        assert got.messages[0].content.text == "2 days (int), 100.0 (float), ['Oslo']"


async def test_a_prompt_arguments_field_description_is_listed(connect) -> None:
    async with connect(prompts_app()) as client:
        (tone,) = [p for p in await client.list_prompts() if p.name == "tone"]
    described = {a.name: a.description for a in tone.arguments or []}
    assert described == {"text": None, "style": None, "strict": None, "audience": "Who reads it"}


async def test_a_message_dict_may_hold_plain_text_or_an_image(connect) -> None:
    """It was sent as it was, a ``GetPromptResult`` no client accepts."""
    async with connect(prompts_app()) as client:
        got = await client.get_prompt("chat", {"code": "x = 1"})
    assert [m.role for m in got.messages] == ["user", "assistant", "user"]
    assert got.messages[1].content.text == "Sure: what should I look for?"
    assert got.messages[2].content.type == "image"


# --------------------------------------------------------------------------- tool output

POINT = {
    "type": "object",
    "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
    "required": ["x", "y"],
}


def output_app() -> McpServerApp:
    app = McpServerApp("output")

    @app.tool(output_schema=POINT)
    def point(x: int) -> dict:
        return {"x": x, "y": 2 * x}

    @app.tool(output_schema=POINT)
    def untyped(x: int):  # type: ignore[no-untyped-def]
        return {"x": x, "y": 0}

    @app.tool(output_schema=POINT, input_schema={"type": "object"})
    def verbatim(**arguments: Any) -> dict:
        return {"x": arguments["x"], "y": 1}

    @app.tool(output_schema=POINT)
    def not_an_object() -> dict:
        return "oops"  # type: ignore[return-value]

    return app


@pytest.mark.parametrize(
    ("tool", "expected"),
    [("point", {"x": 3, "y": 6}), ("untyped", {"x": 3, "y": 0}), ("verbatim", {"x": 3, "y": 1})],
)
async def test_an_output_schema_given_gives_structured_content(connect, tool, expected) -> None:
    """The spec wants structuredContent from a tool with an outputSchema; it was missing,
    which the official SDK's client refuses ("has an output schema but did not return
    structured content")."""
    async with connect(output_app()) as client:
        result = await client.call_tool(tool, {"x": 3})
    assert result.is_error is None and result.structured_content == expected


async def test_a_value_that_is_no_object_is_refused(connect) -> None:
    async with connect(output_app()) as client:
        result = await client.call_tool("not_an_object")
    assert result.is_error is True and result.structured_content is None
    assert "output schema refuses" in result.content[0].text


# --------------------------------------------------------------------------- elicitation


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


@dataclass
class Contact:
    name: str
    age: int


ASKED_FOR: dict[str, Any] = {
    "str": str,
    "int": int,
    "bool": bool,
    "literal": Literal["low", "high"],
    "enum": Color,
    "dataclass": Contact,
}


def elicit_app() -> McpServerApp:
    app = McpServerApp("elicit")

    @app.tool()
    async def ask(kind: str, ctx: McpToolContext) -> str:
        answer = await ctx.elicit("Your answer?", ASKED_FOR[kind])
        return f"{answer.action} {answer.content!r}"

    return app


@pytest.mark.parametrize(
    ("kind", "schema", "sent", "got"),
    [
        ("str", {"type": "string"}, "Ada", "'Ada'"),
        ("int", {"type": "integer"}, 3, "3"),
        ("bool", {"type": "boolean"}, True, "True"),
        ("literal", {"type": "string", "enum": ["low", "high"]}, "high", "'high'"),
        ("enum", {"type": "string", "enum": ["red", "blue"]}, "blue", "<Color.BLUE: 'blue'>"),
    ],
)
async def test_a_type_that_is_no_object_is_asked_for_as_one_value(
    connect, kind: str, schema: dict[str, Any], sent: Any, got: str
) -> None:
    """FastMCP's ``ctx.elicit(msg, str)``: mcpkit sent ``requestedSchema: {"type":
    "string"}`` (no form a client can show) and failed on the answer."""
    asked: list[dict[str, Any]] = []

    async def user(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params["requestedSchema"])
        return {"action": "accept", "content": {"value": sent}}

    async with connect(elicit_app(), elicitation_handler=user) as client:
        result = await client.call_tool("ask", {"kind": kind})
    assert result.content[0].text == f"accept {got}"
    assert asked == [{"type": "object", "properties": {"value": schema}, "required": ["value"]}]


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_a_declined_or_cancelled_value_has_no_content(connect, action: str) -> None:
    async def user(params: dict[str, Any]) -> dict[str, Any]:
        return {"action": action}

    async with connect(elicit_app(), elicitation_handler=user) as client:
        result = await client.call_tool("ask", {"kind": "literal"})
    assert result.content[0].text == f"{action} None"


async def test_an_object_type_is_still_asked_for_as_its_fields(connect) -> None:
    async def user(params: dict[str, Any]) -> dict[str, Any]:
        assert set(params["requestedSchema"]["properties"]) == {"name", "age"}
        return {"action": "accept", "content": {"name": "Ada", "age": 36}}

    async with connect(elicit_app(), elicitation_handler=user) as client:
        result = await client.call_tool("ask", {"kind": "dataclass"})
    assert result.content[0].text == "accept Contact(name='Ada', age=36)"


async def test_an_answer_without_its_value_is_the_clients_fault(connect) -> None:
    async def user(params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {"name": "Ada"}}

    async with connect(elicit_app(), elicitation_handler=user) as client:
        with pytest.raises(McpCallError) as refused:
            await client.call_tool("ask", {"kind": "str"})
    assert refused.value.code == -32602 and "no 'value' in the content" in refused.value.message


# --------------------------------------------------------------------------- media helpers


def test_image_and_audio_take_fastmcps_path_and_format(tmp_path: Path) -> None:
    chart = tmp_path / "chart.jpg"
    chart.write_bytes(b"jpeg bytes")
    assert Image(path=chart) == Image(b"jpeg bytes", "image/jpeg")
    assert Image(str(chart)) == Image(b"jpeg bytes", "image/jpeg")  # FastMCP's Image("x.jpg")
    assert Image(data=b"x", format="webp").mime_type == "image/webp"
    assert Image(b"x").mime_type == "image/png"
    assert Audio(data=b"x", format="mp3").mime_type == "audio/mpeg"
    assert Audio(b"x").mime_type == "audio/wav"
    with pytest.raises(TypeError, match="bytes or path=, one of them"):
        Image()
    with pytest.raises(TypeError, match="bytes or path=, one of them"):
        Audio(b"x", path=chart)


async def test_file_is_an_embedded_resource(connect, tmp_path: Path) -> None:
    picture = tmp_path / "logo.png"
    picture.write_bytes(PNG)
    app = McpServerApp("files")

    @app.tool()
    def report() -> list:
        return [
            File(data=b"a,b\n1,2\n", format="csv", name="rows"),
            File(path=picture),
            Image(path=picture),
        ]

    async with connect(app) as client:
        result = await client.call_tool("report")
    rows, logo, image = result.content
    assert rows.type == logo.type == "resource"
    assert rows.resource == {
        "uri": "file:///rows.csv",
        "text": "a,b\n1,2\n",
        "mimeType": "text/csv",
    }
    blob = "iVBORw0KGgoAAAAAAAAAAA=="
    assert logo.resource == {"uri": "file:///logo.png", "blob": blob, "mimeType": "image/png"}
    assert image.type == "image" and image.data == blob and image.mime_type == "image/png"


# --------------------------------------------------------------------------- ctx.read_resource


def reading_app() -> McpServerApp:
    app = McpServerApp("reading")

    @app.resource("config://app", mime_type="application/json")
    def config() -> dict:
        return {"theme": "dark"}

    @app.resource("users://{user_id}/profile")
    def profile(user_id: int) -> dict:
        return {"id": user_id, "next": user_id + 1}

    @app.tool()
    async def read(uri: str, ctx: McpToolContext) -> list[dict[str, Any]]:
        return await ctx.read_resource(uri)

    @app.tool()
    async def read_or_say(uri: str, ctx: McpToolContext) -> str:
        try:
            await ctx.read_resource(uri)
        except ToolError as exc:
            return f"{type(exc.__cause__).__name__}: {exc}"
        return "read"

    return app


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
async def test_a_tool_reads_the_servers_own_resources(connect, version: str) -> None:
    async with connect(reading_app(), protocol_version=version) as client:
        static = await client.call_tool("read", {"uri": "config://app"})
        templated = await client.call_tool("read", {"uri": "users://41/profile"})
    assert static.structured_content == {
        "result": [
            {"uri": "config://app", "text": '{"theme":"dark"}', "mimeType": "application/json"}
        ]
    }
    assert templated.structured_content["result"][0]["text"] == '{"id":41,"next":42}'


async def test_reading_an_unknown_uri_is_a_tool_error(connect) -> None:
    async with connect(reading_app()) as client:
        uncaught = await client.call_tool("read", {"uri": "nothing://here"})
        caught = await client.call_tool("read_or_say", {"uri": "nothing://here"})
    assert uncaught.is_error is True
    assert uncaught.content[0].text == "Resource not found: nothing://here"
    assert caught.content[0].text == "ResourceNotFoundError: Resource not found: nothing://here"


# --------------------------------------------------------------------------- templates


async def test_typed_template_variables_are_converted(connect) -> None:
    """``users://{user_id}/profile`` with ``user_id: int`` gave the function the text."""
    async with connect(reading_app()) as client:
        read = await client.read_resource("users://7/profile")
        assert read.contents[0].text == '{"id":7,"next":8}'
        with pytest.raises(McpCallError) as refused:
            await client.read_resource("users://seven/profile")
    assert refused.value.code == -32602
    assert refused.value.data == {"uri": "users://seven/profile", "variable": "user_id"}


def _wildcard_app() -> McpServerApp:
    app = McpServerApp("files")

    @app.resource("star://{path*}")
    def star(path: Any) -> str:
        return repr(path)

    @app.resource("plus://{+path}")
    def plus(path: str) -> str:
        return path

    @app.resource("segments://x{/path*}{?tag*}")
    def segments(path: list[str], tag: list[str] | None = None) -> str:
        return "/".join(path)

    return app


async def test_fastmcps_wildcard_warns_and_names_the_rfc_6570_spelling(
    connect, caplog: pytest.LogCaptureFixture
) -> None:
    """``{path*}`` silently never matched ``a/b``: it keeps RFC 6570's meaning (resource
    templates are RFC 6570 templates), and registering it says what does match."""
    with caplog.at_level("WARNING", logger="mcpkit.server"):
        app = _wildcard_app()
    warnings = [r for r in caplog.records if r.name == "mcpkit.server"]
    assert len(warnings) == 1  # {+path}, {/path*} and {?tag*} are fine
    message = warnings[0].getMessage()
    assert "'star://{path*}' (star)" in message and "write {+path}" in message
    async with connect(app) as client:
        assert (await client.read_resource("plus://a/b/c")).contents[0].text == "a/b/c"
        assert (await client.read_resource("segments://x/a/b")).contents[0].text == "a/b"
        # RFC 6570: an exploded list in simple expansion is "a,b"; a "/" is never matched
        assert (await client.read_resource("star://a,b")).contents[0].text == "['a', 'b']"
        with pytest.raises(McpCallError) as unmatched:
            await client.read_resource("star://a/b")
    assert unmatched.value.code == -32002  # resource not found


# --------------------------------------------------------------------------- timeouts


async def test_a_client_request_timing_out_is_not_the_tools_own_timeout(connect) -> None:
    """It read "Tool 'ask' timed out after None s"."""
    app = McpServerApp("slow client")

    @app.tool()
    async def ask(ctx: McpToolContext) -> str:
        await ctx.sample("Hello?", timeout=0.05)
        return "answered"

    async def sleepy(params: dict[str, Any]) -> dict[str, Any]:
        import asyncio

        await asyncio.sleep(1)
        return {"role": "assistant", "content": {"type": "text", "text": "late"}, "model": "m"}

    async with connect(app, sampling_handler=sleepy) as client:
        result = await client.call_tool("ask")
    assert result.is_error is True
    assert result.content[0].text == "client did not answer sampling/createMessage in time"


# --------------------------------------------------------------------------- decorator options


@pytest.mark.parametrize(
    ("option", "said"),
    [("exclude_args", "Depends(...), State or Header")],
)
def test_fastmcps_tool_options_say_what_does_their_job(option: str, said: str) -> None:
    """They failed with "ToolSpec.__init__() got an unexpected keyword argument"."""
    app = McpServerApp("options")
    with pytest.raises(
        TypeError, match=rf"mcp_tool\(\) got an unexpected keyword argument '{option}'; .*"
    ) as caught:
        app.tool(**{option: None})
    assert said in str(caught.value)
    with pytest.raises(
        TypeError, match=r"mcp_prompt\(\) got an unexpected keyword argument 'exclude_args'"
    ):
        mcp_prompt(exclude_args=["x"])  # type: ignore[call-overload]
    with pytest.raises(
        TypeError, match=r"mcp_tool\(\) got an unexpected keyword argument 'colour'$"
    ):
        mcp_tool(colour="red")  # type: ignore[call-overload]
