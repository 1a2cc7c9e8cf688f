"""Streamable HTTP server: status codes, response modes, resumption, sessions, the
DNS-rebinding guard and disconnects, over real sockets."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from mcpkit import McpServerApp, McpToolContext, mcp_server, mcp_tool
from mcpkit.protocol import SseDecoder
from tests.http_server import serving
from tests.transports._tools import CancellableTools
from tests.wire import SchemaChecker, initialize_request

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
ACCEPT_BOTH = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


@mcp_server(name="http-test")
class HttpTest(CancellableTools):
    @mcp_tool()
    async def steps(self, ctx: McpToolContext, count: int = 3, delay: float = 0.05) -> str:
        for step in range(count):
            await ctx.info(f"step {step}")
            await asyncio.sleep(delay)
        return f"{count} steps"


def sse_messages(body: bytes) -> list[tuple[str | None, dict | None]]:
    decoder = SseDecoder()
    return [(e.id, json.loads(e.data) if e.data else None) for e in decoder.feed(body)]


class Session:
    """A raw HTTP client for one MCP session; checks every JSON-RPC message against the schema."""

    def __init__(self, http: httpx.AsyncClient, url: str) -> None:
        self.http = http
        self.url = url
        self.session_id: str | None = None
        self.checker = SchemaChecker()

    def headers(self, **extra: str) -> dict[str, str]:
        h = dict(ACCEPT_BOTH)
        if self.session_id:
            h["mcp-session-id"] = self.session_id
            h["mcp-protocol-version"] = "2025-11-25"
        h.update(extra)
        return h

    async def post(self, message: dict, **headers: str) -> httpx.Response:
        self.checker.outgoing_from_client(message)
        response = await self.http.post(self.url, json=message, headers=self.headers(**headers))
        if (
            response.headers.get("content-type", "").startswith("application/json")
            and response.content
        ):
            self.checker.from_server(response.json())
        elif response.headers.get("content-type", "").startswith("text/event-stream"):
            for _, data in sse_messages(response.content):
                if data is not None:
                    self.checker.from_server(data)
        return response

    async def initialize(self) -> None:
        response = await self.post(INIT)
        assert response.status_code == 200
        assert response.headers["mcp-protocol-version"] == "2025-11-25"
        self.session_id = response.headers["mcp-session-id"]
        assert (
            await self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        ).status_code == 202


@pytest.fixture
def app() -> McpServerApp:
    return McpServerApp(HttpTest)


async def test_server_creates_session_and_answers_json(app):
    async with serving(app) as (url, _), httpx.AsyncClient(timeout=10) as http:
        s = Session(http, url)
        await s.initialize()
        response = await s.post(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "add", "arguments": {"a": 2, "b": 3}},
            }
        )
        assert response.status_code == 200
        assert response.headers["content-type"] == "application/json"
        assert response.headers["mcp-session-id"] == s.session_id
        assert response.json()["result"]["structuredContent"] == {"result": 5}


async def test_server_streams_notifications_before_the_result(app):
    async with serving(app) as (url, _), httpx.AsyncClient(timeout=10) as http:
        s = Session(http, url)
        await s.initialize()
        response = await s.post(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "steps", "arguments": {"count": 3, "delay": 0}},
            }
        )
        assert response.headers["content-type"] == "text/event-stream"
        events = sse_messages(response.content)
        assert events[0][1] is None and events[0][0]  # priming event: an id, no data
        kinds = [data.get("method") or "result" for _, data in events[1:]]
        assert kinds == ["notifications/message"] * 3 + ["result"]
        assert events[-1][1]["result"]["content"][0]["text"] == "3 steps"


@pytest.mark.parametrize(
    "headers, body, status, code",
    [
        ({}, INIT | {"id": 9, "method": "tools/list", "params": {}}, 400, -32600),
        ({"mcp-session-id": "nope"}, {"jsonrpc": "2.0", "id": 9, "method": "ping"}, 404, -32009),
        ({"mcp-protocol-version": "1999-01-01"}, INIT, 400, -32022),
    ],
)
async def test_server_rejects_bad_posts(app, headers, body, status, code):
    async with serving(app) as (url, _), httpx.AsyncClient(timeout=10) as http:
        response = await http.post(url, json=body, headers=ACCEPT_BOTH | headers)
        assert response.status_code == status
        assert response.json()["error"]["code"] == code
        assert "mcp-protocol-version" in response.headers or status == 400


async def test_server_status_codes_for_malformed_oversized_and_wrong_media(app):
    async with serving(app, max_body_bytes=2000) as (url, _), httpx.AsyncClient(timeout=10) as http:
        bad_json = await http.post(url, content=b"{nope", headers=ACCEPT_BOTH)
        assert bad_json.status_code == 400 and bad_json.json()["error"]["code"] == -32700
        big = await http.post(url, content=b"{" + b" " * 5000 + b"}", headers=ACCEPT_BOTH)
        assert big.status_code == 413
        wrong_type = await http.post(
            url,
            content=json.dumps(INIT),
            headers={"accept": "application/json", "content-type": "text/plain"},
        )
        assert wrong_type.status_code == 415
        wrong_accept = await http.post(
            url, json=INIT, headers={"accept": "text/html", "content-type": "application/json"}
        )
        assert wrong_accept.status_code == 406
        put = await http.put(url, json=INIT, headers=ACCEPT_BOTH)
        assert put.status_code == 405
        get = await http.get(url, headers={"accept": "text/event-stream"})
        assert get.status_code == 400
        delete = await http.delete(url, headers={"mcp-session-id": "missing"})
        assert delete.status_code == 404 and delete.json()["error"]["code"] == -32009
        # the server still serves
        ok = await http.post(url, json=INIT, headers=ACCEPT_BOTH)
        assert ok.status_code == 200


async def test_delete_ends_the_session(app):
    async with serving(app) as (url, _), httpx.AsyncClient(timeout=10) as http:
        s = Session(http, url)
        await s.initialize()
        assert (await http.delete(url, headers=s.headers())).status_code == 200
        after = await s.post({"jsonrpc": "2.0", "id": 3, "method": "ping"})
        assert after.status_code == 404 and after.json()["error"]["code"] == -32009


async def test_session_cap_gives_503_and_idle_sessions_expire(app):
    async with (
        serving(app, max_sessions=2, session_idle_timeout=0.3) as (url, asgi),
        httpx.AsyncClient(timeout=10) as http,
    ):
        first = Session(http, url)
        await first.initialize()
        second = Session(http, url)
        await second.initialize()
        third = await http.post(url, json=INIT, headers=ACCEPT_BOTH)
        assert third.status_code == 503
        await asyncio.sleep(0.5)
        expired = await first.post({"jsonrpc": "2.0", "id": 3, "method": "ping"})
        assert expired.status_code == 404
        assert (await http.post(url, json=INIT, headers=ACCEPT_BOTH)).status_code == 200
        assert (await second.post({"jsonrpc": "2.0", "id": 3, "method": "ping"})).status_code == 404
        assert len(asgi.streamable.sessions) == 1


async def test_a_session_with_a_call_running_does_not_expire(app):
    """A call answered as JSON has no SSE stream; it still keeps its session alive."""
    async with (
        serving(app, session_idle_timeout=0.3) as (url, _),
        httpx.AsyncClient(timeout=10) as http,
    ):
        s = Session(http, url)
        await s.initialize()
        hang = {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "tools/call",
            "params": {"name": "hang", "arguments": {}},
        }
        running = asyncio.ensure_future(s.post(hang, accept="application/json"))
        await asyncio.sleep(0.6)  # twice the idle timeout, the call still running
        assert not running.done()
        ping = await s.post({"jsonrpc": "2.0", "id": 8, "method": "ping"})
        assert ping.status_code == 200
        running.cancel()
        await asyncio.sleep(0.6)  # now idle: it expires
        assert (await s.post({"jsonrpc": "2.0", "id": 9, "method": "ping"})).status_code == 404


async def test_stateless_mode_needs_no_session_and_refuses_get(app):
    async with serving(app, stateless=True) as (url, _), httpx.AsyncClient(timeout=10) as http:
        call = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "add", "arguments": {"a": 1, "b": 1}},
        }
        response = await http.post(url, json=call, headers=ACCEPT_BOTH)
        assert response.status_code == 200 and "mcp-session-id" not in response.headers
        assert response.json()["result"]["content"][0]["text"] == "2"
        assert (await http.get(url, headers={"accept": "text/event-stream"})).status_code == 405
        assert (await http.delete(url)).status_code == 405


@pytest.mark.parametrize(
    "headers, status",
    [
        ({"host": "evil.example.com"}, 421),
        ({"origin": "http://evil.example.com"}, 403),
        ({"origin": "http://localhost:5173"}, 200),
    ],
)
async def test_dns_rebinding_guard(app, headers, status):
    async with serving(app) as (url, _), httpx.AsyncClient(timeout=10) as http:
        response = await http.post(url, json=INIT, headers=ACCEPT_BOTH | headers)
        assert response.status_code == status


async def test_guard_honours_configured_hosts_and_origins(app):
    from mcpkit.transports.http import TransportSecuritySettings

    settings = TransportSecuritySettings(
        allowed_hosts=("api.example.com",), allowed_origins=("https://app.example.com",)
    )
    async with (
        serving(app, transport_security=settings) as (url, _),
        httpx.AsyncClient(timeout=10) as http,
    ):
        assert (await http.post(url, json=INIT, headers=ACCEPT_BOTH)).status_code == 421
        ok = await http.post(
            url,
            json=INIT,
            headers=ACCEPT_BOTH | {"host": "api.example.com", "origin": "https://app.example.com"},
        )
        assert ok.status_code == 200


async def test_dropped_stream_resumes_with_last_event_id_and_nothing_is_lost(app):
    async with serving(app) as (url, _), httpx.AsyncClient(timeout=10) as http:
        s = Session(http, url)
        await s.initialize()
        call = {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "tools/call",
            "params": {"name": "steps", "arguments": {"count": 5, "delay": 0.1}},
        }
        seen: list[tuple[str | None, dict | None]] = []
        decoder = SseDecoder()
        async with http.stream("POST", url, json=call, headers=s.headers()) as response:
            async for chunk in response.aiter_bytes():
                seen.extend(
                    (e.id, json.loads(e.data) if e.data else None) for e in decoder.feed(chunk)
                )
                if sum(1 for _, d in seen if d) >= 2:
                    break  # drop the stream mid-call
        last_id = seen[-1][0]
        resumed = await http.get(
            url, headers=s.headers(accept="text/event-stream", **{"last-event-id": last_id})
        )
        rest = sse_messages(resumed.content)
        texts = [d["params"]["data"] for _, d in seen + rest if d and d.get("method")]
        assert texts == [f"step {i}" for i in range(5)]
        assert rest[-1][1]["id"] == 7 and rest[-1][1]["result"]["content"][0]["text"] == "5 steps"
        ids = [i for i, _ in seen + rest if i]
        assert len(ids) == len(set(ids))


async def test_client_disconnect_mid_call_cancels_the_work(app):
    async with serving(app) as (url, asgi), httpx.AsyncClient(timeout=10) as http:
        s = Session(http, url)
        await s.initialize()
        call = {
            "jsonrpc": "2.0",
            "id": 5,
            "method": "tools/call",
            "params": {"name": "hang", "arguments": {}},
        }
        task = asyncio.create_task(
            http.post(url, json=call, headers=s.headers(accept="application/json"))
        )
        server = app.instances[0]
        await asyncio.wait_for(server.started.wait(), 5)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await asyncio.wait_for(server.cancelled.wait(), 5)
        for _ in range(100):
            if app.dispatcher.in_flight_count() == 0:
                break
            await asyncio.sleep(0.01)
        assert app.dispatcher.in_flight_count() == 0


async def test_get_stream_carries_list_changed_and_second_get_conflicts(app):
    async with serving(app) as (url, _), httpx.AsyncClient(timeout=10) as http:
        s = Session(http, url)
        await s.initialize()
        decoder = SseDecoder()
        got: list[dict] = []
        async with http.stream("GET", url, headers=s.headers(accept="text/event-stream")) as stream:
            assert stream.status_code == 200
            await asyncio.sleep(0.05)
            second = await http.get(url, headers=s.headers(accept="text/event-stream"))
            assert second.status_code == 409
            app.catalog.register_tool(lambda: "hi", name="late")
            async with asyncio.timeout(5):
                async for chunk in stream.aiter_bytes():
                    got.extend(json.loads(e.data) for e in decoder.feed(chunk) if e.data)
                    if got:
                        break
        assert got[0]["method"] == "notifications/tools/list_changed"


@pytest.mark.parametrize("stateless", [False, True])
async def test_initialize_answer_names_the_version_agreed_in_its_header(app, stateless):
    # The client's header says the latest version, its body asks for an older one: the
    # answer's header names the one the body agreed on, as every later answer does.
    request = initialize_request("2025-06-18")
    headers = {
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2025-11-25",
    }
    async with serving(app, stateless=stateless) as (url, _), httpx.AsyncClient() as http:
        answer = await http.post(url, json=request, headers=headers)
        assert answer.json()["result"]["protocolVersion"] == "2025-06-18"
        assert answer.headers["mcp-protocol-version"] == "2025-06-18"
        unknown = await http.post(
            url, json={**request, "params": {**request["params"], "protocolVersion": "1999-01-01"}}
        )
        agreed = unknown.json()["result"]["protocolVersion"]
        assert unknown.headers["mcp-protocol-version"] == agreed == "2025-11-25"
