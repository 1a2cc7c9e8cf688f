"""``BackendPool``'s bounds: at most ``max_sessions`` per-session connections (the least
recently used closed), idle ones closed, and bad bounds refused."""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from mcpkit import McpServerApp
from mcpkit.client import McpClient
from mcpkit.proxy._backend import BackendConnection
from mcpkit.proxy._pool import SHARED_DECLARED, BackendPool


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


def test_a_backend_of_the_wrong_kind_says_what_to_pass():
    """Each was taken for a command line: a config dict by its keys (run as the command
    "mcpServers"), an app or a path failed with "object is not iterable"."""
    from pathlib import Path

    from mcpkit.proxy import McpProxy

    with pytest.raises(TypeError, match=r"proxy_servers\(config\)"):
        McpProxy({"mcpServers": {"a": {"command": "a"}}})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"parent\.mount\(app, prefix\)"):
        McpProxy(McpServerApp(name="direct"))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"a command line \(a list of strings\).*not PosixPath"):
        McpProxy(Path("server.py"))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"a command line is a list: \['python', 'server\.py'\]"):
        McpProxy("python server.py")


async def test_a_backend_that_cannot_start_is_named_in_the_error():
    """uvloop's FileNotFoundError for a missing command names no file: the error did not
    say which backend (of several in a servers file) was missing."""
    from mcpkit.proxy import BackendUnavailableError, McpProxy

    proxy = McpProxy(["mcpkit-test-no-such-command", "--flag"], name="broken")
    with pytest.raises(BackendUnavailableError) as caught:
        async with asyncio.timeout(10):
            await proxy.app.start()
    assert caught.value.message.startswith(
        "Backend server unavailable (broken: mcpkit-test-no-such-command --flag): FileNotFoundError"
    )
    assert not proxy.app.started


async def test_a_lease_is_one_calls_alone_then_kept_for_the_same_principal_only():
    pool, made = _pool(max_sessions=4)
    async with asyncio.timeout(10):
        async with pool.lease("alice", ["sampling"]) as first:
            await first.client()
            async with pool.lease("alice", ["sampling"]) as second:  # first is running a call
                assert second is not first
                await second.client()
        assert len(pool) == 2 and len(made) == 2
        async with pool.lease("alice", ["sampling"]) as again:
            assert again in (first, second)  # an idle one of alice's with her capabilities
        async with pool.lease("bob", ["sampling"]) as bobs:
            assert bobs not in (first, second)
        async with pool.lease("alice", []) as other_capabilities:
            assert other_capabilities not in (first, second, bobs)
        assert first.party == "principal:alice" and first.front_capabilities == {"sampling"}
        assert pool.shared.front_capabilities == SHARED_DECLARED and pool.shared.party is None
        await pool.aclose()
        assert all(client.session.closed for client in made)


async def test_a_full_pool_closes_an_idle_connection_never_a_busy_one():
    """The least recently used session connection was closed to make room even while a
    call ran on it (another user's call failed)."""
    from mcpkit.proxy import BackendBusyError

    pool, made = _pool(max_sessions=2)
    async with asyncio.timeout(10):
        busy = await pool.for_session("a")
        busy.active.append("a call")
        async with pool.lease("alice") as leased:
            await leased.client()
            with pytest.raises(BackendBusyError, match=r"max_backend_sessions=2"):
                await pool.for_session("b")
            with pytest.raises(BackendBusyError):
                async with pool.lease("bob"):
                    pass
        assert pool.existing("a") is busy
        idle_made = len(made)
        await (await pool.for_session("b")).client()  # alice's idle one goes
        assert made[idle_made - 1].session.closed and len(pool) == 2
        await pool.aclose()


async def test_two_first_calls_of_one_session_in_a_full_pool_share_one_connection():
    """While the first made room (closing an idle one), the second made a connection too:
    the first then took the session's place, the second's was kept by nothing and its
    backend never closed, and the pool held more than its bound."""
    pool, made = _pool(max_sessions=1)
    async with asyncio.timeout(10):
        await (await pool.for_session("x")).client()
        first, second = await asyncio.gather(pool.for_session("y"), pool.for_session("y"))
        assert first is second and len(pool) == 1
        await first.client()
        await pool.aclose()
        assert all(client.session.closed for client in made)


async def test_leases_made_at_once_in_a_full_pool_stay_within_its_bound():
    from mcpkit.proxy import BackendBusyError

    pool, made = _pool(max_sessions=2)
    async with asyncio.timeout(10):
        for principal in ("alice", "bob"):
            async with pool.lease(principal) as leased:
                await leased.client()
        async with contextlib.AsyncExitStack() as stack:
            leases = [stack.enter_async_context(pool.lease("carol")) for _ in range(3)]
            outcomes = await asyncio.gather(*leases, return_exceptions=True)
            assert len(pool) == 2
            assert sum(isinstance(o, BackendBusyError) for o in outcomes) == 1
        await pool.aclose()
        assert all(client.session.closed for client in made)


async def test_idle_leased_connections_are_closed():
    pool, made = _pool(idle_timeout=0.05)
    async with asyncio.timeout(10):
        async with pool.lease("alice") as leased:
            await leased.client()
        await asyncio.sleep(0.1)  # longer than the idle timeout, by design of the test
        await pool.close_idle()
        assert made[0].session.closed and len(pool) == 0
        await pool.aclose()


def test_a_backends_message_goes_to_no_call_when_several_users_calls_share_its_connection():
    from mcpkit.proxy._routing import owner_of

    pool, _ = _pool()
    shared = pool.shared
    assert owner_of(shared) is None
    shared.active.append("alice's call")
    assert owner_of(shared) == "alice's call"
    shared.active.append("bob's call")
    assert owner_of(shared) is None  # it was the newest: bob's
    session = BackendConnection(lambda _c: None, party="session:s1")  # type: ignore[arg-type,return-value]
    session.active.extend(["first", "second"])
    assert owner_of(session) == "second"  # one front client's calls: the same client
