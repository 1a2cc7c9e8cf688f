"""The official ``mcp`` client's session with an mcpkit app served over Streamable HTTP on
127.0.0.1, initialized: for tests that check what that client sees."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from mcpkit import McpServerApp
from tests.http_server import serving


@contextlib.asynccontextmanager
async def official_session(app: McpServerApp, timeout: float = 30) -> AsyncIterator[ClientSession]:
    """``app`` served, and the official client's initialized session with it (the block
    bounded by ``timeout`` seconds)."""
    async with (
        asyncio.timeout(timeout),
        serving(app) as (url, _),
        streamable_http_client(url) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session
