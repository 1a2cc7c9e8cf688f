"""``subscriptions/listen`` (2026-07-28) hardened: params of the wrong type are refused
-32602 naming the field, and one connection holds at most ``max_listens_per_connection``
listens, so that listens never take every request slot of the connection (the dispatcher's
``max_in_flight_per_connection``) and its other requests are still served. Raw JSON-RPC over
an in-memory ``ServerConnection``, the one stdio serves."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from typing import Any

import httpx
import msgspec
import pytest

from mcpkit import McpServerApp, mcp_tool
from mcpkit.server import ServerConnection
from mcpkit.server._engine.listen import DEFAULT_MAX_LISTENS_PER_CONNECTION
from tests.http_server import POST_HEADERS, serving

VERSION = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": VERSION,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
}


@mcp_tool
def echo(text: str) -> str:
    """Echo."""
    return text


class RawConnection:
    """Raw 2026-07-28 JSON-RPC to an app over one in-memory connection."""

    def __init__(self, app: McpServerApp) -> None:
        self.connection = ServerConnection(app, self._receive)
        self.pending: dict[Any, asyncio.Future[dict[str, Any]]] = {}
        self.acknowledged: list[Any] = []
        self.ids = itertools.count(1)

    async def _receive(self, frame: bytes) -> None:
        message = msgspec.json.decode(frame)
        if message.get("method") == "notifications/subscriptions/acknowledged":
            self.acknowledged.append(
                message["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"]
            )
        future = self.pending.pop(message.get("id"), None)
        if future is not None and not future.done():
            future.set_result(message)

    def send(self, method: str, params: Any = None) -> tuple[int, asyncio.Future[dict[str, Any]]]:
        request_id = next(self.ids)
        if params is None:
            params = {}
        if isinstance(params, dict):
            params = {**params, "_meta": META}
        future = asyncio.get_running_loop().create_future()
        self.pending[request_id] = future
        frame = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        self.connection.feed(msgspec.json.encode(frame))
        return request_id, future

    async def call(self, method: str, params: Any = None) -> dict[str, Any]:
        return await asyncio.wait_for(self.send(method, params)[1], 5)

    def cancel(self, request_id: int) -> None:
        note = {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": request_id, "_meta": META},
        }
        self.connection.feed(msgspec.json.encode(note))

    async def open_listens(self, count: int) -> list[tuple[int, asyncio.Future[dict[str, Any]]]]:
        """Open ``count`` listens; each is acknowledged or answered (refused) before this
        returns."""
        opened = [
            self.send("subscriptions/listen", {"notifications": {"toolsListChanged": True}})
            for _ in range(count)
        ]
        async with asyncio.timeout(5):
            while not all(rid in self.acknowledged or future.done() for rid, future in opened):
                await asyncio.sleep(0.005)
        return opened


@pytest.fixture
async def app() -> Any:
    app = McpServerApp(echo)
    await app.start()
    yield app
    await app.stop()


@pytest.fixture
async def raw(app: McpServerApp) -> Any:
    connection = RawConnection(app)
    yield connection
    await connection.connection.close()


WRONG = [
    ({"notifications": "tools"}, "notifications"),
    ({"notifications": None}, "notifications"),
    ({"notifications": [True]}, "notifications"),
    ({"notifications": {"toolsListChanged": "true"}}, "notifications.toolsListChanged"),
    ({"notifications": {"promptsListChanged": 1}}, "notifications.promptsListChanged"),
    ({"notifications": {"resourcesListChanged": None}}, "notifications.resourcesListChanged"),
    ({"notifications": {"resourceSubscriptions": "file:///a"}}, "resourceSubscriptions"),
    ({"notifications": {"resourceSubscriptions": [1]}}, "resourceSubscriptions"),
    ({"notifications": {"resourceSubscriptions": None}}, "resourceSubscriptions"),
    ({"notifications": {"resourceSubscriptions": {}}}, "resourceSubscriptions"),
    ({"notifications": {"taskIds": None}}, "notifications.taskIds"),
]


@pytest.mark.parametrize(("params", "field"), WRONG)
async def test_wrongly_typed_params_are_refused_naming_the_field(
    raw: RawConnection, params: dict[str, Any], field: str
) -> None:
    response = await raw.call("subscriptions/listen", params)
    assert response["error"]["code"] == -32602, response
    assert field in response["error"]["message"]
    assert field in response["error"]["data"]["field"]
    assert not raw.acknowledged


async def test_well_typed_params_still_open_a_listen(raw: RawConnection) -> None:
    rid, future = raw.send(
        "subscriptions/listen",
        {
            "notifications": {
                "toolsListChanged": False,
                "resourcesListChanged": True,
                "resourceSubscriptions": [],
            }
        },
    )
    async with asyncio.timeout(5):
        while rid not in raw.acknowledged:
            await asyncio.sleep(0.005)
    assert not future.done()


async def test_listens_per_connection_are_bounded_and_other_requests_still_run(
    app: McpServerApp, raw: RawConnection
) -> None:
    limit = DEFAULT_MAX_LISTENS_PER_CONNECTION
    assert app.listens.limit == limit < app.dispatcher.max_in_flight_per_connection
    opened = await raw.open_listens(limit + 3)
    refused = [future.result() for _, future in opened if future.done()]
    assert len(raw.acknowledged) == limit and len(refused) == 3
    for response in refused:
        assert response["error"]["code"] == -32603
        assert "Too many subscriptions/listen" in response["error"]["message"]
        assert response["error"]["data"] == {"maxListens": limit}
    assert app.listens.count(raw.connection.key) == limit
    # the connection is still served
    assert "result" in await raw.call("tools/list")
    called = await raw.call("tools/call", {"name": "echo", "arguments": {"text": "hi"}})
    assert called["result"]["content"][0]["text"] == "hi"
    # a listen ended makes room for another; another connection has its own count
    raw.cancel(raw.acknowledged[0])
    async with asyncio.timeout(5):
        while app.listens.count(raw.connection.key) == limit:
            await asyncio.sleep(0.005)
    more = await raw.open_listens(1)
    assert not more[0][1].done() and len(raw.acknowledged) == limit + 1
    other = RawConnection(app)
    try:
        await other.open_listens(1)
        assert len(other.acknowledged) == 1
    finally:
        await other.connection.close()
    await raw.connection.close()
    assert app.listens.count(raw.connection.key) == 0


async def test_listens_always_leave_the_connection_a_request_slot() -> None:
    app = McpServerApp(echo, max_in_flight_per_connection=4, max_listens_per_connection=100)
    await app.start()
    raw = RawConnection(app)
    try:
        opened = await raw.open_listens(6)
        assert len(raw.acknowledged) == 3  # 4 in flight at most, one kept for the rest
        assert sum(future.done() for _, future in opened) == 3
        assert "result" in await raw.call("tools/list")
    finally:
        await raw.connection.close()
        await app.stop()


async def test_the_bound_is_an_option() -> None:
    app = McpServerApp(echo, max_listens_per_connection=2)
    await app.start()
    raw = RawConnection(app)
    try:
        await raw.open_listens(3)
        assert len(raw.acknowledged) == 2
    finally:
        await raw.connection.close()
        await app.stop()
    with pytest.raises(ValueError, match="max_listens_per_connection"):
        McpServerApp(echo, max_listens_per_connection=-1)


async def test_every_connection_counted_the_app_holds_at_most_max_open() -> None:
    """Each 2026-07-28 POST over HTTP is a connection of its own, so the per-connection
    bound alone never stops a client that opens listen after listen: the app-wide one does,
    and the POSTs it refuses are answered at once."""
    app = McpServerApp(echo)
    app.engine.listens.max_open = 2
    headers = {
        **POST_HEADERS,
        "mcp-protocol-version": VERSION,
        "mcp-method": "subscriptions/listen",
    }
    body = {
        "jsonrpc": "2.0",
        "method": "subscriptions/listen",
        "params": {"_meta": META, "notifications": {"toolsListChanged": True}},
    }
    async with serving(app) as (url, _), httpx.AsyncClient(timeout=10) as http:
        async with contextlib.AsyncExitStack() as streams:
            for rid in (1, 2):
                held = await streams.enter_async_context(
                    http.stream("POST", url, json={**body, "id": rid}, headers=headers)
                )
                assert held.status_code == 200
                async with asyncio.timeout(5):
                    while app.engine.listens.total < rid:
                        await asyncio.sleep(0.01)
            refused = await http.post(url, json={**body, "id": 3}, headers=headers)
            assert refused.json()["error"]["code"] == -32603
            assert refused.json()["error"]["data"] == {"maxOpenListens": 2}
            called = await http.post(
                url,
                json={
                    "jsonrpc": "2.0",
                    "id": 4,
                    "method": "tools/call",
                    "params": {"_meta": META, "name": "echo", "arguments": {"text": "hi"}},
                },
                headers={**headers, "mcp-method": "tools/call", "mcp-name": "echo"},
            )
            assert called.json()["result"]["content"][0]["text"] == "hi"
        async with asyncio.timeout(5):  # the streams closed: their listens end
            while app.engine.listens.total:
                await asyncio.sleep(0.01)
