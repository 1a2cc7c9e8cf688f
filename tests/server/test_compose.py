"""Composition: ``app.mount`` (live) and ``app.import_app`` (snapshot), seen by the
official ``mcp`` client over Streamable HTTP and by mcpkit's own client in memory."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import mcp_types as types
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from mcpkit import Depends, McpCallError, McpServerApp, McpToolContext, State, ToolError
from mcpkit.server import ToolEntry, use_exception_handlers, use_guards, use_middleware
from mcpkit.server._compose import MountCycleError
from mcpkit.server._prefixing import prefix_name, prefix_uri, unprefix_name, unprefix_uri
from mcpkit.server.middleware import CallNext, Middleware, MiddlewareContext
from tests.http_server import serving
from tests.waiting import wait_until

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")


def texts(result: Any) -> list[str]:
    return [block.text for block in result.content if isinstance(block, types.TextContent)]


# the composed app the official client talks to ----------------------------------------


def weather_app() -> McpServerApp:
    """A mounted app with every kind of entry, and a lifespan its tools read."""
    app = McpServerApp(name="weather")

    @app.lifespan
    async def life() -> AsyncIterator[dict[str, str]]:
        yield {"station": "blindern"}

    @app.tool()
    async def forecast(city: str, ctx: McpToolContext) -> str:
        """Forecast for a city."""
        await ctx.report_progress(1, 2, "looking up")
        await ctx.info(f"forecast for {city}")
        return f"{city}: sunny (station {ctx.lifespan_context['station']})"

    @app.tool()
    async def ask_user(ctx: McpToolContext) -> str:
        sampled = await ctx.sample("say hi")
        answer = await ctx.elicit(
            "who?", {"type": "object", "properties": {"name": {"type": "string"}}}
        )
        return f"{sampled['content']['text']} / {answer.action} {answer.content}"

    @app.resource("weather://stations", mime_type="text/plain")
    def stations() -> str:
        return "blindern, flesland"

    @app.resource("weather://cities/{city}", mime_type="text/plain")
    def city(city: str, uri: str) -> str:
        return f"{city} read as {uri}"

    @app.prompt()
    def plan_trip(city: str) -> str:
        """Plan a trip."""
        return f"Plan a weekend in {city}."

    @app.completion(prompt="plan_trip", argument="city")
    def complete_city(value: str) -> list[str]:
        return [c for c in ("Oslo", "Bergen", "Bodø") if c.startswith(value)]

    @app.completion(resource="weather://cities/{city}", argument="city")
    def complete_template_city(value: str) -> list[str]:
        return [c for c in ("Tromsø", "Trondheim") if c.startswith(value)]

    return app


def notes_app() -> McpServerApp:
    """A mounted app without a prefix."""
    app = McpServerApp(name="notes")

    @app.tool()
    def note(text: str) -> str:
        return f"noted: {text}"

    @app.resource("notes://all")
    def all_notes() -> str:
        return "one, two"

    return app


@dataclass
class Seen:
    notifications: list[Any]
    logs: list[Any]

    async def on_message(self, message: Any) -> None:
        self.notifications.append(message)

    async def on_log(self, params: Any) -> None:
        self.logs.append(params)

    def of_type(self, kind: type) -> list[Any]:
        return [n for n in self.notifications if isinstance(n, kind)]


async def on_sampling(context: Any, params: Any) -> types.CreateMessageResult:
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text="hi from the model"),
        model="test-model",
        stop_reason="endTurn",
    )


async def on_elicitation(context: Any, params: Any) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"name": "Ada"})


@contextlib.asynccontextmanager
async def official_client(url: str) -> AsyncIterator[tuple[ClientSession, Seen]]:
    seen = Seen([], [])
    async with streamable_http_client(url) as (read, write):
        async with ClientSession(
            read,
            write,
            read_timeout_seconds=10,
            sampling_callback=on_sampling,
            elicitation_callback=on_elicitation,
            logging_callback=seen.on_log,
            message_handler=seen.on_message,
        ) as session:
            await session.initialize()
            yield session, seen


async def test_official_client_uses_a_composed_app_over_streamable_http():
    parent = McpServerApp(name="hub")

    @parent.tool()
    def hello() -> str:
        return "hello from the hub"

    weather, notes = weather_app(), notes_app()
    parent.mount(weather, prefix="weather")
    parent.mount(notes)
    async with asyncio.timeout(30), serving(parent) as (url, _):
        assert weather.started  # the parent's start started it
        async with official_client(url) as (session, seen):
            tools = {tool.name for tool in (await session.list_tools()).tools}
            assert tools == {"hello", "weather_forecast", "weather_ask_user", "note"}

            progress: list[float] = []

            async def on_progress(value: float, total: float | None, message: str | None) -> None:
                progress.append(value)

            result = await session.call_tool(
                "weather_forecast", {"city": "Oslo"}, progress_callback=on_progress
            )
            assert texts(result) == ["Oslo: sunny (station blindern)"]
            assert progress == [1]
            assert [log.data for log in seen.logs] == ["forecast for Oslo"]
            asked = await session.call_tool("weather_ask_user", {})
            assert texts(asked) == ["hi from the model / accept {'name': 'Ada'}"]
            assert texts(await session.call_tool("note", {"text": "x"})) == ["noted: x"]

            uris = {str(r.uri) for r in (await session.list_resources()).resources}
            assert uris == {"weather://weather/stations", "notes://all"}
            templates = (await session.list_resource_templates()).resource_templates
            assert [t.uri_template for t in templates] == ["weather://weather/cities/{city}"]
            read = await session.read_resource("weather://weather/stations")
            assert read.contents[0].text == "blindern, flesland"
            read = await session.read_resource("weather://weather/cities/Oslo")
            # the mounted function sees its own URI; the client, the one it asked for
            assert read.contents[0].text == "Oslo read as weather://cities/Oslo"
            assert str(read.contents[0].uri) == "weather://weather/cities/Oslo"
            assert (await session.read_resource("notes://all")).contents[0].text == "one, two"

            prompts = [p.name for p in (await session.list_prompts()).prompts]
            assert prompts == ["weather_plan_trip"]
            prompt = await session.get_prompt("weather_plan_trip", {"city": "Oslo"})
            assert prompt.messages[0].content.text == "Plan a weekend in Oslo."

            done = await session.complete(
                types.PromptReference(type="ref/prompt", name="weather_plan_trip"),
                {"name": "city", "value": "B"},
            )
            assert done.completion.values == ["Bergen", "Bodø"]
            done = await session.complete(
                types.ResourceTemplateReference(
                    type="ref/resource", uri="weather://weather/cities/{city}"
                ),
                {"name": "city", "value": "Tr"},
            )
            assert done.completion.values == ["Tromsø", "Trondheim"]

            # a resource update of the mounted app reaches the subscriber, prefixed
            await session.subscribe_resource("weather://weather/stations")
            await weather.subscriptions.notify_updated("weather://stations")
            await wait_until(
                lambda: bool(seen.of_type(types.ResourceUpdatedNotification)),
                "the resource update",
            )
            update = seen.of_type(types.ResourceUpdatedNotification)[0]
            assert str(update.params.uri) == "weather://weather/stations"

            # a tool added to the mounted app at run time arrives as list_changed
            @weather.tool()
            def radar(city: str) -> str:
                return f"radar over {city}"

            await wait_until(
                lambda: bool(seen.of_type(types.ToolListChangedNotification)),
                "tools/list_changed",
            )
            tools = {tool.name for tool in (await session.list_tools()).tools}
            assert "weather_radar" in tools
            radar_result = await session.call_tool("weather_radar", {"city": "Bergen"})
            assert texts(radar_result) == ["radar over Bergen"]

            # prompts and resources too; a completion added at run time is routed
            @weather.prompt()
            def pack(city: str) -> str:
                return f"Pack for {city}."

            @weather.completion(prompt="pack", argument="city")
            def complete_pack(value: str) -> list[str]:
                return [f"{value}vik"]

            weather.catalog.unregister_resource("weather://stations")
            await wait_until(
                lambda: (
                    bool(seen.of_type(types.PromptListChangedNotification))
                    and bool(seen.of_type(types.ResourceListChangedNotification))
                ),
                "prompts/list_changed and resources/list_changed",
            )
            prompts = [p.name for p in (await session.list_prompts()).prompts]
            assert prompts == ["weather_plan_trip", "weather_pack"]
            uris = {str(r.uri) for r in (await session.list_resources()).resources}
            assert uris == {"notes://all"}
            done = await session.complete(
                types.PromptReference(type="ref/prompt", name="weather_pack"),
                {"name": "city", "value": "Nar"},
            )
            assert done.completion.values == ["Narvik"]
    assert not weather.started  # stopped with the parent


# guards, interceptors, exception handlers ---------------------------------------------


async def test_parent_pipeline_runs_outside_the_mounted_apps_own(connect):
    order: list[str] = []

    def guard(label: str, allow: bool = True) -> Any:
        def check(ctx: Any) -> bool:
            order.append(f"{label} guard sees {ctx.tool_name}")
            return allow

        check.__name__ = f"{label}_guard"
        return check

    class Around(Middleware):
        def __init__(self, label: str) -> None:
            self.label = label

        async def on_call_tool(self, context: MiddlewareContext, call_next: CallNext) -> Any:
            order.append(f"{self.label} in")
            try:
                return await call_next(context)
            finally:
                order.append(f"{self.label} out")

    child = McpServerApp(name="child")

    @child.tool()
    @use_guards(guard("child"))
    @use_middleware(Around("child"))
    def work() -> str:
        order.append("tool")
        return "done"

    parent = McpServerApp(name="parent")
    parent.mount(child, prefix="c", guards=[guard("parent")], interceptors=[Around("parent")])
    async with connect(parent) as client:
        result = await client.call_tool("c_work")
        assert result.content[0].text == "done"
    assert order == [
        "parent guard sees c_work",
        "parent in",
        "child guard sees work",  # the mounted app's own guards see its own names
        "child in",
        "tool",
        "child out",
        "parent out",
    ]


async def test_a_parent_guard_refuses_before_the_mounted_app_runs(connect):
    ran: list[str] = []
    child = McpServerApp(name="child")

    @child.tool()
    def work() -> str:
        ran.append("tool")
        return "done"

    def closed(ctx: Any) -> bool:
        return False

    parent = McpServerApp(name="parent")
    parent.mount(child, prefix="c", guards=[closed])
    async with connect(parent) as client:
        with pytest.raises(
            McpCallError, match="Guard 'closed' denied the call for 'c_work'"
        ) as err:
            await client.call_tool("c_work")
    assert err.value.code == -32603 and err.value.data == {"type": "FORBIDDEN", "guard": "closed"}
    assert ran == []


async def test_exception_handlers_try_the_mounted_apps_first_then_the_parents(connect):
    handled: list[str] = []

    class ChildHandler:
        handles = (ValueError,)

        def catch(self, exc: Exception, ctx: Any) -> str:
            handled.append("child")
            return f"child handled {exc}"

    def parent_handler(exc: Exception, ctx: Any) -> str:
        handled.append("parent")
        return f"parent handled {type(exc).__name__}"

    child = McpServerApp(name="child")

    @child.tool()
    @use_exception_handlers(ChildHandler())
    def fail(kind: str) -> str:
        raise ValueError("bad value") if kind == "value" else KeyError(kind)

    parent = McpServerApp(name="parent")
    parent.mount(child, prefix="c", exception_handlers=[parent_handler])
    async with connect(parent) as client:
        value = await client.call_tool("c_fail", {"kind": "value"})
        key = await client.call_tool("c_fail", {"kind": "key"})
    assert value.content[0].text == "child handled bad value"
    assert key.content[0].text == "parent handled KeyError"
    assert handled == ["child", "parent"]


# lifespans ----------------------------------------------------------------------------


def app_with_life(name: str, events: list[str]) -> McpServerApp:
    app = McpServerApp(name=name)

    @app.lifespan
    async def life() -> AsyncIterator[str]:
        events.append(f"start {name}")
        yield name
        events.append(f"stop {name}")

    @app.tool()
    async def whose(ctx: McpToolContext) -> str:
        return str(ctx.lifespan_context)

    return app


async def test_mounted_lifespans_start_after_the_parents_and_stop_in_reverse(connect):
    events: list[str] = []
    parent = app_with_life("parent", events)
    parent.mount(app_with_life("a", events), prefix="a")
    parent.mount(app_with_life("b", events), prefix="b")
    assert parent.needs_startup
    async with connect(parent) as client:
        assert events == ["start parent", "start a", "start b"]
        # each tool sees its own app's lifespan context
        assert (await client.call_tool("whose")).content[0].text == "parent"
        assert (await client.call_tool("a_whose")).content[0].text == "a"
        assert (await client.call_tool("b_whose")).content[0].text == "b"
    assert events[3:] == ["stop b", "stop a", "stop parent"]


def region_of(ctx: McpToolContext) -> str:
    """A provider (module level: the annotations are strings, read at registration)."""
    return f"{ctx.lifespan_context['region']} (via Depends)"


async def test_a_mounted_app_failing_to_start_stops_what_had_started():
    """Its failure stops the parent's and the earlier mounts' lifespans at once, in reverse
    (they were left running, stopped later by the garbage collector's tracebacks)."""
    events: list[str] = []
    parent = app_with_life("parent", events)
    started = app_with_life("a", events)
    parent.mount(started, prefix="a")
    broken = McpServerApp(name="broken")

    @broken.lifespan
    async def life() -> AsyncIterator[None]:
        raise RuntimeError("database unreachable")
        yield

    parent.mount(broken, prefix="b")
    with pytest.raises(RuntimeError, match="database unreachable"):
        await parent.start()
    assert events == ["start parent", "start a", "stop a", "stop parent"]
    assert not parent.started and not started.started


async def test_a_mounted_tools_state_and_depends_come_from_its_own_app(connect):
    """``State``/``Depends`` of a mounted function read the mounted app's lifespan state
    (and its context's), not the parent's; the parent's own tools keep the parent's."""

    def make(name: str) -> McpServerApp:
        app = McpServerApp(name=name)

        @app.lifespan
        async def life() -> AsyncIterator[dict[str, str]]:
            yield {"region": f"{name}-region"}

        @app.tool()
        async def where(
            region: Annotated[str, State("region")],
            via: Annotated[str, Depends(region_of)],
        ) -> str:
            return f"{region}; {via}"

        return app

    parent = make("parent")
    parent.mount(make("inner"), prefix="inner")
    async with connect(parent) as client:
        own = (await client.call_tool("where")).content[0].text
        mounted = (await client.call_tool("inner_where")).content[0].text
    assert own == "parent-region; parent-region (via Depends)"
    assert mounted == "inner-region; inner-region (via Depends)"


async def test_mounting_into_a_started_app_starts_the_mounted_one(connect):
    events: list[str] = []
    parent = McpServerApp(name="parent")
    async with connect(parent) as client:
        late = app_with_life("late", events)
        await parent.mount(late, prefix="late").wait_started()
        assert late.started
        assert (await client.call_tool("late_whose")).content[0].text == "late"
    assert events == ["start late", "stop late"]


async def test_a_needless_app_needs_no_startup_until_something_mounted_needs_it():
    parent = McpServerApp(name="parent")
    parent.mount(notes_app())
    assert not parent.needs_startup
    parent.mount(app_with_life("x", []), prefix="x")
    assert parent.needs_startup


# live mount vs snapshot import --------------------------------------------------------


async def test_mount_follows_changes_and_import_keeps_a_snapshot(connect):
    source = notes_app()
    parent = McpServerApp(name="parent")
    parent.mount(source, prefix="live")
    parent.import_app(source, prefix="copy")
    assert {t.name for t in parent.catalog.list_tools()} == {"live_note", "copy_note"}
    assert [repr(m) for m in parent.mounts] == [
        "<Mount of 'notes' prefix='live' (live)>",
        "<Mount of 'notes' prefix='copy' (imported)>",
    ]

    @source.tool()
    def later() -> str:
        return "later"

    source.catalog.unregister_tool("note")

    @source.prompt()
    def greet() -> str:
        return "hi"

    source.catalog.unregister_resource("notes://all")
    async with connect(parent) as client:
        tools = {t.name for t in await client.list_tools()}
        assert tools == {"live_later", "copy_note"}
        assert [p.name for p in await client.list_prompts()] == ["live_greet"]
        assert [str(r.uri) for r in await client.list_resources()] == ["notes://copy/all"]
        assert (await client.call_tool("copy_note", {"text": "y"})).content[0].text == "noted: y"


async def test_a_runtime_entry_with_a_raw_json_schema_is_mounted(connect):
    source = McpServerApp(name="backend")
    parent = McpServerApp(name="parent")
    parent.mount(source, prefix="b")

    async def echo(**arguments: Any) -> str:
        return f"echo {arguments['word']}"

    schema = {"type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"]}
    source.catalog.register_tool(ToolEntry("echo", echo, schema, description="Echo a word."))
    async with connect(parent) as client:
        (tool,) = await client.list_tools()
        assert tool.name == "b_echo" and tool.input_schema == schema
        assert (await client.call_tool("b_echo", {"word": "x"})).content[0].text == "echo x"
        source.catalog.unregister_tool("echo")
        assert await client.list_tools() == []


