"""Shared fixtures: an in-memory client whose every received message is schema-checked."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, AsyncIterator

import pytest

from mcpkit import McpClient, McpServerApp
from tests.in_memory import serving_in_memory
from tests.wire import SchemaChecker, ValidatingStream


@contextlib.asynccontextmanager
async def connected(app: McpServerApp, **client_kwargs: Any) -> AsyncIterator[McpClient]:
    """A connected, initialized client for ``app``; every server message is validated."""
    checker = SchemaChecker(client_kwargs.get("protocol_version", "2025-11-25"))
    async with serving_in_memory(app) as client_end:
        client = McpClient(ValidatingStream(client_end, checker), **client_kwargs)
        try:
            async with asyncio.timeout(30):
                await client.connect()
            yield client
        finally:
            await client.aclose()
    assert checker.checked > 0


@pytest.fixture
def connect():
    return connected
