"""An in-process uvicorn server for transport tests: real sockets on 127.0.0.1."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Literal

import httpx
import uvicorn

from mcpkit import McpClient, McpServerApp
from mcpkit.transports.http import McpAsgiApp, StreamableHttpServerOptions, create_asgi_app
from mcpkit.transports.http._server.process import bind_http_socket
from tests.wire import initialize_request

#: What a Streamable HTTP client sends with every POST.
POST_HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}

Asgi = Callable[[dict[str, Any], Any, Any], Awaitable[None]]


def bound_socket() -> socket.socket:
    """A listening-ready socket on a port of the system's choosing on 127.0.0.1: its port
    is known before the server starts, and no other program can take it meanwhile. Made as
    mcpkit's servers make theirs: its connections get ``TCP_NODELAY`` from asyncio."""
    sock: socket.socket = bind_http_socket("127.0.0.1", 0)
    return sock


@contextlib.asynccontextmanager
async def serve_asgi(
    asgi: Asgi,
    *,
    lifespan: Literal["on", "off"] = "off",
    sock: socket.socket | None = None,
) -> AsyncIterator[str]:
    """Serve any ASGI app on 127.0.0.1 until the block ends; yields ``http://127.0.0.1:PORT``
    (no trailing slash). ``sock``: a socket already bound (``bound_socket()``: its port known
    before the server starts), served as it is; without it, a port the system picks. Every
    start and stop is bounded, so a stuck server fails the test."""
    sock = sock or bound_socket()
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        asgi, host="127.0.0.1", port=port, log_level="warning", lifespan=lifespan
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        async with asyncio.timeout(10):
            while not server.started:
                await asyncio.sleep(0.01)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        async with asyncio.timeout(10):
            await asyncio.gather(task, return_exceptions=True)


@contextlib.asynccontextmanager
async def serving(
    app: McpServerApp, options: StreamableHttpServerOptions | None = None, **fields: object
) -> AsyncIterator[tuple[str, McpAsgiApp]]:
    """Serve ``app`` until the block ends; yields (endpoint URL, ASGI app).

    ``options``: a ready-made options object (a subclass with extra hooks, say); its port is
    replaced by the one bound for it. Without it, options are made from ``fields``."""
    sock = bound_socket()
    port = sock.getsockname()[1]
    if options is None:
        fields.setdefault(
            "enable_legacy_sse",
            __import__("importlib.util").util.find_spec("mcpkit.transports.http._legacy_sse")
            is not None,
        )
        options = StreamableHttpServerOptions(port=port, **fields)  # type: ignore[arg-type]
    else:
        options.port = port
    asgi = create_asgi_app(app, options)
    async with serve_asgi(asgi, sock=sock, lifespan="on") as base:
        yield f"{base}{options.endpoint}", asgi


@contextlib.asynccontextmanager
async def http_client(app: McpServerApp, era: str) -> AsyncIterator[McpClient]:
    """A client of ``app`` served over Streamable HTTP, speaking ``era`` (a handshake
    version, or 2026-07-28), until the block ends."""
    mode = "modern" if era == "2026-07-28" else "legacy"
    async with serving(app) as (url, _), McpClient.http(url, protocol_mode=mode) as client:
        if client.protocol_version != era:
            raise AssertionError(f"the client speaks {client.protocol_version}, not {era}")
        yield client


async def open_session(
    http: httpx.AsyncClient, url: str, version: str = "2025-11-25"
) -> dict[str, str]:
    """initialize, then notifications/initialized, over Streamable HTTP: the headers of the
    session's later POSTs (``POST_HEADERS``, its id and version)."""
    init = await http.post(url, json=initialize_request(version), headers=POST_HEADERS)
    assert init.status_code == 200, init.text
    headers = {
        **POST_HEADERS,
        "mcp-session-id": init.headers["mcp-session-id"],
        "mcp-protocol-version": version,
    }
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert (await http.post(url, json=initialized, headers=headers)).status_code == 202
    return headers


async def post_head(
    url: str, content_length: int, body_start: bytes = b""
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A raw connection to ``url``'s server that has sent a POST /mcp's headers and
    ``body_start``, no more."""
    host, port = url.split("//", 1)[1].split("/", 1)[0].split(":")
    head = (
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        "Accept: application/json, text/event-stream\r\n"
        f"Content-Length: {content_length}\r\n\r\n"
    )
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(head.encode() + body_start)
    return reader, writer


async def trickled_post(url: str) -> tuple[list[bytes], bytes, float, bool]:
    """A POST whose body comes a byte every 0.1 s, never whole: the answer's head lines
    (lower case), its body, the seconds it took, and whether the server then closed the
    connection (a reset counts: it left the rest of the body unread)."""
    reader, writer = await post_head(url, 1000, b'{"jsonrpc":')
    started = time.monotonic()

    async def trickle() -> None:
        while True:  # never idle, never done
            await asyncio.sleep(0.1)
            writer.write(b" ")
            await writer.drain()

    trickling = asyncio.create_task(trickle())
    try:
        async with asyncio.timeout(10):
            head = (await reader.readuntil(b"\r\n\r\n")).lower().split(b"\r\n")
            took = time.monotonic() - started
            length = next(int(h[15:]) for h in head if h.startswith(b"content-length:"))
            body = await reader.readexactly(length)
            trickling.cancel()
            try:
                closed = await reader.read() == b""
            except ConnectionResetError:
                closed = True
    finally:
        trickling.cancel()
        await asyncio.gather(trickling, return_exceptions=True)
        writer.close()
    return head, body, took, closed