async def test_nested_mounts_compose_prefixes_and_follow_changes_two_levels_down(connect):
    inner, middle, outer = notes_app(), McpServerApp(name="middle"), McpServerApp(name="outer")
    middle.mount(inner, prefix="in")
    outer.mount(middle, prefix="mid")
    assert [t.name for t in outer.catalog.list_tools()] == ["mid_in_note"]
    assert [r.uri for r in outer.catalog.list_resources()] == ["notes://mid/in/all"]

    @inner.tool()
    def deep() -> str:
        return "deep"

    async with connect(outer) as client:
        assert (await client.call_tool("mid_in_deep")).content[0].text == "deep"


async def test_a_sync_tool_changing_a_mounted_catalog_from_a_worker_thread_reaches_the_parent(
    connect,
):
    source = McpServerApp(name="source")

    @source.tool()
    def grow() -> str:  # runs in a worker thread
        source.catalog.register_tool(lambda: "grown", name="grown")
        return "ok"

    parent = McpServerApp(name="parent")
    parent.mount(source, prefix="s")
    async with connect(parent) as client:
        await client.call_tool("s_grow")
        assert (await client.call_tool("s_grown")).content[0].text == "grown"


async def test_detaching_a_mount_takes_its_entries_away_and_stops_following(connect):
    source, parent = weather_app(), McpServerApp(name="parent")
    mount = parent.mount(source, prefix="w")
    async with connect(parent) as client:
        assert len(await client.list_tools()) == 2
        mount.detach()
        assert await client.list_tools() == []
        assert await client.list_prompts() == [] and await client.list_resources() == []
        assert parent.catalog.list_completions() == [] and parent.mounts == []

        @source.tool()
        def later() -> str:
            return "later"

        assert await client.list_tools() == []


