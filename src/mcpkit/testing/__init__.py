"""Testing an mcpkit server from your own test suite.

``connected(app)`` is an in-memory client for an app: no sockets, no subprocess, the real
engine and the real client on both ends::

    from mcpkit.testing import connected

    async def test_hello():
        async with connected(app) as client:
            result = await client.call_tool("hello", {"name": "Ada"})
            assert result.content[0].text == "Hello, Ada!"

For pytest, ``pytest_plugins = ["mcpkit.testing.pytest_plugin"]`` adds the ``mcp_client``
fixture (see ``mcpkit.testing.pytest_plugin``). Nothing here imports pytest: ``connected``
works under any runner. See docs/testing.md.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from mcpkit.client import McpClient

if TYPE_CHECKING:
    from mcpkit.server import McpServerApp

__all__ = ["DEFAULT_CONNECT_TIMEOUT", "connected"]

#: Seconds ``connected`` waits for the client to connect before failing.
DEFAULT_CONNECT_TIMEOUT = 10.0


@contextlib.asynccontextmanager
async def connected(
    app: McpServerApp, *, connect_timeout: float = DEFAULT_CONNECT_TIMEOUT, **client_options: Any
) -> AsyncIterator[McpClient]:
    """A connected ``McpClient`` for ``app`` over an in-memory connection, closed when the
    block ends.

    ``client_options`` go to ``McpClient`` (``protocol_version="2026-07-28"`` for the
    stateless era, ``"2025-06-18"`` for an older handshake, handlers for sampling,
    elicitation and roots, ``on_list_changed`` ...). The app is started (its lifespans run)
    and, unless it was already running, stopped again at the end, so each test gets a
    fresh start. Connecting takes at most ``connect_timeout`` seconds.
    """
    was_running = app.started
    client = McpClient.in_memory(app, **client_options)
    try:
        async with asyncio.timeout(connect_timeout):
            await client.connect()
        yield client
    finally:
        await client.aclose()
        if not was_running:
            await app.stop()
