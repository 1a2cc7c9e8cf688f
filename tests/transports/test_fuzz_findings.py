"""Regressions for what the live fuzzer (tests/fuzz/) found in the codec and the transports:
each test names the input that went wrong and what the spec asks instead."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from mcpkit import InvalidRequestError, McpServerApp, McpToolContext, mcp_server, mcp_tool
from mcpkit.protocol import JsonRpcErrorResponse, SseDecoder, decode_message, encode_message
from mcpkit.server import ServerConnection
from tests.http_server import serving
from tests.wire import initialize_request

ACCEPT_BOTH = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
JSON_ONLY = {"accept": "application/json", "content-type": "application/json"}
MODERN = "2026-07-28"
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
}
#: Seconds within which every answer here must come (the defects were hangs of 5 s and more).
PROMPT = 3.0


@mcp_server(name="fuzz-findings")
class Findings:
    @mcp_tool()
    async def add(self, a: int, b: int) -> int:
        return a + b

    @mcp_tool()
    async def ask_model(self, ctx: McpToolContext) -> str:
        await ctx.sample("Say hi", max_tokens=5)
        return "sampled"

    @mcp_tool()
    async def reconnect(self, ctx: McpToolContext) -> str:
        await ctx.close_sse_stream()  # as examples/everything.py's test_reconnection
        await asyncio.sleep(0.05)
        return "reconnected"


@pytest.fixture
def app() -> McpServerApp:
    return McpServerApp(Findings)


def sse_events(body: bytes) -> list[tuple[str | None, Any]]:
    return [(e.id, json.loads(e.data) if e.data else None) for e in SseDecoder().feed(body)]


def answers(response: httpx.Response) -> list[dict[str, Any]]:
    """The JSON-RPC messages of a POST's answer, JSON or SSE."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        return [data for _, data in sse_events(response.content) if data is not None]
    return [response.json()] if response.content else []


async def open_session(http: httpx.AsyncClient, url: str, version: str) -> dict[str, str]:
    """Initialize a handshake-era session (with sampling); its headers for later requests."""
    init = initialize_request(version)
    init = {**init, "params": {**init["params"], "capabilities": {"sampling": {}}}}
    response = await http.post(url, json=init, headers=ACCEPT_BOTH)
    assert response.status_code == 200, response.text
    headers = {"mcp-session-id": response.headers["mcp-session-id"]}
    headers["mcp-protocol-version"] = version
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert (await http.post(url, json=note, headers=ACCEPT_BOTH | headers)).status_code == 202
    return headers


def call(request_id: Any, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments or {}}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


# --------------------------------------------------------------------------- A, B: the codec

ID_LESS_ERROR = b'{"jsonrpc":"2.0","error":{"code":-32603,"message":"fuzz"}}'


def test_an_error_response_without_id_decodes_as_one():
    # 2025-11-25 JSONRPCErrorResponse: "id" is optional (never null); error_response(None, ...)
    # writes that shape, so the decoder must read it back.
    decoded = decode_message(ID_LESS_ERROR)
    assert isinstance(decoded, JsonRpcErrorResponse)
    assert decoded.id is None and decoded.code == -32603
    # ... and encodes back to the same shape: no "id": null.
    assert json.loads(encode_message(decoded)) == json.loads(ID_LESS_ERROR)
    null_id = decode_message(b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}')
    assert isinstance(null_id, JsonRpcErrorResponse) and null_id.id is None


@pytest.mark.parametrize(
    "frame, request_id",
    [
        (b'{"jsonrpc":"2.0","id":1,"error":{"code":true,"message":"x"}}', 1),
        (b'{"jsonrpc":"2.0","id":1,"error":{"code":false,"message":"x"}}', 1),
        (b'{"jsonrpc":"2.0","id":1,"error":{"code":1.0,"message":"x"}}', 1),
        (b'{"jsonrpc":"2.0","error":{"code":true,"message":"x"}}', None),
        (b'{"jsonrpc":"2.0","id":true,"result":{}}', None),
        (b'{"jsonrpc":"2.0","id":true,"method":"ping"}', None),
        (b'{"jsonrpc":"2.0","id":false,"method":"ping"}', None),
    ],
)
def test_booleans_are_neither_error_codes_nor_ids(frame: bytes, request_id: Any):
    # bool is an int subclass in Python; JSON true is not an integer.
    with pytest.raises(InvalidRequestError) as info:
        decode_message(frame)
    assert getattr(info.value, "request_id", None) == request_id


@pytest.mark.parametrize("modern", [False, True], ids=["handshake", "modern"])
async def test_a_server_drops_an_error_response_without_id(app, modern):
    # Over stdio (ServerConnection) it was answered with -32600: never answer an answer.
    sent: list[dict[str, Any]] = []

    async def write(frame: bytes) -> None:
        sent.append(json.loads(frame))

    connection = ServerConnection(app, write)
    try:
        connection.feed(ID_LESS_ERROR)
        connection.feed(b'{"jsonrpc":"2.0","error":{"code":7,"message":"fuzz"},"id":null}')
        ping: dict[str, Any] = {"jsonrpc": "2.0", "id": "after", "method": "ping"}
        if modern:
            ping = {**ping, "method": "tools/list", "params": {"_meta": MODERN_META}}
        connection.feed(encode_message(ping))
        async with asyncio.timeout(PROMPT):
            while not sent:
                await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)
        assert [m.get("id") for m in sent] == ["after"] and "result" in sent[0]
    finally:
        await connection.close()