# conflicts ----------------------------------------------------------------------------


def parent_with_note() -> McpServerApp:
    parent = McpServerApp(name="parent")

    @parent.tool("note")
    def own_note(text: str) -> str:
        return f"parent's: {text}"

    return parent


async def test_a_clash_with_on_conflict_error_mounts_nothing():
    parent = parent_with_note()
    with pytest.raises(ValueError, match="tool 'note'"):
        parent.mount(notes_app(), on_conflict="error")
    assert [t.name for t in parent.catalog.list_tools()] == ["note"]
    assert parent.catalog.list_resources() == [] and parent.mounts == []


async def test_on_conflict_ignore_keeps_and_replace_overrides_the_parents_entry(connect):
    kept, replaced = parent_with_note(), parent_with_note()
    kept.mount(notes_app(), on_conflict="ignore")
    replaced.mount(notes_app())  # the catalog's default: replace
    async with connect(kept) as client:
        assert (await client.call_tool("note", {"text": "a"})).content[0].text == "parent's: a"
    async with connect(replaced) as client:
        assert (await client.call_tool("note", {"text": "a"})).content[0].text == "noted: a"


async def test_a_runtime_clash_under_on_conflict_error_keeps_the_parents_entry(caplog):
    parent = parent_with_note()
    source = McpServerApp(name="source")
    parent.mount(source, on_conflict="error")
    with caplog.at_level(logging.WARNING, logger="mcpkit.server"):
        source.catalog.register_tool(lambda text: f"source's: {text}", name="note")
    assert parent.catalog.get_tool("note").fn("a") == "parent's: a"
    assert "mounted tool 'note' not served" in caplog.text


