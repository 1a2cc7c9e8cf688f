"""The answers a Streamable HTTP endpoint gives instead of serving a request: an HTTP
status with a JSON-RPC error body, and the ``MCP-Protocol-Version`` a client reads. Plain
functions: the handler and its parts (the GET streams, the cluster) give the same ones."""

from __future__ import annotations

import logging
from typing import Any

from mcpkit._codes import ErrorCode
from mcpkit._exceptions import InternalError, InvalidRequestError, StoreUnavailableError
from mcpkit.protocol._jsonrpc import JsonRpcRequest, error_response
from mcpkit.protocol._versions import LATEST_HANDSHAKE_VERSION
from mcpkit.server._eras.modern import UnsupportedProtocolVersionError
from mcpkit.transports.http._asgi import (
    Send,
    error_body,
    json_response,
    send_chunk,
    send_json,
    start_sse,
)

logger = logging.getLogger("mcpkit.http")

#: JSON-RPC error code of the answer a JSON-only client gets for a request it cancelled.
#: MCP defines none; -32800 is the "request cancelled" of other JSON-RPC protocols (LSP).
REQUEST_CANCELLED = -32800


async def listen_needs_sse(
    send: Send, request: JsonRpcRequest, response_headers: list[tuple[bytes, bytes]]
) -> None:
    """406 for ``subscriptions/listen`` from a client that does not accept SSE: its
    answer is a stream that stays open (2026-07-28 Streamable HTTP), never one JSON
    object, so it could never be answered."""
    error = InvalidRequestError(
        "subscriptions/listen is answered with an SSE stream: Accept must include text/event-stream"
    )
    await send_json(send, 406, error_response(request.id, error), response_headers)


async def unsupported_version(send: Send, version: str | None, request_id: Any = None) -> None:
    error = UnsupportedProtocolVersionError(version)
    headers = [(b"mcp-protocol-version", LATEST_HANDSHAKE_VERSION.encode())]
    await send_json(send, 400, error_response(request_id, error), headers)


async def store_unavailable(send: Send, exc: StoreUnavailableError, request_id: Any = None) -> None:
    """503: the session or event store (Redis) cannot be reached; the client may retry."""
    logger.warning("store unavailable: %s", exc)
    headers = [
        (b"mcp-protocol-version", LATEST_HANDSHAKE_VERSION.encode()),
        (b"retry-after", b"1"),
    ]
    body = error_body(
        ErrorCode.INTERNAL_ERROR,
        f"Session store unavailable: {exc}",
        {"retryable": True},
        request_id,
    )
    await send_json(send, 503, body, headers)


async def fail(
    send: Send,
    status: int,
    code: int,
    message: str,
    data: Any = None,
    extra: list[tuple[bytes, bytes]] | None = None,
) -> None:
    """An HTTP error whose body is a JSON-RPC error; it carries MCP-Protocol-Version too."""
    headers = [(b"mcp-protocol-version", LATEST_HANDSHAKE_VERSION.encode()), *(extra or ())]
    await send_json(send, status, error_body(code, message, data), headers)


async def not_acceptable(send: Send) -> None:
    """406: the POST's ``Accept`` allows neither answer a POST may get."""
    await fail(
        send,
        406,
        ErrorCode.INVALID_REQUEST,
        "Accept must allow application/json or text/event-stream",
    )


async def too_busy(send: Send, exc: Exception) -> None:
    """503: the endpoint already serves ``max_concurrent_requests``; the client may retry."""
    await fail(
        send, 503, ErrorCode.INTERNAL_ERROR, str(exc), {"retryable": True}, [(b"retry-after", b"1")]
    )


async def fail_unknown_session(send: Send, session_id: str) -> None:
    """404 for a session this server does not know (expired, ended, another's)."""
    await fail(
        send,
        404,
        ErrorCode.SESSION_EXPIRED,
        "Session expired or unknown",
        {"sessionId": session_id},
    )


def answer_too_large(
    request: JsonRpcRequest, size: int, limit: int, response_headers: list[tuple[bytes, bytes]]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The error that answers a request whose answer passed ``limit``
    (``max_answer_bytes``)."""
    logger.warning(
        "%s: an answer of %d bytes passed max_answer_bytes (%d)", request.method, size, limit
    )
    error = InternalError(
        f"The answer ({size} bytes) exceeds the server's max_answer_bytes ({limit})",
        {"size": size, "limit": limit},
    )
    return json_response(200, error_response(request.id, error), response_headers)


async def answer_cancelled(
    request: JsonRpcRequest,
    wants_sse: bool,
    send: Send,
    response_headers: list[tuple[bytes, bytes]],
) -> None:
    """The POST of a request cancelled before it said anything (``notifications/cancelled``,
    its session ended, or, 2026-07-28, its client hung up).

    The receiver of a cancellation SHOULD NOT answer the request, but the POST of a
    request MUST get ``text/event-stream`` or one JSON object (202 is only for a POST of
    notifications and responses). So: an SSE stream that ends with no event at all (no
    priming id either: there is nothing to resume), which the client, which MUST accept
    SSE, reads as a request left unanswered. A client that accepts only JSON gets a
    JSON-RPC error for the request, which it ignores (the sender of a cancellation
    SHOULD ignore any response that comes after)."""
    if wants_sse:
        await start_sse(send, response_headers)
        await send_chunk(send, b"", more=False)
        return
    answer = error_body(REQUEST_CANCELLED, "Request cancelled", request_id=request.id)
    await send_json(send, 200, answer, response_headers)


__all__ = [
    "answer_cancelled",
    "answer_too_large",
    "fail",
    "fail_unknown_session",
    "listen_needs_sse",
    "not_acceptable",
    "store_unavailable",
    "too_busy",
    "unsupported_version",
]
