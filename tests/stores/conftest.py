"""The store tests' Redis: real ``redis-server`` processes, killed when done with."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from mcpkit.stores import RedisHub
from tests.redis_server import RedisServer


@pytest.fixture
async def redis_to_break() -> AsyncIterator[tuple[RedisServer, RedisHub]]:
    """A redis-server of the test's own, to stop and start for an outage, and a hub on it
    with short timeouts, so the outage is reported within about a second."""
    server = RedisServer().start()
    hub = RedisHub(server.url, timeout=1.0, connect_timeout=0.5)
    try:
        yield server, hub
    finally:
        await hub.aclose()
        server.close()
