"""Pieces for the small hand-written ASGI apps that play scripted peers in tests (an
authorization server, a JWKS host, a server that misbehaves on purpose): reading a request
body and sending a whole response, without a web framework in between."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

Headers = Iterable[tuple[bytes, bytes]]


async def read_body(receive: Any) -> bytes:
    """The whole request body, however many ``http.request`` messages it came in."""
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            return body


async def send_response(send: Any, status: int, body: bytes = b"", headers: Headers = ()) -> None:
    """A complete response in one body message."""
    await send({"type": "http.response.start", "status": status, "headers": list(headers)})
    await send({"type": "http.response.body", "body": body})


async def send_json(send: Any, status: int, value: Any, headers: Headers = ()) -> None:
    """``value`` as an ``application/json`` response, with any extra ``headers``."""
    await send_response(
        send, status, json.dumps(value).encode(), [(b"content-type", b"application/json"), *headers]
    )
