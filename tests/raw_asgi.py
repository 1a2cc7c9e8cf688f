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


class NoDiscover:
    """ASGI middleware: a handshake-only server in front of mcpkit's (404 for
    ``server/discover``, like a 2025 server that knows no such route), recording the
    JSON-RPC method and the Authorization of every POST."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.discover_posts = 0
        self.methods: list[str | None] = []
        #: (method, Authorization) of every POST.
        self.posts: list[tuple[str | None, str | None]] = []

    def probes(self, authorization: str) -> int:
        """The ``server/discover`` POSTs sent with ``authorization``."""
        return self.posts.count(("server/discover", authorization))

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        body = await read_body(receive)
        try:
            method = json.loads(body).get("method")
        except ValueError:
            method = None
        auth = dict(scope["headers"]).get(b"authorization")
        self.methods.append(method)
        self.posts.append((method, auth.decode() if auth is not None else None))
        if method == "server/discover":
            self.discover_posts += 1
            await send_response(send, 404, b"Not Found", [(b"content-type", b"text/plain")])
            return
        replayed = False

        async def replay() -> Any:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


def post_scope(headers: dict[str, str]) -> dict[str, Any]:
    """The scope of a POST /mcp to 127.0.0.1:3001 with ``headers`` (and ``host``), as an
    HTTP server would give it to the app."""
    return {
        "type": "http",
        "method": "POST",
        "path": "/mcp",
        "root_path": "",
        "query_string": b"",
        "headers": [(b"host", b"127.0.0.1:3001")]
        + [(name.encode(), value.encode()) for name, value in headers.items()],
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 3001),
        "scheme": "http",
        "http_version": "1.1",
    }
