"""``ctx.set_state`` / ``ctx.get_state`` / ``ctx.delete_state``, as FastMCP has them (async,
``None`` for a missing key, ``serializable=False`` for this request only): a handshake-era
session keeps its state across requests and shares it with no other session, and frees it
when it ends (in memory, over Streamable HTTP, even what a request cancelled by the end kept);
2026-07-28 and stateless HTTP have no session, so a request's state is its own. Values are
kept as JSON copies, within the bounds of ``app.session_state``, and nothing is made for a
call that keeps no state."""

from __future__ import annotations

import asyncio
from typing import Any

import pydantic
import pytest

from mcpkit import McpClient, McpServerApp, McpToolContext, StateLimitError
from mcpkit.client import HttpClientTransportOptions
from mcpkit.server._engine.session_state import DEFAULT_MAX_STATE_BYTES, DEFAULT_MAX_STATE_KEYS
from tests.http_server import serving
from tests.in_memory import serving_in_memory

TEST_TIMEOUT = 20.0


class Point(pydantic.BaseModel):
    x: int
    y: int


def state_app() -> McpServerApp:
    app = McpServerApp("state")

    @app.tool()
    async def remember(key: str, value: Any, ctx: McpToolContext) -> str:
        await ctx.set_state(key, value)
        return "kept"

    @app.tool()
    async def recall(key: str, ctx: McpToolContext) -> dict[str, Any]:
        return {"value": await ctx.get_state(key)}

    @app.tool()
    async def forget(key: str, ctx: McpToolContext) -> str:
        await ctx.delete_state(key)
        return "forgotten"

    @app.tool()
    async def set_and_get(ctx: McpToolContext) -> dict[str, Any]:
        await ctx.set_state("here", [1, 2])
        return {"value": await ctx.get_state("here")}

    @app.tool()
    async def copies(ctx: McpToolContext) -> dict[str, Any]:
        kept = {"items": [1]}
        await ctx.set_state("box", kept)
        kept["items"].append(2)  # the caller's object, not the kept one
        first = await ctx.get_state("box")
        first["items"].append(3)  # a copy: the next read does not see it
        await ctx.set_state("pair", (1, "a"))
        await ctx.set_state("point", Point(x=1, y=2))
        return {
            "box": await ctx.get_state("box"),
            "pair": await ctx.get_state("pair"),
            "point": await ctx.get_state("point"),
        }

    @app.tool()
    async def unserializable(ctx: McpToolContext) -> str:
        try:
            await ctx.set_state("lock", asyncio.Lock())
        except TypeError as exc:
            return str(exc)
        return "kept"

    @app.tool()
    async def shadow(ctx: McpToolContext) -> dict[str, Any]:
        lock = asyncio.Lock()
        await ctx.set_state("client", lock, serializable=False)
        same = await ctx.get_state("client") is lock
        await ctx.set_state("mode", "session")
        await ctx.set_state("mode", lock, serializable=False)  # hides the session's value
        hidden = await ctx.get_state("mode") is lock
        return {"same": same, "hidden": hidden}

    @app.tool()
    async def count_up(ctx: McpToolContext) -> int:
        count = (await ctx.get_state("count") or 0) + 1
        await ctx.set_state("count", count)
        return count

    @app.resource("state://{key}")
    async def stored(key: str, ctx: McpToolContext) -> str:
        return repr(await ctx.get_state(key))

    @app.prompt()
    async def greet(ctx: McpToolContext) -> str:
        return f"Hello {await ctx.get_state('name')}"

    return app


async def value_of(client: McpClient, key: str) -> Any:
    return (await client.call_tool("recall", {"key": key})).structured_content["value"]


# --------------------------------------------------------------------------- handshake era


async def test_a_session_keeps_its_state_across_requests_and_alone(connect) -> None:
    app = state_app()
    async with connect(app) as ada, connect(app) as bob:
        await ada.call_tool("remember", {"key": "name", "value": "Ada"})
        await bob.call_tool("remember", {"key": "name", "value": "Bob"})
        assert await value_of(ada, "name") == "Ada"
        assert await value_of(bob, "name") == "Bob"
        assert await value_of(ada, "nothing") is None
        # a resource and a prompt of the session read it too
        assert (await ada.read_resource("state://name")).contents[0].text == "'Ada'"
        assert (await bob.get_prompt("greet")).messages[0].content.text == "Hello Bob"
        assert [await ada.call_tool("count_up") for _ in range(3)][-1].structured_content == {
            "result": 3
        }
        await ada.call_tool("forget", {"key": "name"})
        assert await value_of(ada, "name") is None
        assert await value_of(bob, "name") == "Bob"
        assert len(app.session_state) == 2
    assert len(app.session_state) == 0  # both sessions ended: their state went with them


async def test_values_are_kept_as_json_and_read_as_copies(connect) -> None:
    async with connect(state_app()) as client:
        got = (await client.call_tool("copies")).structured_content
        assert got == {"box": {"items": [1]}, "pair": [1, "a"], "point": {"x": 1, "y": 2}}
        refused = (await client.call_tool("unserializable")).content[0].text
        assert "'lock' is not serializable" in refused and "serializable=False" in refused