async def test_importing_an_app_whose_lifespan_fills_its_catalog_warns_and_mount_serves_it(
    connect, caplog
):
    """As a proxy's catalog is the backend's, read when it starts: ``import_app`` (FastMCP's
    ``import_server``) copied nothing and said nothing."""

    def filled_at_start() -> McpServerApp:
        app = McpServerApp(name="filled")

        @app.lifespan
        async def life() -> AsyncIterator[None]:
            app.catalog.register_tool(lambda: "from the lifespan", name="late")
            yield

        return app

    parent = McpServerApp(name="parent")
    with caplog.at_level(logging.WARNING, logger="mcpkit.server"):
        parent.import_app(filled_at_start(), prefix="copy")
        parent.import_app(notes_app(), prefix="notes")  # offers something: no warning
    assert caplog.text.count("copied nothing") == 1
    assert "import_app('filled') copied nothing" in caplog.text and "mount() it" in caplog.text
    parent.mount(filled_at_start(), prefix="live")
    async with connect(parent) as client:
        assert {t.name for t in await client.list_tools()} == {"notes_note", "live_late"}


# refusals -----------------------------------------------------------------------------


def test_mounting_an_app_into_itself_or_a_cycle_is_refused():
    a, b, c = McpServerApp(name="a"), McpServerApp(name="b"), McpServerApp(name="c")
    with pytest.raises(MountCycleError, match="into itself"):
        a.mount(a, prefix="self")
    with pytest.raises(MountCycleError, match="into itself"):
        a.import_app(a, prefix="self")
    a.mount(b, prefix="b")
    b.mount(c, prefix="c")
    with pytest.raises(MountCycleError, match="mount cycle"):
        c.mount(a, prefix="a")
    with pytest.raises(MountCycleError, match="mount cycle"):
        c.import_app(a, prefix="a")
    assert c.mounts == []


