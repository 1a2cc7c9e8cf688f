"""``Header``, ``State`` and ``Depends`` parameters: left out of every schema, filled per
call on tools, resource templates and prompts, in memory and over real HTTP in both eras;
providers cached per call, their cleanup run last-opened-first after the call (also when it
fails or is cancelled); guards see the HTTP request scope."""

# No ``from __future__ import annotations``: the providers are local to the tests, and a
# string annotation naming a local function cannot be resolved.
import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Annotated, Any

import pytest

from mcpkit import (
    HttpClientTransportOptions,
    HttpTransportMode,
    McpCallError,
    McpClient,
    McpExecutionContext,
    McpServerApp,
    McpToolContext,
    RequestTimeoutError,
    mcp_lifespan,
    mcp_prompt,
    mcp_resource,
    mcp_server,
    mcp_tool,
    use_guards,
)
from mcpkit.server import Depends, Header, McpRequestScope, State
from tests.http_server import serving
from tests.waiting import wait_until

HANDSHAKE = "2025-11-25"
MODERN = "2026-07-28"


class Database:
    def __init__(self, name: str) -> None:
        self.name = name


class Ledger:
    """Given to the app as a provider: found by ``State[Ledger]``."""

    def __init__(self) -> None:
        self.entries: list[str] = []


def make_app(events: list[str]) -> McpServerApp:
    """An app whose tools, template and prompt take every kind of injected parameter."""
    opened: dict[str, int] = {"sessions": 0}

    def tenant_of(tenant: Annotated[str, Header("x-tenant")] = "public") -> str:
        events.append(f"tenant:{tenant}")
        return tenant

    async def open_session(
        tenant: Annotated[str, Depends(tenant_of)], db: State[Database]
    ) -> AsyncIterator[str]:
        opened["sessions"] += 1
        events.append("session:open")
        try:
            yield f"{db.name}/{tenant}#{opened['sessions']}"
        finally:
            events.append("session:close")

    def audit(ctx: McpToolContext, request: McpRequestScope | None) -> Iterator[str]:
        events.append("audit:open")
        yield f"{ctx.method}@{request.path if request is not None else 'no-http'}"
        events.append("audit:close")

    @mcp_server(name="injected")
    class Injected:
        @mcp_lifespan
        async def life(self) -> AsyncIterator[Any]:
            yield {"db": Database("main"), "region": "eu-north"}

        @mcp_tool()
        async def whoami(
            self,
            greeting: str,
            user_agent: Header[str] = "unknown",
            count: Header[int, "x-count"] = 0,  # noqa: F821 - the subscript form names the header
            region: State[str, "region"] = "",  # noqa: F821 - and the state
            session: Annotated[str, Depends(open_session)] = "",
            again: str = Depends(open_session),
            tenant: Annotated[str, Depends(tenant_of)] = "",
            trail: str = Depends(audit),
            ctx: McpToolContext = None,  # type: ignore[assignment]
        ) -> dict[str, Any]:
            events.append("tool")
            return {
                "greeting": greeting,
                "agent": user_agent.split("/")[0],
                "count": count,
                "region": region,
                "session": session,
                "same": session == again,
                "tenant": tenant,
                "trail": trail,
                "ctx": ctx is not None,
            }

        @mcp_tool()
        def needs_tenant(self, tenant: Annotated[str, Header("x-tenant")]) -> str:
            return tenant

        @mcp_tool()
        def ledger(self, book: State[Ledger], line: str) -> int:
            book.entries.append(line)
            return len(book.entries)

        @mcp_tool()
        async def failing(self, session: str = Depends(open_session)) -> str:
            events.append("tool:raise")
            raise RuntimeError("tool broke")

        @mcp_resource("notes://{topic}")
        async def note(
            self,
            topic: str,
            tenant: Annotated[str, Header("x-tenant")] = "public",
            db: State[Database] = None,
        ) -> str:
            return f"{topic} for {tenant} in {db.name}"

        @mcp_prompt()
        def greet(
            self,
            name: str,
            region: Annotated[str, State("region")],
            agent: Annotated[str | None, Header("x-agent")] = None,
        ) -> str:
            return f"Hello {name} from {region} via {agent}"

    return McpServerApp(Injected, providers=[Ledger()])


async def _schemas(client: McpClient) -> None:
    tools = {tool.name: tool for tool in await client.list_tools()}
    assert tools["whoami"].input_schema["properties"].keys() == {"greeting"}
    assert tools["whoami"].input_schema["required"] == ["greeting"]
    assert tools["needs_tenant"].input_schema["properties"] == {}
    assert tools["ledger"].input_schema["properties"].keys() == {"line"}
    prompts = {p.name: p for p in await client.list_prompts()}
    assert [a.name for a in prompts["greet"].arguments] == ["name"]


# in memory ---------------------------------------------------------------------------


