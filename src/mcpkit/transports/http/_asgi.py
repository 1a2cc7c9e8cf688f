"""Small ASGI helpers: headers, bounded bodies, JSON and SSE responses."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from mcpkit._exceptions import ProtocolError
from mcpkit.protocol._jsonrpc import encode_json, error_response

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
RawHeaders = list[tuple[bytes, bytes]]


class BodyTooLarge(Exception):
    """The request body passed the configured bound."""


class BodyTimeout(Exception):
    """The request body did not arrive in full within the configured time (408)."""


class _Waker:
    """Cancels a task waiting on ``receive`` once what it also waits for is done (a slotted
    object rather than a closure: this lives as long as an open stream)."""

    __slots__ = ("task", "waiting", "woke")

    def __init__(self, task: asyncio.Task[Any]) -> None:
        self.task = task
        self.waiting = True
        self.woke = False

    def __call__(self, _done: Any) -> None:
        if self.waiting:
            self.woke = True
            self.task.cancel()


async def disconnected_before(done: asyncio.Future[Any], receive: Receive) -> bool:
    """Wait, in the caller's own task, until the client disconnects (True) or ``done``
    completes (False). No second task per open response: a waiting GET stream costs its
    request's task alone. ``done`` completing cancels the wait on ``receive``; a
    cancellation from outside still propagates."""
    if done.done():
        return False
    task = asyncio.current_task()
    assert task is not None, "waited for inside a task"
    waker = _Waker(task)
    done.add_done_callback(waker)
    try:
        while (await receive())["type"] != "http.disconnect":
            pass
        return True
    except asyncio.CancelledError:
        if waker.woke and task.uncancel() == 0:
            return False
        raise
    finally:
        waker.waiting = False
        done.remove_done_callback(waker)


#: The header names MCP requests carry, decoded once: a name found here costs a lookup, not a
#: new string (and its hash) per request. Fixed: other names are decoded as they come.
_KNOWN_NAMES: dict[bytes, str] = {
    name.encode(): name
    for name in (
        "host",
        "accept",
        "accept-encoding",
        "authorization",
        "connection",
        "content-length",
        "content-type",
        "last-event-id",
        "mcp-method",
        "mcp-name",
        "mcp-protocol-version",
        "mcp-session-id",
        "origin",
        "user-agent",
    )
}


#: The names ``header_map`` keeps one string of; a request with no other has no
#: ``Mcp-Param-*`` header (one C-speed test for the 2026-07-28 POSTs that carry none).
KNOWN_HEADER_NAMES = frozenset(_KNOWN_NAMES.values())


def header_map(scope: Scope) -> dict[str, str]:
    """Request headers by lower-case name (ASGI already lower-cases them); last wins."""
    known = _KNOWN_NAMES.get
    headers: dict[str, str] = {}
    for name, value in scope["headers"]:
        headers[known(name) or name.decode("latin-1")] = value.decode("latin-1")
    return headers


def whole_body(message: dict[str, Any], limit: int) -> bytes:
    """The body of a request that came in one ``http.request`` message."""
    body = message.get("body", b"")
    if len(body) > limit:
        raise BodyTooLarge
    return body if type(body) is bytes else bytes(body)


async def read_rest(receive: Receive, message: dict[str, Any], limit: int) -> bytes:
    """The body of a request whose first ``http.request`` message was ``message`` and
    said more follows; raises ``BodyTooLarge`` past ``limit`` bytes."""
    body = message.get("body", b"")
    chunks = [body]
    size = len(body)
    if size > limit:
        raise BodyTooLarge
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


def content_length(size: int) -> tuple[bytes, bytes]:
    """The ``content-length`` header pair of a body of ``size`` bytes. Made each time (~100
    ns): a table of pairs kept by size would be state shared by every app of the process."""
    return (b"content-length", b"%d" % size)


async def send_response(
    send: Send,
    status: int,
    body: bytes = b"",
    headers: RawHeaders | None = None,
    content_type: bytes | None = None,
) -> None:
    raw = list(headers or ())
    if content_type is not None:
        raw.append((b"content-type", content_type))
    raw.append(content_length(len(body)))
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


_JSON_TYPE = (b"content-type", b"application/json")
_NO_LENGTH = content_length(0)


def empty_response(
    status: int, headers: RawHeaders | None = None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The two ASGI messages of an answer with no body (202 to a notification, 200 to a
    DELETE: one of each in every session), sent by the caller as ``json_response``'s are."""
    return {
        "type": "http.response.start",
        "status": status,
        "headers": [*(headers or ()), _NO_LENGTH],
    }, {"type": "http.response.body", "body": b""}


def json_response(
    status: int, value: Any, headers: RawHeaders | None = None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The two ASGI messages of a JSON answer (callers on the hot path send them
    themselves, saving a coroutine)."""
    body = encode_json(value)
    raw = [*(headers or ()), _JSON_TYPE, (b"content-length", b"%d" % len(body))]
    return {"type": "http.response.start", "status": status, "headers": raw}, {
        "type": "http.response.body",
        "body": body,
    }


async def send_json(send: Send, status: int, value: Any, headers: RawHeaders | None = None) -> None:
    start, body = json_response(status, value, headers)
    await send(start)
    await send(body)


def error_body(code: int, message: str, data: Any = None, request_id: Any = None) -> dict[str, Any]:
    """A JSON-RPC error response, for HTTP errors whose body speaks JSON-RPC."""
    return error_response(request_id, ProtocolError(message, data, code=code))


async def send_text(send: Send, status: int, text: str, headers: RawHeaders | None = None) -> None:
    await send_response(send, status, text.encode(), headers, b"text/plain; charset=utf-8")


SSE_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache, no-transform"),
    (b"x-accel-buffering", b"no"),
)


async def start_sse(send: Send, headers: RawHeaders | None = None, status: int = 200) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [*SSE_HEADERS, *(headers or ())],
        }
    )


async def send_chunk(send: Send, data: bytes, more: bool = True) -> None:
    await send({"type": "http.response.body", "body": data, "more_body": more})