def test_bad_mount_arguments_are_refused_clearly():
    parent = McpServerApp(name="parent")
    with pytest.raises(ValueError, match="letters, digits"):
        parent.mount(notes_app(), prefix="has space")
    with pytest.raises(ValueError, match="letters, digits"):
        parent.mount(notes_app(), prefix="")
    with pytest.raises(TypeError, match="only an McpServerApp"):
        parent.mount(object())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="on_conflict"):
        parent.mount(notes_app(), on_conflict="merge")  # type: ignore[arg-type]


def test_what_users_mount_instead_of_an_app_says_which_app_to_mount():
    from mcpkit import mcp_server, mcp_tool
    from mcpkit.proxy import McpProxy
    from mcpkit.transports.http import create_asgi_app

    @mcp_server(name="cls")
    class Served:
        @mcp_tool()
        def hello(self) -> str:
            return "hi"

    parent = McpServerApp(name="parent")
    with pytest.raises(TypeError, match=re.escape("mount McpServerApp(Served)")):
        parent.mount(Served, prefix="s")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"not McpProxy: mount its \.app"):
        parent.mount(McpProxy(["python", "server.py"]), prefix="p")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"not McpAsgiApp: mount its \.app"):
        parent.mount(create_asgi_app(notes_app()), prefix="a")  # type: ignore[arg-type]
    assert parent.mounts == []


