"""One connection lifecycle for every transport: in memory (stdio's path), WebSocket, legacy
SSE and Streamable HTTP each open their client's connection in the engine and close it
there, with the same effects.

While a session lives, the engine knows its connection (the registry, which a broadcast
reaches), its resource subscriptions, and its running calls; the frame transports' ones
are also among the connections a graceful shutdown drains. When the session ends (the
pipe or socket closed, the SSE stream dropped, DELETE) all of it goes: the running call is
cancelled, the connection leaves the registry, the subscription is dropped. Each case
drives a real peer (real sockets on 127.0.0.1, except the in-memory pipe) through the same
steps and checks the same state.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import connect

from mcpkit import McpServerApp, mcp_resource, mcp_server
from mcpkit.protocol._jsonrpc import encode_message
from mcpkit.protocol._sse import SseDecoder
from mcpkit.server import serve_stream
from mcpkit.transports import InMemoryTransport
from tests.http_server import serving
from tests.transports._tools import CancellableTools
from tests.waiting import wait_until
from tests.wire import initialize_request

WAIT = 5.0
URI = "data://lifecycle"
VERSION = "2025-11-25"
ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}

pytestmark = pytest.mark.timeout(60)


@mcp_server(name="lifecycle-test", version="0.0.1")
class LifecycleTools(CancellableTools):
    @mcp_resource(URI)
    def data(self) -> str:
        return "data"


INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
SUBSCRIBE = {"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe", "params": {"uri": URI}}
HANG = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "hang"}}


class Peer:
    """A client of one transport: ``send`` one message, ``reply`` waits for the answer
    with an id, ``close`` ends the session the transport's way."""

    async def send(self, message: dict[str, Any]) -> None:
        raise NotImplementedError

    async def reply(self, request_id: int) -> dict[str, Any]:
        raise NotImplementedError

    async def close(self) -> None:
        raise NotImplementedError


class FramePeer(Peer):
    """Messages in and out on a frame transport (in memory, WebSocket, legacy SSE)."""

    def __init__(self) -> None:
        self.inbox: list[dict[str, Any]] = []

    async def reply(self, request_id: int) -> dict[str, Any]:
        found: list[dict[str, Any]] = []

        def answered() -> bool:
            found[:] = [m for m in self.inbox if m.get("id") == request_id and "method" not in m]
            return bool(found)

        await wait_until(answered, f"the answer to request {request_id}", WAIT)
        return found[0]


class MemoryPeer(FramePeer):
    def __init__(self, app: McpServerApp) -> None:
        super().__init__()
        self.client, server_end = InMemoryTransport.pair()
        self.server = asyncio.create_task(serve_stream(app, server_end))
        self.reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        while (frame := await self.client.receive()) is not None:
            self.inbox.append(json.loads(frame))

    async def send(self, message: dict[str, Any]) -> None:
        await self.client.send(encode_message(message))

    async def close(self) -> None:
        await self.client.aclose()
        async with asyncio.timeout(WAIT):
            await self.server  # the pipe ended: serve_stream closes the connection itself
        self.reader.cancel()
        await asyncio.gather(self.reader, return_exceptions=True)


class WebSocketPeer(FramePeer):
    def __init__(self, ws: Any) -> None:
        super().__init__()
        self.ws = ws
        self.reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        with contextlib.suppress(Exception):
            async for frame in self.ws:
                self.inbox.append(json.loads(frame))

    async def send(self, message: dict[str, Any]) -> None:
        await self.ws.send(json.dumps(message))

    async def close(self) -> None:
        await self.ws.close()
        self.reader.cancel()
        await asyncio.gather(self.reader, return_exceptions=True)


