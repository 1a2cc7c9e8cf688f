"""completion/complete names a prompt or template: one the caller cannot see (set aside by
``app.disable``, or hidden by its session's view) completes to nothing, as one no one
registered does, until it is shown."""

from __future__ import annotations

from mcpkit import McpClient, McpServerApp, McpToolContext
from mcpkit.testing import connected


def build() -> McpServerApp:
    app = McpServerApp("completing")

    @app.tool()
    async def unlock(ctx: McpToolContext) -> str:
        await ctx.enable_components(tags={"advanced"})
        return "unlocked"

    @app.tool()
    async def hide(ctx: McpToolContext) -> str:
        await ctx.disable_components("greet", "notes://{topic}")
        return "hidden"

    @app.prompt(tags={"advanced"}, enabled=False)
    def deep_dive(topic: str) -> str:
        return f"Dig into {topic}"

    @app.resource("manual://{page}", tags={"advanced"}, enabled=False)
    def manual(page: str) -> str:
        return f"manual {page}"

    @app.prompt()
    def greet(name: str) -> str:
        return f"Hi {name}"

    @app.resource("notes://{topic}")
    def note(topic: str) -> str:
        return f"note {topic}"

    @app.completion(prompt="deep_dive", argument="topic")
    def topics(value: str) -> list[str]:
        return ["salaries", "layoffs"]

    @app.completion(resource="manual://{page}", argument="page")
    def pages(value: str) -> list[str]:
        return ["internal-only"]

    @app.completion(prompt="greet", argument="name")
    def names(value: str) -> list[str]:
        return ["ada"]

    @app.completion(resource="notes://{topic}", argument="topic")
    def note_topics(value: str) -> list[str]:
        return ["tea"]

    return app


async def values(client: McpClient, ref: dict[str, str], argument: str) -> list[str]:
    return (await client.complete(ref, argument, "")).completion.values


DEEP = {"type": "ref/prompt", "name": "deep_dive"}
MANUAL = {"type": "ref/resource", "uri": "manual://{page}"}
GREET = {"type": "ref/prompt", "name": "greet"}
NOTES = {"type": "ref/resource", "uri": "notes://{topic}"}


async def test_what_the_app_set_aside_completes_to_nothing_until_a_session_shows_it() -> None:
    app = build()
    async with connected(app) as one, connected(app) as other:
        assert await values(one, DEEP, "topic") == []
        assert await values(one, MANUAL, "page") == []
        await one.call_tool("unlock", {})
        assert await values(one, DEEP, "topic") == ["salaries", "layoffs"]
        assert await values(one, MANUAL, "page") == ["internal-only"]
        assert await values(other, DEEP, "topic") == []
        assert await values(other, MANUAL, "page") == []


async def test_what_a_session_hides_completes_to_nothing_for_it_alone() -> None:
    app = build()
    async with connected(app) as one, connected(app) as other:
        assert await values(one, GREET, "name") == ["ada"]
        await one.call_tool("hide", {})
        assert await values(one, GREET, "name") == []
        assert await values(one, NOTES, "topic") == []
        assert await values(other, GREET, "name") == ["ada"]
        assert await values(other, NOTES, "topic") == ["tea"]


async def test_a_completion_for_nothing_registered_still_answers() -> None:
    app = McpServerApp("loose")

    @app.completion(prompt="elsewhere", argument="x")
    def xs(value: str) -> list[str]:
        return ["1"]

    async with connected(app) as client:
        assert await values(client, {"type": "ref/prompt", "name": "elsewhere"}, "x") == ["1"]
