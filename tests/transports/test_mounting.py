"""mcpkit's ASGI app mounted at ``/tools`` inside FastAPI and Starlette, served by uvicorn
on real sockets: the mount prefix in routing and in the URLs the app hands out (legacy SSE
``endpoint``, protected-resource metadata), the MCP app's lifespan run by the host's, the
clear refusal when nobody ran it, and the host's own routes beside it. Driven by the
official ``mcp`` client."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import mcp_types as types
import pytest
from mcp import ClientSession
from mcp.client.sse import sse_client
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from mcpkit import McpServerApp, McpToolContext, mcp_lifespan, mcp_server, mcp_tool
from mcpkit._exceptions import InternalError
from mcpkit.auth import AuthResult, BearerAuthConfig, parse_www_authenticate
from mcpkit.server import McpCatalogManager
from mcpkit.transports.http import McpAsgiApp, StreamableHttpServerOptions, create_asgi_app
from tests.http_server import serve_asgi
from tests.interop.test_official_sdk_http import official_http_client
from tests.legacy_sse_client import LegacyStream

fastapi = pytest.importorskip("fastapi")
starlette_apps = pytest.importorskip("starlette.applications")
from starlette.responses import JSONResponse
from starlette.routing import Mount, Route

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")

WAIT = 10.0
STATUS_URI = "lifespan://status"
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


@mcp_server(name="mounted", version="1.0.0")
class Mounted:
    """A server whose lifespan sets state a tool reads and registers a resource."""

    def __init__(self, catalog: McpCatalogManager) -> None:
        self.catalog = catalog
        self.phase = "never started"

    @mcp_lifespan
    async def life(self) -> AsyncIterator[dict[str, str]]:
        self.phase = "running"
        self.catalog.register_resource(
            lambda: "warm",
            uri=STATUS_URI,
            name="status",
            mime_type="text/plain",
            description="Registered by the lifespan",
        )
        yield {"db": "connected"}
        self.catalog.unregister_resource(STATUS_URI)
        self.phase = "stopped"

    @mcp_tool()
    async def db_state(self, ctx: McpToolContext) -> str:
        """What the lifespan set up."""
        return ctx.lifespan_context["db"]


@mcp_server(name="plain", version="1.0.0")
class Plain:
    """Nothing to start: no lifespan."""

    @mcp_tool()
    def add(self, a: int, b: int) -> int:
        return a + b


def mcp_app(*servers: Any, **fields: Any) -> McpAsgiApp:
    return create_asgi_app(
        McpServerApp(*(servers or (Mounted,))), StreamableHttpServerOptions(**fields)
    )


# -- the hosts ------------------------------------------------------------------------------


def fastapi_host(mcp: McpAsgiApp, *, run_lifespan: bool = True) -> Any:
    """FastAPI with its own lifespan, the MCP app's nested in it."""

    @contextlib.asynccontextmanager
    async def lifespan(api: Any) -> AsyncIterator[None]:
        async with mcp.lifespan(api):
            yield

    api = fastapi.FastAPI(lifespan=lifespan if run_lifespan else None)

    @api.get("/health")
    def health() -> dict[str, bool]:
        return {"ok": True}

    api.mount("/tools", mcp)
    return api


def starlette_host(mcp: McpAsgiApp, *, run_lifespan: bool = True) -> Any:
    """Starlette with its own lifespan around ``mcp.running()``."""

    async def health(request: Any) -> JSONResponse:
        return JSONResponse({"ok": True})

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        async with mcp.running():
            yield

    return starlette_apps.Starlette(
        routes=[Route("/health", health), Mount("/tools", app=mcp)],
        lifespan=lifespan if run_lifespan else None,
    )


HOSTS: dict[str, Callable[..., Any]] = {"fastapi": fastapi_host, "starlette": starlette_host}


@pytest.fixture(params=sorted(HOSTS))
def host(request: pytest.FixtureRequest) -> Callable[..., Any]:
    return HOSTS[request.param]


