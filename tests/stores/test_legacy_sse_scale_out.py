"""Legacy HTTP+SSE (2024-11-05) behind a load balancer without sticky routing: the client's
``GET /sse`` stream is held by one instance, its POSTs to ``/messages`` land on any, and
the instances that do not hold the stream forward them on the message bus to the one
that does. Answers always come on the stream. Three ``mcpkit run --redis-url`` processes
and one real redis-server; then in-process servers for the bounds and a Redis outage, and
the in-process bus without Redis.

The official ``mcp`` SDK's legacy SSE client posts where its endpoint event says, on the
host it streams from, so the client here is driven with httpx by hand."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import secrets
import sys
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any
from urllib.parse import urljoin

import httpx
import pytest

from mcpkit import McpServerApp
from mcpkit.stores import InProcessMessageBus, RedisHub, RedisMessageBus
from mcpkit.transports.http._legacy_sse import DEFAULT_FORWARD_TIMEOUT, LegacySseHandler
from mcpkit.transports.http._streamable.cluster import instance_channel
from tests.http_server import serving
from tests.legacy_sse_client import LegacyStream
from tests.redis_server import RedisServer, needs_redis
from tests.stores.test_scale_out import EXAMPLE, Instance, three_instances
from tests.wire import initialize_request

pytestmark = pytest.mark.timeout(120)

WAIT = 10.0
SESSION_EXPIRED = -32009


def init_message(version: str, request_id: int = 1) -> dict[str, Any]:
    capabilities = {"elicitation": {}} if version >= "2025-06-18" else {}
    return initialize_request(version, request_id, **capabilities)


class SpreadLegacyClient(LegacyStream):
    """One legacy SSE session whose stream is opened on one instance while each POST names
    the instance it goes to (round-robin when none is named), as a load balancer without
    affinity would spread them. Every message read from the stream is schema-checked."""

    def __init__(
        self,
        http: httpx.AsyncClient,
        stream_url: str,
        post_urls: list[str],
        version: str = "2024-11-05",
    ) -> None:
        super().__init__(
            http,
            stream_url,
            version=version,
            wait=WAIT,
            stream_timeout=httpx.Timeout(WAIT, read=None),
        )
        self._turn = itertools.cycle(post_urls)
        self._ids = itertools.count(2)

    async def answer_to(self, request_id: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """The response to ``request_id`` and the messages the stream carried before it."""
        before = []
        while True:
            message = await self.next_message()
            if message.get("id") == request_id and "method" not in message:
                return message, before
            before.append(message)

    async def post(self, message: Any, at: str | None = None) -> httpx.Response:
        base = at if at is not None else next(self._turn)
        if isinstance(message, (bytes, str)):
            return await self.http.post(
                urljoin(base, self.endpoint),
                content=message,
                headers={"content-type": "application/json"},
            )
        self.checker.outgoing_from_client(message)
        return await self.http.post(urljoin(base, self.endpoint), json=message)

    async def initialize(self, at: str | None = None, then_at: str | None = None) -> dict[str, Any]:
        assert (await self.post(init_message(self.version), at)).status_code == 202
        reply, _ = await self.answer_to(1)
        assert reply["result"]["protocolVersion"] == self.version
        assert (
            await self.post({"jsonrpc": "2.0", "method": "notifications/initialized"}, then_at)
        ).status_code == 202
        return reply

    async def request(
        self, method: str, params: dict[str, Any] | None = None, at: str | None = None
    ) -> tuple[dict, list[dict]]:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": next(self._ids), "method": method}
        if params is not None:
            message["params"] = params
        response = await self.post(message, at)
        assert response.status_code == 202, response.text
        return await self.answer_to(message["id"])


def post_url(base: str, session_id: str) -> str:
    return f"{base}/messages?session_id={session_id}"


def assert_session_expired(response: httpx.Response, session_id: str) -> None:
    assert response.status_code == 404, response.text
    body = response.json()
    assert body["error"]["code"] == SESSION_EXPIRED and body["error"]["data"] == {
        "sessionId": session_id
    }


PING = {"jsonrpc": "2.0", "id": 99, "method": "ping"}


# --- three processes, one Redis ---------------------------------------------------------------


@pytest.fixture(scope="module")
def cluster(redis_server: RedisServer) -> Iterator[list[Instance]]:
    with three_instances(redis_server.url) as instances:
        yield instances


@needs_redis
async def test_posts_to_b_and_c_are_answered_on_the_stream_held_by_a(cluster):
    a, b, c = cluster
    async with (
        httpx.AsyncClient(timeout=WAIT) as http,
        SpreadLegacyClient(http, a.url, [b.url, c.url]) as client,
    ):
        owner, _, _ = client.session_id.rpartition(".")
        assert owner  # the id names the instance holding the stream
        init = await client.initialize(at=b.url, then_at=c.url)
        assert init["result"]["serverInfo"]["name"]
        listed, _ = await client.request("tools/list", at=c.url)
        assert "calculate" in {tool["name"] for tool in listed["result"]["tools"]}
        summed, _ = await client.request(
            "tools/call", {"name": "calculate", "arguments": {"a": 2, "b": 3}}, at=b.url
        )
        assert summed["result"]["structuredContent"] == {"result": 5.0}
        # what the call sends while it runs (progress, logs) reaches A's stream too
        progressed, before = await client.request(
            "tools/call",
            {"name": "test_tool_with_progress", "arguments": {}, "_meta": {"progressToken": "p"}},
            at=c.url,
        )
        assert (
            progressed["result"]["content"][0]["text"] == "Tool with progress executed successfully"
        )
        assert [
            m["params"]["progress"] for m in before if m.get("method") == "notifications/progress"
        ] == [0, 50, 100]
        _, before = await client.request(
            "tools/call", {"name": "test_tool_with_logging", "arguments": {}}, at=b.url
        )
        assert [
            m["params"]["data"] for m in before if m.get("method") == "notifications/message"
        ] == [
            "Tool execution started",
            "Tool processing data",
            "Tool execution completed",
        ]
        # a body the owner cannot parse is answered there, as if posted to it
        assert (await client.post(b"{not json", at=c.url)).status_code == 202
        parse_error = await client.next_message()
        assert parse_error["error"]["code"] == -32700
        # and A still serves its own POSTs directly
        pong, _ = await client.request("ping", at=a.url)
        assert pong["result"] == {}


@needs_redis
async def test_many_forwarded_requests_in_a_row_are_all_answered(cluster):
    a, b, c = cluster
    async with (
        httpx.AsyncClient(timeout=WAIT) as http,
        SpreadLegacyClient(http, b.url, [a.url, c.url]) as client,
    ):
        await client.initialize()
        sent = []
        for n in range(40):
            call = {
                "jsonrpc": "2.0",
                "id": 100 + n,
                "method": "tools/call",
                "params": {"name": "calculate", "arguments": {"a": n, "b": 1}},
            }
            assert (await client.post(call)).status_code == 202
            sent.append(call["id"])
        answers = {}
        while len(answers) < len(sent):
            message = await client.next_message()
            answers[message["id"]] = message["result"]["structuredContent"]["result"]
        assert answers == {100 + n: n + 1.0 for n in range(40)}


@needs_redis
async def test_a_question_asked_on_a_is_answered_through_c(cluster):
    """A server-to-client request: the call is posted to B, the question comes on A's
    stream, the client's answer is posted to C, the result comes on A's stream."""
    a, b, c = cluster
    async with (
        httpx.AsyncClient(timeout=WAIT) as http,
        SpreadLegacyClient(http, a.url, [b.url], version="2025-06-18") as client,
    ):
        await client.initialize(at=b.url, then_at=c.url)
        call = {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "tools/call",
            "params": {"name": "test_elicitation", "arguments": {"message": "Who?"}},
        }
        assert (await client.post(call, at=b.url)).status_code == 202
        asked = await client.next_message()
        assert asked["method"] == "elicitation/create"
        answer = {
            "jsonrpc": "2.0",
            "id": asked["id"],
            "result": {
                "action": "accept",
                "content": {"username": "ada", "email": "ada@example.com"},
            },
        }
        assert (await client.post(answer, at=c.url)).status_code == 202
        result, _ = await client.answer_to(7)
        assert result["result"]["content"][0]["text"].startswith(
            'User response: action=accept, content={"username": "ada"'
        )


@needs_redis
async def test_a_session_no_instance_holds_is_404_on_every_instance(cluster):
    a, b, c = cluster
    async with (
        httpx.AsyncClient(timeout=WAIT) as http,
        SpreadLegacyClient(http, a.url, [b.url]) as client,
    ):
        owner_a = client.session_id.rpartition(".")[0]
        plain = secrets.token_urlsafe(24)  # names no owner: refused at once
        assert_session_expired(await http.post(post_url(b.url, plain), json=PING), plain)
        unknown_on_a = f"{owner_a}.{secrets.token_urlsafe(24)}"  # A is asked and says no
        started = time.monotonic()
        for instance in (a, b, c):
            assert_session_expired(
                await http.post(post_url(instance.url, unknown_on_a), json=PING), unknown_on_a
            )
        assert time.monotonic() - started < DEFAULT_FORWARD_TIMEOUT  # refusals, not timeouts
        nobody = f"{secrets.token_hex(4)}.{secrets.token_urlsafe(24)}"  # no such instance: nobody listens
        started = time.monotonic()
        assert_session_expired(await http.post(post_url(c.url, nobody), json=PING), nobody)
        assert time.monotonic() - started < DEFAULT_FORWARD_TIMEOUT  # Redis said no one got it
        assert (await http.post(f"{b.url}/messages", json=PING)).status_code == 400
        # the real session is unaffected
        await client.initialize(at=c.url)


@needs_redis
async def test_once_the_stream_on_a_ends_its_session_is_404_everywhere(cluster):
    a, b, c = cluster
    async with httpx.AsyncClient(timeout=WAIT) as http:
        async with SpreadLegacyClient(http, a.url, [b.url, c.url]) as client:
            await client.initialize()
            pong, _ = await client.request("ping", at=b.url)
            assert pong["result"] == {}
            session_id = client.session_id
        # the client dropped its stream on A

        async def gone_on_a() -> bool:
            return (await http.post(post_url(a.url, session_id), json=PING)).status_code == 404

        async with asyncio.timeout(WAIT):
            while not await gone_on_a():
                await asyncio.sleep(0.05)
        for instance in (b, c, a):
            assert_session_expired(
                await http.post(post_url(instance.url, session_id), json=PING), session_id
            )


# --- in one process: bounds, an outage, the in-process bus ------------------------------------


def example_app() -> McpServerApp:
    sys.path.insert(0, str(EXAMPLE.parent))
    from mcpkit.cli._loader import load_app

    return load_app(str(EXAMPLE))


def legacy_handler(asgi: Any) -> LegacySseHandler:
    return asgi.routes[f"{asgi.options.base_path}/sse"].__self__


@contextlib.asynccontextmanager
async def two_servers(buses: list[Any]) -> AsyncIterator[list[tuple[str, LegacySseHandler]]]:
    """Two servers of everything.py on 127.0.0.1, one bus each; yields (URL, legacy handler)."""
    async with contextlib.AsyncExitStack() as stack:
        servers = []
        for bus in buses:
            url, asgi = await stack.enter_async_context(serving(example_app(), message_bus=bus))
            servers.append((url, legacy_handler(asgi)))
        yield servers


async def test_the_in_process_bus_forwards_without_redis():
    hub: list[InProcessMessageBus] = []
    async with two_servers([InProcessMessageBus(hub), InProcessMessageBus(hub)]) as [
        (a, _),
        (b, _),
    ]:
        async with (
            httpx.AsyncClient(timeout=WAIT) as http,
            SpreadLegacyClient(http, a, [b]) as client,
        ):
            await client.initialize()
            summed, _ = await client.request(
                "tools/call", {"name": "calculate", "arguments": {"a": 40, "b": 2}}
            )
            assert summed["result"]["structuredContent"] == {"result": 42.0}
            # a body that is not even UTF-8 travels byte for byte and is answered by the owner
            assert (await client.post(b"\xff\xfe{")).status_code == 202
            assert (await client.next_message())["error"]["code"] == -32700
            session_id = client.session_id
        async with httpx.AsyncClient(timeout=WAIT) as http:
            async with asyncio.timeout(WAIT):  # once A has cleaned the session up
                while (await http.post(post_url(b, session_id), json=PING)).status_code != 404:
                    await asyncio.sleep(0.05)


async def test_without_a_bus_nothing_changes():
    async with serving(example_app()) as (url, asgi):
        handler = legacy_handler(asgi)
        assert handler.forwarding is None
        async with (
            httpx.AsyncClient(timeout=WAIT) as http,
            SpreadLegacyClient(http, url, [url]) as client,
        ):
            assert "." not in client.session_id
            await client.initialize()
            stranger = f"{secrets.token_hex(4)}.{secrets.token_urlsafe(24)}"
            started = time.monotonic()
            assert_session_expired(await http.post(post_url(url, stranger), json=PING), stranger)
            assert time.monotonic() - started < 1  # nobody to ask, no wait


async def _ignore(message: dict[str, Any]) -> None:
    pass


@needs_redis
async def test_forwards_are_bounded_in_number_and_in_time(redis_server):
    hubs = [RedisHub(redis_server.url, prefix="legacy-bounds") for _ in range(2)]
    try:
        async with (
            two_servers([RedisMessageBus(hub) for hub in hubs]) as [(a, _), (b, on_b)],
            httpx.AsyncClient(timeout=WAIT) as http,
            SpreadLegacyClient(http, a, [b]) as client,
        ):
            await client.initialize()
            assert on_b.forwarding is not None
            on_b.forwarding.max_pending = 0
            full = await client.post(PING, at=b)
            assert full.status_code == 503 and full.headers["retry-after"] == "1"
            assert full.json()["error"]["data"] == {"retryable": True}
            on_b.forwarding.max_pending = 10
            assert (await client.post(PING, at=b)).status_code == 202
            assert (await client.next_message())["id"] == 99
            on_b.forwarding.timeout = 0.2
            # An instance that listens but never confirms (stuck): the wait is bounded.
            stuck_id = secrets.token_hex(4)
            stuck = RedisMessageBus(hubs[0])
            stuck.subscribe(instance_channel(stuck_id), _ignore)
            await stuck.start()
            try:
                unanswered = f"{stuck_id}.{secrets.token_urlsafe(24)}"
                started = time.monotonic()
                assert_session_expired(
                    await http.post(post_url(b, unanswered), json=PING), unanswered
                )
                assert 0.2 <= time.monotonic() - started < 2
            finally:
                await stuck.aclose()
    finally:
        for hub in hubs:
            await hub.aclose()


@needs_redis
async def test_a_bus_outage_is_a_503_and_forwarding_resumes_after(redis_to_break):
    server, _ = redis_to_break
    hubs = [
        RedisHub(server.url, timeout=1.0, connect_timeout=0.5, prefix="legacy-outage")
        for _ in range(2)
    ]
    try:
        async with (
            two_servers([RedisMessageBus(hub) for hub in hubs]) as [(a, _), (b, _)],
            httpx.AsyncClient(timeout=WAIT) as http,
            SpreadLegacyClient(http, a, [b]) as client,
        ):
            await client.initialize()
            server.stop()
            down = await client.post(PING, at=b)
            assert down.status_code == 503, down.text
            assert down.json()["error"]["data"] == {"retryable": True}
            assert (
                await client.post({**PING, "id": 98}, at=a)
            ).status_code == 202  # the owner itself still serves
            assert (await client.next_message())["id"] == 98
            server.start()
            async with asyncio.timeout(20):  # once both hubs have resubscribed
                while (await client.post(PING, at=b)).status_code != 202:
                    await asyncio.sleep(0.2)
            assert (await client.next_message())["id"] == 99
    finally:
        for hub in hubs:
            await hub.aclose()
