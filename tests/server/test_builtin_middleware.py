"""The built-in middleware ``Logging``, ``Timing``, ``RateLimit`` and ``ResponseCache``
through the real client, attached to components (``use_middleware``) and app-wide
(``McpServerApp(middleware=...)``): in memory and over real HTTP on 127.0.0.1, in the
handshake era and in 2026-07-28. Rate limits per bearer-token principal use real signed
tokens. The old names (``mcpkit.server.interceptors``) still work, with a warning."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from mcpkit import McpCallError, McpClient, McpServerApp, mcp_resource, mcp_server, mcp_tool
from mcpkit.auth import BearerAuthConfig, JwtVerifier
from mcpkit.client import HttpClientTransportOptions
from mcpkit.server import set_metadata, use_interceptors, use_middleware
from mcpkit.server.middleware import (
    RATE_LIMITED,
    CallTiming,
    Logging,
    Middleware,
    MiddlewareContext,
    RateLimit,
    ResponseCache,
    Timing,
    TokenBucketTable,
    by_identity,
    by_session,
    cacheable,
)
from tests.auth._support import ISSUER, FakeClock, Signer
from tests.conftest import connected
from tests.http_server import serving

HANDSHAKE = "2025-11-25"
MODERN = "2026-07-28"
ERAS = [HANDSHAKE, MODERN]
#: Attached to the components (``use_middleware``) or given to the app.
PLACES = ["component", "app"]
AUDIENCE = "https://mcp.example.test/mcp"


@dataclass
class Probes:
    """What the server under test records, and the middleware it runs."""

    clock: FakeClock
    limiter: RateLimit
    cache: ResponseCache
    calls: dict[str, int] = field(default_factory=dict)
    timings: list[CallTiming] = field(default_factory=list)

    def count(self, name: str) -> int:
        self.calls[name] = self.calls.get(name, 0) + 1
        return self.calls[name]


def limited_only(place: str, key: str) -> Any:
    """App-wide the limit applies to every call: keyed to the ``limited`` tool alone, as a
    user limits some tools; on a component it is that component's."""
    by = {"identity": by_identity, "session": by_session}[key]
    if place == "component":
        return key
    return lambda context: by(context) if context.name == "limited" else None


def build(
    place: str = "component", *, per_identity: bool = False, key: str = "identity"
) -> tuple[McpServerApp, Probes]:
    clock = FakeClock(1000.0)
    probes = Probes(
        clock,
        RateLimit(rate=1.0, burst=2, key=limited_only(place, key), clock=clock),
        ResponseCache(ttl=30, max_entries=8, per_identity=per_identity, clock=clock),
    )
    timing = Timing(probes.timings.append, meta_key="example/timing")
    logs = Logging(logger="tests.calls")
    on_one = use_middleware if place == "component" else (lambda *_: lambda target: target)

    @mcp_server(name="intercepted")
    @on_one(logs, timing)
    class Intercepted:
        @mcp_tool()
        @on_one(probes.limiter)
        def limited(self) -> str:
            return f"served {probes.count('limited')}"

        @mcp_tool()
        @cacheable()
        @on_one(probes.cache)
        def lookup(self, city: str, days: int = 1) -> str:
            return f"{city}/{days} #{probes.count('lookup')}"

        @mcp_tool()
        @cacheable()
        @on_one(probes.cache)
        def flaky(self) -> dict[str, Any]:
            n = probes.count("flaky")
            return {"content": [{"type": "text", "text": f"try {n}"}], "isError": n < 3}

        @mcp_tool()
        @cacheable()
        @on_one(probes.cache)
        def broken(self) -> str:
            probes.count("broken")
            raise RuntimeError("no luck")

        @mcp_tool(annotations={"readOnlyHint": True})
        @on_one(probes.cache)
        def uncached(self) -> str:
            return f"fresh #{probes.count('uncached')}"

        @mcp_tool()
        def timed(self) -> dict[str, Any]:
            return {"content": [{"type": "text", "text": "timed"}]}

        @mcp_tool()
        async def whoami(self, secret: str = "") -> str:
            return "me"

        @mcp_resource("data://counter")
        @on_one(probes.cache)
        def counter(self) -> str:
            return f"counter #{probes.count('counter')}"

    everywhere = [logs, timing, probes.limiter, probes.cache] if place == "app" else []
    app = McpServerApp(Intercepted, middleware=everywhere)
    probes.cache.attach(app)
    return app, probes