@contextlib.asynccontextmanager
async def hosted(asgi: Any) -> AsyncIterator[str]:
    """Serve a host app with uvicorn (its lifespan on); yields ``http://127.0.0.1:PORT``."""
    async with asyncio.timeout(30), serve_asgi(asgi, lifespan="on") as base:
        yield base


def texts(result: Any) -> list[str]:
    return [item.text for item in result.content]


# -- Streamable HTTP under the mount -----------------------------------------------------------


async def test_official_client_over_streamable_http_under_the_mount(host):
    mcp = mcp_app()
    server = mcp.app.instances[0]
    async with hosted(host(mcp)) as base:
        assert server.phase == "running"
        async with official_http_client(f"{base}/tools/mcp") as (session, _):
            assert {tool.name for tool in (await session.list_tools()).tools} == {"db_state"}
            assert texts(await session.call_tool("db_state", {})) == ["connected"]
            listed = await session.list_resources()
            assert [str(r.uri) for r in listed.resources] == [STATUS_URI]
            read = await session.read_resource(STATUS_URI)
            assert (
                isinstance(read.contents[0], types.TextResourceContents)
                and read.contents[0].text == "warm"
            )
        async with httpx.AsyncClient(timeout=WAIT) as http:
            assert (await http.get(f"{base}/health")).json() == {"ok": True}
            # the unprefixed path is the host's, not the MCP app's
            assert (await http.post(f"{base}/mcp", json=INIT, headers=ACCEPT)).status_code == 404
            # a wrong path under the mount (FastMCP's users land on /tools/mcp/mcp) says the
            # right one
            missed = await http.post(f"{base}/tools/mcp/mcp", json=INIT, headers=ACCEPT)
            assert missed.status_code == 404
            assert missed.text == "Not Found: the MCP endpoint is /tools/mcp"
    assert server.phase == "stopped"  # the host's shutdown ran the MCP app's


async def test_lifespan_passed_straight_to_fastapi():
    mcp = mcp_app()
    api = fastapi.FastAPI(lifespan=mcp.lifespan)
    api.mount("/tools", mcp)
    async with hosted(api) as base, official_http_client(f"{base}/tools/mcp") as (session, _):
        assert texts(await session.call_tool("db_state", {})) == ["connected"]
    assert mcp.app.instances[0].phase == "stopped"


async def test_engine_running_in_the_host_lifespan_serves_too():
    """``McpServerApp.running()`` (the engine alone) is enough for requests to be served."""
    mcp = mcp_app()

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        async with mcp.app.running():
            yield

    host = starlette_apps.Starlette(routes=[Mount("/tools", app=mcp)], lifespan=lifespan)
    async with hosted(host) as base, official_http_client(f"{base}/tools/mcp") as (session, _):
        assert texts(await session.call_tool("db_state", {})) == ["connected"]


# -- legacy SSE and WebSocket under the mount ---------------------------------------------------


async def test_legacy_sse_under_the_mount(host):
    async with hosted(host(mcp_app())) as base:
        async with (
            httpx.AsyncClient(timeout=WAIT) as http,
            LegacyStream(http, f"{base}/tools/mcp") as stream,
        ):
            assert stream.endpoint.startswith("/tools/mcp/messages?session_id=")
        async with (
            sse_client(f"{base}/tools/mcp/sse", timeout=WAIT) as (read, write),
            ClientSession(read, write, read_timeout_seconds=WAIT) as session,
        ):
            init = await session.initialize()  # its POST followed the endpoint event
            assert init.server_info.name == "mounted"
            assert texts(await session.call_tool("db_state", {})) == ["connected"]


async def test_websocket_under_the_mount():
    async with hosted(starlette_host(mcp_app())) as base:
        url = base.replace("http://", "ws://", 1) + "/tools/mcp/ws"
        async with connect(url, proxy=None, open_timeout=WAIT, close_timeout=1) as ws:
            await ws.send(json.dumps(INIT))
            async with asyncio.timeout(WAIT):
                reply = json.loads(await ws.recv())
            assert reply["id"] == 1 and reply["result"]["serverInfo"]["name"] == "mounted"


