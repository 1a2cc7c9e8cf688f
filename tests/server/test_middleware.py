"""Middleware around every message an app serves: the hooks each kind of message goes
through and their order (the first middleware outermost; ``on_message``, then
``on_request``/``on_notification``, then the method's own), a hook changing the params,
answering without calling on, or refusing; the built-ins ``ErrorHandling`` and
``ResponseSizeLimit``; in both eras in memory, over Streamable HTTP to the official client
and over stdio to a real process."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from mcpkit import McpCallError, McpClient, McpServerApp
from mcpkit._exceptions import InvalidParamsError
from mcpkit.client import StdioClientTransportOptions
from mcpkit.server.middleware import (
    ErrorHandling,
    Middleware,
    MiddlewareContext,
    ResponseSizeLimit,
)
from mcpkit.testing import connected
from tests.official_client import official_session

ERAS = ["2025-11-25", "2026-07-28"]


class Recorder(Middleware):
    """Notes each hook it passes: ``NAME:hook:method``."""

    def __init__(self, name: str, seen: list[str]) -> None:
        self.name, self.seen = name, seen

    async def on_message(self, context: MiddlewareContext, call_next: Any) -> Any:
        self.seen.append(f"{self.name}:message:{context.method}")
        return await call_next(context)

    async def on_request(self, context: MiddlewareContext, call_next: Any) -> Any:
        self.seen.append(f"{self.name}:request:{context.method}")
        return await call_next(context)

    async def on_notification(self, context: MiddlewareContext, call_next: Any) -> Any:
        self.seen.append(f"{self.name}:notification:{context.method}")
        return await call_next(context)

    async def on_call_tool(self, context: MiddlewareContext, call_next: Any) -> Any:
        self.seen.append(f"{self.name}:call_tool:{context.params['name']}")  # type: ignore[index]
        return await call_next(context)


class Doubler(Middleware):
    """Doubles ``a`` of every ``add`` call; answers ``secret`` itself; refuses ``banned``."""

    async def on_call_tool(self, context: MiddlewareContext, call_next: Any) -> Any:
        params = context.params or {}
        if params.get("name") == "secret":
            return {"content": [{"type": "text", "text": "from the middleware"}]}
        if params.get("name") == "banned":
            raise InvalidParamsError("banned here")
        if params.get("name") == "add":
            arguments = dict(params.get("arguments") or {})
            arguments["a"] = arguments.get("a", 0) * 2
            context.params = {**params, "arguments": arguments}
        return await call_next(context)


def build(*middleware: Any) -> McpServerApp:
    app = McpServerApp("mw", middleware=middleware)

    @app.tool()
    def add(a: int, b: int) -> int:
        return a + b

    @app.tool()
    def banned() -> str:
        return "never"

    @app.tool()
    def big() -> str:
        return "x" * 5000

    @app.tool()
    def fails() -> str:
        raise RuntimeError("broke")

    @app.resource("big://doc")
    def doc() -> str:
        return "y" * 5000

    return app


@pytest.mark.parametrize("era", ERAS)
async def test_every_message_goes_through_the_hooks_in_order(era: str) -> None:
    seen: list[str] = []
    app = build(Recorder("A", seen), Recorder("B", seen))
    async with connected(app, protocol_version=era) as client:
        seen.clear()
        await client.call_tool("add", {"a": 1, "b": 2})
        assert [note for note in seen if note.endswith(("tools/call", ":add"))] == [
            "A:message:tools/call",
            "A:request:tools/call",
            "A:call_tool:add",
            "B:message:tools/call",
            "B:request:tools/call",
            "B:call_tool:add",
        ]
        seen.clear()
        await client.list_tools()
        assert "A:request:tools/list" in seen and "B:message:tools/list" in seen
        if era == "2025-11-25":
            seen.clear()
            await client.send_roots_list_changed()
            await client.ping()
            assert "A:notification:notifications/roots/list_changed" in seen


@pytest.mark.parametrize("era", ERAS)
async def test_a_hook_changes_answers_or_refuses(era: str) -> None:
    async with connected(build(Doubler()), protocol_version=era) as client:
        assert (await client.call_tool("add", {"a": 2, "b": 1})).structured_content == {"result": 5}
        secret = await client.call_tool("secret", {})
        assert secret.content[0].text == "from the middleware"  # type: ignore[union-attr]
        with pytest.raises(McpCallError) as refused:
            await client.call_tool("banned", {})
        assert refused.value.code == -32602 and "banned here" in refused.value.message


@pytest.mark.parametrize("era", ERAS)
async def test_the_built_ins(era: str) -> None:
    errors = ErrorHandling()
    limit = ResponseSizeLimit(max_bytes=2000)
    async with connected(build(errors, limit), protocol_version=era) as client:
        big = await client.call_tool("big", {})
        assert big.is_error and "over the 2000 allowed" in big.content[0].text  # type: ignore[union-attr]
        with pytest.raises(McpCallError) as too_large:
            await client.read_resource("big://doc")
        assert too_large.value.code == -32603
        with pytest.raises(McpCallError):
            await client.call_tool("nope", {})
        assert errors.errors[("InternalError", "resources/read")] == 1
        assert errors.errors[("InvalidParamsError", "tools/call")] == 1

    def hide(exc: Exception, context: MiddlewareContext) -> Exception | None:
        return (
            InvalidParamsError("something went wrong") if context.method == "tools/call" else None
        )

    async with connected(build(ErrorHandling(transform=hide))) as client:
        failed = await client.call_tool("fails", {})  # a tool's failure is its result
        assert failed.is_error
        with pytest.raises(McpCallError) as hidden:
            await client.call_tool("nope", {})
        assert hidden.value.message == "something went wrong"


async def test_the_official_client_over_http_meets_the_middleware() -> None:
    async with official_session(build(Doubler())) as session:
        result = await session.call_tool("add", {"a": 3, "b": 1})
    assert result.structured_content == {"result": 7}


SERVER = """
import json, sys
from mcpkit import McpServerApp
from mcpkit.server.middleware import Middleware

seen = []

class Note(Middleware):
    async def on_message(self, context, call_next):
        seen.append(context.method)
        return await call_next(context)

app = McpServerApp("stdio-mw", middleware=[Note()])

@app.tool()
def hooks() -> str:
    return json.dumps(seen)

app.run()
"""


async def test_over_stdio(tmp_path: Path) -> None:
    script = tmp_path / "server.py"
    script.write_text(SERVER)
    options = StdioClientTransportOptions(command=sys.executable, arguments=[str(script)])
    async with McpClient.stdio(options, protocol_mode="legacy") as client:
        await client.list_tools()
        seen = json.loads((await client.call_tool("hooks", {})).content[0].text)  # type: ignore[union-attr]
    assert "initialize" in seen and "notifications/initialized" in seen
    assert "tools/list" in seen and seen[-1] == "tools/call"
