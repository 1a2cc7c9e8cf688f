"""Behind bearer auth, an ``McpProxy`` keeps a 2026-07-28 front user's backend connection
for that user alone: two users whose tokens name no subject and no client (API keys), or
the same subject and client at two authorization servers, are two principals, as they are
two session owners. The proxy keyed its connections by client and subject alone, so bob's
call ran in the backend session alice's call had left, and saw what she had kept there.

Real uvicorn on 127.0.0.1 for the backend and the proxy, mcpkit's client in front.
"""

from __future__ import annotations

import asyncio

import pytest

from mcpkit import McpClient, McpServerApp, McpToolContext, mcp_server, mcp_tool
from mcpkit.auth import AuthResult, BearerAuthConfig
from mcpkit.client import HttpClientTransportOptions
from mcpkit.proxy import McpProxy
from tests.auth.test_task_owners import AUDIENCE, IDENTITIES
from tests.http_server import serving
from tests.proxy.test_proxy import text_of

pytestmark = pytest.mark.timeout(60)


@mcp_server(name="per-session-notes")
class Notes:
    """Keeps one note per backend session, as a stateful server would."""

    def __init__(self) -> None:
        self.notes: dict[str, str] = {}

    @mcp_tool()
    def keep(self, ctx: McpToolContext, note: str) -> str:
        self.notes[ctx.session_id or ""] = note
        return "kept"

    @mcp_tool()
    def recall(self, ctx: McpToolContext) -> str:
        return self.notes.get(ctx.session_id or "", "nothing")


@pytest.mark.parametrize("kind", sorted(IDENTITIES))
async def test_one_users_backend_session_is_not_leased_to_another(kind: str) -> None:
    verdicts = IDENTITIES[kind]

    def verify(token: str) -> AuthResult:
        return verdicts.get(token) or AuthResult.reject("unknown token")

    auth = BearerAuthConfig(verify=verify, expected_resource=AUDIENCE, required_scopes=("mcp",))
    async with (
        asyncio.timeout(40),
        serving(McpServerApp(Notes)) as (backend, _),
    ):
        proxy = McpProxy(backend, backend_protocol_mode="legacy")
        async with serving(proxy.app, bearer_auth=auth) as (url, _):

            def user(token: str) -> McpClient:
                options = HttpClientTransportOptions(
                    endpoint=url, additional_headers={"authorization": f"Bearer {token}"}
                )
                return McpClient.http(options, protocol_mode="modern")

            async with user("alice") as alice:
                assert text_of(await alice.call_tool("keep", {"note": "alice's secret"})) == "kept"
                assert text_of(await alice.call_tool("recall")) == "alice's secret"
            async with user("bob") as bob:
                assert text_of(await bob.call_tool("recall")) == "nothing"
