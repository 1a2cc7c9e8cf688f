"""WebSocket transport at ``{base}/ws``: one JSON-RPC message per WebSocket message.

The router has already matched the path and applied the DNS-rebinding guard. Then:

* An optional connection guard runs before the handshake: when ``options`` has a
  ``websocket_guard`` attribute, it is called with the request headers (lower-case names)
  and may return a bool or an awaitable of one. False (or an exception) refuses the
  connection with close code 1008 (policy violation) before it is accepted, so no MCP
  message is ever exchanged. The connection guards (``connection_guards`` and the served
  classes' ``can_connect`` guards) run before it, as on every HTTP request.
* The handshake accepts the ``mcp`` subprotocol when the client offers it.
* A ``ServerConnection`` serves the socket with ``require_initialized=True``: requests
  other than ``initialize`` and ``ping`` before ``notifications/initialized`` get -32600.
  Every request runs in a task of its own, so a tool waiting on the client (elicitation,
  sampling) never holds up the socket. Text and binary messages are both accepted; one
  larger than ``options.max_body_bytes`` is answered with an error and the socket keeps
  serving. (The ASGI server's own WebSocket size limit, uvicorn's ``ws_max_size`` of
  16 MiB by default, still closes the socket with 1009 above it.)
* When the client goes away, the connection is closed: running calls are cancelled and
  its subscriptions dropped. A client that stops reading is dropped the same way (and
  sent close 1008 "client not reading" if that can still go out): when one write stays
  blocked ``options.sse_write_timeout`` seconds, or more than ``options.max_queued_messages``
  messages wait to go out behind it.
* Each socket counts against the app's ``max_sessions`` with its Streamable HTTP and legacy
  SSE sessions (``session_table``); past it the upgrade is refused: HTTP 503 where the
  server can answer one (the ``websocket.http.response`` extension), else close 1013
  "try again later".
* Under bearer auth the upgrade's identity (``CURRENT_AUTH``, set by the gate) is the
  socket's: it is the connection's ``binding.auth``, so tools see it on ``ctx.auth``;
  guards through ``current_auth()`` too. A WebSocket session is the socket itself and has no id another
  connection could name, so nothing else can reach it. When the token's ``exp`` passes,
  the socket is closed with 1008 and no message after it is served: the client
  reconnects with a fresh token.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from mcpkit._codes import ErrorCode
from mcpkit._exceptions import ConnectionClosedError
from mcpkit.auth._types import CURRENT_AUTH
from mcpkit.protocol._jsonrpc import encode_json
from mcpkit.server._engine.connection import ServerConnection
from mcpkit.transports.http._asgi import Receive, Send, error_body
from mcpkit.transports.http._options import StreamableHttpServerOptions

if TYPE_CHECKING:
    from mcpkit.server._engine.engine import McpEngine
    from mcpkit.transports.http._connection_guards import ConnectionGate
    from mcpkit.transports.http._streamable.sessions import StreamableSessionStore

logger = logging.getLogger("mcpkit.http")

#: The WebSocket subprotocol we accept when the client offers it.
SUBPROTOCOL = "mcp"
#: Close code for a connection refused by a guard (RFC 6455 "policy violation").
POLICY_VIOLATION = 1008
#: Close code for an upgrade refused at ``max_sessions`` (RFC 6455 "try again later").
TRY_AGAIN_LATER = 1013
#: What an upgrade refused at ``max_sessions`` is told (as Streamable HTTP and legacy SSE).
TOO_MANY_SESSIONS = "Too many sessions; try again later"
#: The close reason of a client dropped because it stopped reading what it is sent.
NOT_READING = "client not reading"
#: Seconds spent trying to send the close of a client dropped for not reading.
CLOSE_TIMEOUT = 1.0


async def _refuse_at_capacity(scope: dict[str, Any], send: Send) -> None:
    """503 with a JSON-RPC error, as the other transports answer past ``max_sessions``,
    where the server can answer an upgrade over HTTP; else close 1013 before accepting."""
    if "websocket.http.response" not in (scope.get("extensions") or {}):
        await send(
            {"type": "websocket.close", "code": TRY_AGAIN_LATER, "reason": "try again later"}
        )
        return
    body = encode_json(error_body(ErrorCode.INTERNAL_ERROR, TOO_MANY_SESSIONS))
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", b"%d" % len(body)),
        (b"retry-after", b"1"),
    ]
    await send({"type": "websocket.http.response.start", "status": 503, "headers": headers})
    await send({"type": "websocket.http.response.body", "body": body})


async def _guard_allows(options: StreamableHttpServerOptions, headers: Mapping[str, str]) -> bool:
    guard = getattr(options, "websocket_guard", None)
    if guard is None:
        return True
    try:
        verdict = guard(headers)
        if inspect.isawaitable(verdict):
            verdict = await verdict
    except Exception:
        logger.exception("websocket_guard raised; refusing the connection")
        return False
    return bool(verdict)


def _too_large(data: str | bytes, limit: int | None) -> bool:
    if limit is None:
        return False
    if isinstance(data, bytes):
        return len(data) > limit
    # A character is at least one UTF-8 byte and at most four: encode only when unsure.
    return len(data) > limit or (len(data) * 4 > limit and len(data.encode("utf-8")) > limit)


async def serve_websocket(
    engine: McpEngine,
    scope: dict[str, Any],
    receive: Receive,
    send: Send,
    headers: Mapping[str, str],
    options: StreamableHttpServerOptions,
    connection_gate: ConnectionGate | None = None,
    session_table: StreamableSessionStore | None = None,
) -> None:
    """Serve one ASGI ``websocket`` scope until either side closes it; ``connection_gate``
    (the app's connection guards) may refuse it first, as ``websocket_guard`` may, and
    ``session_table`` (the app's ``max_sessions``) when the app has as many as it may."""
    first = await receive()
    if first["type"] != "websocket.connect":  # disconnected before the handshake
        return
    if not await _guard_allows(options, headers) or (
        connection_gate is not None and await connection_gate.refusal(scope, dict(headers))
    ):
        await send(
            {"type": "websocket.close", "code": POLICY_VIOLATION, "reason": "connection refused"}
        )
        return
    if session_table is not None and not session_table.admit_connection():
        await _refuse_at_capacity(scope, send)
        return
    accept: dict[str, Any] = {"type": "websocket.accept"}
    if SUBPROTOCOL in (scope.get("subprotocols") or ()):
        accept["subprotocol"] = SUBPROTOCOL
    try:
        await send(accept)
    except BaseException:  # gone before the handshake ended: not counted any longer
        if session_table is not None:
            session_table.release_connection()
        raise

    lock = asyncio.Lock()
    open_ = True
    auth = CURRENT_AUTH.get()
    #: Writes waiting their turn behind one blocked on a client that does not read.
    waiting = 0
    max_waiting = max(1, options.max_queued_messages)
    write_timeout = options.sse_write_timeout if options.sse_write_timeout > 0 else None
    dropped = asyncio.Event()

    def drop(why: str) -> None:
        nonlocal open_
        if open_:
            logger.warning("WebSocket client dropped: %s", why)
            open_ = False
            dropped.set()

    async def write(frame: bytes) -> None:
        nonlocal waiting
        if not open_:
            raise ConnectionClosedError("the WebSocket is closed")
        if waiting >= max_waiting:
            drop(f"{waiting} messages waiting and the client is not reading")
            raise ConnectionClosedError("the WebSocket client is not reading; dropped")
        waiting += 1
        try:
            async with lock:  # one message at a time, whole
                if not open_:
                    raise ConnectionClosedError("the WebSocket is closed")
                async with asyncio.timeout(write_timeout):
                    await send({"type": "websocket.send", "text": frame.decode("utf-8")})
        except TimeoutError:
            drop(f"a write stayed blocked for {write_timeout} s")
            raise ConnectionClosedError("the WebSocket client is not reading; dropped") from None
        finally:
            waiting -= 1

    connection = ServerConnection(
        engine,
        write,
        require_initialized=True,
        headers=headers,
        max_message_bytes=options.max_body_bytes,
        max_message_depth=options.max_message_depth,
        auth=auth,
        http_scope=scope,
    )

    async def close_at_expiry(delay: float) -> None:
        nonlocal open_
        await asyncio.sleep(delay)
        async with lock:
            if open_:
                open_ = False
                with contextlib.suppress(Exception):  # the client may be gone already
                    await send(
                        {
                            "type": "websocket.close",
                            "code": POLICY_VIOLATION,
                            "reason": "access token expired",
                        }
                    )

    async def read() -> None:
        limit = options.max_body_bytes
        while True:
            message = await receive()
            kind = message["type"]
            if kind == "websocket.disconnect" or not open_:
                return
            if kind != "websocket.receive":
                continue
            data = message.get("text")
            if data is None:
                data = message.get("bytes")
            if data is None:
                continue
            if _too_large(data, limit):
                connection.feed_oversized()
            else:
                connection.feed(data)

    # The identity was checked once, at the upgrade: it lasts as long as its token.
    expiry = None
    if auth is not None and auth.expires_at is not None:
        delay = max(0.0, auth.expires_at - time.time())
        expiry = asyncio.get_running_loop().create_task(close_at_expiry(delay))
    reading = asyncio.ensure_future(read())
    until_dropped = asyncio.ensure_future(dropped.wait())
    try:
        await asyncio.wait({reading, until_dropped}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        open_ = False
        for task in (reading, until_dropped):
            task.cancel()
        await asyncio.gather(reading, until_dropped, return_exceptions=True)
        if expiry is not None:
            expiry.cancel()
        if session_table is not None:  # counted since before the handshake
            session_table.release_connection()
        await connection.close()
    if dropped.is_set():  # try to tell it, if it reads again soon
        with contextlib.suppress(Exception):
            async with asyncio.timeout(CLOSE_TIMEOUT):
                await send(
                    {"type": "websocket.close", "code": POLICY_VIOLATION, "reason": NOT_READING}
                )
    elif not reading.cancelled():
        reading.result()  # what ended the read loop, raised as ever


__all__ = ["POLICY_VIOLATION", "SUBPROTOCOL", "TRY_AGAIN_LATER", "serve_websocket"]
