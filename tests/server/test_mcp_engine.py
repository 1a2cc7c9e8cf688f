"""``McpEngine`` on its own: a server with no ``McpServerApp``, served by the transports that
take an engine (stdio, HTTP); its life (start hooks in order, stopped in reverse, a failed start
undone); and an app's parts are its engine's."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from mcpkit import McpServerApp
from mcpkit.client import McpClient, StdioClientTransportOptions
from mcpkit.server import McpEngine
from mcpkit.transports.http import StreamableHttpServerOptions
from tests.http_server import serving

ROOT = Path(__file__).resolve().parents[2]


def shouting_engine() -> McpEngine:
    """A server written against the engine alone: its own initialize and one method."""
    engine = McpEngine()

    async def initialize(request: Any, binding: Any) -> dict[str, Any]:
        binding.session.protocol_version = request.params["protocolVersion"]
        binding.session.initialize_seen = True
        return {
            "protocolVersion": request.params["protocolVersion"],
            "capabilities": {},
            "serverInfo": {"name": "engine-only", "version": "1"},
        }

    async def initialized(note: Any, binding: Any) -> None:
        binding.session.initialized = True

    async def shout(request: Any, binding: Any) -> dict[str, Any]:
        return {"text": request.params["text"].upper()}

    engine.dispatcher.register("initialize", initialize)
    engine.dispatcher.on_notification("notifications/initialized", initialized)
    engine.dispatcher.register("example/shout", shout)
    return engine


async def shouted(client: McpClient) -> Any:
    assert client.server_info is not None
    assert client.server_info.server_info.name == "engine-only"
    return await client.request("example/shout", {"text": "hello"})


async def test_a_server_of_the_engine_alone_is_served_over_stdio():
    script = (
        "import asyncio\n"
        "from mcpkit.transports import serve_stdio\n"
        "from tests.server.test_mcp_engine import shouting_engine\n"
        "asyncio.run(serve_stdio(shouting_engine()))\n"
    )
    options = StdioClientTransportOptions(
        command=sys.executable, arguments=["-c", script], working_directory=str(ROOT)
    )
    async with asyncio.timeout(30), McpClient.stdio(options, protocol_mode="legacy") as client:
        assert await shouted(client) == {"text": "HELLO"}


async def test_a_server_of_the_engine_alone_is_served_over_http():
    async with asyncio.timeout(30), serving(shouting_engine()) as (url, _):
        async with McpClient.http(url, protocol_mode="legacy") as client:
            assert await shouted(client) == {"text": "HELLO"}


async def test_the_name_the_http_options_announce_replaces_the_apps_in_what_clients_see():
    app = McpServerApp("own-name", version="1.0")
    options = StreamableHttpServerOptions(server_name="renamed", server_version="2.0")
    async with asyncio.timeout(30), serving(app, options) as (url, _):
        async with McpClient.http(url, protocol_mode="legacy") as client:
            assert client.server_info is not None
            info = client.server_info.server_info
            assert (info.name, info.version) == ("renamed", "2.0")
    assert (app.name, app.version) == ("own-name", "1.0")


def life(name: str, events: list[str], fail: bool = False) -> Any:
    @contextlib.asynccontextmanager
    async def hook() -> AsyncIterator[None]:
        if fail:
            raise RuntimeError(f"{name} failed")
        events.append(f"start {name}")
        try:
            yield
        finally:
            events.append(f"stop {name}")

    return hook


async def test_start_hooks_run_in_order_and_stop_in_reverse_after_the_stop_hooks():
    events: list[str] = []
    engine = McpEngine()
    engine.on_start(life("a", events))
    engine.on_start(life("b", events))

    async def before_stop() -> None:
        events.append(f"before stop, shutting down: {engine.shutting_down.is_set()}")

    engine.before_stop(before_stop)
    async with engine.running():
        assert engine.started and engine.life is not None
        await engine.start()  # idempotent
    assert events == [
        "start a",
        "start b",
        "before stop, shutting down: True",
        "stop b",
        "stop a",
    ]
    assert not engine.started and engine.life is None


async def test_a_failed_start_stops_what_had_started():
    events: list[str] = []
    engine = McpEngine()
    engine.on_start(life("a", events))
    engine.on_start(life("b", events, fail=True))
    with pytest.raises(RuntimeError, match="b failed"):
        await engine.start()
    assert events == ["start a", "stop a"]
    assert not engine.started


async def test_an_apps_parts_are_its_engines():
    app = McpServerApp("parts", shutdown_grace=3)
    engine = app.engine
    assert app.dispatcher is engine.dispatcher
    assert app.connections is engine.connections
    assert app.subscriptions is engine.subscriptions
    assert app.session_state is engine.session_state
    assert app.shutdown_grace == engine.shutdown_grace == 3
    app.shutdown_grace = 5
    assert engine.shutdown_grace == 5
    async with app.running():
        assert engine.started and app.started
    assert not engine.started
    assert app.resolve(McpEngine) is engine