async def test_in_memory_defaults_state_and_providers(connect):
    events: list[str] = []
    app = make_app(events)
    async with connect(app) as client:
        await _schemas(client)
        result = await client.call_tool("whoami", {"greeting": "hi"})
        data = result.structured_content
        assert data == {
            "greeting": "hi",
            "agent": "unknown",
            "count": 0,
            "region": "eu-north",
            "session": "main/public#1",
            "same": True,
            "tenant": "public",
            "trail": "tools/call@no-http",
            "ctx": True,
        }
        # one call: open_session ran once for two parameters, tenant_of once for three uses
        assert events == [
            "tenant:public",
            "session:open",
            "audit:open",
            "tool",
            "audit:close",
            "session:close",
        ]
        assert (await client.call_tool("ledger", {"line": "a"})).content[0].text == "1"
        assert (await client.call_tool("ledger", {"line": "b"})).content[0].text == "2"
        text = (await client.read_resource("notes://rust")).contents[0].text
        assert text == "rust for public in main"
        prompt = await client.get_prompt("greet", {"name": "Ada"})
        assert prompt.messages[0].content.text == "Hello Ada from eu-north via None"


async def test_missing_required_header_is_invalid_params_naming_it(connect):
    async with connect(make_app([])) as client:
        with pytest.raises(McpCallError) as missing:
            await client.call_tool("needs_tenant")
        assert missing.value.code == -32602
        assert "x-tenant" in missing.value.message
        assert missing.value.data == {"header": "x-tenant"}


async def test_cleanup_runs_when_the_tool_raises(connect):
    events: list[str] = []
    async with connect(make_app(events)) as client:
        result = await client.call_tool("failing")
        assert result.is_error and "tool broke" in result.content[0].text
    assert events == ["tenant:public", "session:open", "tool:raise", "session:close"]


async def test_cleanup_runs_when_the_call_is_cancelled(connect):
    events: list[str] = []
    started = asyncio.Event()

    async def resource() -> AsyncIterator[str]:
        events.append("open")
        try:
            yield "held"
        finally:
            events.append("close")

    async def inner(outer: str = Depends(resource)) -> AsyncIterator[str]:
        events.append("inner:open")
        yield outer
        events.append("inner:close")

    @mcp_tool
    async def forever(value: str = Depends(inner)) -> str:
        started.set()
        await asyncio.Event().wait()
        return value

    async with connect(McpServerApp(forever)) as client:
        call = asyncio.ensure_future(client.call_tool("forever", timeout=30))
        await asyncio.wait_for(started.wait(), 10)
        call.cancel()  # the client sends notifications/cancelled
        with pytest.raises(asyncio.CancelledError):
            await call
        await wait_until(lambda: "close" in events, "the provider's cleanup")
    # the cancellation is thrown into each provider at its yield, last opened first:
    # inner has no try/finally, so only the outer provider's cleanup line runs
    assert events == ["open", "inner:open", "close"]


async def test_cancelled_by_timeout_cleans_up_in_reverse_order(connect):
    events: list[str] = []

    def first() -> Iterator[str]:
        events.append("first:open")
        try:
            yield "1"
        finally:
            events.append("first:close")

    async def second() -> AsyncIterator[str]:
        events.append("second:open")
        try:
            yield "2"
        finally:
            events.append("second:close")

    @mcp_tool(timeout=0.2)
    async def slow(a: str = Depends(first), b: str = Depends(second)) -> str:
        await asyncio.Event().wait()
        return a + b

    async with connect(McpServerApp(slow)) as client:
        result = await client.call_tool("slow")
        assert result.is_error and "timed out" in result.content[0].text
    assert events == ["first:open", "second:open", "second:close", "first:close"]


async def test_request_timeout_on_the_client_side_cleans_up(connect):
    events: list[str] = []

    async def held() -> AsyncIterator[None]:
        events.append("open")
        try:
            yield None
        finally:
            events.append("close")

    @mcp_tool
    async def stuck(_: None = Depends(held)) -> str:
        await asyncio.Event().wait()
        return ""

    async with connect(McpServerApp(stuck)) as client:
        with pytest.raises(RequestTimeoutError):
            await client.call_tool("stuck", timeout=0.3)
        await wait_until(lambda: events == ["open", "close"], "cleanup after the cancellation")


def test_registration_errors_are_raised_early():
    def takes_plain(value: int) -> int:
        return value

    @mcp_tool
    def bad(x: int = Depends(takes_plain)) -> int:
        return x

    with pytest.raises(TypeError, match=r"provider .*takes_plain.*'value'"):
        McpServerApp(bad)

    def loop_a(b: Any = None) -> None: ...

    def loop_b(a: Any = Depends(loop_a)) -> None: ...  # noqa: B008

    loop_a.__defaults__ = (Depends(loop_b),)

    @mcp_tool
    def cyclic(x: Any = Depends(loop_a)) -> None: ...  # noqa: B008

    with pytest.raises(TypeError, match="Depends cycle"):
        McpServerApp(cyclic)


