"""MCP Apps (``mcpkit.server.apps``): a tool names a ``ui://`` page, the page is served as
``text/html;profile=mcp-app`` with its ``_meta.ui``, and the app announces the extension,
as mcpkit's client (both eras, in memory) and the official ``mcp`` client (both modes, over
HTTP, declaring the extension) see them. Bad options fail where they are given."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import msgspec
import pytest
from mcp import Client
from mcp.client.extension import ClientExtension

from mcpkit import McpClient, McpServerApp, mcp_server, mcp_tool
from mcpkit.server.apps import (
    EXTENSION_ID,
    RESOURCE_MIME_TYPE,
    RESOURCE_URI_META_KEY,
    Csp,
    app_ui,
    tool_ui,
    ui_resource,
)
from tests.apps_server import PAGE, PAGE_UI, weather_app
from tests.http_server import serving

pytestmark = [
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]


def assert_ui_wire(
    tools: dict[str, dict[str, Any]], read: dict[str, Any], caps: dict[str, Any]
) -> None:
    """What a host reads: the tools' ``_meta``, the page's content item, the capability."""
    assert tools["forecast"] == {
        "ui": {"resourceUri": "ui://weather/view.html"},
        RESOURCE_URI_META_KEY: "ui://weather/view.html",
    }
    assert tools["refresh"]["ui"] == {
        "resourceUri": "ui://weather/view.html",
        "visibility": ["app"],
    }
    assert read["mimeType"] == RESOURCE_MIME_TYPE and read["text"] == PAGE
    assert read["_meta"] == {"ui": PAGE_UI}
    assert caps["extensions"][EXTENSION_ID] == {"mimeTypes": [RESOURCE_MIME_TYPE]}


def wire(value: Any) -> Any:
    """A typed result as the JSON it came as (``_meta``, ``mimeType``)."""
    return msgspec.to_builtins(value)


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25", "2026-07-28"])
async def test_mcpkit_client_sees_the_page_the_tools_and_the_capability(version: str) -> None:
    async with McpClient.in_memory(weather_app(), protocol_version=version) as client:
        tools = {tool.name: wire(tool)["_meta"] for tool in await client.list_tools()}
        (listed,) = await client.list_resources()
        assert wire(listed)["mimeType"] == RESOURCE_MIME_TYPE
        assert wire(listed)["_meta"] == {"ui": PAGE_UI}
        read = (await client.read_resource("ui://weather/view.html")).contents[0]
        # what the server announced, from initialize or server/discover
        assert_ui_wire(tools, wire(read), {"extensions": dict(client.server_extensions)})
        # mcpkit's client declares no UI support: the tool knows its text is all that is seen
        result = await client.call_tool("forecast", {"city": "Oslo"})
        assert result.content[0].text == "Sunny in Oslo; ui=False; declared=None"


class DeclaresUi(ClientExtension):
    """A host's declaration of MCP Apps, as the official client sends it."""

    identifier = EXTENSION_ID

    def settings(self) -> dict[str, Any]:
        return {"mimeTypes": [RESOURCE_MIME_TYPE]}


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_official_client_declaring_ui_gets_it(mode: str) -> None:
    async with (
        asyncio.timeout(30),
        serving(weather_app()) as (url, _),
        Client(url, mode=mode, extensions=[DeclaresUi()]) as client,
    ):
        assert client.protocol_version == ("2025-11-25" if mode == "legacy" else "2026-07-28")
        listed = (await client.list_tools()).tools
        tools = {tool.name: tool.model_dump(by_alias=True)["_meta"] for tool in listed}
        read = (await client.read_resource("ui://weather/view.html")).contents[0]
        caps = client.server_capabilities.model_dump(by_alias=True)
        assert_ui_wire(tools, read.model_dump(by_alias=True), caps)
        result = await client.call_tool("forecast", {"city": "Oslo"})
        assert result.content[0].text == (  # type: ignore[union-attr]
            f"Sunny in Oslo; ui=True; declared={{'mimeTypes': ['{RESOURCE_MIME_TYPE}']}}"
        )


@mcp_server("dashboard")
class Dashboard:
    @ui_resource("ui://dashboard/main", csp=Csp(resource_domains=["https://cdn.example.com"]))
    async def page(self) -> str:
        return PAGE

    @mcp_tool(ui=tool_ui("ui://dashboard/main", visibility=["model", "app"]), meta={"x": 1})
    def show(self) -> str:
        return "shown"


async def test_a_class_serves_a_page_and_a_tool_names_it() -> None:
    async with McpClient.in_memory(McpServerApp(Dashboard())) as client:
        (tool,) = await client.list_tools()
        assert wire(tool)["_meta"] == {
            "x": 1,
            "ui": {"resourceUri": "ui://dashboard/main", "visibility": ["model", "app"]},
            RESOURCE_URI_META_KEY: "ui://dashboard/main",
        }
        item = wire((await client.read_resource("ui://dashboard/main")).contents[0])
        assert item["mimeType"] == RESOURCE_MIME_TYPE
        assert item["_meta"] == {"ui": {"csp": {"resourceDomains": ["https://cdn.example.com"]}}}


