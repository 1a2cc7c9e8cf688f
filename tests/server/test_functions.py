"""Module-level functions as first-class citizens: passed to ``McpServerApp(...)`` beside
server classes, or registered with the app's decorators (live, with list_changed), with
guards, interceptors and exception handlers of their own; anything that would serve
nothing is a ``TypeError``."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit import (
    McpCallError,
    McpExecutionContext,
    McpServerApp,
    McpToolContext,
    mcp_completion,
    mcp_lifespan,
    mcp_prompt,
    mcp_resource,
    mcp_server,
    mcp_tool,
    set_metadata,
    use_exception_handlers,
    use_guards,
    use_middleware,
)
from mcpkit.server.middleware import CallNext, Middleware, MiddlewareContext
from tests.waiting import wait_until

life: list[str] = []


@mcp_tool
async def hi(name: str) -> str:
    """Say hi."""
    return f"hi {name}"


@mcp_tool("shout", description="Shout it.")
def loud(text: str) -> str:
    return text.upper()


@mcp_resource("fn://readme", mime_type="text/plain")
def readme() -> str:
    return "read me"


@mcp_resource("fn://users/{user_id}")
async def user(user_id: str) -> dict:
    return {"id": user_id}


@mcp_prompt
def review(code: str, language: str = "python") -> str:
    """Review some code."""
    return f"Review this {language}: {code}"


@mcp_completion(prompt="review", argument="language")
def languages(value: str) -> list[str]:
    return [lang for lang in ("python", "perl", "rust") if lang.startswith(value)]


@mcp_lifespan
async def database():
    life.append("open")
    yield {"db": "ready"}
    life.append("closed")


@mcp_tool
async def from_lifespan(ctx: McpToolContext) -> str:
    return ctx.lifespan_context["db"]


@mcp_server(name="weather", version="2.0")
class Weather:
    @mcp_tool()
    def forecast(self, city: str) -> str:
        return f"sunny in {city}"


# ----------------------------------------------------------------------------- guards

seen: list[str] = []


def deny(ctx: McpExecutionContext) -> bool:
    seen.append(f"deny:{ctx.tool_name}:{ctx.server_class}")
    return False


def admins_only(ctx: McpExecutionContext) -> bool:
    return ctx.get_metadata("role") == "admin"


class Bracket(Middleware):
    async def on_call_tool(self, context: MiddlewareContext, call_next: CallNext) -> Any:
        return f"[{await call_next(context)}]"


class ValueErrors:
    handles = (ValueError,)

    def catch(self, exc: Exception, ctx: McpExecutionContext) -> str:
        return f"handled {exc}"


@use_guards(deny)
@mcp_tool
def locked() -> str:
    seen.append("locked ran")
    return "never"


@use_guards(admins_only)
@set_metadata("role", "admin")
@use_middleware(Bracket())
@mcp_tool
async def admin() -> str:
    return "admin"


@use_exception_handlers(ValueErrors)
@mcp_tool
def picky(n: int) -> str:
    if n < 0:
        raise ValueError("negative")
    return str(n)


# ----------------------------------------------------------------------------- passed to the app


@pytest.fixture
def app() -> McpServerApp:
    life.clear()
    return McpServerApp(hi, loud, readme, user, review, languages, database, from_lifespan, Weather)


async def test_module_level_tools_are_served_beside_a_class(app, connect):
    async with connect(app) as client:
        tools = {tool.name: tool for tool in await client.list_tools()}
        assert set(tools) == {"hi", "shout", "from_lifespan", "forecast"}
        assert tools["hi"].description == "Say hi." and tools["shout"].description == "Shout it."
        assert tools["hi"].input_schema["required"] == ["name"]
        assert (await client.call_tool("hi", {"name": "Ada"})).content[0].text == "hi Ada"
        assert (await client.call_tool("shout", {"text": "hey"})).content[0].text == "HEY"
        assert (await client.call_tool("forecast", {"city": "Oslo"})).content[
            0
        ].text == "sunny in Oslo"
    assert hi.__name__ == "hi" and await hi("direct") == "hi direct"  # still a plain function


async def test_the_app_is_named_by_its_class_or_name_or_the_default(app):
    assert (app.name, app.version) == ("weather", "2.0")
    assert McpServerApp(hi).name == "mcpkit-server"
    assert McpServerApp(hi, name="greeter", version="3").name == "greeter"


async def test_module_level_resources_templates_prompts_and_completions(app, connect):
    async with connect(app) as client:
        assert [r.uri for r in await client.list_resources()] == ["fn://readme"]
        assert [t.uri_template for t in await client.list_resource_templates()] == [
            "fn://users/{user_id}"
        ]
        assert (await client.read_resource("fn://readme")).contents[0].text == "read me"
        assert (await client.read_resource("fn://users/7")).contents[0].text == '{"id":"7"}'
        [prompt] = await client.list_prompts()
        assert prompt.name == "review" and [a.name for a in prompt.arguments] == [
            "code",
            "language",
        ]
        result = await client.get_prompt("review", {"code": "x = 1", "language": "rust"})
        assert result.messages[0].content.text == "Review this rust: x = 1"
        completion = await client.complete(
            {"type": "ref/prompt", "name": "review"}, "language", "p"
        )
        assert completion.completion.values == ["python", "perl"]


async def test_a_module_level_lifespan_runs_around_the_app(app, connect):
    async with connect(app) as client:
        assert life == ["open"]
        assert (await client.call_tool("from_lifespan")).content[0].text == "ready"
    assert life == ["open", "closed"]


# ----------------------------------------------------------------------------- decorators on the app


async def test_app_decorators_register_and_return_the_function_unchanged(connect):
    app = McpServerApp(name="decorated")

    @app.tool
    async def bare(x: int) -> int:
        return x + 1

    @app.tool()
    def called(x: int) -> int:
        return x * 2

    @app.tool("renamed", description="Has options.", annotations={"readOnlyHint": True})
    def original() -> str:
        return "renamed"

    @app.resource("app://static", mime_type="text/plain")
    def static() -> str:
        return "static"

    @app.resource("app://items/{item}")
    def item(item: str) -> str:
        return f"item {item}"

    @app.prompt
    def greet(name: str) -> str:
        return f"Greet {name}"

    @app.prompt("titled", title="A titled prompt")
    def other_prompt() -> str:
        return "titled"

    @app.completion(resource="app://items/{item}", argument="item")
    async def items(value: str) -> list[str]:
        return [v for v in ("apple", "avocado", "banana") if v.startswith(value)]

    @app.lifespan
    async def around():
        yield "lifespan value"

    assert called(4) == 8 and original() == "renamed" and static() == "static"
    assert await bare(1) == 2 and greet("x") == "Greet x"
    async with connect(app) as client:
        tools = {tool.name: tool for tool in await client.list_tools()}
        assert set(tools) == {"bare", "called", "renamed"}
        assert (
            tools["renamed"].description == "Has options."
            and tools["renamed"].annotations.read_only_hint
        )
        assert (await client.call_tool("bare", {"x": 1})).content[0].text == "2"
        assert (await client.call_tool("called", {"x": 4})).content[0].text == "8"
        assert (await client.read_resource("app://static")).contents[0].text == "static"
        assert (await client.read_resource("app://items/pear")).contents[0].text == "item pear"
        prompts = {p.name: p for p in await client.list_prompts()}
        assert set(prompts) == {"greet", "titled"} and prompts["titled"].title == "A titled prompt"
        ref = {"type": "ref/resource", "uri": "app://items/{item}"}
        assert (await client.complete(ref, "item", "a")).completion.values == ["apple", "avocado"]
        assert app.lifespan_context == "lifespan value"


async def test_a_tool_registered_while_a_client_is_connected_is_announced(connect):
    app = McpServerApp(hi)
    changed: list[str] = []
    async with connect(app, on_list_changed=changed.append) as client:
        assert [t.name for t in await client.list_tools()] == ["hi"]

        @app.tool(description="Added live.")
        async def late() -> str:
            return "late"

        await wait_until(lambda: changed == ["tools"], "tools/list_changed")
        assert {t.name for t in await client.list_tools()} == {"hi", "late"}
        assert (await client.call_tool("late")).content[0].text == "late"

        @app.prompt
        def late_prompt() -> str:
            return "p"

        @app.resource("late://r")
        def late_resource() -> str:
            return "r"

        await wait_until(
            lambda: sorted(changed) == ["prompts", "resources", "tools"],
            "prompts and resources list_changed",
        )


async def test_app_decorators_take_bound_methods(connect):
    class Counter:
        def __init__(self) -> None:
            self.n = 0

        def bump(self) -> int:
            self.n += 1
            return self.n

    counter = Counter()
    app = McpServerApp()
    app.tool(counter.bump)
    async with connect(app) as client:
        assert (await client.call_tool("bump")).content[0].text == "1"
    assert counter.n == 1


async def test_app_decorators_refuse_what_their_decorators_refuse():
    app = McpServerApp()
    with pytest.raises(TypeError):
        app.tool(nonsense=True)
    with pytest.raises(TypeError, match="URI"):
        app.resource(readme)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        app.completion(argument="x")


# ----------------------------------------------------------------------------- guards and the like


async def test_guards_interceptors_and_handlers_on_module_level_functions(connect):
    seen.clear()
    app = McpServerApp(locked, admin, picky)
    async with connect(app) as client:
        with pytest.raises(McpCallError) as refused:
            await client.call_tool("locked")
        assert refused.value.code == -32603
        assert refused.value.data == {"type": "FORBIDDEN", "guard": "deny"}
        assert seen == ["deny:locked:None"]  # the guard ran, the tool did not
        assert (await client.call_tool("admin")).content[0].text == "[admin]"
        assert (await client.call_tool("picky", {"n": -1})).content[0].text == "handled negative"
        assert (await client.call_tool("picky", {"n": 3})).content[0].text == "3"


async def test_guards_under_an_app_decorator_apply(connect):
    app = McpServerApp()

    @app.tool
    @use_guards(deny)
    def guarded() -> str:
        return "never"

    async with connect(app) as client:
        with pytest.raises(McpCallError) as refused:
            await client.call_tool("guarded")
        assert refused.value.data == {"type": "FORBIDDEN", "guard": "deny"}


async def test_a_guard_put_above_an_app_decorator_is_refused_not_ignored():
    app = McpServerApp()
    with pytest.raises(TypeError, match=r"below @app\.tool"):

        @use_guards(deny)
        @app.tool
        def unguarded() -> str:
            return "oops"


# ----------------------------------------------------------------------------- what serves nothing


def undecorated(name: str) -> str:
    return name


class Plain:
    def method(self) -> str:
        return "plain"


@pytest.mark.parametrize(
    ("target", "what"),
    [
        (undecorated, "undecorated function"),
        (lambda: None, "undecorated function"),
        (Plain, "class"),
        (Plain(), "Plain object"),
    ],
)
def test_what_serves_nothing_is_a_type_error(target, what):
    with pytest.raises(TypeError) as err:
        McpServerApp(hi, target)
    message = str(err.value)
    assert what in message and "@mcp_tool" in message and "app.tool()" in message


def test_an_instance_of_a_server_class_and_a_class_with_decorated_members_are_served():
    class Members:  # no @mcp_server: its decorated members make it a server
        @mcp_tool()
        def member(self) -> str:
            return "m"

    app = McpServerApp(Weather(), Members)
    assert {t.name for t in app.catalog.list_tools()} == {"forecast", "member"}


async def test_concurrent_registrations_each_reach_the_client(connect):
    app = McpServerApp()
    changed: list[str] = []
    async with connect(app, on_list_changed=changed.append) as client:
        for n in range(5):
            app.tool(f"t{n}")(lambda n=n: n)
        await wait_until(lambda: len(changed) == 5, "five tools/list_changed")
        assert len(await client.list_tools()) == 5


# ----------------------------------------------------------------------------- habits of other SDKs


def test_a_string_first_is_the_name_and_a_string_later_is_refused():
    assert McpServerApp("weather", hi).name == "weather"  # FastMCP("weather")
    assert McpServerApp("weather").name == "weather"
    with pytest.raises(TypeError, match="two names"):
        McpServerApp("weather", name="other")
    with pytest.raises(TypeError, match=r'a name comes first, McpServerApp\("name", \.\.\.\)'):
        McpServerApp(hi, "weather")


def test_the_app_decorators_take_the_name_as_a_keyword():
    app = McpServerApp()

    @app.tool(name="greet", description="Say hi.")
    def hello(who: str) -> str:
        return f"hi {who}"

    @app.prompt(name="review")
    def review_prompt(code: str) -> str:
        return f"Review {code}"

    tool = app.catalog.get_tool("greet")
    assert tool is not None and tool.description == "Say hi."
    assert app.catalog.get_prompt("review") is not None
    with pytest.raises(TypeError, match="got its name twice"):
        app.tool("one", name="two")


def test_a_second_function_under_a_taken_name_is_warned_about(caplog):
    app = McpServerApp()

    @app.tool("greet")
    def first() -> str:
        return "1"

    with caplog.at_level("WARNING", logger="mcpkit.server"):

        @app.tool("greet")
        def second() -> str:
            return "2"

    assert "two tools are named 'greet'" in caplog.text
    assert "second replaces" in caplog.text and "first" in caplog.text
    caplog.clear()
    with caplog.at_level("WARNING", logger="mcpkit.server"):
        McpServerApp(hi, hi)  # the same function twice is no clash
    assert "two tools" not in caplog.text
