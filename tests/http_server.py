"""An in-process uvicorn server for transport tests: real sockets on 127.0.0.1."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from typing import AsyncIterator

import uvicorn

from mcpkit import McpServerApp
from mcpkit.transports.http import McpAsgiApp, StreamableHttpServerOptions, create_asgi_app


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.asynccontextmanager
async def serving(app: McpServerApp, **options: object) -> AsyncIterator[tuple[str, McpAsgiApp]]:
    """Serve ``app`` until the block ends; yields (endpoint URL, ASGI app)."""
    port = free_port()
    options.setdefault("enable_legacy_sse", __import__("importlib.util").util.find_spec("mcpkit.transports.http._legacy_sse") is not None)
    opts = StreamableHttpServerOptions(port=port, **options)  # type: ignore[arg-type]
    asgi = create_asgi_app(app, opts)
    config = uvicorn.Config(asgi, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    try:
        async with asyncio.timeout(10):
            while not server.started:
                await asyncio.sleep(0.01)
        yield f"http://127.0.0.1:{port}{opts.endpoint}", asgi
    finally:
        server.should_exit = True
        async with asyncio.timeout(10):
            await asyncio.gather(task, return_exceptions=True)
