"""docs/migrating.md's pairs, each tried: the FastMCP 4 (or mcp 2.x ``MCPServer``) snippet
and its mcpkit form run as the page writes them, ``python file.py``, and one client drives
both, the official SDK's ``ClientSession`` over stdio; what each side answers is reduced to
what the page says they share, and the two must match. A pair the page adds without a way
to try it here fails ``test_every_pair_on_the_page_is_tried``.

A client pair (two client programs, one server) and the testing pair (two in-memory test
programs) print what they got: the two outputs must match."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

PAGE = Path(__file__).resolve().parents[2] / "docs" / "migrating.md"
#: A pair: its marker, then the next two python blocks (theirs first, mcpkit's second).
PAIR = re.compile(r"<!-- pair: ([\w-]+) -->(.*?)(?=<!-- pair:|\n## |\Z)", re.S)
BLOCK = re.compile(r"```python\n(.*?)```", re.S)
#: One whole pair (both processes started, every request answered).
PAIR_TIMEOUT = 60.0

pytestmark = [
    pytest.mark.interop,
    # the 2025-era logging the context pair uses is deprecated in the official SDK's eyes
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]


def page_pairs() -> dict[str, tuple[str, str]]:
    text = PAGE.read_text(encoding="utf-8")
    pairs: dict[str, tuple[str, str]] = {}
    for name, body in PAIR.findall(text):
        blocks = BLOCK.findall(body)
        assert len(blocks) == 2, f"pair {name!r} has {len(blocks)} python blocks, not 2"
        assert name not in pairs, f"pair {name!r} twice"
        pairs[name] = (blocks[0], blocks[1])
    return pairs


def first_server() -> str:
    """The page's first block, the server the proxy and client pairs call ``server.py``."""
    found = BLOCK.search(PAGE.read_text(encoding="utf-8"))
    assert found is not None
    return found.group(1)


def quiet_env() -> dict[str, str]:
    """The environment with FastMCP's start-up banner and its look for a newer release off
    (the banner is stderr's; the look is a network request a test must not make)."""
    env = dict(os.environ)
    env.update(FASTMCP_SHOW_SERVER_BANNER="false", FASTMCP_CHECK_FOR_UPDATES="off")
    return env


@dataclass
class Seen:
    """The server's notifications to the client during a pair's calls."""

    logs: list[tuple[str, Any]] = field(default_factory=list)
    progress: list[tuple[float, float | None]] = field(default_factory=list)
    asked: list[dict[str, Any]] = field(default_factory=list)
    answers: list[types.ElicitResult] = field(default_factory=list)

    async def log(self, params: Any) -> None:
        # FastMCP sends a message as {"msg": text, "extra": ...}; mcpkit and mcp the text
        data = params.data
        text = data["msg"] if isinstance(data, dict) and "msg" in data else data
        self.logs.append((params.level, text))

    async def elicit(self, context: Any, params: Any) -> types.ElicitResult:
        schema = params.requested_schema
        self.asked.append(
            {
                "message": params.message,
                "fields": {k: v.get("type") for k, v in schema["properties"].items()},
                "required": sorted(schema.get("required", [])),
            }
        )
        return self.answers.pop(0)

    async def on_progress(self, progress: float, total: float | None, message: str | None) -> None:
        self.progress.append((progress, total))


def tool_shape(tool: Any) -> dict[str, Any]:
    """What both sides describe alike: name, description, argument types, required ones,
    annotations (FastMCP adds a title and an output schema for every tool; see the page)."""
    schema = tool.input_schema
    return {
        "name": tool.name,
        "description": tool.description or None,  # MCPServer: "" for no docstring
        "arguments": {k: v.get("type") for k, v in schema.get("properties", {}).items()},
        "required": sorted(schema.get("required", [])),
        "annotations": tool.annotations.model_dump(exclude_none=True) if tool.annotations else None,
    }


async def call(session: ClientSession, seen: Seen, name: str, arguments: dict[str, Any]) -> Any:
    """A call's answer as ``result.data`` reads it: the structured result unwrapped, else the
    text; ``("refused", ...)`` for a failed call, whether a protocol error or ``isError``."""
    try:
        result = await session.call_tool(name, arguments, progress_callback=seen.on_progress)
    except MCPError:
        return ("refused", name)
    if result.is_error:
        return ("refused", name)
    structured = result.structured_content
    if structured is not None:
        return structured.get("result", structured) if len(structured) == 1 else structured
    return "".join(block.text for block in result.content if block.type == "text")


async def tool_names(session: ClientSession) -> list[str]:
    return sorted(tool.name for tool in (await session.list_tools()).tools)


async def read_text(session: ClientSession, uri: str) -> str:
    return (await session.read_resource(uri)).contents[0].text


async def prompt_text(session: ClientSession, name: str, arguments: dict[str, str]) -> str:
    return (await session.get_prompt(name, arguments)).messages[0].content.text


Driver = Callable[[ClientSession, Seen], Awaitable[dict[str, Any]]]


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
    seen.answers = [
        types.ElicitResult(action="accept", content={"name": "Ada", "email": "ada@example.com"}),
        types.ElicitResult(action="decline"),
    ]
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
OFFICIAL_SDK_PAIRS = frozenset({"mcpserver"})


def write_program(directory: Path, source: str) -> Path:
    directory.mkdir()
    (directory / "server.py").write_text(first_server(), encoding="utf-8")
    program = directory / "program.py"
    program.write_text(source, encoding="utf-8")
    return program


async def drive(program: Path, driver: Driver) -> dict[str, Any]:
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
    assert set(page_pairs()) == set(SERVER_PAIRS) | set(SCRIPT_PAIRS)


@pytest.mark.parametrize("name", sorted(SERVER_PAIRS))
async def test_both_servers_of_a_pair_answer_one_client_alike(name: str, tmp_path: Path):
    if name not in OFFICIAL_SDK_PAIRS:
        pytest.importorskip("fastmcp")
    theirs, ours = page_pairs()[name]
    driver = SERVER_PAIRS[name]
    async with asyncio.timeout(PAIR_TIMEOUT):
        answered = await drive(write_program(tmp_path / "theirs", theirs), driver)
        assert await drive(write_program(tmp_path / "ours", ours), driver) == answered


@pytest.mark.parametrize("name", sorted(SCRIPT_PAIRS))
def test_both_programs_of_a_pair_print_the_same(name: str, tmp_path: Path):
    pytest.importorskip("fastmcp")
    theirs, ours = page_pairs()[name]
    printed_by_theirs, printed_by_ours = SCRIPT_PAIRS[name]
    assert run_script(write_program(tmp_path / "ours", ours)) == printed_by_ours
    assert run_script(write_program(tmp_path / "theirs", theirs)) == printed_by_theirs