def text(result: Any) -> str:
    return str(result.content[0].text)


# -- the ways in ----------------------------------------------------------------------------

Connect = Callable[..., contextlib.AbstractAsyncContextManager[McpClient]]


@contextlib.asynccontextmanager
async def in_memory(app: McpServerApp, era: str) -> AsyncIterator[McpClient]:
    async with connected(app, protocol_version=era) as client:
        yield client


@contextlib.asynccontextmanager
async def over_http(
    app: McpServerApp, era: str, **fields: Any
) -> AsyncIterator[Callable[..., contextlib.AbstractAsyncContextManager[McpClient]]]:
    """Serve ``app`` on a real port; yields a factory of clients (optionally with a token)."""
    async with serving(app, **fields) as (url, _):

        @contextlib.asynccontextmanager
        async def client(token: str | None = None) -> AsyncIterator[McpClient]:
            headers = {"authorization": f"Bearer {token}"} if token else {}
            options = HttpClientTransportOptions(endpoint=url, additional_headers=headers)
            mode = "modern" if era == MODERN else "legacy"
            async with McpClient.http(options, protocol_mode=mode, protocol_version=era) as c:
                yield c

        yield client


@contextlib.asynccontextmanager
async def through(transport: str, app: McpServerApp, era: str) -> AsyncIterator[McpClient]:
    if transport == "memory":
        async with in_memory(app, era) as client:
            yield client
    else:
        async with over_http(app, era) as make, make() as client:
            yield client


TRANSPORTS = ["memory", "http"]
CALLS = ("tools/call", "resources/read", "prompts/get")


# -- rate limiting ----------------------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("place", PLACES)
async def test_rate_limit_refuses_past_the_burst_with_retry_after(
    place: str, transport: str, era: str
) -> None:
    app, probes = build(place)
    async with through(transport, app, era) as client:
        assert text(await client.call_tool("limited")) == "served 1"
        assert text(await client.call_tool("limited")) == "served 2"
        with pytest.raises(McpCallError) as refused:
            await client.call_tool("limited")
        assert refused.value.code == RATE_LIMITED == -32029
        data = refused.value.data
        assert data["type"] == "RATE_LIMITED"
        assert data["retryAfter"] == pytest.approx(1.0)
        assert data["retryAfterMs"] == 1000
        assert (data["rate"], data["burst"]) == (1.0, 2)
        assert probes.calls["limited"] == 2  # the refused call never ran
        probes.clock.advance(0.5)
        with pytest.raises(McpCallError) as again:
            await client.call_tool("limited")
        assert again.value.data["retryAfterMs"] == 500
        probes.clock.advance(0.5)
        assert text(await client.call_tool("limited")) == "served 3"
    refusals = [t for t in probes.timings if t.name == "limited" and t.outcome == "refused"]
    assert len(refusals) == 2


@pytest.fixture(scope="module")
def signer() -> Signer:
    return Signer()


