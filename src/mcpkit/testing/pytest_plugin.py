"""pytest fixtures for testing an mcpkit server (needs pytest-asyncio).

In your ``conftest.py``::

    pytest_plugins = ["mcpkit.testing.pytest_plugin"]

    @pytest.fixture
    def mcp_app():
        return app                      # your McpServerApp (or build a fresh one here)

Then any test may ask for ``mcp_client``: a connected in-memory ``McpClient`` for
``mcp_app``. Override ``mcp_client_options`` (a dict of ``McpClient`` keyword arguments) to
choose the era or add handlers, e.g. parametrized over both eras::

    @pytest.fixture(params=["2025-11-25", "2026-07-28"])
    def mcp_client_options(request):
        return {"protocol_version": request.param}

The fixtures work in pytest-asyncio's ``strict`` and ``auto`` modes alike.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from mcpkit.client import McpClient
from mcpkit.testing import connected

try:
    import pytest_asyncio
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "mcpkit.testing.pytest_plugin needs pytest-asyncio: "
        "pip install 'mcpkit[testing]' (or pytest-asyncio)"
    ) from exc

__all__ = ["mcp_app", "mcp_client", "mcp_client_options"]


@pytest.fixture
def mcp_app() -> Any:
    """The app ``mcp_client`` connects to: define your own ``mcp_app`` fixture."""
    raise pytest.UsageError(
        "mcp_client needs an app: define a fixture named mcp_app that returns your McpServerApp"
    )


@pytest.fixture
def mcp_client_options() -> dict[str, Any]:
    """Keyword arguments for the ``McpClient`` of ``mcp_client`` (none by default)."""
    return {}


@pytest_asyncio.fixture
async def mcp_client(mcp_app: Any, mcp_client_options: dict[str, Any]) -> AsyncIterator[McpClient]:
    """A connected in-memory ``McpClient`` for ``mcp_app``, closed after the test."""
    async with connected(mcp_app, **mcp_client_options) as client:
        yield client
