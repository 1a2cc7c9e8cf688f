"""Each HTTP endpoint and each layer around it is an ASGI app of its own: the Streamable
HTTP endpoint serves a session when it is the whole server, the legacy SSE endpoints are
two plain ASGI callables, and the bearer auth layer and the connection guards wrap any
ASGI app (here a bare echo app). Real uvicorn on 127.0.0.1, real signed tokens."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from mcpkit import McpServerApp
from mcpkit.auth import current_auth
from mcpkit.auth._server import BearerAuthGate
from mcpkit.transports.http import StreamableHttpServerOptions
from mcpkit.transports.http._auth_layer import BearerAuthLayer, MetadataEndpoint
from mcpkit.transports.http._connection_guards import ConnectionGate
from mcpkit.transports.http._endpoint import HEADERS_SCOPE_KEY, request_headers
from mcpkit.transports.http._streamable.handler import StreamableHttpHandler
from tests.auth._support import Signer
from tests.auth.test_server_gate import AUDIENCE, make_config
from tests.http_server import serve_asgi
from tests.raw_asgi import send_json
from tests.transports._tools import CancellableTools
from tests.transports.test_connection_lifecycle import LifecycleTools
from tests.wire import initialize_request

WAIT = 5.0
VERSION = "2025-11-25"
ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
INIT = initialize_request(VERSION)

pytestmark = pytest.mark.timeout(60)


async def echo(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """A bare ASGI app: who the request runs as, and whether its headers were made once."""
    auth = current_auth()
    await send_json(
        send,
        200,
        {
            "subject": auth.subject if auth is not None else None,
            "scope_auth": getattr(scope.get("mcp.auth"), "subject", None),
            "header": request_headers(scope).get("x-probe"),
        },
    )


@pytest.fixture(scope="module")
def signer() -> Signer:
    """One key set for the module: generating an RSA key is slow."""
    return Signer()


def test_request_headers_are_made_once_per_scope() -> None:
    scope: dict[str, Any] = {"type": "http", "headers": [(b"x-probe", b"1")]}
    first = request_headers(scope)
    assert first == {"x-probe": "1"}
    assert scope[HEADERS_SCOPE_KEY] is first
    assert request_headers(scope) is first


async def test_the_streamable_endpoint_serves_a_session_as_the_whole_server() -> None:
    app = McpServerApp(LifecycleTools)
    await app.start()
    endpoint = StreamableHttpHandler(app.engine, StreamableHttpServerOptions())
    try:
        async with serve_asgi(endpoint) as url, httpx.AsyncClient(timeout=WAIT) as http:
            opened = await http.post(url, json=INIT, headers=ACCEPT)
            assert opened.status_code == 200, opened.text
            session = {"mcp-session-id": opened.headers["mcp-session-id"]}
            headers = {**ACCEPT, **session, "mcp-protocol-version": VERSION}
            call = {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "add", "arguments": {"a": 2, "b": 3}},
            }
            answered = await http.post(url, json=call, headers=headers)
            assert answered.json()["result"]["structuredContent"] == {"result": 5}
            assert len(app.connections) == 1
            ended = await http.delete(url, headers=headers)
            assert ended.status_code == 200
            assert len(app.connections) == 0
    finally:
        endpoint.close()
        await app.stop()


async def test_the_auth_layer_wraps_any_asgi_app(signer: Signer) -> None:
    gate = BearerAuthGate(make_config(signer), "/mcp")
    layered = BearerAuthLayer(echo, gate)
    token = signer.token(audience=AUDIENCE, subject="dana")
    async with serve_asgi(layered) as url, httpx.AsyncClient(timeout=WAIT) as http:
        refused = await http.get(f"{url}/mcp")
        assert refused.status_code == 401
        assert "resource_metadata=" in refused.headers["www-authenticate"]
        accepted = await http.get(
            f"{url}/mcp", headers={"authorization": f"Bearer {token}", "x-probe": "p"}
        )
        assert accepted.status_code == 200
        assert accepted.json() == {"subject": "dana", "scope_auth": "dana", "header": "p"}
        forged = await http.get(f"{url}/mcp", headers={"authorization": "Bearer not-a-jwt"})
        assert forged.status_code == 401
        preflight = await http.options(f"{url}/mcp")  # CORS preflights carry no token
        assert preflight.status_code == 200 and preflight.json()["subject"] is None


async def test_the_metadata_endpoint_is_an_asgi_app_too(signer: Signer) -> None:
    gate = BearerAuthGate(make_config(signer), "/mcp")
    async with serve_asgi(MetadataEndpoint(gate)) as url, httpx.AsyncClient(timeout=WAIT) as http:
        document = await http.get(f"{url}/.well-known/oauth-protected-resource/mcp")
        assert document.status_code == 200
        assert document.json()["resource"] == AUDIENCE


async def test_connection_guards_wrap_any_asgi_app() -> None:
    def probe_is_open(ctx: Any) -> bool:
        return bool(ctx.headers.get("x-probe") == "open")

    app = McpServerApp(CancellableTools)
    gate = ConnectionGate.for_engine(
        app.engine, StreamableHttpServerOptions(connection_guards=(probe_is_open,))
    )
    assert gate is not None
    async with serve_asgi(gate.wrap(echo)) as url, httpx.AsyncClient(timeout=WAIT) as http:
        allowed = await http.get(url, headers={"x-probe": "open"})
        assert allowed.status_code == 200 and allowed.json()["header"] == "open"
        refused = await http.get(url, headers={"x-probe": "shut"})
        assert refused.status_code == 403
        assert json.loads(refused.text)["error"]["data"]["type"] == "FORBIDDEN"
