"""docs/apps.md runs as written: its Python blocks executed as they stand, then its check
run, and the page each block serves read by a client as the page says."""

from __future__ import annotations

import msgspec

from mcpkit import McpServerApp
from mcpkit.testing import connected
from tests.docs.test_middleware_and_transforms_pages import run_page


async def test_the_apps_page() -> None:
    page = run_page("apps.md")
    await page["check"]()
    app = page["app"]
    async with connected(app) as client:
        history = (await client.read_resource("ui://weather/history.html")).contents[0]
        assert history.text == "<!doctype html><p>Last week's weather</p>"  # type: ignore[union-attr]
        assert msgspec.to_builtins(history)["_meta"] == {"ui": {"prefersBorder": False}}
        caps = (await client.request("server/discover", {}))["capabilities"]
        assert caps["extensions"]["io.modelcontextprotocol/ui"] == {
            "mimeTypes": ["text/html;profile=mcp-app"]
        }
    async with connected(McpServerApp(page["Dashboard"]())) as client:
        (tool,) = await client.list_tools()
        assert tool.meta["ui"] == {"resourceUri": "ui://dashboard/main"}  # type: ignore[index]
        main = (await client.read_resource("ui://dashboard/main")).contents[0]
        assert "cdn.example.com" in main.text  # type: ignore[union-attr]
