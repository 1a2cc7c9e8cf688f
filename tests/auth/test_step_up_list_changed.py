"""A session whose caller comes back with another token (a step-up to more scopes, or a
token with fewer) is told which of its lists now look different: real HTTP on
127.0.0.1, ``BearerAuthConfig`` with signed tokens, mcpkit's client switching tokens
between requests of one session. Over Streamable HTTP the notification comes on the
session's GET stream; over legacy SSE on its event stream. Lists without a requirement,
and tokens that change nothing, send none."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest

from mcpkit import McpClient, McpServerApp
from mcpkit.client import HttpClientTransportOptions, HttpTransportMode
from tests.auth._support import Signer
from tests.auth.test_server_gate import AUDIENCE, make_config
from tests.http_server import serving

pytestmark = pytest.mark.timeout(60)


def build(*, restricted: bool = True) -> McpServerApp:
    app = McpServerApp("stepped")

    @app.tool()
    def read() -> str:
        return "read"

    @app.tool(auth="mcp:write" if restricted else None)
    def write() -> str:
        return "written"

    @app.prompt(auth="mcp:write" if restricted else None)
    def compose() -> str:
        return "Compose"

    @app.resource("notes://today")
    def today() -> str:
        return "today"

    return app


class Caller:
    """One client whose token may change between two requests of its session, and the
    lists the server said changed."""

    def __init__(self, token: str) -> None:
        self.token = token
        self.changed: list[str] = []
        self.heard = asyncio.Event()

    def headers(self, context: Any, headers: dict[str, str]) -> None:
        headers["authorization"] = f"Bearer {self.token}"

    def on_list_changed(self, kind: str) -> None:
        self.changed.append(kind)
        self.heard.set()

    async def heard_within(self, seconds: float) -> list[str]:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                await self.heard.wait()
                await asyncio.sleep(0.2)  # the other lists' notifications, if any
        return sorted(self.changed)


@contextlib.asynccontextmanager
async def session_of(url: str, caller: Caller, mode: HttpTransportMode) -> AsyncIterator[McpClient]:
    endpoint = f"{url}/sse" if mode == HttpTransportMode.SSE else url
    options = HttpClientTransportOptions(
        endpoint=endpoint, transport_mode=mode, apply_per_request_headers=caller.headers
    )
    async with McpClient.http(
        options, protocol_mode="legacy", on_list_changed=caller.on_list_changed
    ) as client:
        yield client


MODES = [HttpTransportMode.STREAMABLE_HTTP, HttpTransportMode.SSE]


@pytest.mark.parametrize("mode", MODES, ids=["streamable", "legacy-sse"])
async def test_a_step_up_announces_the_lists_it_changes(signer: Signer, mode) -> None:
    reader = signer.token(audience=AUDIENCE, scope="mcp:read")
    writer = signer.token(audience=AUDIENCE, scope="mcp:read mcp:write")
    caller = Caller(reader)
    async with serving(build(), bearer_auth=make_config(signer)) as (url, _):
        async with session_of(url, caller, mode) as client:
            assert [tool.name for tool in await client.list_tools()] == ["read"]
            await client.ping()
            assert await caller.heard_within(0.5) == []  # the same token: nothing to say
            caller.token = writer  # the step-up: same user, more scopes
            await client.ping()
            assert await caller.heard_within(5) == ["prompts", "tools"]
            assert [tool.name for tool in await client.list_tools()] == ["read", "write"]
            caller.changed.clear()
            caller.heard.clear()
            caller.token = signer.token(audience=AUDIENCE, scope="mcp:read")  # fewer again
            assert [tool.name for tool in await client.list_tools()] == ["read"]
            assert await caller.heard_within(5) == ["prompts", "tools"]


async def test_a_new_token_that_changes_nothing_announces_nothing(signer: Signer) -> None:
    caller = Caller(signer.token(audience=AUDIENCE, scope="mcp:read"))
    async with serving(build(restricted=False), bearer_auth=make_config(signer)) as (url, _):
        async with session_of(url, caller, HttpTransportMode.STREAMABLE_HTTP) as client:
            await client.list_tools()
            caller.token = signer.token(audience=AUDIENCE, scope="mcp:read mcp:write")
            await client.ping()
            assert await caller.heard_within(1) == []
