"""Protocol extensions on the client's side: ``McpClient(extensions=...)`` declares them (in
``initialize``, or in every 2026-07-28 request's ``_meta`` alongside the tasks extension a
task call adds), and ``client.server_extensions`` holds the ones the server announced, in
both eras, in memory and over HTTP, WebSocket and stdio, against mcpkit's server (MCP
Apps: ``host_supports_ui``) and the official ``mcp`` server (its ``Apps`` extension).
Bad declarations fail where they are given."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp.server.apps import Apps, client_supports_apps
from mcp.server.mcpserver import Context, MCPServer

from mcpkit import McpClient, McpServerApp, McpToolContext
from mcpkit.client import ServerDiscovery, StdioClientTransportOptions
from mcpkit.protocol.types import TextContent
from mcpkit.server.apps import EXTENSION_ID, RESOURCE_MIME_TYPE, app_ui
from mcpkit.testing import connected
from tests.apps_server import weather_app
from tests.http_server import serve_asgi, serving

pytestmark = [
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

MODERN = "2026-07-28"
TASKS = "io.modelcontextprotocol/tasks"
UI = {EXTENSION_ID: {"mimeTypes": [RESOURCE_MIME_TYPE]}}
ERAS = ["2025-11-25", MODERN]


def text(result: Any) -> str:
    """The text of a tool result's one content item."""
    (item,) = result.content
    assert isinstance(item, TextContent)
    return item.text


def forecast_text(ui: bool) -> str:
    """What ``tests.apps_server``'s ``forecast`` answers a client that did (not) declare UI."""
    declared = UI[EXTENSION_ID] if ui else None
    return f"Sunny in Oslo; ui={ui}; declared={declared}"


def announced(era: str) -> dict[str, Any]:
    """What mcpkit's weather app announces: MCP Apps, and in 2026-07-28 tasks too."""
    return {**UI, TASKS: {}} if era == MODERN else dict(UI)


async def check_both_sides(client: McpClient, era: str, *, declared: bool) -> None:
    assert client.protocol_version == era
    assert dict(client.server_extensions) == announced(era)
    result = await client.call_tool("forecast", {"city": "Oslo"})
    assert text(result) == forecast_text(declared)


@pytest.mark.parametrize("declared", [True, False], ids=["declared", "not-declared"])
@pytest.mark.parametrize("era", ERAS)
async def test_in_memory(era: str, declared: bool) -> None:
    extensions = UI if declared else None
    async with McpClient.in_memory(
        weather_app(), protocol_version=era, extensions=extensions
    ) as client:
        await check_both_sides(client, era, declared=declared)


@pytest.mark.parametrize("declared", [True, False], ids=["declared", "not-declared"])
@pytest.mark.parametrize("era", ERAS)
async def test_over_http(era: str, declared: bool) -> None:
    mode = "modern" if era == MODERN else "legacy"
    async with (
        asyncio.timeout(30),
        serving(weather_app()) as (url, _),
        McpClient.http(url, protocol_mode=mode, extensions=UI if declared else None) as client,
    ):
        await check_both_sides(client, era, declared=declared)


async def test_over_http_with_the_era_found_by_probing() -> None:
    async with (
        asyncio.timeout(30),
        serving(weather_app()) as (url, _),
        McpClient.http(url, extensions=UI) as client,
    ):
        await check_both_sides(client, MODERN, declared=True)


async def test_through_the_testing_helper_websocket_and_stdio() -> None:
    async with connected(weather_app(), protocol_version=MODERN, extensions=UI) as client:
        await check_both_sides(client, MODERN, declared=True)
    async with asyncio.timeout(30), serving(weather_app()) as (url, _):
        ws = url.replace("http://", "ws://", 1) + "/ws"
        async with McpClient.websocket(ws, extensions=UI) as client:
            await check_both_sides(client, "2025-11-25", declared=True)
    server = Path(__file__).resolve().parents[1] / "apps_server.py"
    command = StdioClientTransportOptions(
        command=sys.executable, arguments=["-m", "mcpkit", "run", str(server)]
    )
    async with (
        asyncio.timeout(60),
        McpClient.stdio(command, protocol_mode="legacy", extensions=UI) as client,
    ):
        await check_both_sides(client, "2025-11-25", declared=True)


def extension_reporter() -> McpServerApp:
    """An app with a UI page whose tool tells which extensions the request declared."""
    app = McpServerApp("reporter")
    app_ui(app, "ui://reporter/view.html", "<p>view</p>")

    @app.tool()
    def declared(ctx: McpToolContext) -> str:
        return ",".join(sorted(ctx.client_capabilities.get("extensions") or {}))

    return app


async def test_a_task_call_adds_the_tasks_extension_to_the_ones_declared() -> None:
    mine = {**UI, "com.example/feature": {"level": 2}}
    async with McpClient.in_memory(
        extension_reporter(), protocol_version=MODERN, extensions=mine
    ) as client:
        plain = await client.call_tool("declared", {})
        assert text(plain) == f"com.example/feature,{EXTENSION_ID}"
        task = await client.call_tool_as_task("declared", {})
        result = await task.result()
        assert text(result) == f"com.example/feature,{TASKS},{EXTENSION_ID}"
        # the task's extension stayed in that request
        assert client.capabilities() == {"extensions": mine}


