"""docs/migrating.md's pairs, each tried: the FastMCP 4 (or mcp 2.x ``MCPServer``) snippet
and its mcpkit form run as the page writes them, ``python file.py``, and one client drives
both, the official SDK's ``ClientSession`` over stdio; what each side answers is reduced to
what the page says they share, and the two must match, but for what the page says differs
(``DIFFERS``), asserted as it says. The pairs that serve HTTP are tried in
test_migrating_http_pairs.py; a pair the page adds without a way to try it in one of the
two fails ``test_every_pair_on_the_page_is_tried``.

A client pair (two client programs, one server) and the testing pair (two in-memory test
programs) print what they got: the two outputs must match."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from mcpkit import Audio, Image
from tests.docs._migrating_pairs import (
    PAIR_TIMEOUT,
    Driver,
    Seen,
    call,
    page_pairs,
    prompt_text,
    quiet_env,
    read_text,
    tool_names,
    tool_shape,
    write_program,
)
from tests.docs.test_migrating_http_pairs import HTTP_PAIRS

pytestmark = [
    pytest.mark.interop,
    # the 2025-era logging the context pair uses is deprecated in the official SDK's eyes
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]


async def decorators(session: ClientSession, seen: Seen) -> dict[str, Any]:
    tools = {tool.name: tool_shape(tool) for tool in (await session.list_tools()).tools}
    assert tools["add"]["annotations"] == {"read_only_hint": True}
    assert tools["convert"]["arguments"] == {"amount": "number", "currency": "string"}
    templates = (await session.list_resource_templates()).resource_templates
    return {
        "tools": tools,
        "add": await call(session, seen, "add", {"a": 1, "b": 2}),
        "convert": await call(session, seen, "convert", {"amount": 2, "currency": "USD"}),
        "resources": sorted(r.uri for r in (await session.list_resources()).resources),
        "templates": sorted(t.uri_template for t in templates),
        "version": await read_text(session, "config://version"),
        "profile": json.loads(await read_text(session, "users://7/profile")),
        "review": await prompt_text(session, "review", {"code": "x = 1"}),
    }


async def context(session: ClientSession, seen: Seen) -> dict[str, Any]:
    worked = await call(session, seen, "work", {"steps": 2})
    assert worked == "connected: write the migration guide"
    counts = [await call(session, seen, "count", {}) for _ in range(2)]
    return {"work": worked, "logs": seen.logs, "progress": seen.progress, "counts": counts}


async def elicitation(session: ClientSession, seen: Seen) -> dict[str, Any]:
    seen.accept_then_decline({"name": "Ada", "email": "ada@example.com"})
    accepted = await call(session, seen, "signup", {})
    assert accepted == "Ada <ada@example.com>"
    return {
        "accepted": accepted,
        "declined": await call(session, seen, "signup", {}),
        "asked": seen.asked,
    }


async def errors(session: ClientSession, seen: Seen) -> dict[str, Any]:
    tools = {tool.name: tool_shape(tool) for tool in (await session.list_tools()).tools}
    assert tools["balance"]["arguments"] == {"account": "string"}
    limit = await session.call_tool("withdraw", {"amount": 500})
    masked = await session.call_tool("withdraw", {"amount": 5})
    masked_text = masked.content[0].text
    return {
        "tools": tools,
        "balance": await call(session, seen, "balance", {"account": "main"}),
        "limit": (limit.is_error, limit.content[0].text),
        "masked": (masked.is_error, "hunter2" in masked_text, "withdraw" in masked_text),
    }


async def mount(session: ClientSession, seen: Seen) -> dict[str, Any]:
    names = await tool_names(session)
    assert names == ["weather_forecast"]
    return {"tools": names, "call": await call(session, seen, "weather_forecast", {"city": "Oslo"})}


async def proxy(session: ClientSession, seen: Seen) -> dict[str, Any]:
    names = await tool_names(session)
    assert names == ["add", "greet"]
    return {
        "tools": names,
        "add": await call(session, seen, "add", {"a": 2, "b": 3}),
        "greet": await call(session, seen, "greet", {"name": "Ada"}),
        "greeting": await read_text(session, "greeting://Ada"),
    }


async def visibility(session: ClientSession, seen: Seen) -> dict[str, Any]:
    before = await tool_names(session)
    assert before == ["quiet", "status"]
    return {
        "before": before,
        "reset": await call(session, seen, "reset", {}),
        "quiet": await call(session, seen, "quiet", {}),
        "after": await tool_names(session),
    }


async def middleware(session: ClientSession, seen: Seen) -> dict[str, Any]:
    echoed = await call(session, seen, "echo", {"text": "hi"})
    assert echoed == "HI"
    return {"echo": echoed}


async def transforms(session: ClientSession, seen: Seen) -> dict[str, Any]:
    tools = [tool_shape(tool) for tool in (await session.list_tools()).tools]
    assert [tool["name"] for tool in tools] == ["find"]
    return {"tools": tools, "find": await call(session, seen, "find", {"query": "mcp"})}


async def tool_search(session: ClientSession, seen: Seen) -> dict[str, Any]:
    names = await tool_names(session)
    assert names == ["call_tool", "search_tools"]
    found = await call(session, seen, "search_tools", {"query": "weather in a city"})
    arguments = {"name": "get_weather", "arguments": {"city": "Oslo"}}
    return {
        "tools": names,
        "found weather": "get_weather" in json.dumps(found),
        "called": await call(session, seen, "call_tool", arguments),
        "by name": await call(session, seen, "send_email", {"to": "ada", "body": "hi"}),
    }


async def mcpserver(session: ClientSession, seen: Seen) -> dict[str, Any]:
    tools = {tool.name: tool_shape(tool) for tool in (await session.list_tools()).tools}
    assert sorted(tools) == ["add", "status"]
    return {
        "tools": tools,
        "add": await call(session, seen, "add", {"a": 1, "b": 2}),
        "status": await call(session, seen, "status", {}),
        "logs": seen.logs,
        "greeting": await read_text(session, "greeting://Ada"),
        "review": await prompt_text(session, "review", {"code": "x = 1"}),
    }


async def add_remove(session: ClientSession, seen: Seen) -> dict[str, Any]:
    tools = [tool_shape(tool) for tool in (await session.list_tools()).tools]
    assert [tool["name"] for tool in tools] == ["add"]
    return {
        "tools": tools,
        "add": await call(session, seen, "add", {"a": 2, "b": 3}),
        "multiply": await call(session, seen, "multiply", {"a": 2, "b": 3}),
    }


async def media(session: ClientSession, seen: Seen) -> dict[str, Any]:
    blocks = {}
    for name in ("chart", "chime", "export"):
        result = await session.call_tool(name, {})
        blocks[name] = [block.model_dump(exclude_none=True) for block in result.content]
    assert blocks["chart"][0]["mime_type"] == "image/png"
    assert blocks["export"][0]["resource"]["text"] == "city,temp\nOslo,21\n"
    return blocks


async def cache(session: ClientSession, seen: Seen) -> dict[str, Any]:
    hints = {
        "discover": await session.discover(),
        "tools/list": await session.list_tools(),
        "resources/list": await session.list_resources(),
        "resources/read": await session.read_resource("config://version"),
    }
    seen_hints = {method: (result.ttl_ms, result.cache_scope) for method, result in hints.items()}
    assert seen_hints["tools/list"] == (60_000, "public")
    return seen_hints


async def apps(session: ClientSession, seen: Seen) -> dict[str, Any]:
    announced = (await session.discover()).capabilities.extensions or {}
    listed_tools = (await session.list_tools()).tools
    tools = {tool.name: (tool.meta or {}).get("ui") for tool in listed_tools}
    assert tools["refresh"] == {"resourceUri": "ui://weather/view.html", "visibility": ["app"]}
    listed = (await session.list_resources()).resources
    page = (await session.read_resource("ui://weather/view.html")).contents[0]
    return {
        "announced": UI_EXTENSION in announced,
        "tools": tools,
        "flat key": all("ui/resourceUri" in (tool.meta or {}) for tool in listed_tools),
        "listed": [(r.uri, r.mime_type, (r.meta or {}).get("ui")) for r in listed],
        "page": (page.mime_type, (page.meta or {}).get("ui"), page.text),
        "forecast": await call(session, seen, "forecast", {"city": "Oslo"}),
    }


async def mcpserver_context(session: ClientSession, seen: Seen) -> dict[str, Any]:
    seen.accept_then_decline({"name": "Ada", "email": "ada@example.com"})
    accepted = await call(session, seen, "signup", {})
    assert accepted == "Welcome aboard, Ada <ada@example.com>"
    declined = await session.call_tool("signup", {})
    return {
        "accepted": accepted,
        "declined": declined.is_error,
        "refusal": declined.content[0].text,
        "progress": seen.progress,
        "asked": seen.asked,
    }


SERVER_PAIRS: dict[str, Driver] = {
    "decorators": decorators,
    "context": context,
    "elicitation": elicitation,
    "errors": errors,
    "mount": mount,
    "proxy": proxy,
    "visibility": visibility,
    "middleware": middleware,
    "transforms": transforms,
    "tool-search": tool_search,
    "mcpserver": mcpserver,
    "add-remove": add_remove,
    "media": media,
    "cache": cache,
    "apps": apps,
    "apps-mcpserver": apps,
    "mcpserver-context": mcpserver_context,
}
#: Programs that print what they got, and what each prints (theirs, mcpkit's): FastMCP's
#: client unwraps ``{"result": 3}`` under the output-schema mark mcpkit's servers send.
SCRIPT_PAIRS = {
    "client": (
        "['add', 'greet']\nHello, Ada!\n3\n",
        "['add', 'greet']\nHello, Ada!\n3\n",
    ),
    "testing": ("passed\n", "passed\n"),
}
#: Pairs whose first side is the official SDK's, which is installed wherever these run.
OFFICIAL_SDK_PAIRS = frozenset({"mcpserver", "apps-mcpserver", "mcpserver-context"})
#: What the page says differs: a pair's answer's key, and (theirs, mcpkit's).
DIFFERS: dict[str, tuple[tuple[str, tuple[Any, Any]], ...]] = {
    "mcpserver-context": (("refusal", ("Error executing tool signup: no signup", "no signup")),),
    "apps": (("flat key", (False, True)),),
    "apps-mcpserver": (("flat key", (False, True)),),
}
#: Pairs whose driver opens a 2026-07-28 session itself (``server/discover``, no handshake).
MODERN_PAIRS = frozenset({"cache", "apps", "apps-mcpserver"})
UI_EXTENSION = "io.modelcontextprotocol/ui"


async def drive(program: Path, driver: Driver, *, handshake: bool = True) -> dict[str, Any]:
    seen = Seen()
    params = StdioServerParameters(
        command=sys.executable, args=[str(program)], cwd=str(program.parent), env=quiet_env()
    )
    async with (
        stdio_client(params) as (read, write),
        ClientSession(
            read, write, logging_callback=seen.log, elicitation_callback=seen.elicit
        ) as session,
    ):
        if handshake:
            await session.initialize()
        return await driver(session, seen)


def run_script(program: Path) -> str:
    done = subprocess.run(
        [sys.executable, str(program)],
        cwd=program.parent,
        env=quiet_env(),
        capture_output=True,
        text=True,
        timeout=PAIR_TIMEOUT,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_every_pair_on_the_page_is_tried():
    assert set(page_pairs()) == set(SERVER_PAIRS) | set(SCRIPT_PAIRS) | set(HTTP_PAIRS)


@pytest.mark.parametrize("name", sorted(SERVER_PAIRS))
async def test_both_servers_of_a_pair_answer_one_client_alike(name: str, tmp_path: Path):
    if name not in OFFICIAL_SDK_PAIRS:
        pytest.importorskip("fastmcp")
    theirs, ours = page_pairs()[name]
    driver = SERVER_PAIRS[name]
    async with asyncio.timeout(PAIR_TIMEOUT):
        handshake = name not in MODERN_PAIRS
        answered = await drive(
            write_program(tmp_path / "theirs", theirs), driver, handshake=handshake
        )
        ours_answered = await drive(
            write_program(tmp_path / "ours", ours), driver, handshake=handshake
        )
        for key, (expected_theirs, expected_ours) in DIFFERS.get(name, ()):
            assert (answered.pop(key), ours_answered.pop(key)) == (expected_theirs, expected_ours)
        assert ours_answered == answered


@pytest.mark.parametrize("name", sorted(SCRIPT_PAIRS))
def test_both_programs_of_a_pair_print_the_same(name: str, tmp_path: Path):
    pytest.importorskip("fastmcp")
    theirs, ours = page_pairs()[name]
    printed_by_theirs, printed_by_ours = SCRIPT_PAIRS[name]
    assert run_script(write_program(tmp_path / "ours", ours)) == printed_by_ours
    assert run_script(write_program(tmp_path / "theirs", theirs)) == printed_by_theirs


async def announced_at_initialize(program: Path) -> dict[str, Any]:
    async def extensions(session: ClientSession, seen: Seen) -> dict[str, Any]:
        return session.initialize_result.capabilities.extensions or {}

    return await drive(program, extensions)


@pytest.mark.parametrize("name", ["apps", "apps-mcpserver"])
async def test_only_mcpkit_announces_the_ui_extension_at_initialize(name: str, tmp_path: Path):
    """The page: FastMCP 4 and mcp 2.3 announce MCP Apps in ``server/discover`` only."""
    if name not in OFFICIAL_SDK_PAIRS:
        pytest.importorskip("fastmcp")
    theirs, ours = page_pairs()[name]
    async with asyncio.timeout(PAIR_TIMEOUT):
        assert UI_EXTENSION not in await announced_at_initialize(
            write_program(tmp_path / "theirs", theirs)
        )
        ours_announced = await announced_at_initialize(write_program(tmp_path / "ours", ours))
    assert ours_announced[UI_EXTENSION] == {"mimeTypes": ["text/html;profile=mcp-app"]}


def test_media_helpers_differ_as_the_page_says():
    """The media pair's note: the first positional argument differs, a format's MIME type
    does not."""
    theirs = pytest.importorskip("fastmcp.utilities.types")
    assert theirs.Image("chart.png").path == Path("chart.png")
    assert Image(b"PNG").data == b"PNG"
    assert theirs.Audio(data=b"RIFF", format="wav").to_audio_content().mime_type == "audio/wav"
    assert Audio(data=b"RIFF", format="wav").mime_type == "audio/wav"  # on every machine
    assert Audio(data=b"RIFF", format="audio/wav").mime_type == "audio/wav"