# the documentation's examples ---------------------------------------------------------


def test_the_documented_example_composes_as_documented():
    page = (Path(__file__).resolve().parents[2] / "docs" / "composition.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", page, re.S)
    namespace: dict[str, Any] = {}
    for block in blocks:
        exec(compile(block, "docs/composition.md", "exec"), namespace)
    hub = namespace["hub"]
    assert {t.name for t in hub.catalog.list_tools()} == {"weather_forecast", "note"}
    assert [t.uri_template for t in hub.catalog.list_resource_templates()] == [
        "weather://weather/cities/{city}"
    ]
    assert [m.prefix for m in hub.mounts] == ["weather", None, "admin"]
    assert hub.mounts[2].pipeline.guards == (namespace["only_admins"],)


# the renaming rules -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("uri", "prefixed"),
    [
        ("weather://cities/{city}", "weather://w/cities/{city}"),
        ("file:///etc/hosts", "file://w//etc/hosts"),
        ("urn:isbn:0451450523", "urn:w/isbn:0451450523"),
        ("https://example.com/a?b=c", "https://w/example.com/a?b=c"),
        ("relative/path", "w/relative/path"),
        ("{+path}", "w/{+path}"),
    ],
)
def test_prefixed_uris_round_trip(uri: str, prefixed: str) -> None:
    assert prefix_uri("w", uri) == prefixed
    assert unprefix_uri("w", prefixed) == uri
    assert prefix_uri(None, uri) == uri