class LegacySsePeer(FramePeer):
    def __init__(self, http: httpx.AsyncClient, url: str) -> None:
        super().__init__()
        self.http = http
        self.base = url.rsplit("/mcp", 1)[0]
        self.sse_url = f"{url}/sse"
        self.post_url: str | None = None
        self.reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        decoder = SseDecoder()
        headers = {"accept": "text/event-stream"}
        async with self.http.stream("GET", self.sse_url, headers=headers) as response:
            async for chunk in response.aiter_bytes():
                for event in decoder.feed(chunk):
                    if event.event == "endpoint":
                        self.post_url = self.base + event.data
                    elif event.data:
                        self.inbox.append(json.loads(event.data))

    async def opened(self) -> LegacySsePeer:
        await wait_until(lambda: self.post_url is not None, "the endpoint event", WAIT)
        return self

    async def send(self, message: dict[str, Any]) -> None:
        assert self.post_url is not None
        posted = await self.http.post(self.post_url, json=message)
        assert posted.status_code == 202, posted.text

    async def close(self) -> None:
        self.reader.cancel()  # the client drops the stream: the session ends with it
        await asyncio.gather(self.reader, return_exceptions=True)


class StreamablePeer(Peer):
    """Each request a POST of its own (answered as JSON); ``close`` is DELETE."""

    def __init__(self, http: httpx.AsyncClient, url: str) -> None:
        self.http = http
        self.url = url
        self.session_id: str | None = None
        self.replies: dict[int, asyncio.Task[httpx.Response]] = {}

    def headers(self) -> dict[str, str]:
        headers = {**ACCEPT, "accept": "application/json", "mcp-protocol-version": VERSION}
        if self.session_id is not None:
            headers["mcp-session-id"] = self.session_id
        return headers

    async def send(self, message: dict[str, Any]) -> None:
        post = self.http.post(self.url, json=message, headers=self.headers())
        if "id" not in message:
            assert (await post).status_code == 202
            return
        self.replies[message["id"]] = asyncio.ensure_future(post)
        await asyncio.sleep(0)  # the POST is on its way before the next message

    async def reply(self, request_id: int) -> dict[str, Any]:
        async with asyncio.timeout(WAIT):
            response = await self.replies[request_id]
        assert response.status_code == 200, response.text
        if self.session_id is None:
            self.session_id = response.headers["mcp-session-id"]
        answer: dict[str, Any] = response.json()
        return answer

    async def close(self) -> None:
        response = await self.http.delete(self.url, headers=self.headers())
        assert response.status_code == 200, response.text
        hung = self.replies.get(3)  # HANG's id
        if hung is not None:  # its POST ends once its call is cancelled
            async with asyncio.timeout(WAIT):
                await asyncio.gather(hung, return_exceptions=True)


Open = Callable[[McpServerApp, str, httpx.AsyncClient], Awaitable[Peer]]


async def open_memory(app: McpServerApp, url: str, http: httpx.AsyncClient) -> Peer:
    return MemoryPeer(app)


async def open_legacy(app: McpServerApp, url: str, http: httpx.AsyncClient) -> Peer:
    return await LegacySsePeer(http, url).opened()


async def open_streamable(app: McpServerApp, url: str, http: httpx.AsyncClient) -> Peer:
    return StreamablePeer(http, url)


@contextlib.asynccontextmanager
async def websocket_opener() -> AsyncIterator[Open]:
    async with contextlib.AsyncExitStack() as stack:

        async def open_websocket(app: McpServerApp, url: str, http: httpx.AsyncClient) -> Peer:
            ws_url = url.replace("http://", "ws://", 1) + "/ws"
            ws = await stack.enter_async_context(connect(ws_url))
            return WebSocketPeer(ws)

        yield open_websocket


@contextlib.asynccontextmanager
async def opener(transport: str) -> AsyncIterator[Open]:
    if transport == "websocket":
        async with websocket_opener() as open_websocket:
            yield open_websocket
        return
    yield {"memory": open_memory, "legacy-sse": open_legacy, "streamable": open_streamable}[
        transport
    ]


