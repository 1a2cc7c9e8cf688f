"""Malformed and hostile input over a raw in-memory connection: every fault gets the right
JSON-RPC error and the server keeps serving."""

from __future__ import annotations

import asyncio
import json

import pytest

from mcpkit import McpServerApp, McpToolContext, mcp_server, mcp_tool
from tests.in_memory import InMemoryPeer
from tests.wire import SchemaChecker


@mcp_server(name="raw")
class Raw:
    @mcp_tool()
    async def wait(self, ctx: McpToolContext, seconds: float) -> str:
        await asyncio.sleep(seconds)
        return f"waited {ctx.request_id}"

    @mcp_tool()
    def echo(self, text: str) -> str:
        return text


class RawPeer(InMemoryPeer):
    """Speaks bytes to a server connection and checks what comes back."""

    def __init__(self, app: McpServerApp, max_message_bytes: int = 4096) -> None:
        super().__init__(app, max_message_bytes=max_message_bytes)
        self.checker = SchemaChecker()

    async def send(self, payload: object) -> None:
        frame = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        if isinstance(payload, dict):
            self.checker.outgoing_from_client(payload)
        await self.client.send(frame)

    async def recv(self) -> object:
        async with asyncio.timeout(5):
            message = json.loads(await self.client.receive())
        self.checker.from_server(message)
        return message

    async def initialize(self, version: str = "2025-11-25") -> None:
        await self.send(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": version,
                    "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "1"},
                },
            }
        )
        assert (await self.recv())["result"]["protocolVersion"] == version
        await self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})


@pytest.fixture
async def peer():
    async with RawPeer(McpServerApp(Raw)) as raw:
        yield raw


async def test_server_answers_malformed_json_with_parse_error(peer):
    await peer.send(b'{"jsonrpc": "2.0", "id": 1, "method": ')
    reply = await peer.recv()
    assert reply["error"]["code"] == -32700 and "id" not in reply
    await peer.initialize()


@pytest.mark.parametrize(
    "payload, expected_id",
    [
        ({"jsonrpc": "1.0", "id": 5, "method": "ping"}, 5),
        ({"jsonrpc": "2.0", "id": 6, "method": 42}, 6),
        ({"jsonrpc": "2.0", "id": 7, "method": "ping", "params": [1, 2]}, 7),
        ({"jsonrpc": "2.0", "id": {"x": 1}, "method": "ping"}, None),
        ([1, 2, 3], None),
        ("just a string", None),
    ],
)
async def test_server_rejects_invalid_requests(peer, payload, expected_id):
    await peer.initialize()
    await peer.send(json.dumps(payload).encode())
    reply = await peer.recv()
    if isinstance(reply, list):  # a batch outside 2025-03-26 is refused whole
        reply = reply[0]
    assert reply["error"]["code"] == -32600
    assert reply.get("id") == expected_id
    await peer.send({"jsonrpc": "2.0", "id": 99, "method": "ping"})
    assert (await peer.recv()) == {"jsonrpc": "2.0", "id": 99, "result": {}}


async def test_server_refuses_requests_before_initialize(peer):
    await peer.send({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert (await peer.recv())["error"]["code"] == -32600
    await peer.send({"jsonrpc": "2.0", "id": 2, "method": "ping"})
    assert (await peer.recv())["result"] == {}


async def test_server_rejects_second_initialize(peer):
    await peer.initialize()
    await peer.send(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "x", "version": "1"},
            },
        }
    )
    assert (await peer.recv())["error"]["code"] == -32600


async def test_server_rejects_oversized_message_and_keeps_serving(peer):
    await peer.initialize()
    await peer.send(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "x" * 10000}},
        }
    )
    reply = await peer.recv()
    assert reply["error"]["code"] == -32600 and "limit" in reply["error"]["message"]
    await peer.send(
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "small"}},
        }
    )
    assert (await peer.recv())["result"]["content"][0]["text"] == "small"


