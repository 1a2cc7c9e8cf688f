"""What the bare ASGI apps of the benches share: the lifespan exchange and reading a body."""

from __future__ import annotations

from typing import Any


async def serve_lifespan(receive: Any, send: Any) -> None:
    """Answer startup and shutdown; returns after shutdown."""
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


async def read_body(receive: Any) -> bytes:
    """The whole request body."""
    body = b""
    more = True
    while more:
        message = await receive()
        body += message.get("body", b"")
        more = message.get("more_body", False)
    return body
