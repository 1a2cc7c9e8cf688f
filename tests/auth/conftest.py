"""Fixtures of the server-side auth tests: the protected app and the authorization server's
keys (a Redis for the state several instances share: ``redis_server``, tests/conftest.py)."""

from __future__ import annotations

import pytest

from mcpkit import McpServerApp
from tests.auth._support import AuthTest, Signer


@pytest.fixture
def app() -> McpServerApp:
    return McpServerApp(AuthTest)


@pytest.fixture(scope="module")
def signer() -> Signer:
    """One key set per module: generating an RSA key is slow."""
    return Signer()
