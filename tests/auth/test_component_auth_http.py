"""Per-component authorization over real HTTP: uvicorn on 127.0.0.1, ``BearerAuthConfig``
with a ``JwtVerifier`` and signed tokens. What a token's scopes do not allow is absent from
the lists and answered as an unknown name, in both eras; a hidden tool's ``x-mcp-header``
parameters are not checked either (its POST is answered as an unknown tool's)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Annotated, Any

import httpx
import msgspec
import pytest

from mcpkit import McpCallError, McpClient, McpServerApp
from mcpkit.client import HttpClientTransportOptions
from mcpkit.protocol._modern import CLIENT_CAPABILITIES_KEY, PROTOCOL_VERSION_KEY
from tests.auth._support import Signer
from tests.auth.test_server_gate import AUDIENCE, make_config
from tests.http_server import serving

HANDSHAKE = "2025-11-25"
MODERN = "2026-07-28"
WAIT = 10.0

pytestmark = pytest.mark.timeout(60)


def build() -> McpServerApp:
    app = McpServerApp("scoped")

    @app.tool()
    def read() -> str:
        return "read"

    @app.tool(auth="mcp:write")
    def write(
        region: Annotated[str, msgspec.Meta(extra_json_schema={"x-mcp-header": "Region"})],
    ) -> str:
        return f"written in {region}"

    @app.resource("docs://{name}", auth="mcp:write")
    def draft(name: str) -> str:
        return f"draft {name}"

    @app.prompt(auth="mcp:write")
    def compose() -> str:
        return "Compose"

    return app


@contextlib.asynccontextmanager
async def client_of(url: str, token: str, era: str) -> AsyncIterator[McpClient]:
    options = HttpClientTransportOptions(
        endpoint=url, additional_headers={"authorization": f"Bearer {token}"}
    )
    mode = "modern" if era == MODERN else "legacy"
    async with McpClient.http(options, protocol_mode=mode, protocol_version=era) as client:
        yield client


async def code_of(call: Any) -> int:
    with pytest.raises(McpCallError) as raised:
        await call
    return raised.value.code


@pytest.mark.parametrize("era", [HANDSHAKE, MODERN])
async def test_a_token_sees_and_uses_what_its_scopes_allow(signer: Signer, era: str) -> None:
    reader = signer.token(audience=AUDIENCE, scope="mcp:read")
    writer = signer.token(audience=AUDIENCE, scope="mcp:read mcp:write")
    async with serving(build(), bearer_auth=make_config(signer)) as (url, _):
        async with client_of(url, reader, era) as client:
            assert [tool.name for tool in await client.list_tools()] == ["read"]
            assert await client.list_resource_templates() == []
            assert await client.list_prompts() == []
            assert await code_of(client.call_tool("write", {"region": "eu"})) == -32602
            assert await code_of(client.call_tool("never-registered")) == -32602
            not_found = -32002 if era == HANDSHAKE else -32602
            assert await code_of(client.read_resource("docs://plan")) == not_found
            assert await code_of(client.get_prompt("compose")) == -32602
        async with client_of(url, writer, era) as client:
            assert [tool.name for tool in await client.list_tools()] == ["read", "write"]
            assert [t.name for t in await client.list_resource_templates()] == ["draft"]
            assert [prompt.name for prompt in await client.list_prompts()] == ["compose"]
            result = await client.call_tool("write", {"region": "eu"})
            assert result.content[0].text == "written in eu"  # type: ignore[union-attr]
            read = await client.read_resource("docs://plan")
            assert read.contents[0].text == "draft plan"  # type: ignore[union-attr]


async def test_a_hidden_tools_headers_are_checked_as_an_unknown_tools(signer: Signer) -> None:
    """A 2026-07-28 POST of a hidden tool without its ``Mcp-Param-Region`` header: were the
    tool's annotation applied, a 400 header mismatch would tell the tool exists; the caller
    gets what a tool of no such name gets."""

    def post_of(name: str) -> dict[str, Any]:
        return {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {
                "name": name,
                "arguments": {"region": "eu"},
                "_meta": {PROTOCOL_VERSION_KEY: MODERN, CLIENT_CAPABILITIES_KEY: {}},
            },
        }

    def headers_of(name: str, token: str) -> dict[str, str]:
        return {
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": MODERN,
            "mcp-method": "tools/call",
            "mcp-name": name,
            "authorization": f"Bearer {token}",
        }

    reader = signer.token(audience=AUDIENCE, scope="mcp:read")
    writer = signer.token(audience=AUDIENCE, scope="mcp:read mcp:write")
    async with (
        serving(build(), bearer_auth=make_config(signer)) as (url, _),
        httpx.AsyncClient(timeout=WAIT) as http,
    ):
        hidden = await http.post(url, json=post_of("write"), headers=headers_of("write", reader))
        absent = await http.post(url, json=post_of("other"), headers=headers_of("other", reader))
        shown = await http.post(url, json=post_of("write"), headers=headers_of("write", writer))
    assert hidden.status_code == absent.status_code
    assert hidden.json()["error"]["code"] == absent.json()["error"]["code"] == -32602
    assert hidden.json()["error"]["message"] == "Unknown tool: write"
    assert shown.status_code == 400  # the writer is told its header is missing
    assert "Mcp-Param-Region" in shown.json()["error"]["message"]
