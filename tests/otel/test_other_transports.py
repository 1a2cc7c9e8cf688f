"""Server spans over the legacy HTTP+SSE and WebSocket transports, each the child of the
mcpkit client's span."""

from __future__ import annotations

import asyncio

from opentelemetry.trace import SpanKind

from mcpkit import McpClient
from mcpkit.client import HttpClientTransportOptions, HttpTransportMode
from mcpkit.otel import instrument, instrument_client
from tests.http_server import serving
from tests.otel.recording import Recorder, weather_app


def assert_client_parents_server(telemetry: Recorder) -> dict[str, object]:
    """The server's ``tools/call`` span is the child of the client's; returns its attributes."""
    client_span = telemetry.span("tools/call get_weather", SpanKind.CLIENT)
    server_span = telemetry.span("tools/call get_weather", SpanKind.SERVER)
    assert server_span.parent is not None
    assert server_span.parent.span_id == client_span.context.span_id
    assert server_span.context.trace_id == client_span.context.trace_id
    return dict(server_span.attributes or {})


async def test_legacy_sse(telemetry: Recorder):
    app = weather_app()
    instrument(app, **telemetry.providers)
    async with asyncio.timeout(30), serving(app) as (url, _):
        options = HttpClientTransportOptions(
            endpoint=f"{url}/sse", transport_mode=HttpTransportMode.SSE
        )
        client = McpClient.http(options, protocol_version="2024-11-05", protocol_mode="legacy")
        instrument_client(client, **telemetry.providers)
        async with client:
            await client.call_tool("get_weather", {"city": "Oslo"})
    attributes = assert_client_parents_server(telemetry)
    assert attributes["network.transport"] == "tcp"
    assert attributes["network.protocol.name"] == "http"
    assert attributes["mcp.protocol.version"] == "2024-11-05"
    session_id = attributes["mcp.session.id"]  # the id in the endpoint's ?session_id=
    assert isinstance(session_id, str) and len(session_id) >= 16


async def test_websocket(telemetry: Recorder):
    app = weather_app()
    instrument(app, **telemetry.providers)
    async with asyncio.timeout(30), serving(app) as (url, _):
        client = McpClient.websocket(url.replace("http://", "ws://", 1) + "/ws")
        instrument_client(client, **telemetry.providers)
        async with client:
            await client.call_tool("get_weather", {"city": "Oslo"})
    attributes = assert_client_parents_server(telemetry)
    assert attributes["network.transport"] == "tcp"
    assert attributes["network.protocol.name"] == "websocket"
    client_span = telemetry.span("tools/call get_weather", SpanKind.CLIENT)
    assert (client_span.attributes or {})["network.protocol.name"] == "websocket"
