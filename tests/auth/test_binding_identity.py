"""The verified identity reaches the engine one way: on the call's binding (``binding.auth``),
put there by the transport. What tools see on ``ctx.auth``, what a connection guard sees
before any MCP message, and whom a task belongs to all read it from there.

Real uvicorn on 127.0.0.1 and real signed tokens: a 2026-07-28 POST (stateless, no
session), a legacy SSE session whose POSTs carry a newer token than its GET, a WebSocket,
and connection guards.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import connect

from mcpkit import McpServerApp, McpToolContext, mcp_server, mcp_tool
from mcpkit.auth import AuthInfo
from mcpkit.auth._types import session_owner
from mcpkit.server._engine.binding import TransportBinding
from mcpkit.server._tasks.wire import default_principal
from tests.auth._support import Signer
from tests.auth.test_server_gate import AUDIENCE, make_config
from tests.auth.test_session_isolation import legacy_reply, legacy_session, text_of, tool_call
from tests.http_server import serving
from tests.wire import initialize_request

WAIT = 10.0
MODERN = "2026-07-28"
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
}

pytestmark = pytest.mark.timeout(60)


@mcp_server(name="identity-test")
class Identity:
    @mcp_tool()
    def whoami(self, ctx: McpToolContext) -> str:
        """The identity on ``ctx.auth`` and the one on the binding: always the same."""
        auth, bound = ctx.auth, ctx.binding.auth
        assert auth is bound
        return json.dumps(
            {
                "subject": auth.subject if auth is not None else None,
                "scopes": sorted(auth.scopes) if auth is not None else None,
            }
        )


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


def token(signer: Signer, subject: str = "alice", scope: str = "mcp:read") -> dict[str, str]:
    return bearer(signer.token(audience=AUDIENCE, scope=scope, subject=subject))


async def test_a_2026_07_28_post_carries_its_identity_on_the_binding(signer: Signer) -> None:
    app = McpServerApp(Identity)
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "whoami", "arguments": {}, "_meta": MODERN_META},
    }
    headers = {
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": MODERN,
        "mcp-method": "tools/call",
        "mcp-name": "whoami",
    }
    async with (
        serving(app, bearer_auth=make_config(signer)) as (url, _),
        httpx.AsyncClient(timeout=WAIT) as http,
    ):
        for subject in ("alice", "bob"):
            response = await http.post(
                url, json=body, headers={**headers, **token(signer, subject)}
            )
            assert response.status_code == 200, response.text
            assert json.loads(text_of(response.json()))["subject"] == subject


async def test_a_legacy_sse_post_runs_as_its_own_token_of_the_same_owner(signer: Signer) -> None:
    """The GET opened the session with a read-only token; a POST with a newer token of the
    same identity (more scopes) runs as that token, and one with the old token as it."""
    app = McpServerApp(Identity)
    read_only = token(signer)
    upgraded = token(signer, scope="mcp:read mcp:write")
    async with (
        serving(app, bearer_auth=make_config(signer), enable_legacy_sse=True) as (url, _),
        httpx.AsyncClient(timeout=WAIT) as http,
        legacy_session(http, url, read_only) as (stream, post_url),
    ):
        newer = await legacy_reply(http, stream, post_url, upgraded, tool_call(2, "whoami"))
        assert json.loads(text_of(newer)) == {
            "subject": "alice",
            "scopes": ["mcp:read", "mcp:write"],
        }
        older = await legacy_reply(http, stream, post_url, read_only, tool_call(3, "whoami"))
        assert json.loads(text_of(older)) == {"subject": "alice", "scopes": ["mcp:read"]}


async def test_a_websocket_runs_as_its_upgrade(signer: Signer) -> None:
    app = McpServerApp(Identity)
    async with serving(app, bearer_auth=make_config(signer), enable_websocket=True) as (url, _):
        ws_url = url.replace("http://", "ws://", 1) + "/ws"
        async with connect(ws_url, additional_headers=token(signer, "carol")) as ws:
            init = initialize_request()
            await ws.send(json.dumps(init))
            assert "result" in json.loads(await ws.recv())
            await ws.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            await ws.send(json.dumps(tool_call(2, "whoami")))
            reply: dict[str, Any] = json.loads(await ws.recv())
            assert json.loads(text_of(reply))["subject"] == "carol"


async def test_a_connection_guard_sees_the_identity_before_any_message(signer: Signer) -> None:
    seen: list[str | None] = []

    def alice_only(ctx: Any) -> bool:
        assert ctx.is_connection
        auth = ctx.auth
        seen.append(auth.subject if auth is not None else None)
        return auth is not None and auth.subject == "alice"

    app = McpServerApp(Identity)
    init = initialize_request()
    accept = {"accept": "application/json, text/event-stream"}
    async with (
        serving(app, bearer_auth=make_config(signer), connection_guards=(alice_only,)) as (url, _),
        httpx.AsyncClient(timeout=WAIT) as http,
    ):
        alice = await http.post(url, json=init, headers={**accept, **token(signer, "alice")})
        bob = await http.post(url, json=init, headers={**accept, **token(signer, "bob")})
    assert alice.status_code == 200, alice.text
    assert bob.status_code == 403
    assert seen == ["alice", "bob"]


def test_a_task_belongs_to_the_identity_on_its_binding() -> None:
    """The default task owner is read from the binding alone (no context variable)."""
    alice = AuthInfo(token="t", subject="alice", client_id="client-1", scopes=("mcp:read",))
    assert default_principal(TransportBinding(auth=alice)) == session_owner(alice)
    assert default_principal(TransportBinding()) is None
