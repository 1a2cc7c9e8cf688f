"""What the tests of docs/migrating.md's pairs share: the pairs as the page writes them, the
client's view of what a server sent, and answers reduced to what both sides share. The
stdio pairs are tried in test_migrating_pairs.py, the HTTP ones (a port, a token) in
test_migrating_http_pairs.py."""

from __future__ import annotations

import os
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp import ClientSession
from mcp.shared.exceptions import MCPError

PAGE = Path(__file__).resolve().parents[2] / "docs" / "migrating.md"
#: A pair: its marker, then the next two python blocks (theirs first, mcpkit's second).
PAIR = re.compile(r"<!-- pair: ([\w-]+) -->(.*?)(?=<!-- pair:|\n## |\Z)", re.S)
BLOCK = re.compile(r"```python\n(.*?)```", re.S)
#: One whole pair (both processes started, every request answered).
PAIR_TIMEOUT = 60.0


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


def quiet_env(**more: str) -> dict[str, str]:
    """The environment with FastMCP's start-up banner and its look for a newer release off
    (the banner is stderr's; the look is a network request a test must not make)."""
    env = dict(os.environ)
    env.update(FASTMCP_SHOW_SERVER_BANNER="false", FASTMCP_CHECK_FOR_UPDATES="off", **more)
    return env


def write_program(directory: Path, source: str) -> Path:
    directory.mkdir()
    (directory / "server.py").write_text(first_server(), encoding="utf-8")
    program = directory / "program.py"
    program.write_text(source, encoding="utf-8")
    return program


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

    def accept_then_decline(self, content: dict[str, Any]) -> None:
        """The user's answers to the next two questions: ``content``, then no."""
        self.answers = [
            types.ElicitResult(action="accept", content=content),
            types.ElicitResult(action="decline"),
        ]

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


Driver = Callable[[ClientSession, Seen], Awaitable[dict[str, Any]]]


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