def test_prefixed_names_round_trip_and_foreign_names_are_not_unprefixed():
    assert prefix_name("weather", "forecast") == "weather_forecast"
    assert unprefix_name("weather", "weather_forecast") == "forecast"
    assert unprefix_name("weather", "other_forecast") is None
    assert unprefix_uri("weather", "weather://other/x") is None


async def test_mounted_entries_serve_the_stateless_2026_era_too(connect):
    parent = McpServerApp(name="hub")
    parent.mount(weather_app(), prefix="weather")
    async with connect(parent, protocol_version="2026-07-28") as client:
        result = await client.call_tool("weather_forecast", {"city": "Bergen"})
        assert result.content[0].text == "Bergen: sunny (station blindern)"
        read = await client.read_resource("weather://weather/cities/Bodø")
        assert read.contents[0].text == "Bodø read as weather://cities/Bodø"
        done = await client.complete(
            {"type": "ref/prompt", "name": "weather_plan_trip"}, "city", "O"
        )
        assert done.completion.values == ["Oslo"]


# mask_error_details across a mount: an app's flag holds for its own tools wherever they are
# served, and the serving app's for every tool it serves -------------------------------------

MASKED = re.compile(r"Tool '(\w+)' failed \(error id [0-9a-f]{12}\); see the server log")


def leaky_app(name: str, **options: Any) -> McpServerApp:
    app = McpServerApp(name=name, **options)

    @app.tool()
    def leak() -> str:
        raise RuntimeError(f"{name}'s password=hunter2")

    @app.tool()
    def refuse() -> str:
        raise ToolError(f"{name} refuses on purpose")

    return app


async def texts_of_calls(client: Any, *tools: str) -> list[str]:
    results = [await client.call_tool(tool) for tool in tools]
    assert all(result.is_error for result in results)
    return [result.content[0].text for result in results]


async def test_a_mounted_apps_mask_error_details_holds_for_its_tools_in_the_parent(connect):
    parent = leaky_app("parent")
    parent.mount(leaky_app("child", mask_error_details=True), prefix="child")
    async with connect(parent) as client:
        own, mounted, refused = await texts_of_calls(client, "leak", "child_leak", "child_refuse")
    assert own == "parent's password=hunter2"  # the parent does not mask its own
    assert MASKED.fullmatch(mounted) and "hunter2" not in mounted
    assert MASKED.fullmatch(mounted)[1] == "child_leak"  # type: ignore[index]
    assert refused == "child refuses on purpose"  # a ToolError's text is for the model


async def test_a_parent_that_masks_masks_the_tools_it_mounted_too(connect):
    """FastMCP lets a mounted server's error text through (warning that it may leak);
    mcpkit masks it: the parent is what faces the client."""
    parent = leaky_app("parent", mask_error_details=True)
    parent.mount(leaky_app("child"), prefix="child")
    async with connect(parent) as client:
        own, mounted, refused = await texts_of_calls(client, "leak", "child_leak", "child_refuse")
    assert MASKED.fullmatch(own) and MASKED.fullmatch(mounted)
    assert refused == "child refuses on purpose"


async def test_masking_follows_nested_mounts_imports_and_later_changes_of_the_flag(connect):
    inner, middle, outer = leaky_app("inner"), leaky_app("middle"), leaky_app("outer")
    middle.mount(inner, prefix="in")
    outer.mount(middle, prefix="mid")
    imported = leaky_app("imported", mask_error_details=True)
    outer.import_app(imported, prefix="imp")
    async with connect(outer) as client:
        before = await texts_of_calls(client, "mid_in_leak", "imp_leak")
        middle.mask_error_details = True  # read when a tool raises, not when it was mounted
        after = await texts_of_calls(client, "mid_in_leak", "mid_leak", "leak")
    assert before[0] == "inner's password=hunter2" and MASKED.fullmatch(before[1])
    assert [bool(MASKED.fullmatch(text)) for text in after] == [True, True, False]
