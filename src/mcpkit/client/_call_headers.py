"""HTTP headers for one call: ``call_tool(..., headers={...})`` (and ``read_resource``,
``get_prompt``) sends them on that request alone, over Streamable HTTP and legacy SSE; a
transport without HTTP (stdio, in memory) has no headers to send them on.

They travel in the context of the call (``CALL_HEADERS``): the HTTP transport's request
for it, a task it spawns included, reads them where it builds the request's headers. Names
the protocol or HTTP itself sets are refused: the transport owns them."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from contextvars import ContextVar

#: The headers of the call being sent (None: none of its own).
CALL_HEADERS: ContextVar[Mapping[str, str] | None] = ContextVar("mcp_call_headers", default=None)

#: Headers a call may not set: the transport's (the protocol's, and HTTP's framing).
RESERVED = frozenset(
    {
        "accept",
        "connection",
        "content-length",
        "content-type",
        "host",
        "last-event-id",
        "mcp-method",
        "mcp-name",
        "mcp-protocol-version",
        "mcp-session-id",
        "transfer-encoding",
    }
)


def checked(headers: Mapping[str, str]) -> dict[str, str]:
    """``headers`` as a call may send them; ``ValueError`` for a reserved name, or a name or
    value that is not text."""
    out: dict[str, str] = {}
    for name, value in headers.items():
        if not isinstance(name, str) or not isinstance(value, str):
            raise ValueError(f"a call's headers are text: {name!r}: {value!r}")
        if name.lower() in RESERVED:
            raise ValueError(f"a call may not set the {name} header: the transport sets it")
        out[name] = value
    return out


@contextlib.contextmanager
def sending_with(headers: Mapping[str, str] | None) -> Iterator[None]:
    """Send what is sent in the block with ``headers`` (None: as the transport would)."""
    if not headers:
        yield
        return
    token = CALL_HEADERS.set(checked(headers))
    try:
        yield
    finally:
        CALL_HEADERS.reset(token)


__all__ = ["CALL_HEADERS", "RESERVED", "checked", "sending_with"]
