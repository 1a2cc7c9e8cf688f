"""mcpkit's HTTP and WebSocket client transports against real servers.

* The official ``mcp`` SDK (2.3.0) ``MCPServer`` served by uvicorn on 127.0.0.1: Streamable
  HTTP (SSE and JSON response modes, stateful and stateless, resumable with an event store)
  and the legacy HTTP+SSE app; AUTO_DETECT against both.
* Small scripted Starlette apps for what a well-behaved server never does: redirects,
  listen-stream refusals, early-closed streams, oversized events, error statuses.
* A ``websockets`` server bridging to an mcpkit ``McpServerApp`` (the official SDK has no
  WebSocket server).

Every server runs in its own thread and event loop; every wait is bounded.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import threading
import time
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import mcp_types as types
import pytest
import uvicorn
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.streamable_http import EventCallback, EventMessage, EventStore
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from mcpkit import (
    ConnectionClosedError,
    McpCallError,
    McpClient,
    McpServerApp,
    McpToolContext,
    SessionExpiredError,
    TransportError,
    mcp_server,
    mcp_tool,
)
from mcpkit.client import (
    EndpointMemory,
    HttpClientTransportOptions,
    HttpRedirectPolicy,
    HttpRequestHeaderContext,
    HttpResponseChallengeContext,
    HttpStatusError,
    HttpTransportMode,
    LegacySseClientTransport,
    StreamableHttpClientTransport,
    connect_http,
    connect_websocket,
)
from mcpkit.client._http_factory import AutoDetectHttpTransport
from mcpkit.client._streamable_http import ListenStreamState
from mcpkit.server import serve_stream
from tests.waiting import wait_until

pytestmark = [
    pytest.mark.interop,
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

warnings.filterwarnings("ignore", module="mcp")

#: Upper bound for one test's client work.
TEST_TIMEOUT = 20.0
#: Upper bound for one awaited condition.
WAIT_TIMEOUT = 5.0
SAMPLING_ANSWER = "forty-two"

STREAMABLE = HttpTransportMode.STREAMABLE_HTTP


# =========================================================================================
# servers
# =========================================================================================


@contextlib.contextmanager
def serve(app: Any) -> Iterator[str]:
    """Serve an ASGI app on a free 127.0.0.1 port in a thread; yields ``http://127.0.0.1:PORT``."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        app, log_level="warning", lifespan="auto", timeout_graceful_shutdown=1, loop="asyncio"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("test server did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(5)
        if thread.is_alive():
            server.force_exit = True
            thread.join(5)
        sock.close()


