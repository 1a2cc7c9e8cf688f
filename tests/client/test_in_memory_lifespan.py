"""``McpClient.in_memory(app)`` starts the app (its lifespans run) and the last in-memory
client to close stops it again, so a lifespan's shutdown half runs; an app started by
someone else is left running."""

from __future__ import annotations

from collections.abc import AsyncIterator

from mcpkit import McpClient, McpServerApp


def _app(events: list[str]) -> McpServerApp:
    app = McpServerApp("lived")

    @app.lifespan
    async def life() -> AsyncIterator[None]:
        events.append("start")
        yield
        events.append("stop")

    @app.tool
    def ping() -> str:
        return "pong"

    return app


async def test_the_last_client_to_close_stops_the_app_it_started():
    events: list[str] = []
    app = _app(events)
    first = McpClient.in_memory(app)
    second = McpClient.in_memory(app)
    async with first:
        async with second:
            assert (await second.call_tool("ping")).content[0].text == "pong"
        assert events == ["start"] and app.started  # the first client still uses it
        assert (await first.call_tool("ping")).content[0].text == "pong"
    assert events == ["start", "stop"] and not app.started
    async with McpClient.in_memory(app) as again:  # started afresh
        assert (await again.call_tool("ping")).content[0].text == "pong"
    assert events == ["start", "stop", "start", "stop"]


async def test_an_app_started_elsewhere_is_left_running():
    events: list[str] = []
    app = _app(events)
    async with app.running():
        async with McpClient.in_memory(app) as client:
            await client.call_tool("ping")
        assert events == ["start"] and app.started
    assert events == ["start", "stop"]
