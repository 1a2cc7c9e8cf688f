"""Server spans over real Streamable HTTP: name, kind, attributes, parent from ``_meta``
(SEP-414) or from the HTTP headers, errors; and the client's span as their parent."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from opentelemetry.trace import SpanKind, StatusCode

from mcpkit import McpCallError, McpClient
from mcpkit.otel import instrument, instrument_client, uninstrument, uninstrument_client
from tests.http_server import serving
from tests.otel.recording import Recorder, traceparent, weather_app
from tests.waiting import wait_until
from tests.wire import initialize_request

ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
TRACE_ID = 0x4BF92F3577B34DA6A3CE929D0E0E4736
PARENT_ID = 0x00F067AA0BA902B7


class RawSession:
    """A handshake-era session spoken in plain HTTP, so the test writes every byte of ``_meta``."""

    def __init__(self, http: httpx.AsyncClient, url: str) -> None:
        self.http, self.url = http, url
        self.session_id = ""

    async def initialize(self) -> None:
        response = await self.http.post(self.url, json=initialize_request(), headers=ACCEPT)
        assert response.status_code == 200, response.text
        self.session_id = response.headers["mcp-session-id"]
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert (await self.post(note)).status_code == 202

    async def post(self, message: dict[str, Any], **headers: str) -> httpx.Response:
        sent = {**ACCEPT, "mcp-session-id": self.session_id, "mcp-protocol-version": "2025-11-25"}
        return await self.http.post(self.url, json=message, headers={**sent, **headers})

    async def call(
        self, request_id: int, name: str, meta: dict[str, Any] | None = None, **headers: str
    ) -> dict[str, Any]:
        params: dict[str, Any] = {"name": name, "arguments": {"city": "Oslo"}}
        if meta is not None:
            params["_meta"] = meta
        message = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
        response = await self.post(message, **headers)
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        return body


async def test_tools_call_span_is_parented_by_the_traceparent_in_meta(telemetry: Recorder):
    app = weather_app()
    instrument(app, **telemetry.providers)
    async with serving(app) as (url, _), httpx.AsyncClient(timeout=10) as http:
        session = RawSession(http, url)
        await session.initialize()
        meta = {
            "traceparent": traceparent(TRACE_ID, PARENT_ID),
            "tracestate": "rojo=00f067aa0ba902b7",
        }
        answer = await session.call(7, "get_weather", meta)
    assert answer["result"]["content"][0]["text"] == "Oslo: sunny"
    span = telemetry.span("tools/call get_weather", SpanKind.SERVER)
    assert span.parent is not None and span.parent.is_remote
    assert span.parent.span_id == PARENT_ID
    assert span.context.trace_id == TRACE_ID
    assert span.context.trace_state.get("rojo") == "00f067aa0ba902b7"
    assert dict(span.attributes or {}) == {
        "mcp.method.name": "tools/call",
        "gen_ai.tool.name": "get_weather",
        "gen_ai.operation.name": "execute_tool",
        "jsonrpc.request.id": "7",
        "mcp.session.id": session.session_id,
        "mcp.protocol.version": "2025-11-25",
        "network.transport": "tcp",
        "network.protocol.name": "http",
    }
    assert span.status.status_code is StatusCode.UNSET
    init = telemetry.span("initialize", SpanKind.SERVER)
    assert init.attributes is not None and init.attributes["mcp.protocol.version"] == "2025-11-25"
    assert init.parent is None  # no context sent: a root span


async def test_http_headers_parent_the_span_when_meta_has_no_context(telemetry: Recorder):
    app = weather_app()
    instrument(app, **telemetry.providers)
    header_parent = traceparent(TRACE_ID, 0x1111111111111111)
    async with serving(app) as (url, _), httpx.AsyncClient(timeout=10) as http:
        session = RawSession(http, url)
        await session.initialize()
        await session.call(2, "get_weather", traceparent=header_parent)
        # both: _meta wins, the HTTP request's span is linked
        meta = {"traceparent": traceparent(0xABC, PARENT_ID)}
        await session.call(3, "get_weather", meta, traceparent=header_parent)
    by_id = {
        (span.attributes or {})["jsonrpc.request.id"]: span
        for span in telemetry.spans(SpanKind.SERVER)
        if span.name == "tools/call get_weather"
    }
    from_headers = by_id["2"]
    assert from_headers.parent is not None and from_headers.parent.span_id == 0x1111111111111111
    assert from_headers.context.trace_id == TRACE_ID
    from_meta = by_id["3"]
    assert from_meta.parent is not None and from_meta.parent.span_id == PARENT_ID
    assert from_meta.context.trace_id == 0xABC
    assert [link.context.span_id for link in from_meta.links] == [0x1111111111111111]


async def test_errors_set_error_type_and_status(telemetry: Recorder):
    app = weather_app()
    instrument(app, **telemetry.providers)
    async with serving(app) as (url, _), httpx.AsyncClient(timeout=10) as http:
        session = RawSession(http, url)
        await session.initialize()
        unknown = await session.call(2, "no_such_tool")
        failing = await session.call(3, "broken")
        missing = await session.post({"jsonrpc": "2.0", "id": 4, "method": "no/such/method"})
    assert unknown["error"]["code"] == -32602
    span = telemetry.span("tools/call no_such_tool", SpanKind.SERVER)
    assert span.attributes is not None
    assert span.attributes["error.type"] == "-32602"
    assert span.attributes["rpc.response.status_code"] == "-32602"
    assert span.status.status_code is StatusCode.ERROR
    assert span.status.description == unknown["error"]["message"]

    assert (
        failing["result"]["isError"] is True
    )  # a tool's failure is a result, not a JSON-RPC error
    span = telemetry.span("tools/call broken", SpanKind.SERVER)
    assert span.attributes is not None and span.attributes["error.type"] == "tool_error"
    assert "rpc.response.status_code" not in span.attributes
    assert span.status.status_code is StatusCode.ERROR

    assert missing.json()["error"]["code"] == -32601
    span = telemetry.span("no/such/method", SpanKind.SERVER)
    assert span.attributes is not None and span.attributes["error.type"] == "-32601"


async def test_client_span_is_the_parent_of_the_server_span_handshake_era(telemetry: Recorder):
    app = weather_app()
    instrument(app, **telemetry.providers)
    async with serving(app) as (url, _):
        client = McpClient.http(url, protocol_mode="legacy")
        instrument_client(client, **telemetry.providers)
        async with client:
            result = await client.call_tool("get_weather", {"city": "Oslo"})
            session_id = client.session_id
    assert result.content[0].text == "Oslo: sunny"  # type: ignore[union-attr]
    client_span = telemetry.span("tools/call get_weather", SpanKind.CLIENT)
    server_span = telemetry.span("tools/call get_weather", SpanKind.SERVER)
    assert server_span.context.trace_id == client_span.context.trace_id
    assert server_span.parent is not None
    assert server_span.parent.span_id == client_span.context.span_id
    attributes = dict(client_span.attributes or {})
    assert attributes["mcp.method.name"] == "tools/call"
    assert attributes["gen_ai.tool.name"] == "get_weather"
    assert attributes["mcp.protocol.version"] == "2025-11-25"
    assert attributes["mcp.session.id"] == session_id
    assert attributes["network.transport"] == "tcp"
    assert attributes["jsonrpc.request.id"] == (server_span.attributes or {})["jsonrpc.request.id"]
    # the client's initialize is the parent of the server's too
    init_client = telemetry.span("initialize", SpanKind.CLIENT)
    init_server = telemetry.span("initialize", SpanKind.SERVER)
    assert init_server.parent is not None
    assert init_server.parent.span_id == init_client.context.span_id


async def test_client_span_is_the_parent_of_the_server_span_2026_era(telemetry: Recorder):
    app = weather_app()
    instrument(app, **telemetry.providers)
    async with serving(app) as (url, _):
        client = McpClient.http(url, protocol_version="2026-07-28")
        instrument_client(client, **telemetry.providers)
        async with client:
            await client.call_tool("get_weather", {"city": "Oslo"})
            with pytest.raises(McpCallError) as raised:
                await client.get_prompt("no_such_prompt", {})
    client_span = telemetry.span("tools/call get_weather", SpanKind.CLIENT)
    server_span = telemetry.span("tools/call get_weather", SpanKind.SERVER)
    assert server_span.parent is not None
    assert server_span.parent.span_id == client_span.context.span_id
    assert server_span.context.trace_id == client_span.context.trace_id
    server_attributes = dict(server_span.attributes or {})
    assert server_attributes["mcp.protocol.version"] == "2026-07-28"
    assert "mcp.session.id" not in server_attributes  # the 2026-07-28 era has no sessions
    assert (client_span.attributes or {})["mcp.protocol.version"] == "2026-07-28"
    # an error answered to the client: both sides say so, with the same code
    code = str(raised.value.code)
    failed_client = telemetry.span("prompts/get no_such_prompt", SpanKind.CLIENT)
    failed_server = telemetry.span("prompts/get no_such_prompt", SpanKind.SERVER)
    for span in (failed_client, failed_server):
        assert span.attributes is not None
        assert span.attributes["error.type"] == code
        assert span.attributes["rpc.response.status_code"] == code
        assert span.attributes["gen_ai.prompt.name"] == "no_such_prompt"
        assert span.status.status_code is StatusCode.ERROR


async def test_uninstrumented_app_records_nothing(telemetry: Recorder):
    app = weather_app()
    instrument(app, **telemetry.providers)
    uninstrument(app)
    assert app.dispatcher.telemetry is None
    assert "dispatch" not in vars(app.dispatcher)  # a wrapper around dispatch, never a swap
    async with serving(app) as (url, _), httpx.AsyncClient(timeout=10) as http:
        session = RawSession(http, url)
        await session.initialize()
        await session.call(2, "get_weather", {"traceparent": traceparent(TRACE_ID, PARENT_ID)})
    assert telemetry.spans() == []


async def test_unusable_trace_context_in_meta_makes_a_root_span_and_the_call_still_runs(
    telemetry: Recorder,
):
    app = weather_app()
    instrument(app, **telemetry.providers)
    async with serving(app) as (url, _), httpx.AsyncClient(timeout=10) as http:
        session = RawSession(http, url)
        await session.initialize()
        garbled = await session.call(2, "get_weather", {"traceparent": "00-not-a-trace-01"})
        not_text = await session.call(3, "get_weather", {"traceparent": 5, "tracestate": ["x"]})
    for answer in (garbled, not_text):
        assert answer["result"]["content"][0]["text"] == "Oslo: sunny"
    spans = [s for s in telemetry.spans(SpanKind.SERVER) if s.name == "tools/call get_weather"]
    assert len(spans) == 2
    assert all(span.parent is None for span in spans)
    assert len({span.context.trace_id for span in spans}) == 2  # two new traces


async def test_uninstrumented_client_sends_no_trace_context(telemetry: Recorder):
    app = weather_app()
    server = instrument(app, **telemetry.providers)
    async with serving(app) as (url, _):
        client = McpClient.http(url, protocol_mode="legacy")
        instrument_client(client, **telemetry.providers)
        uninstrument_client(client)
        assert "request" not in vars(client.session)
        async with client:
            await client.call_tool("get_weather", {"city": "Oslo"})
    assert telemetry.spans(SpanKind.CLIENT) == []
    served = telemetry.span("tools/call get_weather", SpanKind.SERVER)
    assert served.parent is None  # nothing in _meta to be parented by
    # the client closed its session (DELETE)
    await wait_until(lambda: server.active_sessions == 0, "the session to be closed")