async def test_the_handshake_declares_them_in_initialize_beside_the_handlers() -> None:
    async with McpClient.in_memory(extension_reporter(), extensions=UI, roots=[]) as client:
        assert client.capabilities() == {"extensions": UI, "roots": {"listChanged": True}}
        # the server read them from initialize: no request of this era carries them
        assert text(await client.call_tool("declared", {})) == EXTENSION_ID


def official_apps_server() -> MCPServer:
    apps = Apps()

    @apps.tool(resource_uri="ui://clock/app.html", description="Whether the host shows apps")
    def shows_apps(ctx: Context) -> str:
        return f"apps={client_supports_apps(ctx)}"

    apps.add_html_resource("ui://clock/app.html", "<p>clock</p>")
    return MCPServer("official-apps", extensions=[apps])


@asynccontextmanager
async def official_client(mode: str, extensions: Any) -> AsyncIterator[McpClient]:
    async with (
        asyncio.timeout(30),
        serve_asgi(official_apps_server().streamable_http_app(), lifespan="on") as base,
        McpClient.http(f"{base}/mcp", protocol_mode=mode, extensions=extensions) as client,
    ):
        yield client


@pytest.mark.parametrize("declared", [True, False], ids=["declared", "not-declared"])
@pytest.mark.parametrize("mode", ["legacy", "modern"])
async def test_the_official_server_s_apps_extension(mode: str, declared: bool) -> None:
    async with official_client(mode, UI if declared else None) as client:
        assert client.protocol_version == ("2025-11-25" if mode == "legacy" else MODERN)
        # the official server announces it, without settings, to 2026-07-28 clients only
        expected = {EXTENSION_ID: {}} if mode == "modern" else {}
        assert dict(client.server_extensions) == expected
        if client.discovery is not None:
            assert client.discovery.capabilities.extensions == {EXTENSION_ID: {}}
        result = await client.call_tool("shows_apps", {})
        assert text(result) == f"apps={declared}"


async def test_server_extensions_is_read_only_and_empty_before_connecting() -> None:
    client = McpClient.in_memory(weather_app())
    assert dict(client.server_extensions) == {}
    async with client:
        extensions = client.server_extensions
        assert isinstance(extensions, Mapping)
        with pytest.raises(TypeError):
            extensions[TASKS] = {}  # type: ignore[index]
        with pytest.raises(AttributeError):
            client.server_extensions = {}  # type: ignore[misc]


async def test_a_server_announcing_none_gives_an_empty_mapping() -> None:
    app = McpServerApp("plain")

    @app.tool()
    def ping() -> str:
        return "pong"

    async with McpClient.in_memory(app) as client:
        assert dict(client.server_extensions) == {}
    async with McpClient.in_memory(app, protocol_version=MODERN) as client:
        assert dict(client.server_extensions) == {TASKS: {}}


def test_the_declaration_is_copied_when_given() -> None:
    settings: dict[str, Any] = {"mimeTypes": [RESOURCE_MIME_TYPE]}
    mine = {EXTENSION_ID: settings}
    client = McpClient.in_memory(weather_app(), extensions=mine)
    settings["mimeTypes"].append("text/plain")
    mine["com.example/later"] = {}
    assert client.capabilities() == {"extensions": UI}
    client.capabilities()["extensions"][EXTENSION_ID]["added"] = True
    assert client.capabilities() == {"extensions": UI}


@pytest.mark.parametrize(
    ("extensions", "message"),
    [
        ([EXTENSION_ID], "must be a dict of extension identifiers"),
        ({1: {}}, "an identifier must be a str"),
        ({EXTENSION_ID: True}, r"extensions\['io.modelcontextprotocol/ui'\] must be a dict"),
        ({EXTENSION_ID: ["text/html"]}, "must be a dict of the extension's settings"),
        ({EXTENSION_ID: {"when": object()}}, "is not JSON"),
    ],
)
def test_what_is_not_a_declaration_is_a_type_error(extensions: Any, message: str) -> None:
    with pytest.raises(TypeError, match=message):
        McpClient.in_memory(weather_app(), extensions=extensions)


@pytest.mark.parametrize(
    "name", ["ui", "", "/ui", "io.modelcontextprotocol/", "1io.example/ui", "io..x/ui", "a/b c"]
)
def test_a_malformed_identifier_is_a_value_error(name: str) -> None:
    with pytest.raises(ValueError, match="is not an extension identifier"):
        McpClient.in_memory(weather_app(), extensions={name: {}})


def test_an_announced_entry_that_is_not_an_object_is_left_out() -> None:
    raw = {
        "supportedVersions": [MODERN],
        "capabilities": {"tools": {}, "extensions": {"com.example/a": {"x": 1}, "b/c": True}},
    }
    discovery = ServerDiscovery.from_result(raw)
    assert discovery.capabilities.extensions == {"com.example/a": {"x": 1}}
    assert discovery.capabilities.tools is not None
    odd = ServerDiscovery.from_result(
        {"supportedVersions": [MODERN], "capabilities": {"extensions": []}}
    )
    assert odd.capabilities.extensions is None
