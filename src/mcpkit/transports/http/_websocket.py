"""WebSocket transport at ``{base}/ws``: one JSON-RPC message per WebSocket message.

The router has already matched the path and applied the DNS-rebinding guard. Then:

* An optional connection guard runs before the handshake: when ``options`` has a
  ``websocket_guard`` attribute, it is called with the request headers (lower-case names)
  and may return a bool or an awaitable of one. False (or an exception) refuses the
  connection with close code 1008 (policy violation) before it is accepted, so no MCP
  message is ever exchanged. This is the stand-in for server-class ``@use_guards`` at the
  connection level.
* The handshake accepts the ``mcp`` subprotocol when the client offers it.
* A ``ServerConnection`` serves the socket with ``require_initialized=True``: requests
  other than ``initialize`` and ``ping`` before ``notifications/initialized`` get -32600.
  Every request runs in a task of its own, so a tool waiting on the client (elicitation,
  sampling) never holds up the socket. Text and binary messages are both accepted; one
  larger than ``options.max_body_bytes`` is answered with an error and the socket keeps
  serving. (The ASGI server's own WebSocket size limit, uvicorn's ``ws_max_size`` of
  16 MiB by default, still closes the socket with 1009 above it.)
* When the client goes away, the connection is closed: running calls are cancelled and
  its subscriptions dropped.
* Under bearer auth the upgrade's identity (``CURRENT_AUTH``, set by the gate) is the
  socket's: it is the connection's ``binding.auth``, so tools see it on ``ctx.auth``;
  guards through ``current_auth()`` too. A WebSocket session is the socket itself and has no id another
  connection could name, so nothing else can reach it.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from mcpkit._exceptions import ConnectionClosedError
from mcpkit.auth._types import CURRENT_AUTH
from mcpkit.server._connection import ServerConnection
from mcpkit.transports.http._asgi import Receive, Send
from mcpkit.transports.http._options import StreamableHttpServerOptions

if TYPE_CHECKING:
    from mcpkit.server._app import McpServerApp
    from mcpkit.transports.http._connection_guards import ConnectionGate

logger = logging.getLogger("mcpkit.http")

#: The WebSocket subprotocol we accept when the client offers it.
SUBPROTOCOL = "mcp"
#: Close code for a connection refused by a guard (RFC 6455 "policy violation").
POLICY_VIOLATION = 1008


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
    app: McpServerApp,
    scope: dict[str, Any],
    receive: Receive,
    send: Send,
    headers: Mapping[str, str],
    options: StreamableHttpServerOptions,
    connection_gate: ConnectionGate | None = None,
) -> None:
    """Serve one ASGI ``websocket`` scope until either side closes it; ``connection_gate``
    (the app's connection guards) may refuse it first, as ``websocket_guard`` may."""
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
    accept: dict[str, Any] = {"type": "websocket.accept"}
    if SUBPROTOCOL in (scope.get("subprotocols") or ()):
        accept["subprotocol"] = SUBPROTOCOL
    await send(accept)

    lock = asyncio.Lock()
    open_ = True

    async def write(frame: bytes) -> None:
        if not open_:
            raise ConnectionClosedError("the WebSocket is closed")
        async with lock:  # one message at a time, whole
            await send({"type": "websocket.send", "text": frame.decode("utf-8")})

    connection = ServerConnection(
        app,
        write,
        require_initialized=True,
        headers=headers,
        max_message_bytes=options.max_body_bytes,
        max_message_depth=options.max_message_depth,
        auth=CURRENT_AUTH.get(),
    )
    limit = options.max_body_bytes
    try:
        while True:
            message = await receive()
            kind = message["type"]
            if kind == "websocket.disconnect":
                break
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
            # Let the task just spawned for this frame take its first step before the next
            # frame is routed: ServerConnection applies the initialized gate when it routes
            # a request, while ``notifications/initialized`` takes effect in its own task,
            # so without this a request sent right behind that notification is refused.
            await asyncio.sleep(0)
    finally:
        open_ = False
        await connection.close()


__all__ = ["POLICY_VIOLATION", "SUBPROTOCOL", "serve_websocket"]
