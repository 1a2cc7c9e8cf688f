"""Fixtures of the server-side auth tests: the protected app, the authorization server's
keys, and a Redis for the state several instances share."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from mcpkit import McpServerApp
from tests.auth._support import AuthTest, Signer
from tests.redis_server import RedisServer


@pytest.fixture
def app() -> McpServerApp:
    return McpServerApp(AuthTest)


@pytest.fixture(scope="module")
def signer() -> Signer:
    """One key set per module: generating an RSA key is slow."""
    return Signer()


@pytest.fixture(scope="module")
def redis_server() -> Iterator[RedisServer]:
    """A redis-server per module (tests that need it clean flush it or use a prefix)."""
    server = RedisServer().start()
    try:
        yield server
    finally:
        server.close()
