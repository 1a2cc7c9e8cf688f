"""Spans and metrics kept in memory by the OpenTelemetry SDK, and the app the tests serve."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from mcpkit import McpServerApp, mcp_prompt, mcp_server, mcp_tool


@mcp_server(name="weather", version="1.0.0")
class Weather:
    @mcp_tool()
    async def get_weather(self, city: str) -> str:
        """The weather in a city."""
        return f"{city}: sunny"

    @mcp_tool()
    async def broken(self) -> str:
        """Always fails."""
        raise RuntimeError("the sensor is down")

    @mcp_prompt()
    def plan(self, city: str) -> str:
        """Plan a trip."""
        return f"Plan a weekend in {city}."


def weather_app() -> McpServerApp:
    return McpServerApp(Weather)


@dataclass
class Recorder:
    """Where instrumented code sends its telemetry in a test."""

    tracer_provider: TracerProvider
    meter_provider: MeterProvider
    spans_out: InMemorySpanExporter
    metrics_in: InMemoryMetricReader

    @property
    def providers(self) -> dict[str, Any]:
        return {"tracer_provider": self.tracer_provider, "meter_provider": self.meter_provider}

    def spans(self, kind: SpanKind | None = None) -> list[ReadableSpan]:
        found = self.spans_out.get_finished_spans()
        return [span for span in found if kind is None or span.kind == kind]

    def span(self, name: str, kind: SpanKind) -> ReadableSpan:
        """The one finished span of this name and kind."""
        found = [span for span in self.spans(kind) if span.name == name]
        assert len(found) == 1, [(span.name, span.kind) for span in self.spans()]
        return found[0]

    def points(self, metric: str) -> list[Any]:
        """Every data point of ``metric`` collected now."""
        data = self.metrics_in.get_metrics_data()
        out: list[Any] = []
        if data is None:
            return out
        for resource in data.resource_metrics:
            for scope in resource.scope_metrics:
                for found in scope.metrics:
                    if found.name == metric:
                        out.extend(found.data.data_points)
        return out


def recorder() -> Iterator[Recorder]:
    spans_out = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans_out))
    metrics_in = InMemoryMetricReader()
    meter_provider = MeterProvider(metric_readers=[metrics_in])
    yield Recorder(tracer_provider, meter_provider, spans_out, metrics_in)
    tracer_provider.shutdown()
    meter_provider.shutdown()


def traceparent(trace_id: int, span_id: int) -> str:
    return f"00-{trace_id:032x}-{span_id:016x}-01"