async def test_a_host_that_strips_the_prefix():
    """Hosts that take the prefix out of ``path`` (and put it in ``root_path``) route the
    same, and the ``endpoint`` event still carries the prefix."""
    mcp = mcp_app()

    async def stripping(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] in ("http", "websocket") and scope["path"].startswith("/tools/"):
            scope = {**scope, "path": scope["path"][len("/tools") :], "root_path": "/tools"}
        await mcp(scope, receive, send)

    async with hosted(stripping) as base:
        async with official_http_client(f"{base}/tools/mcp") as (session, _):
            assert texts(await session.call_tool("db_state", {})) == ["connected"]
        async with (
            httpx.AsyncClient(timeout=WAIT) as http,
            LegacyStream(http, f"{base}/tools/mcp") as stream,
        ):
            assert stream.endpoint.startswith("/tools/mcp/messages?session_id=")


# -- auth under the mount -----------------------------------------------------------------------


async def test_bearer_auth_metadata_under_the_mount(host):
    def verify(token: str) -> AuthResult:
        return (
            AuthResult(ok=True, subject="ada")
            if token == "good"
            else AuthResult.reject("bad token")
        )

    auth = BearerAuthConfig(verify=verify, authorization_servers=("https://as.example.test",))
    async with (
        hosted(host(mcp_app(bearer_auth=auth))) as base,
        httpx.AsyncClient(timeout=WAIT) as http,
    ):
        refused = await http.post(f"{base}/tools/mcp", json=INIT, headers=ACCEPT)
        assert refused.status_code == 401
        challenge = parse_www_authenticate(refused.headers.get_list("www-authenticate"))[0]
        metadata_url = challenge.params["resource_metadata"]
        assert metadata_url == f"{base}/tools/.well-known/oauth-protected-resource/mcp"
        document = await http.get(metadata_url)
        assert document.status_code == 200 and document.json()["resource"] == f"{base}/tools/mcp"
        assert (
            await http.get(f"{base}/tools/.well-known/oauth-protected-resource")
        ).status_code == 200
        accepted = await http.post(
            f"{base}/tools/mcp", json=INIT, headers={**ACCEPT, "authorization": "Bearer good"}
        )
        assert accepted.status_code == 200, accepted.text


# -- not started ---------------------------------------------------------------------------------


async def test_a_mount_whose_lifespan_did_not_run_answers_a_clear_error(host, caplog):
    mcp = mcp_app()
    caplog.set_level(logging.ERROR, logger="mcpkit.http")
    async with (
        hosted(host(mcp, run_lifespan=False)) as base,
        httpx.AsyncClient(timeout=WAIT) as http,
    ):
        for _ in range(2):
            answer = await http.post(f"{base}/tools/mcp", json=INIT, headers=ACCEPT)
            assert answer.status_code == 500
            assert answer.headers["content-type"] == "application/json"
            error = answer.json()["error"]
            assert error["code"] == -32603
            assert (
                "lifespan=mcp.lifespan" in error["message"] and "mcp.running()" in error["message"]
            )
        sse = await http.get(f"{base}/tools/mcp/sse", headers={"accept": "text/event-stream"})
        assert sse.status_code == 500 and "lifespan has not run" in sse.json()["error"]["message"]
        assert (await http.get(f"{base}/health")).json() == {"ok": True}  # the host is fine
        with pytest.raises(InvalidStatus) as refused:
            async with connect(
                base.replace("http://", "ws://", 1) + "/tools/mcp/ws", proxy=None, open_timeout=WAIT
            ):
                pass
        # uvicorn carries the same JSON-RPC error as the handshake's HTTP answer
        assert refused.value.response.status_code == 500
        assert b"lifespan has not run" in refused.value.response.body
    refusals = [
        r
        for r in caplog.records
        if r.name == "mcpkit.http" and "lifespan has not run" in r.getMessage()
    ]
    assert len(refusals) == 1  # logged once, however many requests
    assert mcp.app.instances[0].phase == "never started"


async def test_an_app_without_lifespans_starts_on_its_first_request(host):
    mcp = mcp_app(Plain)
    async with (
        hosted(host(mcp, run_lifespan=False)) as base,
        official_http_client(f"{base}/tools/mcp") as (session, _),
    ):
        assert texts(await session.call_tool("add", {"a": 2, "b": 40})) == ["42"]
    assert mcp.app.started


