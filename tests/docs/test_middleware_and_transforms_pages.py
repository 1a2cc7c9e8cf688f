"""docs/middleware.md, docs/interceptors.md and docs/transforms.md run as written: their Python blocks executed
as they stand, then the app each makes served to a client that checks what the page says
(the audit hook and the error middleware in place; ``find(query, limit=5)`` with ``region``
fixed to "us")."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path
from typing import Any

from mcpkit import McpServerApp
from mcpkit.testing import connected

DOCS = Path(__file__).resolve().parents[2] / "docs"


def run_page(name: str) -> dict[str, Any]:
    blocks = re.findall(r"```python\n(.*?)```", (DOCS / name).read_text(encoding="utf-8"), re.S)
    namespace: dict[str, Any] = {}
    exec(compile("\n\n".join(blocks), f"docs/{name}", "exec"), namespace)
    return namespace


async def test_the_middleware_page() -> None:
    page = run_page("middleware.md")
    app = page["app"]

    @app.tool()
    def hello() -> str:
        return "hi"

    printed = io.StringIO()
    async with connected(app) as client:
        with contextlib.redirect_stdout(printed):
            result = await client.call_tool("hello", {})
    assert result.content[0].text == "hi"  # type: ignore[union-attr]
    assert printed.getvalue().count("calling hello for None") == 2  # added twice on the page
    assert [type(m).__name__ for m in app.dispatcher.middleware.items] == [
        "ErrorHandling",
        "Audit",
        "Audit",
    ]
    # the same middleware on one component: around its calls alone
    shouting = McpServerApp(page["Shouting"])
    printed = io.StringIO()
    async with connected(shouting) as client:
        with contextlib.redirect_stdout(printed):
            shouted = await client.call_tool("shout", {"word": "hey"})
    assert shouted.content[0].text == "HEY"  # type: ignore[union-attr]
    assert printed.getvalue() == "calling shout for None\n"


async def test_the_ready_middleware_page() -> None:
    """docs/interceptors.md's first block: app-wide logging and timing, a rate limit on a
    class, a cache on two of its members."""
    text = (DOCS / "interceptors.md").read_text(encoding="utf-8")
    first = re.findall(r"```python\n(.*?)```", text, re.S)[0]
    namespace: dict[str, Any] = {}
    exec(compile(first, "docs/interceptors.md", "exec"), namespace)
    app, cache = namespace["app"], namespace["cache"]
    printed = io.StringIO()
    async with connected(app) as client:
        with contextlib.redirect_stdout(printed):
            for _ in range(2):
                result = await client.call_tool("forecast", {"city": "Oslo"})
    assert result.content[0].text == "Oslo: sunny for 3 days"  # type: ignore[union-attr]
    assert (cache.hits, cache.misses) == (1, 1)
    assert printed.getvalue().count("tools/call forecast took ") == 2


async def test_the_transforms_page() -> None:
    app = run_page("transforms.md")["app"]
    async with connected(app) as client:
        (tool,) = await client.list_tools()
        assert tool.name == "find" and tool.description == "Find documents."
        assert tool.input_schema["required"] == ["query"]
        found = await client.call_tool("find", {"query": "mcp"})
    assert found.content[0].text == "mcp|5|us"  # type: ignore[union-attr]