def protected(signer: Signer) -> BearerAuthConfig:
    verifier = JwtVerifier(jwks=signer.jwks(), issuer=ISSUER)
    return BearerAuthConfig(
        verify=verifier.verify, expected_resource=AUDIENCE, authorization_servers=(ISSUER,)
    )


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("place", PLACES)
async def test_rate_limit_is_per_principal_over_http(place: str, signer: Signer, era: str) -> None:
    app, probes = build(place)
    alice = signer.token(audience=AUDIENCE, subject="alice")
    alice_again = signer.token(audience=AUDIENCE, subject="alice")  # another token, same person
    bob = signer.token(audience=AUDIENCE, subject="bob")
    async with over_http(app, era, bearer_auth=protected(signer)) as make:
        async with make(alice) as first:
            await first.call_tool("limited")
            await first.call_tool("limited")
            with pytest.raises(McpCallError) as refused:
                await first.call_tool("limited")
            assert refused.value.code == RATE_LIMITED
        async with make(alice_again) as second:
            with pytest.raises(McpCallError):
                await second.call_tool("limited")  # a new session, the same principal
        async with make(bob) as other:
            assert text(await other.call_tool("limited")) == "served 3"
    assert len(probes.limiter.buckets) == 2


@pytest.mark.parametrize("place", PLACES)
async def test_rate_limit_by_session_in_memory(place: str) -> None:
    app, probes = build(place, key="session")
    async with in_memory(app, HANDSHAKE) as one, in_memory(app, HANDSHAKE) as two:
        await one.call_tool("limited")
        await one.call_tool("limited")
        with pytest.raises(McpCallError):
            await one.call_tool("limited")
        assert text(await two.call_tool("limited")) == "served 3"


