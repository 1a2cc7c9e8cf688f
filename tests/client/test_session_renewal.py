"""A server that forgets the client's session (404 on its ``Mcp-Session-Id``): the client
starts a new session by itself, as the spec asks (a new ``initialize``, its subscriptions and
log level restored, the listen stream reopened) and the refused request goes through; one
renewal serves every request that failed at once. A resumed ``known_session_id`` and
``renew_expired_session=False`` keep failing with ``SessionExpiredError``."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from mcpkit import (
    HttpClientTransportOptions,
    HttpTransportMode,
    McpClient,
    McpServerApp,
    McpToolContext,
    SessionExpiredError,
    mcp_resource,
    mcp_server,
    mcp_tool,
)
from tests.http_server import serving
from tests.waiting import wait_until

TIMEOUT = 30


def _app() -> tuple[McpServerApp, list[str]]:
    initialized: list[str] = []

    @mcp_server(name="forgetful")
    class Forgetful:
        @mcp_tool()
        async def add(self, a: int, b: int) -> int:
            """Adds."""
            return a + b

        @mcp_tool()
        async def chatter(self, ctx: McpToolContext) -> str:
            """Logs one debug and one warning line."""
            await ctx.debug("quiet")
            await ctx.warning("loud")
            return "done"

        @mcp_resource("memo://note")
        def note(self) -> str:
            return "a note"

    app = McpServerApp(Forgetful)

    original = app.dispatcher._handlers["initialize"]

    async def counting(request: Any, binding: Any) -> Any:
        initialized.append(request.params["clientInfo"]["name"])
        return await original(request, binding)

    app.dispatcher.register("initialize", counting)
    return app, initialized


def _client(url: str, **options: Any) -> McpClient:
    return McpClient.http(
        HttpClientTransportOptions(
            endpoint=url, transport_mode=HttpTransportMode.STREAMABLE_HTTP, **options
        ),
        protocol_mode="legacy",
        client_name="renewing",
    )


async def _forget(url: str, session_id: str) -> None:
    """End the session behind the client's back, as an expiry or a restart would."""
    async with httpx.AsyncClient(timeout=TIMEOUT) as http:
        response = await http.delete(
            url, headers={"Mcp-Session-Id": session_id, "MCP-Protocol-Version": "2025-11-25"}
        )
    assert response.status_code == 200


async def test_a_forgotten_session_is_started_again_and_the_request_goes_through():
    app, initialized = _app()
    async with asyncio.timeout(TIMEOUT), serving(app) as (url, _), _client(url) as client:
        first = client.session_id
        assert first is not None
        await _forget(url, first)
        result = await client.call_tool("add", {"a": 2, "b": 3})
        assert result.structured_content == {"result": 5}
        assert client.session_id not in (None, first)
        assert initialized == ["renewing", "renewing"]  # the same initialize, sent again
        await client.ping()  # and the new session goes on serving
        assert len(initialized) == 2


async def test_requests_refused_together_share_one_new_session():
    app, initialized = _app()
    async with asyncio.timeout(TIMEOUT), serving(app) as (url, _), _client(url) as client:
        await _forget(url, client.session_id or "")
        results = await asyncio.gather(
            *(client.call_tool("add", {"a": i, "b": 1}) for i in range(8))
        )
        assert [r.structured_content for r in results] == [{"result": i + 1} for i in range(8)]
        assert len(initialized) == 2
        assert client.session.stream.renewal.count == 1  # type: ignore[attr-defined]


async def test_subscriptions_and_the_log_level_come_back_with_the_new_session():
    app, _ = _app()
    updated: list[str] = []
    logged: list[str] = []
    async with asyncio.timeout(TIMEOUT), serving(app) as (url, _):
        client = McpClient.http(
            HttpClientTransportOptions(
                endpoint=url, transport_mode=HttpTransportMode.STREAMABLE_HTTP
            ),
            protocol_mode="legacy",
            on_resource_updated=updated.append,
            logging_handler=lambda params: logged.append(params["data"]),
        )
        async with client:
            await client.subscribe_resource("memo://note")
            await client.set_logging_level("warning")
            await _forget(url, client.session_id or "")
            assert (await client.call_tool("chatter", {})).content[0].text == "done"
            assert logged == ["loud"]  # the level set before holds in the new session

            # The new session's listen stream carries the update of the URI subscribed
            # before (the listen stream reopens after the renewal: retried until it has).
            async def notified() -> bool:
                await app.subscriptions.notify_updated("memo://note")
                return bool(updated)

            for _ in range(50):
                if await notified():
                    break
                await asyncio.sleep(0.1)
            assert updated and set(updated) == {"memo://note"}


async def test_without_renewal_a_forgotten_session_fails_clearly():
    app, initialized = _app()
    async with (
        asyncio.timeout(TIMEOUT),
        serving(app) as (url, _),
        _client(url, renew_expired_session=False) as client,
    ):
        await _forget(url, client.session_id or "")
        with pytest.raises(SessionExpiredError, match="expired or is unknown"):
            await client.call_tool("add", {"a": 1, "b": 1})
        assert len(initialized) == 1


async def test_a_resumed_session_is_not_renewed():
    app, initialized = _app()
    async with asyncio.timeout(TIMEOUT), serving(app) as (url, _):
        async with _client(url, delete_session_on_close=False) as opener:
            session_id = opener.session_id or ""
        async with _client(url, known_session_id=session_id) as resumed:
            await _forget(url, session_id)
            with pytest.raises(SessionExpiredError):
                await resumed.call_tool("add", {"a": 1, "b": 1})
        assert len(initialized) == 1


async def test_a_server_that_changed_its_version_is_not_renewed_into():
    app, initialized = _app()
    async with asyncio.timeout(TIMEOUT), serving(app) as (url, _), _client(url) as client:
        transport = client.session.stream
        transport.protocol_version = "2025-06-18"  # type: ignore[attr-defined]  # as if it had
        await _forget(url, client.session_id or "")
        with pytest.raises(SessionExpiredError):
            await client.call_tool("add", {"a": 1, "b": 1})
        await wait_until(lambda: len(initialized) == 2, "the one attempt")
