"""Small ASGI helpers: headers, bounded bodies, JSON and SSE responses."""

from __future__ import annotations

from typing import Any, Awaitable, Callable, Iterable

from mcpkit.protocol._jsonrpc import encode_json

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
RawHeaders = list[tuple[bytes, bytes]]


class BodyTooLarge(Exception):
    """The request body passed the configured bound."""


def header_map(scope: Scope) -> dict[str, str]:
    """Request headers by lower-case name (ASGI already lower-cases them); last wins."""
    return {name.decode("latin-1"): value.decode("latin-1") for name, value in scope["headers"]}


async def read_body(receive: Receive, limit: int) -> bytes:
    """The whole request body; raises ``BodyTooLarge`` past ``limit`` bytes."""
    message = await receive()
    body = message.get("body", b"")
    if not message.get("more_body"):
        if len(body) > limit:
            raise BodyTooLarge
        return body
    chunks = [body]
    size = len(body)
    while message.get("more_body"):
        message = await receive()
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge
        chunks.append(chunk)
    return b"".join(chunks)


def encode_headers(pairs: Iterable[tuple[str, str]]) -> RawHeaders:
    return [(name.encode("latin-1"), value.encode("latin-1")) for name, value in pairs]


async def send_response(
    send: Send, status: int, body: bytes = b"", headers: RawHeaders | None = None, content_type: bytes | None = None
) -> None:
    raw = list(headers or ())
    if content_type is not None:
        raw.append((b"content-type", content_type))
    raw.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


async def send_json(send: Send, status: int, value: Any, headers: RawHeaders | None = None) -> None:
    await send_response(send, status, encode_json(value), headers, b"application/json")


async def send_text(send: Send, status: int, text: str, headers: RawHeaders | None = None) -> None:
    await send_response(send, status, text.encode(), headers, b"text/plain; charset=utf-8")


SSE_HEADERS: RawHeaders = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache, no-transform"),
    (b"x-accel-buffering", b"no"),
]


async def start_sse(send: Send, headers: RawHeaders | None = None, status: int = 200) -> None:
    await send({"type": "http.response.start", "status": status, "headers": SSE_HEADERS + list(headers or ())})


async def send_chunk(send: Send, data: bytes, more: bool = True) -> None:
    await send({"type": "http.response.body", "body": data, "more_body": more})