class MemoryEventStore(EventStore):
    """Enough of an event store for the official server to make streams resumable."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str, Any]] = []

    async def store_event(self, stream_id: str, message: Any) -> str:
        event_id = str(len(self.events) + 1)
        self.events.append((event_id, stream_id, message))
        return event_id

    async def replay_events_after(
        self, last_event_id: str, send_callback: EventCallback
    ) -> str | None:
        index = next((i for i, e in enumerate(self.events) if e[0] == last_event_id), None)
        if index is None:
            return None
        stream_id = self.events[index][1]
        for event_id, stream, message in self.events[index + 1 :]:
            if stream == stream_id and message is not None:
                await send_callback(EventMessage(message, event_id))
        return stream_id


def official_server() -> MCPServer:
    server = MCPServer("official-http", version="2.3.0-test")

    @server.tool(description="Add two integers")
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool(description="Log each step and report progress")
    async def work(steps: int, ctx: Context) -> str:
        await ctx.info(f"starting {steps} steps")
        for step in range(1, steps + 1):
            await ctx.report_progress(step, steps, f"step {step}")
        return f"did {steps} steps"

    @server.tool(description="Ask the client's model")
    async def ask(question: str, ctx: Context) -> str:
        result = await ctx.session.create_message(
            [
                types.SamplingMessage(
                    role="user", content=types.TextContent(type="text", text=question)
                )
            ],
            max_tokens=20,
        )
        content = result.content
        return f"model says: {content.text if isinstance(content, types.TextContent) else content}"

    @server.tool(description="Take a while")
    async def slow(seconds: float) -> str:
        await asyncio.sleep(seconds)
        return "slept"

    @server.tool(description="Close the response stream midway, then finish")
    async def interrupted(ctx: Context) -> str:
        await ctx.info("before the break")
        await ctx.close_sse_stream()
        await asyncio.sleep(0.3)
        await ctx.info("after the break")
        return "finished after the break"

    @server.tool(description="Announce a tool-list change (unrelated to any request)")
    async def announce(ctx: Context) -> str:
        await ctx.session.send_tool_list_changed()
        return "announced"

    return server


@dataclass(frozen=True)
class Variant:
    name: str
    json_response: bool = False
    stateless: bool = False


VARIANTS = {
    v.name: v
    for v in (
        Variant("stateful-sse"),
        Variant("stateful-json", json_response=True),
        Variant("stateless-sse", stateless=True),
        Variant("stateless-json", json_response=True, stateless=True),
    )
}


@pytest.fixture(scope="module")
def official_urls() -> Iterator[dict[str, str]]:
    """One official Streamable HTTP server per variant (``/mcp``) and a legacy one (``/sse``)."""
    with contextlib.ExitStack() as stack:
        urls = {}
        for variant in VARIANTS.values():
            app = official_server().streamable_http_app(
                json_response=variant.json_response,
                stateless_http=variant.stateless,
                event_store=None if variant.stateless else MemoryEventStore(),
                retry_interval=None if variant.stateless else 100,
            )
            urls[variant.name] = stack.enter_context(serve(app)) + "/mcp"
        urls["legacy"] = stack.enter_context(serve(official_server().sse_app())) + "/sse"
        yield urls


def options(
    url: str, mode: HttpTransportMode = STREAMABLE, **kw: Any
) -> HttpClientTransportOptions:
    return HttpClientTransportOptions(endpoint=url, transport_mode=mode, **kw)


@contextlib.asynccontextmanager
async def connected(opts: HttpClientTransportOptions, **kw: Any) -> AsyncIterator[McpClient]:
    # These tests are about the handshake-era transports (sessions, the GET listen stream,
    # resumption); the official 2.3.0 server also speaks 2026-07-28, which ``auto`` would pick.
    kw.setdefault("protocol_mode", "legacy")
    client = connect_http(opts, **kw)
    async with asyncio.timeout(TEST_TIMEOUT):
        async with client:
            yield client


async def sampling(params: dict[str, Any]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": {"type": "text", "text": SAMPLING_ANSWER},
        "model": "test-model",
        "stopReason": "endTurn",
    }


def text_of(result: Any) -> str:
    return result.content[0].text


# =========================================================================================
# Streamable HTTP against the official server
# =========================================================================================


@pytest.mark.parametrize("variant", list(VARIANTS))
async def test_streamable_roundtrip(official_urls: dict[str, str], variant: str) -> None:
    v = VARIANTS[variant]
    async with connected(options(official_urls[variant], stateless=v.stateless)) as client:
        transport = client.session.stream
        assert isinstance(transport, StreamableHttpClientTransport)
        assert client.server_info is not None
        assert client.server_info.server_info.name == "official-http"
        assert transport.protocol_version == client.protocol_version == "2025-11-25"
        assert (transport.session_id is None) == v.stateless
        assert {t.name for t in await client.list_tools()} >= {"add", "work", "ask", "slow"}
        assert text_of(await client.call_tool("add", {"a": 2, "b": 3})) == "5"
        await client.ping()
        if v.stateless:
            assert transport.listen_state == ListenStreamState.OFF


@pytest.mark.parametrize("variant", ["stateful-sse", "stateless-sse"])
async def test_notifications_on_the_post_stream_reach_callbacks(
    official_urls: dict[str, str], variant: str
) -> None:
    logs: list[dict[str, Any]] = []
    progress: list[tuple[float, float | None, str | None]] = []
    async with connected(
        options(official_urls[variant], stateless=VARIANTS[variant].stateless),
        logging_handler=logs.append,
    ) as client:
        result = await client.call_tool(
            "work", {"steps": 3}, progress=lambda p, t, m: progress.append((p, t, m))
        )
        assert text_of(result) == "did 3 steps"
        await wait_until(lambda: len(progress) == 3 and logs, "progress and log notifications")
    assert progress == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
    assert logs[0]["level"] == "info" and logs[0]["data"] == "starting 3 steps"


async def test_sampling_request_on_the_post_stream(official_urls: dict[str, str]) -> None:
    async with connected(
        options(official_urls["stateful-sse"]), sampling_handler=sampling
    ) as client:
        result = await client.call_tool("ask", {"question": "meaning of life?"})
    assert text_of(result) == f"model says: {SAMPLING_ANSWER}"


@pytest.mark.parametrize("variant", ["stateful-sse", "stateful-json"])
async def test_a_long_call_does_not_hold_up_a_ping(
    official_urls: dict[str, str], variant: str
) -> None:
    async with connected(options(official_urls[variant])) as client:
        slow = asyncio.create_task(client.call_tool("slow", {"seconds": 1.0}))
        await asyncio.sleep(0.05)
        started = time.monotonic()
        await client.ping(timeout=WAIT_TIMEOUT)
        assert time.monotonic() - started < 0.5
        assert not slow.done()
        assert text_of(await slow) == "slept"


async def test_resumes_a_stream_the_server_closed(official_urls: dict[str, str]) -> None:
    """SEP-1699 against the official server: it closes the POST stream after a priming event
    (retry 100 ms); the client comes back with GET + Last-Event-ID and gets the rest."""
    logs: list[Any] = []
    async with connected(
        options(official_urls["stateful-sse"]), logging_handler=logs.append
    ) as client:
        result = await client.call_tool("interrupted", {})
        assert text_of(result) == "finished after the break"
        await wait_until(lambda: len(logs) == 2, "both log messages")
    assert [entry["data"] for entry in logs] == ["before the break", "after the break"]


async def test_listen_stream_carries_unsolicited_messages(official_urls: dict[str, str]) -> None:
    changed: list[str] = []
    async with connected(
        options(official_urls["stateful-sse"]), on_list_changed=changed.append
    ) as client:
        transport = client.session.stream
        assert isinstance(transport, StreamableHttpClientTransport)
        assert transport.listen_state == ListenStreamState.OPEN
        assert text_of(await client.call_tool("announce", {})) == "announced"
        await wait_until(lambda: changed == ["tools"], "tools/list_changed")


async def test_close_deletes_the_session(official_urls: dict[str, str]) -> None:
    url = official_urls["stateful-sse"]
    async with connected(options(url)) as client:
        session_id = client.session.stream.session_id  # type: ignore[attr-defined]
        assert session_id
    async with httpx.AsyncClient(timeout=WAIT_TIMEOUT) as http:
        response = await http.post(
            url,
            headers={
                "Mcp-Session-Id": session_id,
                "MCP-Protocol-Version": "2025-11-25",
                "Accept": "application/json, text/event-stream",
            },
            json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
        )
    assert response.status_code == 404


async def test_an_expired_session_is_started_again(official_urls: dict[str, str]) -> None:
    url = official_urls["stateful-json"]
    async with connected(options(url)) as client:
        session_id = client.session.stream.session_id  # type: ignore[attr-defined]
        async with httpx.AsyncClient(timeout=WAIT_TIMEOUT) as http:
            response = await http.delete(
                url, headers={"Mcp-Session-Id": session_id, "MCP-Protocol-Version": "2025-11-25"}
            )
            assert response.status_code == 200
        # The official server answers 404: a new session, and the call goes through there.
        result = await client.call_tool("add", {"a": 1, "b": 1})
        assert result.content[0].text == "2"  # type: ignore[union-attr]
        assert client.session_id not in (None, session_id)
        await client.ping()


async def test_an_expired_session_fails_with_a_clear_error(official_urls: dict[str, str]) -> None:
    url = official_urls["stateful-json"]
    async with connected(options(url, renew_expired_session=False)) as client:
        session_id = client.session.stream.session_id  # type: ignore[attr-defined]
        async with httpx.AsyncClient(timeout=WAIT_TIMEOUT) as http:
            response = await http.delete(
                url, headers={"Mcp-Session-Id": session_id, "MCP-Protocol-Version": "2025-11-25"}
            )
            assert response.status_code == 200
        with pytest.raises(ConnectionClosedError, match="expired"):
            await client.call_tool("add", {"a": 1, "b": 1})
        with pytest.raises(ConnectionClosedError):
            await client.ping()


async def test_stateless_options_send_no_session(official_urls: dict[str, str]) -> None:
    seen: list[dict[str, str]] = []

    def record(context: HttpRequestHeaderContext, headers: dict[str, str]) -> None:
        seen.append({"method": context.method, **{k.lower(): v for k, v in headers.items()}})

    opts = options(official_urls["stateless-sse"], stateless=True, apply_per_request_headers=record)
    async with connected(opts) as client:
        await client.call_tool("add", {"a": 1, "b": 2})
    assert [s["method"] for s in seen] == ["POST"] * 3  # initialize, initialized, tools/call
    assert all("mcp-session-id" not in s for s in seen)
    assert seen[-1]["mcp-protocol-version"] == "2025-11-25"
    assert "mcp-protocol-version" not in seen[0]  # the initialize itself


# =========================================================================================
# legacy HTTP+SSE, and AUTO_DETECT
# =========================================================================================


async def test_legacy_sse(official_urls: dict[str, str]) -> None:
    logs: list[Any] = []
    progress: list[float] = []
    opts = options(official_urls["legacy"], HttpTransportMode.SSE)
    async with connected(opts, logging_handler=logs.append, sampling_handler=sampling) as client:
        transport = client.session.stream
        assert isinstance(transport, LegacySseClientTransport)
        assert transport.message_url is not None
        assert transport.message_url.startswith(
            official_urls["legacy"].removesuffix("/sse") + "/messages/"
        )
        assert text_of(await client.call_tool("add", {"a": 20, "b": 22})) == "42"
        result = await client.call_tool(
            "work", {"steps": 2}, progress=lambda p, t, m: progress.append(p)
        )
        assert text_of(result) == "did 2 steps"
        assert (
            text_of(await client.call_tool("ask", {"question": "?"}))
            == f"model says: {SAMPLING_ANSWER}"
        )
        await wait_until(lambda: progress == [1, 2] and logs, "progress and logs over SSE")


class CountingApp:
    """ASGI middleware counting (method, path) of the HTTP requests it passes on."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.seen: list[tuple[str, str]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            self.seen.append((scope["method"], scope["path"]))
        await self.app(scope, receive, send)


