"""What is particular to 2026-07-28 requests over Streamable HTTP, on the client side.

A request whose ``_meta`` names a modern protocol version is sent with
``MCP-Protocol-Version`` mirroring that version and ``Mcp-Method`` / ``Mcp-Name`` /
``Mcp-Param-*`` mirroring its body (SEP-2243), and without a session id. Its response
stream cannot be resumed: a stream that breaks before the response fails the request with
an error marked ``STREAM_BROKEN``, which tells the client to send it again.
"""

from __future__ import annotations

from typing import Any

from mcpkit._exceptions import TransportError
from mcpkit.client._errors import STREAM_BROKEN
from mcpkit.client._frames import FramePeek, decoded
from mcpkit.client._http_options import VERSION_HEADER
from mcpkit.protocol._headers import request_headers
from mcpkit.protocol._modern import PROTOCOL_VERSION_KEY
from mcpkit.protocol._versions import HANDSHAKE_VERSIONS

__all__ = [
    "STREAM_BROKEN",
    "HeaderAnnotations",
    "StreamBrokenError",
    "modern_request_headers",
    "modern_version_of",
]

#: (header name, property path) pairs of one tool's ``x-mcp-header`` annotations.
HeaderAnnotations = list[tuple[str, tuple[str, ...]]]


class StreamBrokenError(TransportError):
    """A 2026-07-28 response stream ended before its response (not resumable)."""


def modern_version_of(params: Any) -> str | None:
    """The ``_meta`` protocol version of a 2026-07-28-or-later request, else None."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    version = meta.get(PROTOCOL_VERSION_KEY) if isinstance(meta, dict) else None
    if isinstance(version, str) and version and version not in HANDSHAKE_VERSIONS:
        return version
    return None


def modern_request_headers(
    peeks: list[FramePeek], tool_headers: dict[str, HeaderAnnotations]
) -> dict[str, str] | None:
    """The headers of a 2026-07-28 request (version, SEP-2243), or None when ``peeks`` is
    not one modern request. ``tool_headers`` gives a ``tools/call``'s annotations."""
    if len(peeks) != 1 or not peeks[0].is_request or peeks[0].method is None:
        return None
    method = peeks[0].method
    params = decoded(peeks[0].params)
    version = modern_version_of(params)
    if version is None:
        return None
    annotations: HeaderAnnotations = []
    if method == "tools/call" and isinstance(params.get("name"), str):
        annotations = tool_headers.get(params["name"]) or []
    headers = request_headers(method, params, annotations)
    headers[VERSION_HEADER] = version
    return headers