async def test_an_error_response_without_id_posted_in_a_session_is_accepted(app):
    async with serving(app) as (url, _), httpx.AsyncClient(timeout=PROMPT) as http:
        session = await open_session(http, url, "2025-11-25")
        response = await http.post(url, content=ID_LESS_ERROR, headers=ACCEPT_BOTH | session)
        assert response.status_code == 202 and response.content == b""


# --------------------------------------------------------------------------- C: 2026-07-28 types


def modern_headers(method: str, name: str | None = None) -> dict[str, str]:
    headers = {**ACCEPT_BOTH, "mcp-protocol-version": MODERN, "mcp-method": method}
    if name is not None:
        headers["mcp-name"] = name
    return headers


@pytest.mark.parametrize(
    "method, params",
    [
        ("tools/call", {"name": {"x": 1}, "arguments": {}}),
        ("tools/call", {"name": ["add"], "arguments": {}}),
        ("prompts/get", {"name": {"x": 1}}),
        ("resources/read", {"uri": ["m://a"]}),
        ("tasks/get", {"taskId": {"x": 1}}),
        (
            "tools/list",
            {"_meta": {**MODERN_META, "io.modelcontextprotocol/protocolVersion": {"v": MODERN}}},
        ),
        (
            "tools/list",
            {"_meta": {**MODERN_META, "io.modelcontextprotocol/protocolVersion": [MODERN]}},
        ),
    ],
)
async def test_modern_request_fields_of_the_wrong_type_are_invalid_params(app, method, params):
    # Each crashed with HTTP 500 (TypeError: unhashable) in a header or catalog lookup.
    params = {"_meta": MODERN_META, **params}
    body = {"jsonrpc": "2.0", "id": 7, "method": method, "params": params}
    async with serving(app) as (url, _), httpx.AsyncClient(timeout=PROMPT) as http:
        response = await http.post(url, json=body, headers=modern_headers(method, "add"))
        assert response.status_code == 400, response.text
        assert response.headers["mcp-protocol-version"] == MODERN
        reply = response.json()
        assert reply["id"] == 7 and reply["error"]["code"] == -32602
        # Still serving, and a well-typed call still runs.
        good = {"jsonrpc": "2.0", "id": 8, "method": "tools/call"}
        good["params"] = {"name": "add", "arguments": {"a": 1, "b": 2}, "_meta": MODERN_META}
        response = await http.post(url, json=good, headers=modern_headers("tools/call", "add"))
        assert response.json()["result"]["structuredContent"] == {"result": 3}


async def test_a_non_string_meta_version_is_invalid_params_on_stdio_too(app):
    sent: list[dict[str, Any]] = []

    async def write(frame: bytes) -> None:
        sent.append(json.loads(frame))

    connection = ServerConnection(app, write)
    meta = {**MODERN_META, "io.modelcontextprotocol/protocolVersion": {"v": MODERN}}
    try:
        connection.feed(
            encode_message(
                {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta}}
            )
        )
        async with asyncio.timeout(PROMPT):
            while not sent:
                await asyncio.sleep(0.01)
        assert sent[0]["id"] == 1 and sent[0]["error"]["code"] == -32602
    finally:
        await connection.close()


# --------------------------------------------------------------------------- D: listen needs SSE


@pytest.mark.parametrize("accept", [None, "application/json"], ids=["no-accept", "json-only"])
async def test_listen_without_sse_in_accept_is_refused_at_once(app, accept):
    # It got no answer at all: the listen stream has nowhere to go in one JSON object.
    body = {
        "jsonrpc": "2.0",
        "id": 181,
        "method": "subscriptions/listen",
        "params": {"_meta": MODERN_META, "notifications": {"toolsListChanged": True}},
    }
    headers = modern_headers("subscriptions/listen")
    del headers["accept"]
    if accept is not None:
        headers["accept"] = accept
    async with serving(app) as (url, _), httpx.AsyncClient(timeout=PROMPT) as http:
        response = await http.post(url, json=body, headers=headers)
        assert response.status_code == 406
        assert response.headers["mcp-protocol-version"] == MODERN
        reply = response.json()
        assert reply["id"] == 181 and reply["error"]["code"] == -32600
        assert "text/event-stream" in reply["error"]["message"]


# --------------------------------------------------------------------------- E: no way to the client


@pytest.mark.parametrize("version", ["2025-11-25", "2025-06-18", "2025-03-26"])
async def test_a_request_to_a_json_only_client_fails_at_once(app, version):
    # A JSON-only POST has no stream, and no GET is open: the sampling request could reach
    # the client nowhere, and the call waited for its answer (the client request timeout).
    async with serving(app) as (url, _), httpx.AsyncClient(timeout=PROMPT) as http:
        session = await open_session(http, url, version)
        response = await http.post(url, json=call(5, "ask_model"), headers=JSON_ONLY | session)
        assert response.status_code == 200
        reply = response.json()
        assert reply["id"] == 5
        assert reply["result"]["isError"] is True
        assert "application/json" in reply["result"]["content"][0]["text"]


