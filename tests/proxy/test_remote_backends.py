"""``McpProxy`` in front of a remote backend reached by URL: Streamable HTTP, legacy
HTTP+SSE and WebSocket, with the configured headers sent to the backend and the backend's
sampling and progress passed to the front client."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mcpkit import (
    Header,
    McpServerApp,
    McpToolContext,
    mcp_completion,
    mcp_prompt,
    mcp_server,
    mcp_tool,
)
from mcpkit.client import McpClient
from mcpkit.proxy import HttpBackend, McpProxy
from tests.http_server import serving
from tests.proxy.test_proxy import sample, text_of

pytestmark = pytest.mark.interop


@mcp_server(name="remote-backend")
class Remote:
    @mcp_tool(description="Says which team header the backend received")
    async def team(self, team: Header[str, "x-team"] = "none") -> str:  # noqa: F821, UP037
        return f"team={team}"

    @mcp_tool(description="Asks the client's model, then reports progress")
    async def ask(self, question: str, ctx: McpToolContext) -> str:
        # After the question: a 2026-07-28 call runs again from the top in each round.
        answer = await ctx.sample(question, max_tokens=20)
        await ctx.report_progress(1, 2, "answered")
        return f"model said: {answer['content']['text']}"

    @mcp_prompt(description="Greets a city")
    async def visit(self, city: str) -> str:
        return f"Visit {city}"

    @mcp_completion(prompt="visit", argument="city", run_in_thread=False)
    def complete_city(self, value: str) -> dict[str, Any]:
        # Knows of more cities than it lists, as a server with a large catalog does.
        return {"values": [f"{value}ville", f"{value}burg"], "total": 500, "hasMore": True}


def backend_url(http_url: str, transport: str) -> str:
    if transport == "ws":
        return http_url.replace("http://", "ws://", 1) + "/ws"
    if transport == "sse":
        return http_url + "/sse"
    return http_url


@pytest.mark.parametrize("transport", ["http", "sse", "ws"])
async def test_a_remote_backend_by_url(transport: str) -> None:
    remote = McpServerApp(Remote)
    async with asyncio.timeout(30), serving(remote) as (remote_url, _):
        backend = HttpBackend(
            backend_url(remote_url, transport), headers={"x-team": "blue"}, transport=transport
        )
        proxy = McpProxy(backend)
        async with serving(proxy.app) as (front_url, _):
            async with McpClient.http(
                front_url, protocol_mode="legacy", sampling_handler=sample
            ) as client:
                assert {"team", "ask"} <= {tool.name for tool in await client.list_tools()}
                assert text_of(await client.call_tool("team", {})) == "team=blue"
                progress: list[tuple[float, str | None]] = []

                async def on_progress(value: float, total: Any, message: str | None) -> None:
                    progress.append((value, message))

                asked = await client.call_tool("ask", {"question": "2+2?"}, progress=on_progress)
                assert "echo of 2+2?" in text_of(asked)
                assert progress == [(1, "answered")]
                completed = await client.complete(
                    {"type": "ref/prompt", "name": "visit"}, "city", "Ox"
                )
                assert completed.completion.values == ["Oxville", "Oxburg"]
                assert (completed.completion.total, completed.completion.has_more) == (500, True)


async def test_the_clients_own_http_options_are_a_backend() -> None:
    """``HttpClientTransportOptions`` was taken for a command line: "object is not iterable"."""
    from mcpkit.client import HttpClientTransportOptions

    remote = McpServerApp(Remote)
    async with asyncio.timeout(30), serving(remote) as (remote_url, _):
        options = HttpClientTransportOptions(
            endpoint=remote_url, additional_headers={"x-team": "red"}
        )
        proxy = McpProxy(options)
        async with serving(proxy.app) as (front_url, _):
            async with McpClient.http(front_url) as client:
                assert text_of(await client.call_tool("team", {})) == "team=red"


async def test_the_front_side_has_bearer_auth_and_dns_rebinding_protection() -> None:
    """The proxy's front is an ordinary app: a request without the token is 401 with a
    challenge, a foreign Host is refused, and the right token reaches the backend."""
    import httpx

    from mcpkit.auth import AuthResult, BearerAuthConfig
    from mcpkit.client import HttpClientTransportOptions

    def verify(token: str) -> AuthResult:
        return AuthResult(ok=token == "front-token", scopes=("mcp",))

    remote = McpServerApp(Remote)
    auth = BearerAuthConfig(verify=verify, validate_token_resource=False)
    async with asyncio.timeout(30), serving(remote) as (remote_url, _):
        proxy = McpProxy(remote_url)
        async with serving(proxy.app, bearer_auth=auth) as (front_url, _):
            ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
            headers = {"accept": "application/json, text/event-stream"}
            async with httpx.AsyncClient(timeout=10) as http:
                anonymous = await http.post(front_url, json=ping, headers=headers)
                assert anonymous.status_code == 401
                assert anonymous.headers["www-authenticate"].startswith("Bearer")
                rebound = await http.post(
                    front_url,
                    json=ping,
                    headers={
                        **headers,
                        "authorization": "Bearer front-token",
                        "host": "evil.example",
                    },
                )
                assert rebound.status_code in (403, 421), rebound.text
            options = HttpClientTransportOptions(
                endpoint=front_url, additional_headers={"authorization": "Bearer front-token"}
            )
            async with McpClient.http(options, protocol_mode="legacy") as client:
                assert text_of(await client.call_tool("team", {})) == "team=none"


@pytest.mark.parametrize("era", ["modern", "legacy"])
async def test_a_remote_backends_catalog_changes_reach_the_front_once(era: str) -> None:
    """A 2026-07-28 backend over HTTP tells of list changes only inside a
    ``subscriptions/listen``: the proxy never opened one, so its catalog stayed as at start.
    And a refresh re-registered every resource, each a list_changed to every front client."""
    from tests.waiting import wait_until

    remote = McpServerApp(Remote)
    for n in range(3):
        remote.catalog.register_resource(lambda: "r", uri=f"data://r{n}", name=f"r{n}")
    async with asyncio.timeout(30), serving(remote) as (remote_url, _):
        proxy = McpProxy(remote_url, backend_protocol_mode=era)
        async with serving(proxy.app) as (front_url, _):
            changed: list[str] = []
            async with McpClient.http(
                front_url, protocol_mode="legacy", on_list_changed=changed.append
            ) as client:
                remote.tool(name="late")(lambda: "late tool")
                await wait_until(lambda: "tools" in changed, "tools list_changed at the front")
                assert text_of(await client.call_tool("late", {})) == "late tool"
                remote.catalog.register_resource(lambda: "new", uri="data://new", name="new")
                await wait_until(lambda: "resources" in changed, "resources list_changed")
                await asyncio.sleep(0.3)  # any further (needless) ones come with the first
                assert changed.count("resources") == 1
                assert "data://new" in {r.uri for r in await client.list_resources()}


@pytest.mark.parametrize("era", ["modern", "legacy"])
async def test_a_front_subscription_reaches_a_remote_backend_in_its_era(era: str) -> None:
    """A 2026-07-28 backend has no ``resources/subscribe`` (it answered -32601, logged, and
    the front client never heard of an update): it gets a ``subscriptions/listen``."""
    from tests.waiting import wait_until

    remote = McpServerApp(Remote)
    remote.catalog.register_resource(lambda: "w", uri="data://watched", name="watched")
    async with asyncio.timeout(30), serving(remote) as (remote_url, _):
        proxy = McpProxy(remote_url, backend_protocol_mode=era)
        async with serving(proxy.app) as (front_url, _):
            updated: list[Any] = []
            async with McpClient.http(
                front_url, protocol_mode="legacy", on_resource_updated=updated.append
            ) as client:
                await client.subscribe_resource("data://watched")
                await wait_until(
                    lambda: remote.subscriptions.get_subscribers("data://watched"),
                    "the backend subscription",
                )
                await remote.subscriptions.notify_updated("data://watched")
                await wait_until(lambda: updated == ["data://watched"], "resources/updated")
                await client.unsubscribe_resource("data://watched")
                await wait_until(
                    lambda: not remote.subscriptions.get_subscribers("data://watched"),
                    "the backend unsubscribed",
                )