def test_token_bucket_table_is_bounded_and_refills() -> None:
    clock = FakeClock(0.0)
    table = TokenBucketTable(rate=2.0, burst=3, max_keys=2, clock=clock)
    assert [table.take("a") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert table.take("a") == pytest.approx(0.5)
    table.take("b")
    table.take("c")  # a, the least recently used, is forgotten
    assert len(table) == 2
    assert table.take("a") == 0.0  # a full bucket again
    clock.advance(10)
    assert [table.take("c") for _ in range(3)] == [0.0, 0.0, 0.0]  # refilled to the burst only
    assert table.take("c") > 0
    with pytest.raises(ValueError):
        TokenBucketTable(rate=0, burst=1)
    with pytest.raises(ValueError):
        RateLimit(rate=1, key="everyone")  # type: ignore[arg-type]


# -- caching ----------------------------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("place", PLACES)
async def test_cache_answers_repeats_by_canonical_arguments(
    place: str, transport: str, era: str
) -> None:
    app, probes = build(place)
    async with through(transport, app, era) as client:
        first = text(await client.call_tool("lookup", {"city": "Oslo", "days": 2}))
        assert first == "Oslo/2 #1"
        # the same arguments in another order: the same call
        assert text(await client.call_tool("lookup", {"days": 2, "city": "Oslo"})) == first
        assert (
            text(await client.call_tool("lookup", {"city": "Bergen", "days": 2})) == "Bergen/2 #2"
        )
        assert text(await client.call_tool("lookup", {"city": "Oslo"})) == "Oslo/1 #3"
        assert (probes.cache.hits, probes.cache.misses) == (1, 3)
        probes.clock.advance(31)  # past the TTL
        assert text(await client.call_tool("lookup", {"city": "Oslo", "days": 2})) == "Oslo/2 #4"
        # resource reads are cached too
        read = await client.read_resource("data://counter")
        assert read.contents[0].text == "counter #1"
        assert (await client.read_resource("data://counter")).contents[0].text == "counter #1"


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("place", PLACES)
async def test_cache_never_keeps_errors(place: str, transport: str, era: str) -> None:
    app, probes = build(place)
    async with through(transport, app, era) as client:
        assert (await client.call_tool("flaky")).is_error
        assert (await client.call_tool("flaky")).is_error
        ok = await client.call_tool("flaky")
        assert not ok.is_error and text(ok) == "try 3"
        assert text(await client.call_tool("flaky")) == "try 3"  # the success is kept
        for _ in range(2):
            assert (await client.call_tool("broken")).is_error
        assert probes.calls["broken"] == 2
        # not marked: a read-only tool is not cached unless read_only_tools=True
        assert text(await client.call_tool("uncached")) == "fresh #1"
        assert text(await client.call_tool("uncached")) == "fresh #2"


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("place", PLACES)
async def test_cache_forgets_on_resource_update_and_list_changed(place: str, era: str) -> None:
    app, probes = build(place)
    async with in_memory(app, era) as client:
        assert (await client.read_resource("data://counter")).contents[0].text == "counter #1"
        assert text(await client.call_tool("lookup", {"city": "Oslo"})) == "Oslo/1 #1"
        await app.subscriptions.notify_updated("data://counter")
        assert (await client.read_resource("data://counter")).contents[0].text == "counter #2"
        assert text(await client.call_tool("lookup", {"city": "Oslo"})) == "Oslo/1 #1"

        @app.tool()
        def added() -> str:
            return "new"

        assert text(await client.call_tool("lookup", {"city": "Oslo"})) == "Oslo/1 #2"
        assert (await client.read_resource("data://counter")).contents[0].text == "counter #2"


@pytest.mark.parametrize("place", PLACES)
async def test_cache_read_only_tools_and_bounds(place: str) -> None:
    app, probes = build(place)
    cache = ResponseCache(read_only_tools=True, max_entries=2).attach(app)
    probes.cache.read_only_tools = True
    async with in_memory(app, HANDSHAKE) as client:
        assert text(await client.call_tool("uncached")) == "fresh #1"
        assert text(await client.call_tool("uncached")) == "fresh #1"
        for city in ("A", "B", "C"):
            await client.call_tool("lookup", {"city": city})
    assert len(probes.cache) <= probes.cache.max_entries == 8
    assert len(cache) == 0  # never used as an interceptor
    with pytest.raises(ValueError):
        ResponseCache(ttl=0)
    with pytest.raises(ValueError):
        ResponseCache(max_entries=0)


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("place", PLACES)
async def test_cache_per_identity_over_http(place: str, signer: Signer, era: str) -> None:
    app, probes = build(place, per_identity=True)
    alice = signer.token(audience=AUDIENCE, subject="alice")
    bob = signer.token(audience=AUDIENCE, subject="bob")
    async with over_http(app, era, bearer_auth=protected(signer)) as make:
        async with make(alice) as a, make(bob) as b:
            assert text(await a.call_tool("lookup", {"city": "Oslo"})) == "Oslo/1 #1"
            assert text(await b.call_tool("lookup", {"city": "Oslo"})) == "Oslo/1 #2"
            assert text(await a.call_tool("lookup", {"city": "Oslo"})) == "Oslo/1 #1"
            assert text(await b.call_tool("lookup", {"city": "Oslo"})) == "Oslo/1 #2"


# -- logging and timing -------------------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("place", PLACES)
async def test_one_log_line_per_call_without_argument_values(
    place: str, transport: str, era: str, caplog: pytest.LogCaptureFixture
) -> None:
    app, _ = build(place)
    caplog.set_level(logging.INFO, logger="tests.calls")
    async with through(transport, app, era) as client:
        await client.call_tool("whoami", {"secret": "hunter2"})
        await client.call_tool("broken")
        await client.read_resource("data://counter")
    lines = [r for r in caplog.records if r.name == "tests.calls" and r.mcp_method in CALLS]
    assert [(r.mcp_method, r.mcp_name, r.mcp_outcome) for r in lines] == [  # type: ignore[attr-defined]
        ("tools/call", "whoami", "ok"),
        ("tools/call", "broken", "error"),
        ("resources/read", "data://counter", "ok"),
    ]
    assert [r.levelno for r in lines] == [logging.INFO, logging.WARNING, logging.INFO]
    assert lines[0].getMessage().startswith("tools/call whoami ok in ")
    assert lines[0].getMessage().endswith(" ms")
    assert all("hunter2" not in r.getMessage() for r in lines)


async def test_log_line_with_arguments_when_asked(caplog: pytest.LogCaptureFixture) -> None:
    @mcp_server(name="logged")
    @use_middleware(Logging(logger="tests.args", include_arguments=True))
    class Logged:
        @mcp_tool()
        def echo(self, word: str, times: int = 1) -> str:
            return word * times

    caplog.set_level(logging.INFO, logger="tests.args")
    async with in_memory(McpServerApp(Logged), MODERN) as client:
        await client.call_tool("echo", {"word": "hi", "times": 2})
    (line,) = [r.getMessage() for r in caplog.records if r.name == "tests.args"]
    assert line.endswith('arguments={"times":2,"word":"hi"}')


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("place", PLACES)
async def test_timing_to_callback_and_meta(place: str, transport: str, era: str) -> None:
    app, probes = build(place)
    async with through(transport, app, era) as client:
        result = await client.call_tool("timed")
        plain = await client.call_tool("whoami")
    assert result.meta is not None
    assert result.meta["example/timing"]["durationMs"] >= 0
    # on a component a plain value is not turned into a result; app-wide it is one already
    assert ("example/timing" in (plain.meta or {})) is (place == "app")
    timings = [t for t in probes.timings if t.method in CALLS]
    assert [(t.method, t.name, t.outcome) for t in timings] == [
        ("tools/call", "timed", "ok"),
        ("tools/call", "whoami", "ok"),
    ]
    assert all(t.duration >= 0 for t in timings)


async def test_timing_feeds_a_metric_and_survives_a_broken_one() -> None:
    recorded: list[tuple[float, dict[str, str] | None]] = []

    class Histogram:
        def record(self, amount: float, attributes: dict[str, str] | None = None) -> None:
            recorded.append((amount, attributes))

    class Broken:
        def record(self, amount: float, attributes: dict[str, str] | None = None) -> None:
            raise RuntimeError("metrics backend down")

    @mcp_server(name="metered")
    @use_middleware(Timing(metric=Histogram()), Timing(metric=Broken()))
    class Metered:
        @mcp_tool()
        def work(self) -> str:
            return "done"

    async with in_memory(McpServerApp(Metered), HANDSHAKE) as client:
        assert text(await client.call_tool("work")) == "done"
    ((seconds, attributes),) = recorded
    assert seconds >= 0
    assert attributes == {"mcp.method": "tools/call", "mcp.name": "work", "mcp.outcome": "ok"}
    with pytest.raises(ValueError):
        Timing()


async def test_cacheable_overrides_the_cache_settings() -> None:
    clock = FakeClock(0.0)
    cache = ResponseCache(ttl=100, clock=clock)
    counts = {"short": 0, "never": 0}

    @mcp_server(name="overrides")
    @use_middleware(cache)
    class Overrides:
        @mcp_tool()
        @cacheable(ttl=5)
        def short(self) -> str:
            counts["short"] += 1
            return f"short #{counts['short']}"

        @mcp_resource("data://live")
        @cacheable(False)
        def never(self) -> str:
            counts["never"] += 1
            return f"live #{counts['never']}"

    async with in_memory(McpServerApp(Overrides), MODERN) as client:
        assert text(await client.call_tool("short")) == "short #1"
        clock.advance(4)
        assert text(await client.call_tool("short")) == "short #1"
        clock.advance(2)  # past its own 5 s, well within the cache's 100 s
        assert text(await client.call_tool("short")) == "short #2"
        for n in (1, 2):
            read = await client.read_resource("data://live")
            assert read.contents[0].text == f"live #{n}"  # type: ignore[union-attr]
    assert cache.invalidate("tool", "short") == 1
    assert len(cache) == 0
    with pytest.raises(ValueError):
        cacheable(ttl=0)


@pytest.mark.interop
@pytest.mark.parametrize("place", PLACES)
async def test_the_official_client_over_http(place: str, caplog: pytest.LogCaptureFixture) -> None:
    """What the built-ins do reaches any client as plain MCP: the official ``mcp`` client
    (Streamable HTTP) reads the rate limit's error code and ``data``, a cached answer, the
    timings and log lines of its calls."""
    from mcp.shared.exceptions import MCPError

    from tests.official_client import official_session

    app, probes = build(place)
    caplog.set_level(logging.INFO, logger="tests.calls")
    async with official_session(app) as session:
        for _ in range(2):
            assert not (await session.call_tool("limited", {})).is_error
        with pytest.raises(MCPError) as refused:
            await session.call_tool("limited", {})
        first = await session.call_tool("lookup", {"city": "Oslo"})
        again = await session.call_tool("lookup", {"city": "Oslo"})
        await session.call_tool("whoami", {})
    assert refused.value.error.code == RATE_LIMITED
    assert refused.value.error.data["retryAfterMs"] == 1000
    assert probes.calls["limited"] == 2
    assert first.content[0].text == again.content[0].text == "Oslo/1 #1"  # type: ignore[union-attr]
    assert (probes.cache.hits, probes.cache.misses) == (1, 1)
    timed = [(t.name, t.outcome) for t in probes.timings if t.method in CALLS]
    assert timed == [("limited", "ok")] * 2 + [("limited", "refused")] + [
        ("lookup", "ok"),
        ("lookup", "ok"),
        ("whoami", "ok"),
    ]
    logged = [
        r.mcp_name  # type: ignore[attr-defined]
        for r in caplog.records
        if r.name == "tests.calls" and r.mcp_method in CALLS  # type: ignore[attr-defined]
    ]
    assert logged == ["limited", "limited", "limited", "lookup", "lookup", "whoami"]


# -- the old names ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("LoggingInterceptor", Logging),
        ("TimingInterceptor", Timing),
        ("RateLimitInterceptor", RateLimit),
        ("ResponseCache", ResponseCache),
        ("cacheable", cacheable),
        ("RATE_LIMITED", RATE_LIMITED),
    ],
)
def test_an_old_name_warns_and_is_the_new_one(old: str, new: Any) -> None:
    import mcpkit.server.interceptors as old_module

    with pytest.warns(DeprecationWarning, match=rf"interceptors\.{old} is deprecated: use "):
        assert getattr(old_module, old) is new
    with pytest.raises(AttributeError):
        old_module.NoSuchInterceptor  # noqa: B018