async def test_auto_detect_falls_back_to_legacy_sse_and_remembers() -> None:
    counting = CountingApp(official_server().sse_app())
    with serve(counting) as base:
        url = base + "/sse"
        memory = EndpointMemory()  # shared by both clients: the second skips the detection
        async with connected(HttpClientTransportOptions(url, endpoint_memory=memory)) as client:
            transport = client.session.stream
            assert isinstance(transport, AutoDetectHttpTransport)
            assert transport.mode is HttpTransportMode.SSE
            assert text_of(await client.call_tool("add", {"a": 1, "b": 1})) == "2"
        key = EndpointMemory.key(HttpClientTransportOptions(url))
        assert memory.detected_mode(key) is HttpTransportMode.SSE
        assert counting.seen[:2] == [("POST", "/sse"), ("GET", "/sse")]
        counting.seen.clear()
        async with connected(HttpClientTransportOptions(url, endpoint_memory=memory)) as client:
            assert text_of(await client.call_tool("add", {"a": 2, "b": 2})) == "4"
        assert ("POST", "/sse") not in counting.seen  # went straight to the remembered mode


async def test_auto_detect_picks_streamable_http(official_urls: dict[str, str]) -> None:
    url = official_urls["stateful-sse"]
    async with (
        asyncio.timeout(TEST_TIMEOUT),
        McpClient.http(url) as client,
    ):  # a bare URL: AUTO_DETECT
        stream = client.session.stream
        assert isinstance(stream, AutoDetectHttpTransport)
        assert stream.mode is HttpTransportMode.STREAMABLE_HTTP
        assert text_of(await client.call_tool("add", {"a": 3, "b": 4})) == "7"
    assert (
        stream.endpoint_memory.detected_mode(stream.memory_key) is HttpTransportMode.STREAMABLE_HTTP
    )


