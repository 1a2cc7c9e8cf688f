"""Which HTTP transport a client speaks (``HttpTransportMode``): an option of the HTTP
transports, and what an ``EndpointMemory`` remembers AUTO_DETECT found."""

from __future__ import annotations

import enum

__all__ = ["HttpTransportMode"]


class HttpTransportMode(enum.Enum):
    """Which HTTP transport a client speaks."""

    #: Try Streamable HTTP (POST initialize); on 400/404/405 fall back to legacy HTTP+SSE.
    AUTO_DETECT = "auto"
    #: Streamable HTTP (2025-03-26 and later).
    STREAMABLE_HTTP = "streamable-http"
    #: The legacy HTTP+SSE transport of 2024-11-05 (GET an SSE stream, POST to its endpoint).
    SSE = "sse"
