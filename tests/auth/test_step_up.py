"""Step-up authorization for a component (``require_scopes(..., step_up=True)``): listed
to any signed-in caller, and a call whose token lacks the scopes is refused with them
named: over Streamable HTTP a 403 ``insufficient_scope`` challenge (both eras), elsewhere
-32600 with ``data.scope``. Through ``OAuthProxy``, mcpkit's client steps up on that
challenge: the proxy asks the user's consent for the new scope, and the call goes
through with the new token."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from mcpkit import McpCallError, McpServerApp, McpToolContext
from mcpkit.auth import AuthInfo, require_scopes
from mcpkit.protocol._modern import CLIENT_CAPABILITIES_KEY, PROTOCOL_VERSION_KEY
from mcpkit.testing import connected
from tests.auth._proxy_world import REDIRECT, mcpkit_client, sign_in, world
from tests.auth._support import Signer
from tests.auth.test_server_gate import AUDIENCE, make_config
from tests.http_server import POST_HEADERS, serving
from tests.server.test_component_auth import caller
from tests.wire import initialize_request

pytestmark = pytest.mark.timeout(60)
HANDSHAKE = "2025-11-25"
MODERN = "2026-07-28"


def build() -> McpServerApp:
    app = McpServerApp("stepping")

    @app.tool()
    def read() -> str:
        return "read"

    @app.tool(auth=require_scopes("mcp:write", step_up=True))
    def write(ctx: McpToolContext) -> str:
        assert ctx.auth is not None
        return "written with " + " ".join(ctx.auth.scopes)

    @app.prompt(auth=require_scopes("mcp:write", step_up=True))
    def compose() -> str:
        return "Compose"

    @app.resource("docs://{name}", auth=require_scopes("mcp:write", step_up=True))
    def draft(name: str) -> str:
        return f"draft {name}"

    @app.tool(auth="mcp:admin")  # hidden, as before: no step-up offered
    def purge() -> str:
        return "purged"

    return app


def call(method: str, params: dict[str, Any], era: str) -> dict[str, Any]:
    if era == MODERN:
        params = {**params, "_meta": {PROTOCOL_VERSION_KEY: MODERN, CLIENT_CAPABILITIES_KEY: {}}}
    return {"jsonrpc": "2.0", "id": 7, "method": method, "params": params}


def headers_of(method: str, name: str | None, token: str, era: str) -> dict[str, str]:
    headers = {**POST_HEADERS, "authorization": f"Bearer {token}", "mcp-protocol-version": era}
    if era == MODERN:
        headers["mcp-method"] = method
        if name is not None:
            headers["mcp-name"] = name
    return headers


@pytest.mark.parametrize("era", [HANDSHAKE, MODERN])
async def test_a_token_without_the_scope_is_challenged_to_step_up(signer: Signer, era) -> None:
    reader = signer.token(audience=AUDIENCE, scope="mcp:read")
    writer = signer.token(audience=AUDIENCE, scope="mcp:read mcp:write")
    async with (
        serving(build(), bearer_auth=make_config(signer)) as (url, _),
        httpx.AsyncClient(timeout=10) as http,
    ):
        session: dict[str, str] = {}
        if era == HANDSHAKE:
            opened = await http.post(
                url, json=initialize_request(), headers=headers_of("", None, reader, era)
            )
            session = {"mcp-session-id": opened.headers["mcp-session-id"]}

        async def post(method: str, params: dict[str, Any], name: str | None, token: str):
            headers = {**headers_of(method, name, token, era), **session}
            return await http.post(url, json=call(method, params, era), headers=headers)

        listed = await post("tools/list", {}, None, reader)
        assert [t["name"] for t in listed.json()["result"]["tools"]] == ["read", "write"]
        for method, params, name in (
            ("tools/call", {"name": "write", "arguments": {}}, "write"),
            ("prompts/get", {"name": "compose"}, "compose"),
            ("resources/read", {"uri": "docs://plan"}, "docs://plan"),
        ):
            refused = await post(method, params, name, reader)
            assert refused.status_code == 403, (method, refused.text)
            challenge = refused.headers["www-authenticate"]
            assert 'error="insufficient_scope"' in challenge
            assert 'scope="mcp:read mcp:write"' in challenge and "resource_metadata=" in challenge
        done = await post("tools/call", {"name": "write", "arguments": {}}, "write", writer)
        assert done.status_code == 200
        assert done.json()["result"]["content"][0]["text"] == "written with mcp:read mcp:write"
        hidden = await post("tools/call", {"name": "purge", "arguments": {}}, "purge", writer)
        assert hidden.json()["error"]["code"] == -32602  # not listed, not challenged


@pytest.mark.parametrize("era", [HANDSHAKE, MODERN])
async def test_without_http_the_refusal_names_the_scopes(era: str) -> None:
    reader = AuthInfo(subject="alice", scopes=("mcp:read",), token="t")
    async with caller(build(), reader, era) as client:
        assert [tool.name for tool in await client.list_tools()] == ["read", "write"]
        with pytest.raises(McpCallError) as raised:
            await client.call_tool("write", {})
        assert raised.value.code == -32600 and raised.value.data == {"scope": "mcp:write"}
    async with connected(build()) as anonymous:  # no identity: hidden, as any requirement
        assert [tool.name for tool in await anonymous.list_tools()] == ["read"]


async def test_mcpkit_client_steps_up_through_the_proxy_with_a_second_consent() -> None:
    async with (
        asyncio.timeout(45),
        world(app=build(), required_scopes=("mcp:read",)) as w,
        httpx.AsyncClient() as browser,
    ):
        consents: list[bool] = []

        async def authorize(url: str) -> str:
            first = await browser.get(url)
            consents.append(first.status_code == 200)  # the consent page shown
            return await sign_in(browser, w, url)

        provider, client = mcpkit_client(w.mcp_url, REDIRECT, authorize)
        try:
            async with client:
                assert (await client.call_tool("read", {})).content[0].text == "read"
                result = await client.call_tool("write", {})  # 403, step up, again
                assert result.content[0].text == "written with mcp:read mcp:write"
        finally:
            await provider.aclose()
        asked = [dict(httpx.URL(url).params)["scope"] for url in provider.authorization_requests]
        assert asked == ["mcp:read", "mcp:read mcp:write"]
        assert consents == [True, True]  # the new scope was asked about, not assumed
