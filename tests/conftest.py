"""Shared fixtures: an in-memory client whose every received message is schema-checked."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, AsyncIterator

import pytest

from mcpkit import McpClient, McpServerApp
from mcpkit.server import serve_stream
from mcpkit.transports import InMemoryTransport
from tests.wire import SchemaChecker, ValidatingStream


@contextlib.asynccontextmanager
async def connected(app: McpServerApp, **client_kwargs: Any) -> AsyncIterator[McpClient]:
    """A connected, initialized client for ``app``; every server message is validated."""
    client_end, server_end = InMemoryTransport.pair()
    checker = SchemaChecker(client_kwargs.get("protocol_version", "2025-11-25"))
    await app.start()
    server = asyncio.create_task(serve_stream(app, server_end))
    client = McpClient(ValidatingStream(client_end, checker), **client_kwargs)
    try:
        async with asyncio.timeout(30):
            await client.connect()
        yield client
    finally:
        await client.aclose()
        await server_end.aclose()
        server.cancel()
        await asyncio.gather(server, return_exceptions=True)
        await app.stop()
    assert checker.checked > 0


@pytest.fixture
def connect():
    return connected
