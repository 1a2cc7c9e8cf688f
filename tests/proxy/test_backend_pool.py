"""``BackendPool``'s bounds: at most ``max_sessions`` per-session connections (the least
recently used closed), idle ones closed, and bad bounds refused."""

from __future__ import annotations

import asyncio

import pytest

from mcpkit import McpServerApp
from mcpkit.client import McpClient
from mcpkit.proxy._backend import BackendConnection, BackendPool


def _pool(**bounds: float) -> tuple[BackendPool, list[McpClient]]:
    backend = McpServerApp(name="pooled")

    @backend.tool()
    def hello() -> str:
        return "hi"

    made: list[McpClient] = []

    def make(_connection: BackendConnection) -> McpClient:
        client = McpClient.in_memory(backend)
        made.append(client)
        return client

    return BackendPool(make, **bounds), made  # type: ignore[arg-type]


async def test_the_least_recently_used_session_connection_is_closed_past_the_bound():
    pool, made = _pool(max_sessions=2)
    async with asyncio.timeout(10):
        for key in ("a", "b", "a", "c"):
            connection = await pool.for_session(key)
            await connection.client()
        assert len(pool) == 2 and len(made) == 3
        assert made[1].session.closed  # "b": used least recently when "c" came
        assert not made[0].session.closed and not made[2].session.closed
        await pool.aclose()
        assert all(client.session.closed for client in made)


async def test_idle_session_connections_are_closed():
    pool, made = _pool(idle_timeout=0.05)
    async with asyncio.timeout(10):
        await (await pool.for_session("a")).client()
        await asyncio.sleep(0.1)  # longer than the idle timeout, by design of the test
        await pool.for_session("b")
        assert made[0].session.closed and pool.existing("a") is None
        await pool.aclose()


def test_bad_bounds_are_refused():
    with pytest.raises(ValueError, match="max_backend_sessions"):
        _pool(max_sessions=0)
    with pytest.raises(ValueError, match="backend_idle_timeout"):
        _pool(idle_timeout=0)