async def test_requests_after_shutdown_get_503():
    mcp = mcp_app(Plain)
    async with mcp.running():
        pass
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": json.dumps(INIT).encode(), "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    headers = [(b"host", b"127.0.0.1"), *((k.encode(), v.encode()) for k, v in ACCEPT.items())]
    scope = {
        "type": "http",
        "method": "POST",
        "path": "/tools/mcp",
        "root_path": "/tools",
        "headers": headers,
    }
    await mcp(scope, receive, send)
    assert sent[0]["status"] == 503
    assert "shut down" in json.loads(sent[1]["body"])["error"]["message"]


# -- two MCP apps in one host, and a host reached under the wrong name ------------------------


async def test_two_mcp_apps_in_one_fastapi_app_each_under_its_prefix():
    """docs/mounting.md's recipe: both lifespans in the host's, one mount with a trailing
    slash, each app reached at its own endpoint (with or without the trailing slash)."""
    first, second = mcp_app(), mcp_app(Plain)

    @contextlib.asynccontextmanager
    async def lifespan(api: Any) -> AsyncIterator[None]:
        async with first.running(), second.running():
            yield

    api = fastapi.FastAPI(lifespan=lifespan)
    api.mount("/db", first)
    api.mount("/math/", second)
    async with hosted(api) as base:
        async with official_http_client(f"{base}/db/mcp") as (session, _):
            assert texts(await session.call_tool("db_state", {})) == ["connected"]
        async with official_http_client(f"{base}/math/mcp/") as (session, _):
            assert {tool.name for tool in (await session.list_tools()).tools} == {"add"}
            assert texts(await session.call_tool("add", {"a": 1, "b": 2})) == ["3"]
    assert first.app.instances[0].phase == "stopped"


async def test_a_host_listing_its_public_name_says_so_to_a_local_request():
    """docs/mounting.md's FastAPI example lists api.example.com, so trying it on 127.0.0.1
    is refused: the answer said only "Host not allowed: 127.0.0.1:PORT"."""
    from mcpkit.transports.http import TransportSecuritySettings

    mcp = mcp_app(
        Plain, transport_security=TransportSecuritySettings(allowed_hosts=("api.example.com",))
    )
    api = fastapi.FastAPI(lifespan=mcp.lifespan)
    api.mount("/tools", mcp)
    async with hosted(api) as base, httpx.AsyncClient(timeout=WAIT) as http:
        answer = await http.post(f"{base}/tools/mcp", json=INIT, headers=ACCEPT)
        assert answer.status_code == 421
        message = answer.json()["error"]["message"]
        assert message.startswith("Host not allowed: 127.0.0.1:")
        assert "only the names in allowed_hosts are" in message
        assert "TransportSecuritySettings(allowed_hosts=...)" in message


@pytest.mark.parametrize(
    ("failure", "traceback"),
    [(RuntimeError("db refused"), True), (InternalError("backend 'x' unavailable"), False)],
)
async def test_a_failed_start_up_is_reported_to_the_server_and_logged(caplog, failure, traceback):
    """The ASGI server hears of it (and exits); mcpkit's own errors say what failed in one
    line, anything else comes with its traceback."""
    app = McpServerApp("demo")

    @app.lifespan
    async def life():
        raise failure
        yield

    asgi = create_asgi_app(app)
    sent: list[dict[str, Any]] = []
    messages = iter([{"type": "lifespan.startup"}])

    async def receive() -> dict[str, Any]:
        return next(messages)

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    with caplog.at_level(logging.ERROR, logger="mcpkit"):
        await asgi({"type": "lifespan", "asgi": {"version": "3.0"}}, receive, send)
    assert sent == [{"type": "lifespan.startup.failed", "message": str(failure)}]
    [record] = [r for r in caplog.records if "startup failed" in r.getMessage()]
    assert (record.exc_info is not None) is traceback
    assert traceback or record.getMessage() == f"startup failed: {failure}"
