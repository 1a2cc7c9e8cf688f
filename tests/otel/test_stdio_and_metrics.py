"""Spans over stdio (a real server process) and in memory, and the metrics."""

from __future__ import annotations

import asyncio
import json
import sys
import textwrap
from pathlib import Path

from opentelemetry.trace import SpanKind

from mcpkit import McpClient
from mcpkit.client import StdioClientTransportOptions
from mcpkit.otel import instrument, instrument_client
from tests.otel.recording import Recorder, weather_app
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]

#: A stdio server that writes each finished span, one JSON object a line, to a file.
STDIO_SERVER = textwrap.dedent(
    """
    import os

    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor

    from mcpkit.otel import instrument
    from tests.otel.recording import weather_app

    out = open(os.environ["SPANS_FILE"], "w")
    provider = TracerProvider()
    provider.add_span_processor(
        SimpleSpanProcessor(
            ConsoleSpanExporter(out=out, formatter=lambda span: span.to_json(indent=None) + "\\n")
        )
    )
    app = weather_app()
    instrument(app, tracer_provider=provider)
    """
)


async def test_stdio_server_span_is_a_child_of_the_client_span(telemetry: Recorder, tmp_path):
    server = tmp_path / "server.py"
    server.write_text(STDIO_SERVER)
    spans_file = tmp_path / "spans.jsonl"
    options = StdioClientTransportOptions(
        command=sys.executable,
        arguments=["-m", "mcpkit", "run", str(server)],
        working_directory=str(ROOT),
        environment_variables={"SPANS_FILE": str(spans_file)},
    )
    client = McpClient.stdio(options, protocol_mode="legacy")
    instrument_client(client, **telemetry.providers)
    async with asyncio.timeout(20), client:
        await client.call_tool("get_weather", {"city": "Oslo"})
    served = [json.loads(line) for line in spans_file.read_text().splitlines()]
    call = next(span for span in served if span["name"] == "tools/call get_weather")
    assert call["kind"] == "SpanKind.SERVER"
    assert call["attributes"]["network.transport"] == "pipe"
    assert call["attributes"]["mcp.protocol.version"] == "2025-11-25"
    assert "mcp.session.id" not in call["attributes"]  # stdio has no session id
    client_span = telemetry.span("tools/call get_weather", SpanKind.CLIENT)
    assert (client_span.attributes or {})["network.transport"] == "pipe"
    assert call["context"]["trace_id"] == f"0x{client_span.context.trace_id:032x}"
    assert call["parent_id"] == f"0x{client_span.context.span_id:016x}"


async def test_metrics_durations_and_active_sessions(telemetry: Recorder):
    app = weather_app()
    server = instrument(app, **telemetry.providers)
    client = McpClient.in_memory(app, protocol_mode="legacy")
    instrument_client(client, **telemetry.providers)
    async with client:
        for _ in range(3):
            await client.call_tool("get_weather", {"city": "Oslo"})
        await client.call_tool("broken")
        sessions = telemetry.points("mcp.server.session.active")
        assert [point.value for point in sessions] == [1]
    await wait_until(lambda: server.active_sessions == 0, "the session to close")
    assert [point.value for point in telemetry.points("mcp.server.session.active")] == [0]

    for metric in ("mcp.server.operation.duration", "mcp.client.operation.duration"):
        points = telemetry.points(metric)
        calls = [
            point for point in points if point.attributes.get("gen_ai.tool.name") == "get_weather"
        ]
        assert len(calls) == 1 and calls[0].count == 3, metric
        assert calls[0].attributes["mcp.method.name"] == "tools/call"
        assert "error.type" not in calls[0].attributes
        # the buckets the conventions ask for
        assert tuple(calls[0].explicit_bounds) == (
            0.01,
            0.02,
            0.05,
            0.1,
            0.2,
            0.5,
            1,
            2,
            5,
            10,
            30,
            60,
            120,
            300,
        )
        assert 0 < calls[0].sum < 5
        failed = [point for point in points if point.attributes.get("gen_ai.tool.name") == "broken"]
        assert len(failed) == 1 and failed[0].attributes["error.type"] == "tool_error"
        # no high-cardinality attribute on a metric
        assert all("jsonrpc.request.id" not in point.attributes for point in points)
        assert all("mcp.session.id" not in point.attributes for point in points)


async def test_open_listen_streams_are_counted(telemetry: Recorder):
    app = weather_app()
    instrument(app, **telemetry.providers)

    def open_streams() -> int:
        return sum(point.value for point in telemetry.points("mcp.server.stream.active"))

    client = McpClient.in_memory(app, protocol_version="2026-07-28")
    async with client:
        async with client.listen(tools_list_changed=True):
            await wait_until(lambda: open_streams() == 1, "the listen stream to be counted")
            await client.call_tool("get_weather", {"city": "Oslo"})
            assert open_streams() == 1  # a plain call is no stream
        await wait_until(lambda: open_streams() == 0, "the listen stream to end")
    listen = telemetry.span("subscriptions/listen", SpanKind.SERVER)
    assert (listen.attributes or {})["mcp.protocol.version"] == "2026-07-28"
