"""Hardening: a depth bound on every decoded message (``max_message_depth``), on every
transport, the connection and the server serving on; a safety net turning any unexpected
exception into a JSON-RPC error (never a bare 500, a closed pipe or a dead loop); and no
internals to clients (a generic -32603 with an error id; ``expose_internal_errors`` for
development)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import connect as ws_connect

from mcpkit import (
    McpCallError,
    McpServerApp,
    MessageTooDeepError,
    ParseError,
    mcp_resource,
    mcp_server,
    mcp_tool,
)
from mcpkit.protocol import JsonRpcRequest, JsonRpcResponse, decode_message
from mcpkit.protocol._jsonrpc import DEFAULT_MAX_MESSAGE_DEPTH, nests_deeper
from mcpkit.stores import StoreUnavailableError
from mcpkit.transports.http import StreamableSessionStore
from tests.http_server import open_session, serving
from tests.in_memory import InMemoryPeer
from tests.legacy_sse_client import LegacyStream
from tests.websocket_client import NO_PROXY

ROOT = Path(__file__).resolve().parents[2]
WAIT = 10.0
SECRET = "password=hunter2 in /srv/app/secret.db"
GENERIC = re.compile(r"^Internal error \(id ([0-9a-f]{12})\); see the server log$")
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
}
ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


@mcp_server(name="hardening", version="0.0.1")
class Hardening:
    @mcp_tool()
    def depth(self, value: Any) -> int:
        """How deeply ``value`` nests (0 for a scalar)."""
        return _depth(value)

    @mcp_tool()
    def broken_tool(self) -> str:
        raise RuntimeError(SECRET)

    @mcp_resource("data://broken")
    def broken_resource(self) -> str:
        raise RuntimeError(SECRET)


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


def deep_request(
    depth: int,
    request_id: int | str = 2,
    *,
    id_last: bool = False,
    meta: dict[str, Any] | None = None,
) -> bytes:
    """A ``ping`` whose whole frame nests ``depth`` levels (the message object and its
    params count one each; ``params.x`` holds the rest), built as bytes (``json`` itself
    recurses)."""
    inner = depth - 2
    x = b"[" * inner + b"]" * inner
    rid = json.dumps(request_id).encode()
    extra = b'"_meta":' + json.dumps(meta).encode() + b"," if meta else b""
    params = b"{" + extra + b'"x":' + x + b"}"
    if id_last:
        return b'{"jsonrpc":"2.0","method":"ping","params":' + params + b',"id":' + rid + b"}"
    return b'{"jsonrpc":"2.0","id":' + rid + b',"method":"ping","params":' + params + b"}"


def deep_arguments(depth: int, request_id: int = 5, meta: dict[str, Any] | None = None) -> bytes:
    """A ``tools/call`` of ``depth`` whose frame nests ``depth`` levels (message, params,
    arguments, then ``value``)."""
    inner = depth - 3
    value = b"[" * inner + b"]" * inner
    extra = b'"_meta":' + json.dumps(meta).encode() + b"," if meta else b""
    return (
        b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{%s"name":"depth",'
        b'"arguments":{"value":%s}}}' % (request_id, extra, value)
    )


def assert_too_deep(reply: dict[str, Any], request_id: Any, limit: int = 64) -> None:
    assert reply.get("id") == request_id, reply
    error = reply["error"]
    assert error["code"] == -32600
    assert f"limit of {limit} levels" in error["message"]
    assert "max_message_depth" in error["message"]


def generic_id(error: dict[str, Any]) -> str:
    match = GENERIC.match(error["message"])
    assert match is not None, error
    assert error["data"] == {"errorId": match[1]}
    assert SECRET not in json.dumps(error)
    return match[1]


def logged_with_traceback(caplog: pytest.LogCaptureFixture, error_id: str) -> logging.LogRecord:
    records = [r for r in caplog.records if error_id in r.getMessage()]
    assert len(records) == 1, [r.getMessage() for r in caplog.records]
    assert records[0].exc_info is not None
    return records[0]


# -- the codec --------------------------------------------------------------------------------


def test_the_default_bound_is_named_and_the_decoder_refuses_past_it():
    assert DEFAULT_MAX_MESSAGE_DEPTH == 64
    at_limit = decode_message(deep_request(64))
    assert isinstance(at_limit, JsonRpcRequest) and at_limit.id == 2
    with pytest.raises(MessageTooDeepError) as refused:
        decode_message(deep_request(65))
    assert refused.value.code == -32600 and refused.value.request_id == 2  # type: ignore[attr-defined]
    assert "max_message_depth" in refused.value.message
    assert isinstance(decode_message(deep_request(65), max_depth=None), JsonRpcRequest)
    assert isinstance(decode_message(deep_request(9), max_depth=9), JsonRpcRequest)
    with pytest.raises(MessageTooDeepError):
        decode_message(deep_request(10), max_depth=9)


@pytest.mark.parametrize("depth", [65, 1_000, 100_000])
@pytest.mark.parametrize("id_last", [False, True])
def test_a_deep_frame_is_refused_with_its_id_never_a_recursion_error(depth, id_last):
    for frame in (deep_request(depth, 7, id_last=id_last), deep_request(depth, 'a"b').decode()):
        with pytest.raises(MessageTooDeepError) as refused:
            decode_message(frame)
        rid = refused.value.request_id  # type: ignore[attr-defined]
        # Past what the decoder can go (~1,000 levels), an id after 4,096 tokens is not read.
        assert rid in ((7, 'a"b') if depth < 2_000 or not id_last else (None, 'a"b'))
    with pytest.raises(MessageTooDeepError) as unbounded:  # no bound: still no RecursionError
        decode_message(deep_request(100_000), max_depth=None)
    assert "too deeply to decode" in unbounded.value.message


def test_brackets_and_escapes_inside_strings_do_not_count():
    tricky = {"a": '["]]]\\"[[[', "b": ["{", ["}", ["\\", ']"[']]], "c": "\\\\"}
    frame = json.dumps({"jsonrpc": "2.0", "id": 1, "result": tricky}).encode()
    assert not nests_deeper(frame, 5) and nests_deeper(frame, 4)  # message, result, b, 2 more
    assert isinstance(decode_message(frame, max_depth=5), JsonRpcResponse)
    with pytest.raises(MessageTooDeepError):
        decode_message(frame, max_depth=4)
    # Hiding depth behind string brackets does not work either.
    hidden = b'{"jsonrpc":"2.0","id":1,"result":' + b'["]",' * 80 + b"1" + b',"["]' * 80 + b"}"
    with pytest.raises(MessageTooDeepError):
        decode_message(hidden)
    with pytest.raises(ParseError):  # broken JSON stays a parse error
        decode_message(b'{"jsonrpc":"2.0","id":1,"result":' + b"[" * 80)


def _spec_schemas() -> list[Path]:
    return sorted((ROOT / "spec").glob("*/schema/schema.json"))


@pytest.mark.parametrize("path", _spec_schemas(), ids=lambda p: p.parent.parent.name)
def test_spec_shaped_messages_nest_well_within_the_default(path):
    """The deepest real messages carry JSON Schemas: a tools/list result whose tool's
    inputSchema holds a whole MCP schema document (every definition, nested as written)."""
    document = json.loads(path.read_text())
    tool = {"name": "t", "inputSchema": {"type": "object", "properties": {"spec": document}}}
    message = {"jsonrpc": "2.0", "id": 1, "result": {"tools": [tool] * 3}}
    frame = json.dumps(message).encode()
    assert _depth(message) <= DEFAULT_MAX_MESSAGE_DEPTH // 3  # a wide margin
    decoded = decode_message(frame)
    assert isinstance(decoded, JsonRpcResponse) and decoded.result == message["result"]


# -- in memory --------------------------------------------------------------------------------


class Raw(InMemoryPeer):
    async def send(self, frame: bytes) -> None:
        await self.client.send(frame)

    async def recv(self) -> dict[str, Any]:
        async with asyncio.timeout(WAIT):
            return json.loads(await self.client.receive())

    async def initialize(self) -> None:
        await self.send(
            b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":'
            b'"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
        )
        assert "result" in await self.recv()
        await self.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')

    async def ping(self, request_id: int) -> None:
        await self.send(b'{"jsonrpc":"2.0","id":%d,"method":"ping"}' % request_id)
        assert await self.recv() == {"jsonrpc": "2.0", "id": request_id, "result": {}}


async def test_in_memory_limit_exactly_and_past_it_and_the_connection_serves_on():
    async with Raw(McpServerApp(Hardening)) as raw:
        await raw.send(deep_request(1_000))
        assert_too_deep(await raw.recv(), 2)
        await raw.ping(3)
        await raw.send(deep_request(64, 4))
        assert await raw.recv() == {"jsonrpc": "2.0", "id": 4, "result": {}}
        await raw.send(deep_request(65, 5, id_last=True))
        assert_too_deep(await raw.recv(), 5)
        await raw.ping(6)


async def test_arguments_at_the_limit_reach_the_tool_and_the_answer_goes_back():
    async with Raw(McpServerApp(Hardening)) as raw:
        await raw.initialize()
        await raw.send(deep_arguments(64, 7))
        reply = await raw.recv()
        assert reply["id"] == 7 and reply["result"]["structuredContent"] == {"result": 61}
        await raw.send(deep_arguments(65, 8))
        assert_too_deep(await raw.recv(), 8)


async def test_the_bound_is_configurable_per_connection():
    async with Raw(McpServerApp(Hardening), max_message_depth=8) as raw:
        await raw.send(deep_request(8, 1))
        assert (await raw.recv())["result"] == {}
        await raw.send(deep_request(9, 2))
        assert_too_deep(await raw.recv(), 2, limit=8)


async def test_a_deep_schema_in_tools_list_reaches_the_client(connect):
    """End to end, both decoders (server and client) at their default."""
    document = json.loads((ROOT / "spec/2026-07-28/schema/schema.json").read_text())

    @mcp_server(name="deep-schema")
    class DeepSchema:
        @mcp_tool(input_schema={"type": "object", "properties": {"spec": document}})
        def described(self, spec: Any = None) -> str:
            return "ok"

    async with connect(McpServerApp(DeepSchema)) as client:
        tools = await client.list_tools()
        assert tools[0].input_schema["properties"]["spec"]["$schema"] == document["$schema"]


# -- stdio: a real subprocess -----------------------------------------------------------------

STDIO_SERVER = """
from mcpkit import McpServerApp, mcp_server, mcp_tool

