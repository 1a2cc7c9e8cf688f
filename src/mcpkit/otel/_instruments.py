"""What the server and client telemetry both make and do: the tracer, the operation-duration
histogram, and marking a span failed."""

from __future__ import annotations

from typing import Any

from opentelemetry import metrics, trace

from mcpkit._version import __version__
from mcpkit.otel._conventions import DURATION_BUCKETS, ERROR_TYPE


def instruments(
    duration_name: str,
    duration_description: str,
    tracer_provider: trace.TracerProvider | None,
    meter_provider: metrics.MeterProvider | None,
) -> tuple[trace.Tracer, metrics.Meter, metrics.Histogram]:
    """mcpkit's tracer and meter from the providers (None: the global ones), and the
    operation-duration histogram named ``duration_name``, in seconds."""
    tracer = trace.get_tracer("mcpkit", __version__, tracer_provider)
    meter = metrics.get_meter("mcpkit", __version__, meter_provider)
    duration = meter.create_histogram(
        duration_name,
        unit="s",
        description=duration_description,
        explicit_bucket_boundaries_advisory=list(DURATION_BUCKETS),
    )
    return tracer, meter, duration


def mark_failed(
    span: trace.Span, attributes: dict[str, Any], error_type: str, message: str | None
) -> None:
    """``error.type`` on the span and in the metric ``attributes``; the span's status ERROR."""
    attributes[ERROR_TYPE] = error_type
    span.set_attribute(ERROR_TYPE, error_type)
    span.set_status(trace.StatusCode.ERROR, message)


__all__ = ["instruments", "mark_failed"]
