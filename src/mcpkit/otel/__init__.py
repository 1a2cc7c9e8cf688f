"""OpenTelemetry tracing and metrics for MCP traffic (``pip install 'mcpkit[otel]'``).

``instrument(app)`` traces every request a ``McpServerApp`` serves (every transport, both
eras); ``instrument_client(client)`` every request a ``McpClient`` sends. Nothing is
traced until one of them is called, and the rest of mcpkit never imports OpenTelemetry.
Names follow the OpenTelemetry semantic conventions for MCP (``SEMCONV_VERSION``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcpkit._extras import require

require("opentelemetry.trace", "otel", "mcpkit.otel")

from opentelemetry.metrics import MeterProvider  # noqa: E402
from opentelemetry.trace import TracerProvider  # noqa: E402

from mcpkit.otel._client import McpClientTelemetry  # noqa: E402
from mcpkit.otel._conventions import SEMCONV_VERSION  # noqa: E402
from mcpkit.otel._server import DEFAULT_MAX_TRACKED_SESSIONS, McpServerTelemetry  # noqa: E402

if TYPE_CHECKING:
    from mcpkit.client._client import McpClient
    from mcpkit.server._app import McpServerApp


def instrument(
    app: McpServerApp,
    *,
    tracer_provider: TracerProvider | None = None,
    meter_provider: MeterProvider | None = None,
    max_tracked_sessions: int = DEFAULT_MAX_TRACKED_SESSIONS,
) -> McpServerTelemetry:
    """Trace and measure every request ``app`` serves from now on; returns the telemetry.
    The providers default to the global ones. Instrumenting again replaces the previous
    telemetry."""
    telemetry = McpServerTelemetry(
        app,
        tracer_provider=tracer_provider,
        meter_provider=meter_provider,
        max_tracked_sessions=max_tracked_sessions,
    )
    app.dispatcher.telemetry = telemetry
    return telemetry


def uninstrument(app: McpServerApp) -> None:
    """Stop tracing ``app``: its requests cost nothing extra again."""
    app.dispatcher.telemetry = None


def instrument_client(
    client: McpClient,
    *,
    tracer_provider: TracerProvider | None = None,
    meter_provider: MeterProvider | None = None,
) -> McpClientTelemetry:
    """Trace and measure every request ``client`` sends from now on, and carry the trace
    context to the server in ``params._meta``. The providers default to the global ones."""
    telemetry = McpClientTelemetry(
        client, tracer_provider=tracer_provider, meter_provider=meter_provider
    )
    client.session.telemetry = telemetry
    return telemetry


def uninstrument_client(client: McpClient) -> None:
    """Stop tracing ``client``."""
    client.session.telemetry = None


__all__ = [
    "DEFAULT_MAX_TRACKED_SESSIONS",
    "SEMCONV_VERSION",
    "McpClientTelemetry",
    "McpServerTelemetry",
    "instrument",
    "instrument_client",
    "uninstrument",
    "uninstrument_client",
]