@mcp_server(name="stdio-hardening")
class S:
    @mcp_tool()
    def add(self, a: int, b: int) -> int:
        return a + b

app = McpServerApp(S)
"""


async def test_stdio_answers_a_deep_message_and_keeps_serving(tmp_path):
    path = tmp_path / "server.py"
    path.write_text(STDIO_SERVER)
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "mcpkit",
        "run",
        str(path),
        cwd=str(ROOT),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        limit=1024 * 1024,
    )
    assert proc.stdin is not None and proc.stdout is not None

    async def exchange(frame: bytes) -> dict[str, Any]:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(frame + b"\n")
        await proc.stdin.drain()
        async with asyncio.timeout(WAIT):
            return json.loads(await proc.stdout.readline())

    try:
        init = await exchange(
            b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":'
            b'"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
        )
        assert init["result"]["serverInfo"]["name"] == "stdio-hardening"
        proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        assert_too_deep(await exchange(deep_request(1_000)), 2)
        assert await exchange(b'{"jsonrpc":"2.0","id":3,"method":"ping"}') == {
            "jsonrpc": "2.0",
            "id": 3,
            "result": {},
        }
        assert_too_deep(await exchange(deep_request(100_000, 4)), 4)
        assert_too_deep(await exchange(deep_request(65, 5, id_last=True)), 5)
        added = await exchange(
            b'{"jsonrpc":"2.0","id":6,"method":"tools/call",'
            b'"params":{"name":"add","arguments":{"a":2,"b":3}}}'
        )
        assert added["result"]["structuredContent"] == {"result": 5}
    finally:
        proc.stdin.close()
        async with asyncio.timeout(WAIT):
            code = await proc.wait()
        stderr = await proc.stderr.read() if proc.stderr is not None else b""
    assert code == 0
    assert b"Traceback" not in stderr, stderr.decode()


async def test_a_pipe_frame_that_raises_costs_that_frame_only(caplog):
    from mcpkit.transports import FramedPipes
    from mcpkit.transports._pipes import _ReadProtocol

    seen: list[bytes] = []

    def on_frame(frame: bytes) -> None:
        if frame == b"bad":
            raise RuntimeError("a bug behind the pipe")
        seen.append(frame)

    pipes = FramedPipes(on_frame)
    with caplog.at_level(logging.ERROR, logger="mcpkit.server"):
        _ReadProtocol(pipes).data_received(b"one\nbad\ntwo\n")
    assert seen == [b"one", b"two"]
    assert any(r.exc_info for r in caplog.records)


# -- Streamable HTTP, both eras; legacy SSE; WebSocket ----------------------------------------


@contextlib.asynccontextmanager
async def http_server(
    app: McpServerApp | None = None, **fields: Any
) -> AsyncIterator[tuple[str, Any, httpx.AsyncClient]]:
    async with (
        serving(app or McpServerApp(Hardening), **fields) as (url, asgi),
        httpx.AsyncClient(timeout=WAIT, trust_env=False) as http,
    ):
        yield url, asgi, http


async def test_streamable_http_handshake_era_refuses_deep_bodies_and_serves_on():
    async with asyncio.timeout(30), http_server() as (url, _, http):
        headers = await open_session(http, url)
        for frame, rid in ((deep_request(1_000), 2), (deep_request(65, 3, id_last=True), 3)):
            refused = await http.post(url, content=frame, headers=headers)
            assert refused.status_code == 400
            assert refused.headers["content-type"] == "application/json"
            assert_too_deep(refused.json(), rid)
        at_limit = await http.post(url, content=deep_request(64, 4), headers=headers)
        assert at_limit.status_code == 200 and at_limit.json() == {
            "jsonrpc": "2.0",
            "id": 4,
            "result": {},
        }
        called = await http.post(url, content=deep_arguments(64, 5), headers=headers)
        assert called.json()["result"]["structuredContent"] == {"result": 61}


async def test_streamable_http_2026_stateless_refuses_deep_bodies_and_serves_on():
    headers = {
        **ACCEPT,
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "depth",
    }
    async with asyncio.timeout(30), http_server() as (url, _, http):
        for frame, rid in (
            (deep_arguments(1_000, 2, meta=MODERN_META), 2),
            (deep_arguments(65, 3, meta=MODERN_META), 3),
        ):
            refused = await http.post(url, content=frame, headers=headers)
            assert refused.status_code == 400
            assert_too_deep(refused.json(), rid)
        called = await http.post(
            url, content=deep_arguments(64, 4, meta=MODERN_META), headers=headers
        )
        assert called.status_code == 200, called.text
        assert called.json()["id"] == 4
        assert called.json()["result"]["structuredContent"] == {"result": 61}


async def test_http_bound_comes_from_the_options():
    async with asyncio.timeout(30), http_server(max_message_depth=10) as (url, asgi, http):
        assert asgi.options.max_message_depth == 10
        headers = await open_session(http, url)
        assert (await http.post(url, content=deep_request(10), headers=headers)).status_code == 200
        refused = await http.post(url, content=deep_request(11), headers=headers)
        assert refused.status_code == 400
        assert_too_deep(refused.json(), 2, limit=10)


async def test_legacy_sse_answers_a_deep_post_on_the_stream_and_serves_on():
    async with (
        asyncio.timeout(30),
        http_server() as (url, _, http),
        LegacyStream(http, url) as stream,
    ):
        await stream.initialize()
        assert (await stream.post(deep_request(1_000))).status_code == 202
        assert_too_deep(await stream.next_message(), 2)
        assert (await stream.post({"jsonrpc": "2.0", "id": 3, "method": "ping"})).status_code == 202
        assert await stream.next_message() == {"jsonrpc": "2.0", "id": 3, "result": {}}


async def test_websocket_answers_a_deep_message_and_serves_on():
    async with asyncio.timeout(30), http_server() as (url, _, _http):
        ws_url = url.replace("http://", "ws://", 1) + "/ws"
        async with ws_connect(ws_url, **NO_PROXY, subprotocols=["mcp"], open_timeout=WAIT) as ws:

            async def exchange(frame: bytes | str) -> dict[str, Any]:
                await ws.send(frame)
                async with asyncio.timeout(WAIT):
                    return json.loads(await ws.recv())

            init = await exchange(
                '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":'
                '"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
            )
            assert "result" in init
            await ws.send('{"jsonrpc":"2.0","method":"notifications/initialized"}')
            assert_too_deep(await exchange(deep_request(1_000).decode()), 2)  # text
            assert_too_deep(await exchange(deep_request(65, 3)), 3)  # binary
            assert await exchange('{"jsonrpc":"2.0","id":4,"method":"ping"}') == {
                "jsonrpc": "2.0",
                "id": 4,
                "result": {},
            }


# -- the safety net ---------------------------------------------------------------------------


async def test_a_failing_session_store_is_a_json_rpc_500_not_a_bare_one(monkeypatch, caplog):
    caplog.set_level(logging.ERROR)
    async with asyncio.timeout(30), http_server() as (url, _, http):
        headers = await open_session(http, url)

        def broken(self: Any, session_id: str, owner: Any) -> Any:
            raise RuntimeError(SECRET)

        with monkeypatch.context() as patch:  # the lookup every POST of a session makes
            patch.setattr(StreamableSessionStore, "owned_here", broken)
            answer = await http.post(
                url, json={"jsonrpc": "2.0", "id": 2, "method": "ping"}, headers=headers
            )
        assert answer.status_code == 500
        assert answer.headers["content-type"] == "application/json"
        body = answer.json()
        assert body["jsonrpc"] == "2.0" and body["error"]["code"] == -32603
        record = logged_with_traceback(caplog, generic_id(body["error"]))
        assert record.name == "mcpkit.http"
        ping = await http.post(
            url, json={"jsonrpc": "2.0", "id": 3, "method": "ping"}, headers=headers
        )
        assert ping.json() == {"jsonrpc": "2.0", "id": 3, "result": {}}

        def unavailable(self: Any, session_id: str, owner: Any) -> Any:
            raise StoreUnavailableError("redis is down")

        with monkeypatch.context() as patch:  # the store_unavailable path is kept: 503
            patch.setattr(StreamableSessionStore, "owned_here", unavailable)
            outage = await http.post(
                url, json={"jsonrpc": "2.0", "id": 4, "method": "ping"}, headers=headers
            )
        assert outage.status_code == 503 and outage.json()["error"]["data"] == {"retryable": True}


async def test_an_exception_outside_any_handler_is_answered_on_every_transport(monkeypatch, caplog):
    caplog.set_level(logging.ERROR)
    app = McpServerApp(Hardening)
    real = app.dispatcher.dispatch

    async def dispatch(request: JsonRpcRequest, binding: Any = None) -> Any:
        if request.method == "ping" and request.id == 66:
            raise RuntimeError(SECRET)
        return await real(request, binding)

    monkeypatch.setattr(app.dispatcher, "dispatch", dispatch)
    async with Raw(app) as raw:  # a message stream: -32603 with the request's id
        await raw.send(b'{"jsonrpc":"2.0","id":66,"method":"ping"}')
        reply = await raw.recv()
        assert reply["id"] == 66
        logged_with_traceback(caplog, generic_id(reply["error"]))
        await raw.ping(67)
    async with asyncio.timeout(30), http_server(app) as (url, _, http):  # HTTP: a JSON 500
        headers = await open_session(http, url)
        answer = await http.post(
            url, json={"jsonrpc": "2.0", "id": 66, "method": "ping"}, headers=headers
        )
        assert answer.status_code == 500 and answer.json()["error"]["code"] == -32603
        generic_id(answer.json()["error"])
        ping = await http.post(
            url, json={"jsonrpc": "2.0", "id": 67, "method": "ping"}, headers=headers
        )
        assert ping.json()["result"] == {}


async def test_a_codec_bug_is_answered_and_the_connection_serves_on(monkeypatch, caplog):
    import mcpkit.server._engine.connection as connection_module

    caplog.set_level(logging.ERROR)
    real = connection_module.decode_message

    def decode(frame: Any, **bounds: Any) -> Any:
        if b"boom" in frame:
            raise ValueError(SECRET)
        return real(frame, **bounds)

    monkeypatch.setattr(connection_module, "decode_message", decode)
    async with Raw(McpServerApp(Hardening)) as raw:
        await raw.send(b'{"boom": 1}')
        reply = await raw.recv()
        assert "id" not in reply and reply["error"]["code"] == -32603
        logged_with_traceback(caplog, generic_id(reply["error"]))
        await raw.ping(2)


async def test_a_websocket_bug_closes_that_socket_only(monkeypatch, caplog):
    import mcpkit.transports.http._websocket as websocket_module

    caplog.set_level(logging.ERROR)

    async def broken(*args: Any) -> None:
        raise RuntimeError(SECRET)

    async with asyncio.timeout(30), http_server() as (url, _, http):
        monkeypatch.setattr(websocket_module, "serve_websocket", broken)
        ws_url = url.replace("http://", "ws://", 1) + "/ws"
        with pytest.raises(Exception):  # refused: the handshake never completes
            async with ws_connect(ws_url, **NO_PROXY, open_timeout=WAIT) as ws:
                await ws.recv()
        assert any("WebSocket connection failed" in r.getMessage() for r in caplog.records)
        monkeypatch.undo()
        headers = await open_session(http, url)
        ping = await http.post(
            url, json={"jsonrpc": "2.0", "id": 2, "method": "ping"}, headers=headers
        )
        assert ping.json()["result"] == {}


# -- no internals to clients ------------------------------------------------------------------


async def test_a_handler_bug_is_a_generic_error_with_an_id_and_the_detail_is_logged(
    connect, caplog
):
    caplog.set_level(logging.ERROR, logger="mcpkit.server")
    async with connect(McpServerApp(Hardening)) as client:
        with pytest.raises(McpCallError) as failed:
            await client.read_resource("data://broken")
        error = {"message": failed.value.message, "data": failed.value.data}
        assert failed.value.code == -32603
        record = logged_with_traceback(caplog, generic_id(error))
        assert "resources/read" in record.getMessage()
        assert record.exc_info is not None and SECRET in str(record.exc_info[1])
        # A tool's own exception is still its isError result, text included (the spec's
        # tool errors, meant for the model): only the unexpected path is generic.
        result = await client.call_tool("broken_tool")
        assert result.is_error and result.content[0].text == SECRET


async def test_expose_internal_errors_sends_the_detail_for_development(connect):
    async with connect(McpServerApp(Hardening, expose_internal_errors=True)) as client:
        with pytest.raises(McpCallError) as failed:
            await client.read_resource("data://broken")
    assert failed.value.code == -32603
    assert failed.value.message == f"Internal error: {SECRET}"
    assert set(failed.value.data) == {"errorId"}


async def test_a_bug_after_the_answer_started_ends_that_answer(monkeypatch, caplog):
    from mcpkit.transports.http._streamable.handler import StreamableHttpHandler

    caplog.set_level(logging.ERROR)

    async def half_answered(self: Any, scope: Any, receive: Any, send: Any, headers: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"partial", "more_body": True})
        raise RuntimeError(SECRET)

    async with asyncio.timeout(30), http_server() as (url, _, http):
        with monkeypatch.context() as patch:
            patch.setattr(StreamableHttpHandler, "post", half_answered)
            answer = await http.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert answer.status_code == 200 and answer.content == b"partial"  # ended, not hung
        assert any("HTTP request failed" in r.getMessage() for r in caplog.records)
        headers = await open_session(http, url)
        ping = await http.post(
            url, json={"jsonrpc": "2.0", "id": 2, "method": "ping"}, headers=headers
        )
        assert ping.json()["result"] == {}