async def test_a_request_to_a_json_only_client_goes_on_its_open_get_stream(app):
    # With a GET stream open, that stream carries it (the only way to the client left).
    async with serving(app) as (url, _), httpx.AsyncClient(timeout=PROMPT) as http:
        session = await open_session(http, url, "2025-11-25")
        get_headers = {"accept": "text/event-stream", **session}
        async with http.stream("GET", url, headers=get_headers) as stream:
            assert stream.status_code == 200
            tool = asyncio.create_task(
                http.post(url, json=call(6, "ask_model"), headers=JSON_ONLY | session)
            )
            decoder = SseDecoder()
            asked = None
            async with asyncio.timeout(PROMPT):
                async for chunk in stream.aiter_raw():
                    for event in decoder.feed(chunk):
                        if event.data and "sampling/createMessage" in event.data:
                            asked = json.loads(event.data)
                    if asked is not None:
                        break
            assert asked is not None
            answer = {
                "jsonrpc": "2.0",
                "id": asked["id"],
                "result": {
                    "role": "assistant",
                    "content": {"type": "text", "text": "hi"},
                    "model": "m",
                },
            }
            posted = await http.post(url, json=answer, headers=ACCEPT_BOTH | session)
            assert posted.status_code == 202
            response = await tool
        reply = response.json()
        assert reply["id"] == 6 and reply["result"]["content"][0]["text"] == "sampled"


# --------------------------------------------------------------------------- F: early close


@pytest.mark.parametrize("version", ["2025-06-18", "2025-03-26"])
async def test_before_2025_11_25_a_call_never_closes_its_stream_early(app, version):
    # SEP-1699's close-to-poll is 2025-11-25's: before it there is no priming event id to
    # resume from, and the call's answer was lost in a stream ended empty.
    async with serving(app) as (url, _), httpx.AsyncClient(timeout=PROMPT) as http:
        session = await open_session(http, url, version)
        response = await http.post(url, json=call(3, "reconnect"), headers=ACCEPT_BOTH | session)
        assert response.status_code == 200
        [reply] = answers(response)
        assert reply["id"] == 3 and reply["result"]["content"][0]["text"] == "reconnected"


async def test_in_2025_11_25_a_call_still_closes_its_stream_for_the_client_to_resume(app):
    async with serving(app) as (url, _), httpx.AsyncClient(timeout=PROMPT) as http:
        session = await open_session(http, url, "2025-11-25")
        response = await http.post(url, json=call(4, "reconnect"), headers=ACCEPT_BOTH | session)
        events = sse_events(response.content)
        assert events and all(data is None for _, data in events)  # the priming event only
        last_id = events[-1][0]
        assert last_id
        headers = {"accept": "text/event-stream", "last-event-id": last_id, **session}
        resumed = await http.get(url, headers=headers)
        [reply] = [data for _, data in sse_events(resumed.content) if data is not None]
        assert reply["id"] == 4 and reply["result"]["content"][0]["text"] == "reconnected"


# --------------------------------------------------------------------------- L and 415: refusals


async def test_refusing_a_posted_response_never_echoes_its_id(app):
    # The -32022 refusal carried "id": "f-1407", which could resolve the client's own
    # request of that id.
    response_frame = {"jsonrpc": "2.0", "result": [], "id": "f-1407"}
    headers = ACCEPT_BOTH | {"mcp-protocol-version": "1999-01-01"}
    async with serving(app) as (url, _), httpx.AsyncClient(timeout=PROMPT) as http:
        response = await http.post(url, json=response_frame, headers=headers)
        assert response.status_code == 400
        reply = response.json()
        assert reply["error"]["code"] == -32022 and "id" not in reply
        error_frame = {"jsonrpc": "2.0", "error": {"code": 1, "message": "x"}, "id": "f-1408"}
        reply = (await http.post(url, json=error_frame, headers=headers)).json()
        assert reply["error"]["code"] == -32022 and "id" not in reply
        # A request's refusal still carries its id.
        request = initialize_request("2025-11-25", "r-1")
        reply = (await http.post(url, json=request, headers=headers)).json()
        assert reply["error"]["code"] == -32022 and reply["id"] == "r-1"


async def test_a_wrong_content_type_is_refused_with_a_json_rpc_error(app):
    async with serving(app) as (url, _), httpx.AsyncClient(timeout=PROMPT) as http:
        response = await http.post(
            url,
            content=encode_message(initialize_request()),
            headers={"accept": ACCEPT_BOTH["accept"], "content-type": "text/plain"},
        )
        assert response.status_code == 415
        assert response.headers["content-type"] == "application/json"
        reply = response.json()
        assert reply["jsonrpc"] == "2.0" and "id" not in reply
        assert reply["error"]["code"] == -32600
        assert "application/json" in reply["error"]["message"]