TRANSPORTS = [
    ("memory", True),
    ("websocket", True),
    ("legacy-sse", True),
    ("streamable", False),
]


@pytest.mark.parametrize(("transport", "is_frame"), TRANSPORTS)
async def test_every_transport_opens_and_closes_its_connection_in_the_engine(
    transport: str, is_frame: bool
) -> None:
    app = McpServerApp(LifecycleTools)
    tools: CancellableTools = app.instances[0]
    async with (
        serving(app, enable_legacy_sse=True, enable_websocket=True) as (url, _),
        httpx.AsyncClient(timeout=WAIT) as http,
        opener(transport) as open_peer,
    ):
        assert len(app.connections) == 0
        peer = await open_peer(app, url, http)
        version = "2024-11-05" if transport == "legacy-sse" else VERSION
        await peer.send(initialize_request(version))
        assert "result" in await peer.reply(1)
        await peer.send(INITIALIZED)
        await peer.send(SUBSCRIBE)
        assert (await peer.reply(2)).get("result") == {}
        await peer.send(HANG)
        async with asyncio.timeout(WAIT):
            await tools.started.wait()

        # Open: one connection, reachable by broadcasts, holding the subscription; the
        # frame transports' connection is also one a shutdown drains.
        assert len(app.connections) == 1
        (key,) = app.connections.keys()
        assert set(app.subscriptions.get_subscribers(URI)) == {key}
        assert len(app.open_connections) == (1 if is_frame else 0)

        await peer.close()

        # Closed, the same way whatever the transport.
        async with asyncio.timeout(WAIT):
            await tools.cancelled.wait()
        await wait_until(lambda: len(app.connections) == 0, "the connection to leave", WAIT)
        assert app.subscriptions.get_subscribers(URI) == {}
        assert app.subscriptions.subscriptions_of(key) == set()
        assert app.open_connections == set()
        assert await app.connections.broadcast_method("notifications/tools/list_changed") == 0


async def test_a_streamable_session_that_expires_closes_like_a_deleted_one() -> None:
    """Expiry (the reaper, not a request) ends the session through the same lifecycle."""
    app = McpServerApp(LifecycleTools)
    async with (
        serving(app, session_idle_timeout=0.2) as (url, asgi),
        httpx.AsyncClient(timeout=WAIT) as http,
    ):
        peer = StreamablePeer(http, url)
        await peer.send(initialize_request(VERSION))
        await peer.reply(1)
        await peer.send(INITIALIZED)
        await peer.send(SUBSCRIBE)
        await peer.reply(2)
        (key,) = app.connections.keys()
        assert app.subscriptions.subscriptions_of(key) == {URI}
        # Idle and holding no stream: the table forgets it on its next look.
        await wait_until(
            lambda: asgi.streamable.sessions.expire_idle() >= 0 and len(app.connections) == 0,
            "the idle session to be forgotten",
            WAIT,
        )
        assert app.subscriptions.subscriptions_of(key) == set()
        gone = await http.post(url, json=SUBSCRIBE, headers=peer.headers())
        assert gone.status_code == 404


async def test_a_connection_closed_twice_is_forgotten_once() -> None:
    """Closing is idempotent: a second close (a transport's ``finally`` after a shutdown
    already closed it) touches nothing another connection holds."""
    app = McpServerApp(LifecycleTools)
    first, second = MemoryPeer(app), MemoryPeer(app)
    try:
        for peer in (first, second):
            await peer.send(initialize_request(VERSION))
            await peer.reply(1)
            await peer.send(SUBSCRIBE)
            await peer.reply(2)
        assert len(app.connections) == 2
        (one,) = [c for c in app.open_connections if c.key == app.connections.keys()[0]]
        await one.close()
        await one.close()
        assert len(app.connections) == 1
        assert len(app.subscriptions.get_subscribers(URI)) == 1
        assert len(app.open_connections) == 1
    finally:
        await first.close()
        await second.close()
    assert len(app.connections) == 0