async def test_server_rejects_wrong_param_types(peer):
    await peer.initialize()
    await peer.send(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": [1]},
        }
    )
    assert (await peer.recv())["error"]["code"] == -32602
    await peer.send({"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": {"uri": 5}})
    assert (await peer.recv())["error"]["code"] == -32602
    await peer.send({"jsonrpc": "2.0", "id": 3, "method": "nope/nope"})
    assert (await peer.recv())["error"]["code"] == -32601


OUT_OF_RANGE = [b"1e400", b"-1e400", b"9" * 5000]


@pytest.mark.parametrize("number", OUT_OF_RANGE)
async def test_a_number_out_of_range_is_a_parse_error_answering_its_request(number):
    """JSON whose number no float (or int) holds is a parse error, and was one with a null
    id: the request it was in was never answered, its client waiting for its timeout."""
    async with RawPeer(McpServerApp(Raw), max_message_bytes=65536) as raw:
        await raw.initialize()
        await raw.send(
            b'{"jsonrpc":"2.0","id":7,"method":"tools/call",'
            b'"params":{"name":"echo","arguments":{"text":' + number + b"}}}"
        )
        reply = await raw.recv()
        assert reply["id"] == 7 and reply["error"]["code"] == -32700
        assert "out of range" in reply["error"]["message"]
        await raw.send(b'{"jsonrpc":"2.0","id":8,"method":"ping","params":{"n":1e999}}')
        assert (await raw.recv())["id"] == 8
        await raw.send(b'{"jsonrpc":"2.0","id":9,"method":"ping"')  # not JSON: no id read
        unread = await raw.recv()
        assert unread["error"]["code"] == -32700 and unread.get("id") is None
        await raw.send({"jsonrpc": "2.0", "id": 10, "method": "ping"})
        assert (await raw.recv()) == {"jsonrpc": "2.0", "id": 10, "result": {}}


async def test_server_rejects_duplicate_in_flight_id(peer):
    await peer.initialize()
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "wait", "arguments": {"seconds": 0.2}},
    }
    await peer.send(call)
    await asyncio.sleep(0.02)
    await peer.send(call)
    first = await peer.recv()
    assert first["error"]["code"] == -32600
    second = await peer.recv()
    assert second["result"]["content"][0]["text"] == "waited 1"


async def test_two_connections_with_same_ids_never_cancel_each_other():
    app = McpServerApp(Raw)
    a, b = RawPeer(app), RawPeer(app)
    try:
        await a.initialize()
        await b.initialize()
        call = {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "tools/call",
            "params": {"name": "wait", "arguments": {"seconds": 0.2}},
        }
        await a.send(call)
        await b.send(call)
        await asyncio.sleep(0.02)
        await a.send(
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}}
        )
        reply = await b.recv()
        assert reply["id"] == 7 and reply["result"]["content"][0]["text"] == "waited 7"
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.4):
                await a.client.receive()
    finally:
        await a.close()
        await b.close()


async def test_cancel_request_alias_cancels(peer):
    await peer.initialize()
    await peer.send(
        {
            "jsonrpc": "2.0",
            "id": "w",
            "method": "tools/call",
            "params": {"name": "wait", "arguments": {"seconds": 5}},
        }
    )
    await asyncio.sleep(0.02)
    await peer.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": "w"}})
    await peer.send({"jsonrpc": "2.0", "id": "p", "method": "ping"})
    assert (await peer.recv())["id"] == "p"


async def test_batches_only_in_2025_03_26():
    app = McpServerApp(Raw)
    peer = RawPeer(app)
    try:
        await peer.initialize("2025-03-26")
        await peer.send(
            [
                {"jsonrpc": "2.0", "id": 1, "method": "ping"},
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/progress",
                    "params": {"progressToken": 1, "progress": 1},
                },
                {
                    "jsonrpc": "2.0",
                    "id": 2,
                    "method": "tools/call",
                    "params": {"name": "echo", "arguments": {"text": "b"}},
                },
                {"bogus": True},
            ]
        )
        replies = await peer.recv()
        assert isinstance(replies, list) and len(replies) == 3
        by_id = {r.get("id"): r for r in replies}
        assert by_id[1]["result"] == {} and by_id[2]["result"]["content"][0]["text"] == "b"
        assert by_id[None]["error"]["code"] == -32600
    finally:
        await peer.close()
