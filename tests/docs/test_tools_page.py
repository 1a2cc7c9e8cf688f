"""docs/tools.md runs as the page says: its Python blocks, saved one after the other as a
server file (with the chart and the CSV the tools read beside it), serve what the tables and
comments claim, in both protocol eras; the client block's handler answers the elicitation."""

from __future__ import annotations

import base64
import contextlib
import io
import re
import runpy
from pathlib import Path
from typing import Any

import pytest

from mcpkit import McpCallError
from mcpkit.testing import connected

PAGE = Path(__file__).resolve().parents[2] / "docs" / "tools.md"
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
ERAS = ["2025-11-25", "2026-07-28"]


def page_blocks(kind: str) -> list[str]:
    return re.findall(rf"```{kind}\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)


@pytest.fixture
def page(tmp_path: Path) -> dict[str, Any]:
    """The page's blocks run in one namespace, as one file in a folder holding
    ``charts/Oslo.png`` and ``report.csv``."""
    (tmp_path / "charts").mkdir()
    (tmp_path / "charts" / "Oslo.png").write_bytes(PNG)
    (tmp_path / "report.csv").write_text("day,high\nmon,21\n", encoding="utf-8")
    server = tmp_path / "notes.py"
    server.write_text("\n\n".join(page_blocks("python")), encoding="utf-8")
    return runpy.run_path(str(server))


@pytest.mark.parametrize("version", ERAS)
async def test_tools_arguments_and_return_values(page, connect, version):
    async with connect(page["app"], protocol_version=version) as client:
        tools = {tool.name: tool for tool in await client.list_tools()}
        search = tools["search"]
        assert search.input_schema["required"] == ["text"]
        assert search.input_schema["properties"]["limit"]["maximum"] == 50
        assert search.input_schema["properties"]["text"]["description"] == "Words to look for"
        assert search.output_schema["required"] == ["result"]  # a list is wrapped

        refused = await client.call_tool("search", {"limit": 99})
        shown = page_blocks("text")[0].strip()
        assert refused.is_error and refused.content[0].text == shown

        reserve = tools["reserve"]
        assert reserve.input_schema["required"] == ["city"]  # the schema as it was given
        refused = await client.call_tool("reserve", {"nights": 0, "pets": 1})
        assert refused.is_error and refused.content[0].text == page_blocks("text")[1].strip()
        reserved = await client.call_tool("reserve", {"city": "Oslo", "nights": 2})
        assert reserved.content[0].text == "2 nights in Oslo"

        found = await client.call_tool("search", {"text": "tea"})
        assert found.structured_content == {
            "result": [{"title": "Tea", "body": "A note about tea"}]
        }

        chart = await client.call_tool("chart", {"city": "Oslo"})
        assert chart.content[0].type == "image" and chart.content[0].mime_type == "image/png"
        assert base64.b64decode(chart.content[0].data) == PNG

        report = await client.call_tool("report", {"city": "Oslo"})
        assert [block.type for block in report.content] == ["text", "image", "resource"]
        assert report.content[2].resource["mimeType"] == "text/csv"

        with pytest.raises(McpCallError) as unknown:
            await client.call_tool("serach", {})
        assert unknown.value.code == -32602


@pytest.mark.parametrize("version", ERAS)
async def test_resources_templates_and_completions(page, connect, version):
    async with connect(page["app"], protocol_version=version) as client:
        templates = {t.uri_template for t in await client.list_resource_templates()}
        assert templates == {"notes://by-id/{note_id}", "files://{+path}"}
        index = (await client.read_resource("notes://index")).contents
        assert len(index) == 1 and index[0].mime_type == "application/json"
        assert (await client.read_resource("notes://by-id/7")).contents[0].text == "Note number 7"
        deep = await client.read_resource("files://2024/06/plan.md")
        assert deep.contents[0].text == "The file 2024/06/plan.md"
        with pytest.raises(McpCallError) as bad:
            await client.read_resource("notes://by-id/seven")
        assert bad.value.code == -32602
        with pytest.raises(McpCallError) as missing:
            await client.read_resource("notes://nothing")
        assert missing.value.code == (-32602 if version == "2026-07-28" else -32002)
        ref = {"type": "ref/resource", "uri": "notes://by-id/{note_id}"}
        completed = await client.complete(ref, "note_id", "")
        assert completed.completion.values == ["1", "2", "7"]


@pytest.mark.parametrize("version", ERAS)
async def test_prompts(page, connect, version):
    async with connect(page["app"], protocol_version=version) as client:
        summary = await client.get_prompt("summarize", {"text": "a long text", "words": "20"})
        assert summary.messages[0].content.text.startswith("Summarize in at most 20 words")
        critique = await client.get_prompt("critique", {"code": "x = 1"})
        assert [message.role for message in critique.messages] == ["user", "assistant"]


@pytest.mark.parametrize("version", ERAS)
async def test_elicitation_lifespan_and_the_client_block(page, version):
    # mcpkit.testing's client: the schema-checking one of tests/ reads a 2026-07-28
    # input_required round as a CallToolResult
    connect = connected
    async with connect(
        page["app"], protocol_version=version, elicitation_handler=page["ask_user"]
    ) as client:
        booked = await client.call_tool("book", {"show": "Hamlet"})
        assert booked.content[0].text == "Booked 2 seats for Ada"
        looked_up = await client.call_tool("lookup", {"title": "Tea"})
        assert looked_up.content[0].text == "Green tea, 80 °C"

    async def decline(params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "decline"}

    async with connect(page["app"], protocol_version=version, elicitation_handler=decline) as c:
        assert (await c.call_tool("book", {"show": "Hamlet"})).content[0].text == (
            "Not booked (decline)"
        )

    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        await page["main"]()
    assert printed.getvalue().splitlines() == ["Who is coming to Hamlet?", "Booked 2 seats for Ada"]


async def test_a_client_without_elicitation_gets_32021(page, connect):
    async with connect(page["app"]) as client:
        with pytest.raises(McpCallError) as refused:
            await client.call_tool("book", {"show": "Hamlet"})
        assert refused.value.code == -32021


@pytest.mark.parametrize("version", ERAS)
async def test_state_kept_across_calls(page, connect, version):
    """The cart fills up over a handshake-era session; in 2026-07-28 each request starts
    empty, as the page says."""
    async with connect(page["app"], protocol_version=version) as client:
        for item in ["tea", "milk"]:
            cart = await client.call_tool("add_to_cart", {"item": item})
    assert cart.structured_content == {
        "result": ["tea", "milk"] if version == "2025-11-25" else ["milk"]
    }
    assert len(page["app"].session_state) == 0  # the session ended, its state with it


@pytest.mark.parametrize("version", ERAS)
async def test_a_generator_tool_yields_progress_then_its_result(page, connect, version):
    progress: list[tuple[float, str | None]] = []
    async with connect(page["app"], protocol_version=version) as client:
        result = await client.call_tool(
            "index",
            {"folder": "docs"},
            progress=lambda value, total, message: progress.append((value, message)),
        )
    assert result.structured_content == {"result": 30}
    assert progress == [(1, "10"), (2, "20")]