async def test_the_page_comes_from_a_file_or_a_function(tmp_path: Path) -> None:
    page = tmp_path / "view.html"
    page.write_text("<p>one</p>", encoding="utf-8")
    app = McpServerApp("pages")
    app_ui(app, "ui://file", page)

    @app_ui(app, "ui://made")
    async def made() -> str:
        return "<p>made</p>"

    async with McpClient.in_memory(app) as client:
        assert (await client.read_resource("ui://file")).contents[0].text == "<p>one</p>"
        page.write_text("<p>two</p>", encoding="utf-8")  # read at each read
        assert (await client.read_resource("ui://file")).contents[0].text == "<p>two</p>"
        made_item = (await client.read_resource("ui://made")).contents[0]
        assert made_item.text == "<p>made</p>" and made_item.mime_type == RESOURCE_MIME_TYPE


def test_an_app_without_pages_announces_no_ui() -> None:
    app = McpServerApp("plain")

    @app.tool()
    def ping() -> str:
        return "pong"

    assert "extensions" not in app.capabilities("2025-11-25")
    assert app.capabilities("2026-07-28")["extensions"] == {"io.modelcontextprotocol/tasks": {}}
    assert weather_app().capabilities("2025-03-26")["extensions"] == {
        EXTENSION_ID: {"mimeTypes": [RESOURCE_MIME_TYPE]}
    }


def test_the_announcement_follows_the_pages_and_tools_served() -> None:
    """Announced while a page or a tool naming one is served: not once both are set
    aside or removed, again once one is back."""
    app = McpServerApp("pages")
    app_ui(app, "ui://demo/page.html", "<p>hi</p>")

    @app.tool(ui="ui://demo/page.html")
    def show() -> str:
        return "shown"

    def announced() -> bool:
        return EXTENSION_ID in app.capabilities("2025-11-25").get("extensions", {})

    assert announced()
    app.disable("ui://demo/page.html")
    assert announced()  # the tool still names it
    app.catalog.unregister_tool("show")
    assert not announced()
    app.enable("ui://demo/page.html")
    assert announced()

    @app.tool(name="show")  # the same name again, without a page: counted once, then not
    def show_plain() -> str:
        return "plain"

    app.disable("ui://demo/page.html")
    assert not announced()


@pytest.mark.parametrize(
    ("make", "error", "words"),
    [
        (lambda: tool_ui("https://example.com/page"), ValueError, "starts with 'ui://'"),
        (lambda: tool_ui("ui://"), ValueError, "starts with 'ui://'"),
        (lambda: tool_ui(42), TypeError, "is a string"),  # type: ignore[arg-type]
        (lambda: tool_ui("ui://w", visibility=["user"]), ValueError, "one or both of"),
        (lambda: tool_ui("ui://w", visibility=[]), ValueError, "one or both of"),
        (lambda: tool_ui("ui://w", visibility="app"), TypeError, "not the string"),
        (lambda: tool_ui(), ValueError, "needs a resource_uri"),
        (lambda: mcp_tool(ui="ui://w", meta={"ui": {}}), ValueError, "not both"),
        (
            lambda: mcp_tool(ui={"resourceUri": "ui://w", "csp": {}}),
            ValueError,
            "belong to the page",
        ),
        (lambda: mcp_tool(ui=3), TypeError, "ui= takes"),
        (lambda: Csp(connect_domains="https://a.example"), TypeError, "list of origins"),  # type: ignore[arg-type]
        (lambda: ui_resource("ui://w/{id}"), ValueError, "not a template"),
        (lambda: ui_resource("ui://w", mime_type="text/html"), TypeError, "no mime_type"),
        (lambda: ui_resource("ui://w", meta={"ui": {}}), ValueError, "not meta="),
        (lambda: ui_resource("ui://w", csp={"connectDomains": []}), TypeError, "Csp(...)"),  # type: ignore[arg-type]
        (lambda: ui_resource("ui://w", prefers_border="yes"), TypeError, "True or False"),  # type: ignore[arg-type]
        (lambda: ui_resource("ui://w", domain=""), TypeError, "domain="),
        (lambda: app_ui(McpServerApp("x"), "ui://w", 42), TypeError, "html= is"),
        (lambda: app_ui("not an app", "ui://w", PAGE), TypeError, "on an McpServerApp"),
        (
            lambda: app_ui(McpServerApp("x"), "ui://w", Path("/nonexistent/page.html")),
            FileNotFoundError,
            "no file",
        ),
    ],
)
def test_bad_options_fail_where_given(make: Any, error: type[Exception], words: str) -> None:
    with pytest.raises(error, match=words.replace("(", r"\(").replace(")", r"\)")):
        make()