async def test_auto_detect_reports_a_server_that_is_neither() -> None:
    app = Starlette(
        routes=[Route("/x", lambda r: Response(status_code=404), methods=["GET", "POST"])]
    )
    with serve(app) as base, pytest.raises(TransportError, match="neither"):
        async with connected(HttpClientTransportOptions(base + "/x")):
            pass


# =========================================================================================
# redirects
# =========================================================================================


class Redirector:
    """Wraps an ASGI app: ``/old`` -> ``/mcp``, ``/away`` -> the same server under another
    origin (``localhost``), ``/loop`` -> itself."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.port = 0
        #: (Host, path, Authorization) of every HTTP request.
        self.seen: list[tuple[str, str, str | None]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
            self.seen.append((headers.get("host", ""), scope["path"], headers.get("authorization")))
        if scope["type"] == "http" and scope["path"] in ("/old", "/away", "/loop"):
            target = {
                "/old": "/mcp",
                "/away": f"http://localhost:{self.port}/mcp",
                "/loop": "/loop",
            }[scope["path"]]
            await Response(status_code=307, headers={"location": target})(scope, receive, send)
            return
        await self.app(scope, receive, send)


@pytest.fixture(scope="module")
def redirector() -> Iterator[Redirector]:
    redirector = Redirector(official_server().streamable_http_app(json_response=True))
    with serve(redirector) as base:
        redirector.port = int(base.rsplit(":", 1)[1])
        yield redirector


@pytest.fixture
def redirecting_url(redirector: Redirector) -> str:
    redirector.seen.clear()
    return f"http://127.0.0.1:{redirector.port}"


async def test_same_origin_redirect_is_followed(
    redirecting_url: str, redirector: Redirector
) -> None:
    opts = options(redirecting_url + "/old", additional_headers={"Authorization": "Bearer t"})
    async with connected(opts) as client:
        assert text_of(await client.call_tool("add", {"a": 1, "b": 2})) == "3"
    assert {path for _, path, _ in redirector.seen} == {"/old", "/mcp"}
    assert all(auth == "Bearer t" for _, _, auth in redirector.seen)


async def test_cross_origin_redirect_is_refused_by_default(redirecting_url: str) -> None:
    with pytest.raises(TransportError, match="another origin"):
        async with connected(options(redirecting_url + "/away")):
            pass


async def test_follow_all_follows_a_cross_origin_redirect_without_credentials(
    redirecting_url: str, redirector: Redirector
) -> None:
    opts = options(
        redirecting_url + "/away",
        redirect_policy=HttpRedirectPolicy.FOLLOW_ALL,
        additional_headers={"Authorization": "Bearer secret"},
    )
    async with connected(opts) as client:
        assert text_of(await client.call_tool("add", {"a": 2, "b": 2})) == "4"
    away = [auth for host, path, auth in redirector.seen if path == "/away"]
    there = [(host, auth) for host, path, auth in redirector.seen if path == "/mcp"]
    assert away and all(auth == "Bearer secret" for auth in away)
    assert there and all(host.startswith("localhost:") and auth is None for host, auth in there)


async def test_no_follow_surfaces_the_redirect(redirecting_url: str) -> None:
    opts = options(redirecting_url + "/old", redirect_policy=HttpRedirectPolicy.NO_FOLLOW)
    with pytest.raises(HttpStatusError) as info:
        async with connected(opts):
            pass
    assert info.value.status_code == 307


async def test_redirects_are_bounded(redirecting_url: str) -> None:
    with pytest.raises(TransportError, match="more than 2 redirects"):
        async with connected(options(redirecting_url + "/loop", max_redirects=2)):
            pass


# =========================================================================================
# scripted servers: what a well-behaved server does not do
# =========================================================================================


@dataclass
class Script:
    """A minimal Streamable HTTP server whose answers a test scripts.

    ``on_get(request, n)`` answers the n-th GET (0-based); ``on_call(request, message)``
    answers ``tools/call``; everything else is answered like a stateful server would.
    """

    on_get: Callable[[Request, int], Awaitable[Response]] | None = None
    on_call: Callable[[Request, dict[str, Any]], Awaitable[Response]] | None = None
    gets: list[dict[str, str]] = field(default_factory=list)
    get_times: list[float] = field(default_factory=list)
    posts: list[dict[str, Any]] = field(default_factory=list)
    deleted: bool = False

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/mcp", self.handle, methods=["GET", "POST", "DELETE"])])

    async def handle(self, request: Request) -> Response:
        if request.method == "DELETE":
            self.deleted = True
            return Response(status_code=200)
        if request.method == "GET":
            self.gets.append(dict(request.headers))
            self.get_times.append(time.monotonic())
            if self.on_get is None:
                return Response(status_code=405)
            return await self.on_get(request, len(self.gets) - 1)
        message = json.loads(await request.body())
        self.posts.append({"message": message, "headers": dict(request.headers)})
        method, request_id = message.get("method"), message.get("id")
        if method == "initialize":
            return JSONResponse(
                {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "result": {
                        "protocolVersion": "2025-11-25",
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": "scripted", "version": "0"},
                    },
                },
                headers={"mcp-session-id": "s-1"},
            )
        if request_id is None or method is None:
            return Response(status_code=202)
        if method == "tools/call" and self.on_call is not None:
            return await self.on_call(request, message)
        return JSONResponse({"jsonrpc": "2.0", "id": request_id, "result": {}})


def sse_response(*events: str, close: bool = True, hold: float = 0.0) -> StreamingResponse:
    async def body() -> AsyncIterator[bytes]:
        for event in events:
            yield event.encode()
        if hold:
            await asyncio.sleep(hold)

    return StreamingResponse(body(), media_type="text/event-stream")


def tool_result(request_id: Any, text: str) -> str:
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "result": {"content": [{"type": "text", "text": text}]},
        }
    )


@contextlib.asynccontextmanager
async def scripted(script: Script, **kw: Any) -> AsyncIterator[McpClient]:
    with serve(script.app()) as base:
        async with connected(options(base + "/mcp", **kw)) as client:
            yield client


@pytest.mark.parametrize(
    "status, content_type",
    [(405, None), (404, None), (400, None), (403, None), (200, "application/json")],
)
async def test_listen_stream_refusals_are_given_up_silently(
    status: int, content_type: str | None
) -> None:
    async def on_get(request: Request, n: int) -> Response:
        if content_type:
            return JSONResponse({"not": "sse"}, status_code=status)
        return Response(status_code=status)

    script = Script(on_get=on_get)
    async with scripted(script) as client:
        transport = client.session.stream
        assert transport.listen_state == ListenStreamState.UNSUPPORTED  # type: ignore[attr-defined]
        await client.ping()
        await asyncio.sleep(0.2)
    assert len(script.gets) == 1


@pytest.mark.parametrize("status", [429, 408, 503, 204])
async def test_listen_stream_retries_transient_answers(status: int) -> None:
    async def on_get(request: Request, n: int) -> Response:
        if n == 0:
            return Response(status_code=status, headers={"retry-after": "0"})
        return sse_response(": hello\n\n", "id: g1\ndata: \n\n", hold=5.0)

    script = Script(on_get=on_get)
    async with scripted(script) as client:
        transport = client.session.stream
        await wait_until(
            lambda: transport.listen_state == ListenStreamState.OPEN, "the listen stream"
        )  # type: ignore[attr-defined]
    assert len(script.gets) == 2
    assert script.gets[1]["mcp-session-id"] == "s-1"


async def test_listen_stream_reconnects_with_last_event_id() -> None:
    async def on_get(request: Request, n: int) -> Response:
        if n == 0:
            return sse_response("retry: 50\nid: ev-7\ndata: \n\n")  # then ends
        return sse_response(hold=5.0)

    script = Script(on_get=on_get)
    async with scripted(script):
        await wait_until(lambda: len(script.gets) == 2, "a reconnect")
    assert "last-event-id" not in script.gets[0]
    assert script.gets[1]["last-event-id"] == "ev-7"
    assert script.get_times[1] - script.get_times[0] >= 0.045


async def test_listen_stream_gives_up_after_bounded_attempts() -> None:
    async def on_get(request: Request, n: int) -> Response:
        return Response(status_code=503, headers={"retry-after": "0"})

    script = Script(on_get=on_get)
    async with scripted(script, max_reconnect_attempts=3) as client:
        transport = client.session.stream
        await wait_until(lambda: transport.listen_state == ListenStreamState.FAILED, "giving up")  # type: ignore[attr-defined]
    assert len(script.gets) == 4


async def test_post_stream_resumed_after_the_retry_delay() -> None:
    """The sse-retry conformance scenario in miniature."""
    pending: list[Any] = []

    async def on_call(request: Request, message: dict[str, Any]) -> Response:
        pending.append(message["id"])
        return sse_response("id: p1\nretry: 200\ndata: \n\n")

    async def on_get(request: Request, n: int) -> Response:
        if request.headers.get("last-event-id") == "p1" and pending:
            return sse_response(
                "id: p2\ndata: \n\n",
                f"event: message\nid: p3\ndata: {tool_result(pending[0], 'resumed')}\n\n",
                hold=5.0,
            )
        return sse_response(hold=5.0)

    script = Script(on_get=on_get, on_call=on_call)
    async with scripted(script, enable_listen_stream=False) as client:
        started = time.monotonic()
        result = await client.call_tool("anything", {})
        elapsed = time.monotonic() - started
    assert text_of(result) == "resumed"
    assert 0.19 <= elapsed < 1.5
    assert [g.get("last-event-id") for g in script.gets] == ["p1"]


async def test_a_stream_that_cannot_be_resumed_fails_its_request_only() -> None:
    async def on_call(request: Request, message: dict[str, Any]) -> Response:
        return sse_response("data: \n\n")  # no event id, then the stream ends

    script = Script(on_call=on_call)
    async with scripted(script) as client:
        with pytest.raises(McpCallError, match="ended the response stream"):
            await client.call_tool("anything", {})
        await client.ping()  # the connection is fine


@pytest.mark.parametrize("renew", [True, False], ids=["renewing", "not-renewing"])
async def test_a_stream_whose_session_is_forgotten_before_the_answer(renew: bool) -> None:
    async def on_call(request: Request, message: dict[str, Any]) -> Response:
        return sse_response("id: p1\nretry: 50\ndata: \n\n")  # ends before the answer

    async def on_get(request: Request, n: int) -> Response:
        if request.headers.get("last-event-id"):  # the resumption: the session is gone
            return JSONResponse({"error": "unknown session"}, status_code=404)
        return Response(status_code=405)

    script = Script(on_get=on_get, on_call=on_call)
    async with scripted(script, renew_expired_session=renew) as client:
        if renew:
            # Only this request's answer is lost (sending it again could run it twice);
            # the transport lives on, and the next 404 would start a new session.
            with pytest.raises(McpCallError, match="forgot the session before answering"):
                await client.call_tool("anything", {})
            await client.ping()
        else:
            with pytest.raises(SessionExpiredError):
                await client.call_tool("anything", {})
            with pytest.raises(SessionExpiredError):
                await client.ping()


async def test_an_oversized_event_fails_its_request() -> None:
    async def on_call(request: Request, message: dict[str, Any]) -> Response:
        return sse_response(f"id: 1\ndata: {tool_result(message['id'], 'x' * 5000)}\n\n")

    script = Script(on_call=on_call)
    async with scripted(script, max_sse_event_bytes=1000) as client:
        with pytest.raises(McpCallError, match="exceeds 1000 bytes"):
            await client.call_tool("anything", {})
        await client.ping()


async def test_an_http_error_status_fails_its_request_with_the_servers_error() -> None:
    async def on_call(request: Request, message: dict[str, Any]) -> Response:
        return JSONResponse(
            {"jsonrpc": "2.0", "id": None, "error": {"code": -32602, "message": "bad arguments"}},
            status_code=400,
        )

    script = Script(on_call=on_call)
    async with scripted(script) as client:
        with pytest.raises(McpCallError) as info:
            await client.call_tool("anything", {})
        assert info.value.code == -32602
        assert "bad arguments" in info.value.message and "HTTP 400" in info.value.message
        await client.ping()


async def test_json_batch_answer_is_delivered() -> None:
    async def on_call(request: Request, message: dict[str, Any]) -> Response:
        note = {
            "jsonrpc": "2.0",
            "method": "notifications/message",
            "params": {"level": "info", "data": "hi"},
        }
        return JSONResponse([note, json.loads(tool_result(message["id"], "batched"))])

    logs: list[Any] = []
    script = Script(on_call=on_call)
    with serve(script.app()) as base:
        async with connected(options(base + "/mcp"), logging_handler=logs.append) as client:
            assert text_of(await client.call_tool("anything", {})) == "batched"
            await wait_until(lambda: logs == [{"level": "info", "data": "hi"}], "the batched log")


async def test_headers_hooks_and_session_lifecycle() -> None:
    contexts: list[HttpRequestHeaderContext] = []
    responses: list[HttpResponseChallengeContext] = []

    def add_headers(context: HttpRequestHeaderContext, headers: dict[str, str]) -> None:
        contexts.append(context)
        headers["X-Trace"] = f"t{len(contexts)}"

    script = Script()
    async with scripted(
        script,
        additional_headers={"X-Static": "yes"},
        apply_per_request_headers=add_headers,
        observe_response_challenge=responses.append,
    ) as client:
        assert await client.request("tools/list") == {}
    init, initialized, call = (p["headers"] for p in script.posts)
    assert init["accept"] == "application/json, text/event-stream"
    assert init["content-type"] == "application/json"
    assert "mcp-session-id" not in init and "mcp-protocol-version" not in init
    assert initialized["mcp-session-id"] == call["mcp-session-id"] == "s-1"
    assert call["mcp-protocol-version"] == "2025-11-25"
    assert all(h["x-static"] == "yes" for h in (init, initialized, call))
    assert [c.method for c in contexts] == ["POST", "POST", "GET", "POST", "DELETE"]
    assert [r.status_code for r in responses] == [200, 202, 405, 200, 200]
    assert script.deleted


# =========================================================================================
# WebSocket
# =========================================================================================


@mcp_server(name="ws-demo", version="1.0.0")
class WsDemo:
    @mcp_tool()
    async def shout(self, ctx: McpToolContext, text: str) -> str:
        """Log the text, then return it in capitals."""
        await ctx.info(f"shouting {text}")
        return text.upper()


class _WsStream:
    """A server-side ``MessageStream`` over one websockets connection."""

    def __init__(self, ws: Any, kinds: list[type]) -> None:
        self.ws = ws
        self.kinds = kinds

    async def send(self, frame: bytes) -> None:
        await self.ws.send(frame.decode())

    async def receive(self) -> bytes | None:
        from websockets.exceptions import ConnectionClosed

        try:
            message = await self.ws.recv()
        except ConnectionClosed:
            return None
        self.kinds.append(type(message))
        return message.encode() if isinstance(message, str) else message

    async def aclose(self) -> None:
        await self.ws.close()


async def test_websocket_client_against_an_mcpkit_server() -> None:
    from websockets.asyncio.server import serve as ws_serve

    app = McpServerApp(WsDemo)
    await app.start()
    kinds: list[type] = []
    subprotocols: list[str | None] = []

    async def handler(ws: Any) -> None:
        subprotocols.append(ws.subprotocol)
        await serve_stream(app, _WsStream(ws, kinds))

    logs: list[Any] = []
    try:
        async with ws_serve(handler, "127.0.0.1", 0, subprotocols=["mcp"]) as server:
            port = next(iter(server.sockets)).getsockname()[1]
            async with asyncio.timeout(TEST_TIMEOUT):
                async with McpClient.websocket(
                    f"ws://127.0.0.1:{port}/", logging_handler=logs.append
                ) as client:
                    assert client.session.stream.subprotocol == "mcp"  # type: ignore[attr-defined]
                    assert text_of(await client.call_tool("shout", {"text": "hi"})) == "HI"
                    await wait_until(lambda: bool(logs), "the log notification")
    finally:
        await app.stop()
    assert subprotocols == ["mcp"]
    assert kinds and all(k is str for k in kinds)  # one text message per frame
    assert logs[0]["data"] == "shouting hi"


async def test_websocket_server_going_away_fails_pending_requests() -> None:
    from websockets.asyncio.server import serve as ws_serve

    async def handler(ws: Any) -> None:
        init = json.loads(await ws.recv())
        await ws.send(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": init["id"],
                    "result": {
                        "protocolVersion": "2025-11-25",
                        "capabilities": {},
                        "serverInfo": {"name": "dies", "version": "0"},
                    },
                }
            )
        )
        await ws.recv()  # notifications/initialized
        await ws.recv()  # the request it will never answer
        await ws.close(code=1011, reason="boom")

    async with ws_serve(handler, "127.0.0.1", 0, subprotocols=["mcp"]) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        async with asyncio.timeout(TEST_TIMEOUT):
            async with connect_websocket(f"ws://127.0.0.1:{port}/") as client:
                with pytest.raises(ConnectionClosedError, match="1011"):
                    await client.ping()