async def test_state_missing_is_an_internal_error(connect):
    @mcp_tool
    def lonely(db: State[Database]) -> str:
        return db.name

    async with connect(McpServerApp(lonely)) as client:
        with pytest.raises(McpCallError) as failed:
            await client.call_tool("lonely")
        assert failed.value.code == -32603
        assert "State[Database]" in failed.value.message


async def test_functions_without_markers_get_no_plan():
    @mcp_tool
    async def plain(x: int, ctx: McpToolContext = None) -> int:  # type: ignore[assignment]
        return x

    app = McpServerApp(plain, make_app([]).instances[0])
    assert app.catalog.get_tool("plain").injection is None
    assert app.catalog.get_tool("whoami").injection is not None


# over real HTTP, both eras ------------------------------------------------------------


def _http_client(url: str, era: str, headers: dict[str, str]) -> McpClient:
    options = HttpClientTransportOptions(
        endpoint=url,
        transport_mode=HttpTransportMode.STREAMABLE_HTTP,
        additional_headers=headers,
    )
    return McpClient.http(options, protocol_version=era)


@pytest.mark.parametrize("era", [HANDSHAKE, MODERN])
async def test_every_marker_over_streamable_http(era):
    events: list[str] = []
    app = make_app(events)
    headers = {"x-tenant": "acme", "x-count": "7", "user-agent": "probe/1.0", "x-agent": "cli"}
    async with asyncio.timeout(30), serving(app) as (url, _):
        async with _http_client(url, era, headers) as client:
            await _schemas(client)
            data = (await client.call_tool("whoami", {"greeting": "hey"})).structured_content
            assert data["agent"] == "probe"
            assert data["count"] == 7
            assert data["region"] == "eu-north"
            assert data["session"] == "main/acme#1" and data["same"] is True
            assert data["tenant"] == "acme"
            assert data["trail"] == "tools/call@/mcp"
            assert (await client.call_tool("needs_tenant")).content[0].text == "acme"
            text = (await client.read_resource("notes://go")).contents[0].text
            assert text == "go for acme in main"
            prompt = await client.get_prompt("greet", {"name": "Bo"})
            assert prompt.messages[0].content.text == "Hello Bo from eu-north via cli"
        assert events.count("session:open") == events.count("session:close") == 1


@pytest.mark.parametrize("era", [HANDSHAKE, MODERN])
async def test_missing_and_malformed_headers_over_http(era):
    async with asyncio.timeout(30), serving(make_app([])) as (url, _):
        async with _http_client(url, era, {"x-count": "many"}) as client:
            with pytest.raises(McpCallError) as missing:
                await client.call_tool("needs_tenant")
            assert missing.value.code == -32602 and '"x-tenant"' in missing.value.message
            with pytest.raises(McpCallError) as malformed:
                await client.call_tool("whoami", {"greeting": "x"})
            assert malformed.value.code == -32602 and '"x-count"' in malformed.value.message


@pytest.mark.parametrize("era", [HANDSHAKE, MODERN])
async def test_guards_see_the_request_scope(era):
    seen: list[McpExecutionContext] = []

    def record(ctx: McpExecutionContext) -> bool:
        seen.append(ctx)
        return ctx.request is None or ctx.request.headers.get("x-tenant") != "blocked"

    @mcp_server(name="scoped")
    @use_guards(record)
    class Scoped:
        @mcp_tool()
        def echo(self, text: str) -> str:
            return text

    app = McpServerApp(Scoped)
    async with asyncio.timeout(30), serving(app) as (url, _):
        async with _http_client(f"{url}?team=blue&team=red", era, {"x-tenant": "acme"}) as client:
            assert (await client.call_tool("echo", {"text": "hi"})).content[0].text == "hi"
        async with _http_client(url, era, {"x-tenant": "blocked"}) as client:
            with pytest.raises(McpCallError) as refused:
                await client.call_tool("echo", {"text": "hi"})
            assert refused.value.data["type"] == "FORBIDDEN"
    request = seen[0].request
    assert request is not None and not seen[0].is_connection
    assert request.method == "POST" and request.path == "/mcp"
    assert request.query == {"team": ("blue", "red")}
    assert request.client is not None and request.client[0] == "127.0.0.1"
    assert request.headers["x-tenant"] == "acme"
    with pytest.raises(TypeError):
        request.headers["x-tenant"] = "other"  # type: ignore[index]


async def test_guards_in_memory_have_no_request_scope(connect):
    seen: list[McpRequestScope | None] = []

    def record(ctx: McpExecutionContext) -> bool:
        seen.append(ctx.request)
        return True

    @mcp_server(name="local")
    @use_guards(record)
    class Local:
        @mcp_tool()
        def echo(self, text: str) -> str:
            return text

    async with connect(McpServerApp(Local)) as client:
        await client.call_tool("echo", {"text": "x"})
    assert seen == [None]