async def test_an_object_kept_with_serializable_false_lasts_one_request(connect) -> None:
    async with connect(state_app()) as client:
        assert (await client.call_tool("shadow")).structured_content == {
            "same": True,
            "hidden": True,
        }
        assert await value_of(client, "client") is None  # the object stayed in its request
        assert await value_of(client, "mode") == "session"  # the session's value shows again


# --------------------------------------------------------------------------- no session


@pytest.mark.parametrize("mode", ["modern", "stateless"])
async def test_without_a_session_a_request_keeps_its_own_state(connect, mode) -> None:
    """2026-07-28 has no sessions, nor has stateless HTTP: FastMCP's state is keyed by a
    session id that is new for each of their requests, and so is mcpkit's."""
    app = state_app()
    if mode == "modern":
        async with connect(app, protocol_version="2026-07-28") as client:
            await check_request_state(app, client)
        return
    async with serving(app, stateless=True) as (url, _):
        options = HttpClientTransportOptions(endpoint=url, stateless=True)
        async with (
            asyncio.timeout(TEST_TIMEOUT),
            McpClient.http(options, protocol_mode="legacy") as client,
        ):
            await check_request_state(app, client)


async def check_request_state(app: McpServerApp, client: McpClient) -> None:
    assert (await client.call_tool("set_and_get")).structured_content == {"value": [1, 2]}
    assert await value_of(client, "here") is None
    await client.call_tool("remember", {"key": "name", "value": "Ada"})
    assert await value_of(client, "name") is None
    assert [(await client.call_tool("count_up")).structured_content for _ in range(2)] == [
        {"result": 1},
        {"result": 1},
    ]
    assert len(app.session_state) == 0  # nothing was kept past a request


# --------------------------------------------------------------------------- bounds


async def test_state_is_bounded_in_keys_and_bytes(connect) -> None:
    app = state_app()
    assert (app.session_state.max_keys, app.session_state.max_bytes) == (
        DEFAULT_MAX_STATE_KEYS,
        DEFAULT_MAX_STATE_BYTES,
    )
    app.session_state.max_keys = 3
    app.session_state.max_bytes = 100
    async with connect(app) as client:
        for key in "abc":
            await client.call_tool("remember", {"key": key, "value": 1})
        full = await client.call_tool("remember", {"key": "d", "value": 1})
        assert full.is_error
        assert full.content[0].text.startswith("state is full: at most 3 keys")
        await client.call_tool("remember", {"key": "a", "value": 2})  # a key it holds: fine
        await client.call_tool("forget", {"key": "b"})
        await client.call_tool("remember", {"key": "d", "value": 1})  # room again
        big = await client.call_tool("remember", {"key": "c", "value": "x" * 100})
        assert big.is_error and "past 100" in big.content[0].text
        assert await value_of(client, "c") == 1  # the refused value was not kept
        assert await value_of(client, "d") == 1
    async with connect(app, protocol_version="2026-07-28") as client:  # a request's own
        big = await client.call_tool("remember", {"key": "c", "value": "x" * 100})
        assert big.is_error and "past 100" in big.content[0].text


def test_state_limit_error_is_a_tool_error() -> None:
    from mcpkit import ToolError

    assert issubclass(StateLimitError, ToolError)


# --------------------------------------------------------------------------- lifetime


async def test_a_streamable_http_session_frees_its_state_when_it_ends() -> None:
    app = state_app()
    async with serving(app) as (url, _):
        async with (
            asyncio.timeout(TEST_TIMEOUT),
            McpClient.http(url, protocol_mode="legacy") as client,
        ):
            assert client.session_id is not None
            await client.call_tool("remember", {"key": "name", "value": "Ada"})
            assert await value_of(client, "name") == "Ada"
            assert len(app.session_state) == 1
        # the client's DELETE ended the session
        assert len(app.session_state) == 0


async def test_state_kept_by_a_request_the_ending_cancels_is_freed_too() -> None:
    """A request still running when its connection closes is cancelled; what it keeps
    meanwhile (here in its ``except CancelledError``) goes with the session."""
    app = state_app()
    running, kept = asyncio.Event(), asyncio.Event()

    @app.tool()
    async def hold(ctx: McpToolContext) -> str:
        await ctx.set_state("before", 1)
        running.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            await ctx.set_state("late", 1)
            kept.set()
            raise
        return "never"

    async with asyncio.timeout(TEST_TIMEOUT), serving_in_memory(app) as end:
        client = McpClient(end)
        await client.connect()
        call = asyncio.ensure_future(client.call_tool("hold"))
        await running.wait()
        assert len(app.session_state) == 1
        await end.aclose()
        await asyncio.gather(call, return_exceptions=True)
        await client.aclose()
    assert kept.is_set()
    assert len(app.session_state) == 0


async def test_a_call_that_keeps_no_state_makes_none(connect) -> None:
    app = McpServerApp("lazy")
    seen: list[McpToolContext] = []

    @app.tool()
    async def plain(ctx: McpToolContext) -> str:
        seen.append(ctx)
        return await ctx.get_state("anything") or "none"

    async with connect(app) as client:
        assert (await client.call_tool("plain")).content[0].text == "none"
    assert len(app.session_state) == 0
    assert not {"_request_bag", "_request_objects"} & set(vars(seen[0]))
