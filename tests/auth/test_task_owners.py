"""Under bearer auth a task belongs to the identity the gate verified, told apart as sessions
are: by the token's issuer, client and subject, and by the token itself when it names
neither (an API key a verifier maps to scopes alone). Bob, with a valid token of his own,
cannot get, wait on, cancel or list Alice's task.

Real uvicorn on 127.0.0.1, mcpkit's client in 2025-11-25 mode, each user in a session of
their own.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import pytest

from mcpkit import McpCallError, McpClient, McpServerApp, mcp_server, mcp_tool
from mcpkit.auth import AuthResult, BearerAuthConfig
from mcpkit.client import HttpClientTransportOptions, HttpTransportMode
from tests.http_server import serving

AUDIENCE = "https://mcp.example.test/mcp"
WAIT = 20.0

#: Token -> the verdict its verifier gives, per kind of identity.
IDENTITIES = {
    # API keys: scopes, no subject, no client
    "api-keys": {
        "alice": AuthResult(ok=True, scopes=("mcp",), resource=AUDIENCE),
        "bob": AuthResult(ok=True, scopes=("mcp",), resource=AUDIENCE),
    },
    # the same subject and client at two authorization servers: two people
    "two-issuers": {
        "alice": AuthResult(
            ok=True,
            scopes=("mcp",),
            resource=AUDIENCE,
            subject="1001",
            client_id="app",
            claims={"iss": "https://as-one.example.test", "sub": "1001"},
        ),
        "bob": AuthResult(
            ok=True,
            scopes=("mcp",),
            resource=AUDIENCE,
            subject="1001",
            client_id="app",
            claims={"iss": "https://as-two.example.test", "sub": "1001"},
        ),
    },
}

pytestmark = pytest.mark.timeout(60)


@mcp_server(name="task-owners")
class Jobs:
    def __init__(self) -> None:
        self.gate = asyncio.Event()

    @mcp_tool(task_support="optional")
    async def gated(self) -> str:
        await self.gate.wait()
        return "alice's result"


@contextlib.asynccontextmanager
async def user(url: str, token: str) -> AsyncIterator[McpClient]:
    options = HttpClientTransportOptions(
        endpoint=url,
        transport_mode=HttpTransportMode.STREAMABLE_HTTP,
        additional_headers={"authorization": f"Bearer {token}"},
    )
    async with McpClient.http(options, protocol_mode="legacy") as client:
        yield client


@pytest.mark.parametrize("kind", sorted(IDENTITIES))
async def test_another_identity_cannot_reach_her_task(kind: str) -> None:
    verdicts = IDENTITIES[kind]

    def verify(token: str) -> AuthResult:
        return verdicts.get(token) or AuthResult.reject("unknown token")

    app = McpServerApp(Jobs)
    jobs = app.resolve(Jobs)
    auth = BearerAuthConfig(verify=verify, expected_resource=AUDIENCE, required_scopes=("mcp",))
    async with (
        asyncio.timeout(WAIT),
        serving(app, bearer_auth=auth) as (url, _),
        user(url, "alice") as alice,
        user(url, "bob") as bob,
    ):
        task = await alice.call_tool_as_task("gated")
        task_id = task.task_id or ""
        for method in ("tasks/get", "tasks/cancel"):
            with pytest.raises(McpCallError) as caught:
                await bob.request(method, {"taskId": task_id})
            assert caught.value.code == -32602, method
        assert await bob.list_tasks() == []
        assert [s.task_id for s in await alice.list_tasks()] == [task_id]
        jobs.gate.set()
        result = await task.result()
        assert result.content[0].text == "alice's result"  # type: ignore[union-attr]
