"""Legacy HTTP+SSE server transport (2024-11-05): the official client end to end, every POST
status code, the endpoint event, keep-alives, the session cap, a client that stops reading,
and a stream that drops mid-call, over real sockets."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urljoin

import httpx
import mcp_types as types
import pytest
from mcp import ClientSession
from mcp.client.sse import sse_client

from mcpkit import McpServerApp, McpToolContext, mcp_resource, mcp_server, mcp_tool
from mcpkit.transports.http._legacy_sse import LegacySseHandler
from tests.http_server import serving
from tests.legacy_sse_client import LegacyStream
from tests.transports._tools import CancellableTools, ElicitingTool
from tests.waiting import wait_until

WAIT = 5.0
JSON = {"content-type": "application/json"}


@mcp_server(name="legacy-test", version="0.0.1")
class LegacyTest(CancellableTools, ElicitingTool):
    def __init__(self) -> None:
        super().__init__()
        self.flood_error: BaseException | None = None

    @mcp_tool()
    async def steps(self, ctx: McpToolContext, count: int = 3) -> str:
        for step in range(count):
            await ctx.report_progress(step + 1, count, f"step {step + 1}")
            await ctx.info(f"step {step + 1}")
        return f"{count} steps"

    @mcp_tool()
    async def whoami(self, ctx: McpToolContext) -> str:
        return ctx.session_id or ""

    @mcp_tool()
    async def flood(self, ctx: McpToolContext, count: int = 50) -> str:
        """Writes ``count`` messages without yielding: more than a small queue holds."""
        try:
            for n in range(count):
                await ctx.info(f"flood {n}")
        except BaseException as exc:
            self.flood_error = exc
            raise
        return "flooded"

    @mcp_resource("test://readme", mime_type="text/plain", description="The readme")
    def readme(self) -> str:
        return "Read me."


@pytest.fixture
def app() -> McpServerApp:
    return McpServerApp(LegacyTest)


def legacy_handler(asgi: Any) -> LegacySseHandler:
    return asgi.routes[f"{asgi.options.base_path}/sse"].__self__


def http_client() -> httpx.AsyncClient:
    return httpx.AsyncClient(timeout=WAIT, trust_env=False)


# the official client ---------------------------------------------------------------------


async def test_official_sse_client_initializes_lists_and_calls_tools(app):
    logs: list[types.LoggingMessageNotificationParams] = []
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params)

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, total, message))

    async with asyncio.timeout(30), serving(app) as (url, asgi):
        async with sse_client(f"{url}/sse", timeout=WAIT) as (read, write):
            async with ClientSession(
                read, write, read_timeout_seconds=WAIT, logging_callback=on_log
            ) as session:
                init = await session.initialize()
                assert init.server_info.name == "legacy-test"
                assert len(legacy_handler(asgi)) == 1
                tools = {tool.name for tool in (await session.list_tools()).tools}
                assert {"add", "steps", "hang"} <= tools
                added = await session.call_tool("add", {"a": 2, "b": 40})
                assert added.content[0].text == "42" and not added.is_error
                streamed = await session.call_tool(
                    "steps", {"count": 3}, progress_callback=on_progress
                )
                assert streamed.content[0].text == "3 steps"
                assert progress == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
                assert [log.data for log in logs] == ["step 1", "step 2", "step 3"]
                resources = (await session.list_resources()).resources
                assert [str(r.uri) for r in resources] == ["test://readme"]
                read_back = await session.read_resource("test://readme")
                assert isinstance(read_back.contents[0], types.TextResourceContents)
                assert read_back.contents[0].text == "Read me."
                await session.send_ping()
        await wait_until(
            lambda: len(legacy_handler(asgi)) == 0, "session removed after the client left"
        )
        assert len(app.connections) == 0


# the raw protocol ------------------------------------------------------------------------


async def test_endpoint_event_comes_first_and_answers_arrive_on_the_stream(app):
    async with asyncio.timeout(30), serving(app) as (url, asgi), http_client() as http:
        async with LegacyStream(http, url) as s:
            assert s.endpoint.startswith("/mcp/messages?session_id=")
            init = await s.initialize()
            assert init["id"] == 1 and init["result"]["protocolVersion"] == "2024-11-05"
            call = {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "add", "arguments": {"a": 1, "b": 2}},
            }
            response = await s.post(call)
            assert response.status_code == 202
            reply = await s.next_message()
            assert reply["id"] == 2 and reply["result"]["content"][0]["text"] == "3"
            # the session id is visible to tools
            await s.post(
                {
                    "jsonrpc": "2.0",
                    "id": 3,
                    "method": "tools/call",
                    "params": {"name": "whoami", "arguments": {}},
                }
            )
            assert (await s.next_message())["result"]["content"][0]["text"] == s.session_id
            # the mcp-session-id header works as well as the query parameter
            by_header = await http.post(
                f"{url}/messages",
                json={"jsonrpc": "2.0", "id": 4, "method": "ping"},
                headers={"mcp-session-id": s.session_id},
            )
            assert by_header.status_code == 202
            assert await s.next_message() == {"jsonrpc": "2.0", "id": 4, "result": {}}
        await wait_until(lambda: len(legacy_handler(asgi)) == 0, "session removed")


async def test_malformed_json_is_accepted_and_the_parse_error_goes_on_the_stream(app):
    async with asyncio.timeout(30), serving(app) as (url, _), http_client() as http:
        async with LegacyStream(http, url) as s:
            await s.initialize()
            response = await s.post(b"{not json")
            assert response.status_code == 202
            error = await s.next_message()
            assert error["error"]["code"] == -32700 and "id" not in error
            # an invalid request with a readable id is answered with that id
            assert (await s.post({"jsonrpc": "2.0", "id": 9, "method": 5})).status_code == 202
            invalid = await s.next_message()
            assert invalid["id"] == 9 and invalid["error"]["code"] == -32600
            # the session keeps working
            await s.post({"jsonrpc": "2.0", "id": 10, "method": "ping"})
            assert (await s.next_message())["id"] == 10


async def test_notification_is_accepted_without_anything_on_the_stream(app):
    async with (
        asyncio.timeout(30),
        serving(app, sse_keep_alive_ms=0) as (url, _),
        http_client() as http,
    ):
        async with LegacyStream(http, url) as s:
            await s.initialize()
            note = await s.post({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"})
            assert note.status_code == 202
            await s.post({"jsonrpc": "2.0", "id": 7, "method": "ping"})
            assert (await s.next_message())["id"] == 7  # nothing came before the pong


async def test_post_status_codes(app):
    async with (
        asyncio.timeout(30),
        serving(app, max_body_bytes=2000) as (url, _),
        http_client() as http,
    ):
        ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        missing = await http.post(f"{url}/messages", json=ping)
        assert missing.status_code == 400
        assert missing.json()["error"]["code"] == -32600
        unknown = await http.post(f"{url}/messages?session_id=nope", json=ping)
        assert unknown.status_code == 404
        assert unknown.json()["error"] == {
            "code": -32009,
            "message": "Session expired",
            "data": {"sessionId": "nope"},
        }
        unknown_header = await http.post(
            f"{url}/messages", json=ping, headers={"mcp-session-id": "nope"}
        )
        assert unknown_header.status_code == 404
        wrong_method = await http.get(f"{url}/messages")
        assert wrong_method.status_code == 405 and wrong_method.headers["allow"] == "POST"
        async with LegacyStream(http, url) as s:
            await s.initialize()
            big = {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "ping",
                "params": {"_meta": {"pad": "x" * 3000}},
            }
            assert (await s.post(big)).status_code == 413

            # chunked (no content-length) bodies are bounded too
            async def chunks() -> AsyncIterator[bytes]:
                for _ in range(4):
                    yield b" " * 1000

            streamed = await http.post(urljoin(url, s.endpoint), content=chunks(), headers=JSON)
            assert streamed.status_code == 413
            assert (await s.post({"jsonrpc": "2.0", "id": 3, "method": "ping"})).status_code == 202
            assert (await s.next_message())["id"] == 3


async def test_session_cap_refuses_new_streams_with_503(app):
    async with (
        asyncio.timeout(30),
        serving(app, max_sessions=2) as (url, asgi),
        http_client() as http,
    ):
        async with LegacyStream(http, url), LegacyStream(http, url):
            refused = await http.get(f"{url}/sse", headers={"accept": "text/event-stream"})
            assert refused.status_code == 503
            assert refused.json()["error"]["code"] == -32603
        await wait_until(lambda: len(legacy_handler(asgi)) == 0, "sessions removed")
        async with LegacyStream(http, url) as s:  # room again
            await s.initialize()


async def test_keep_alive_comments_while_idle(app):
    async with (
        asyncio.timeout(30),
        serving(app, sse_keep_alive_ms=30) as (url, _),
        http_client() as http,
    ):
        async with LegacyStream(http, url) as s:
            await wait_until(lambda: s.raw.count(b": keep-alive\n\n") >= 2, "keep-alives")
            await s.initialize()  # comments do not disturb the messages


async def test_server_to_client_request_answered_by_post(app):
    async with asyncio.timeout(30), serving(app) as (url, _), http_client() as http:
        async with LegacyStream(http, url) as s:
            await s.initialize("2025-06-18")  # elicitation is newer than 2024-11-05
            await s.post(
                {
                    "jsonrpc": "2.0",
                    "id": 5,
                    "method": "tools/call",
                    "params": {"name": "ask", "arguments": {}},
                }
            )
            request = await s.next_message()
            assert request["method"] == "elicitation/create"
            answer = {
                "jsonrpc": "2.0",
                "id": request["id"],
                "result": {"action": "accept", "content": {"name": "Ada"}},
            }
            assert (await s.post(answer)).status_code == 202
            result = await s.next_message()
            assert result["id"] == 5 and result["result"]["content"][0]["text"] == "accept:Ada"


async def test_disconnect_mid_call_cancels_the_tool_and_removes_the_session(app):
    async with asyncio.timeout(30), serving(app) as (url, asgi), http_client() as http:
        server = app.instances[0]
        s = LegacyStream(http, url)
        await s.__aenter__()
        try:
            await s.initialize()
            call = {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "hang", "arguments": {}},
            }
            assert (await s.post(call)).status_code == 202
            await asyncio.wait_for(server.started.wait(), WAIT)
            assert app.dispatcher.in_flight_count() == 1
        finally:
            await s.close()
        await asyncio.wait_for(server.cancelled.wait(), WAIT)
        await wait_until(lambda: len(legacy_handler(asgi)) == 0, "session removed")
        await wait_until(lambda: app.dispatcher.in_flight_count() == 0, "no call in flight")
        assert len(app.connections) == 0
        gone = await http.post(
            urljoin(url, s.endpoint), json={"jsonrpc": "2.0", "id": 3, "method": "ping"}
        )
        assert gone.status_code == 404


async def test_client_that_stops_reading_is_dropped_not_waited_for(app):
    async with (
        asyncio.timeout(30),
        serving(app, max_queued_messages=4) as (url, asgi),
        http_client() as http,
    ):
        server = app.instances[0]
        async with LegacyStream(http, url) as s:
            await s.initialize()
            call = {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "flood", "arguments": {"count": 50}},
            }
            assert (await s.post(call)).status_code == 202
            assert await s.ended(), "the server should end the stream of a session it dropped"
            assert server.flood_error is not None  # the tool was told, not blocked
            await wait_until(lambda: len(legacy_handler(asgi)) == 0, "session removed")
            assert app.dispatcher.in_flight_count() == 0
            gone = await s.post({"jsonrpc": "2.0", "id": 3, "method": "ping"})
            assert gone.status_code == 404