async def test_an_old_interceptor_warns_at_registration_and_still_runs() -> None:
    seen: list[str] = []

    async def around(ctx: Any, call_next: Any) -> Any:
        seen.append(f"function {ctx.tool_name}")
        return await call_next()

    class Old:
        async def intercept(self, ctx: Any, call_next: Any) -> Any:
            seen.append(f"object {ctx.tool_name}")
            return await call_next()

    with pytest.warns(DeprecationWarning, match="interceptors .* are deprecated") as caught:

        @mcp_server(name="old")
        @use_interceptors(around, Old())
        class Legacy:
            @mcp_tool()
            def hello(self) -> str:
                return "hi"

    assert len(caught) == 2 and caught[0].filename == __file__  # at the decorator's line
    async with in_memory(McpServerApp(Legacy), HANDSHAKE) as client:
        assert text(await client.call_tool("hello")) == "hi"
    assert seen == ["function hello", "object hello"]


async def test_use_interceptors_takes_middleware_without_a_warning() -> None:
    class Upper(Middleware):
        async def on_call_tool(self, context: MiddlewareContext, call_next: Any) -> Any:
            assert context.component == context.name == "shout"
            assert context.get_metadata("loud") is True
            context.component_arguments = {"word": context.arguments["word"] + "!"}
            return str(await call_next(context)).upper()

    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")

        @mcp_server(name="new")
        class Shouting:
            @mcp_tool()
            @set_metadata("loud", True)
            @use_interceptors(Upper())
            def shout(self, word: str) -> str:
                return word

    async with in_memory(McpServerApp(Shouting), MODERN) as client:
        assert text(await client.call_tool("shout", {"word": "hey"})) == "HEY!"
