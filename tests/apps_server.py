"""An app with MCP Apps pages, for the tests that look at it as hosts do: a weather view
(``ui://weather/view.html``, with CSP origins, a permission, a domain and a border), the tool
that opens it and a tool only the page calls. ``mcpkit run tests/apps_server.py`` serves it."""

from __future__ import annotations

from mcpkit import McpServerApp, McpToolContext
from mcpkit.server.apps import Csp, Permissions, app_ui, host_supports_ui, tool_ui, ui_capability

PAGE = "<!doctype html><title>Weather</title><p id=out></p>"
PAGE_UI = {
    "csp": {"connectDomains": ["https://api.example.com"]},
    "permissions": {"clipboardWrite": {}},
    "domain": "weather.example.com",
    "prefersBorder": True,
}


def weather_app() -> McpServerApp:
    app = McpServerApp("weather")
    app_ui(
        app,
        "ui://weather/view.html",
        PAGE,
        name="Weather view",
        csp=Csp(connect_domains=["https://api.example.com"]),
        permissions=Permissions(clipboard_write=True),
        domain="weather.example.com",
        prefers_border=True,
    )

    @app.tool(ui="ui://weather/view.html")
    def forecast(ctx: McpToolContext, city: str) -> str:
        """The forecast, shown in the weather view where the host can."""
        return f"Sunny in {city}; ui={host_supports_ui(ctx)}; declared={ui_capability(ctx)}"

    @app.tool(ui=tool_ui("ui://weather/view.html", visibility=["app"]))
    def refresh(city: str) -> str:
        """Called by the page only."""
        return f"refreshed {city}"

    return app


app = weather_app()
