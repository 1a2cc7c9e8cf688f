"""The ``ProxyStore`` contract, held by the three stores alike (memory, SQLite, Redis, each
on a clock the test moves): what is kept and for how long, the bounds, codes and refresh
tokens taken once even when two instances take them at once; and two OAuthProxy instances
sharing Redis, a code issued by one redeemed at the other, once."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcpkit.auth import (
    MemoryProxyStore,
    OAuthProxy,
    OidcUpstream,
    ProxyStore,
    RedisProxyStore,
    SqliteProxyStore,
    StoreFullError,
    UpstreamIdentity,
)
from mcpkit.auth._proxy._access import load_signing_key
from mcpkit.auth._proxy._records import (
    AuthorizationCode,
    ClientRecord,
    PendingAuthorization,
    RefreshRecord,
)
from tests.auth._proxy_world import REDIRECT, authorize_url, pkce, query_of, register, sign_in
from tests.auth._proxy_world import world as proxy_world
from tests.auth._support import FakeClock as Clock
from tests.redis_server import REDIS_SERVER, RedisServer, needs_redis

ALICE = UpstreamIdentity("alice", "dev", email="a@example.test", claims={"groups": ["x"]})


Make = Callable[..., ProxyStore]


@pytest.fixture(params=["memory", "sqlite", "redis"])
async def make(request: pytest.FixtureRequest, tmp_path: Path, clock: Clock) -> AsyncIterator[Make]:
    """``make(**bounds)``: a store on the test's clock. Called again with the same bounds,
    a second instance sharing the first one's state (memory: the same object)."""
    kind = request.param
    made: list[Any] = []
    prefix = f"t{uuid.uuid4().hex[:8]}"
    memory: dict[str, MemoryProxyStore] = {}

    def build(**bounds: Any) -> ProxyStore:
        if kind == "memory":
            key = repr(sorted(bounds.items()))
            if key not in memory:
                memory[key] = MemoryProxyStore(clock=clock, **bounds)
            return memory[key]
        if kind == "sqlite":
            store: Any = SqliteProxyStore(tmp_path / "oauth.db", clock=clock, **bounds)
        else:
            assert server is not None
            store = RedisProxyStore(server.url, prefix=prefix, clock=clock, **bounds)
        made.append(store)
        return store  # type: ignore[no-any-return]

    if kind == "redis" and REDIS_SERVER is None:
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
    server = request.getfixturevalue("redis_server") if kind == "redis" else None
    try:
        yield build
    finally:
        for store in made:
            await (store.close() if isinstance(store, SqliteProxyStore) else store.aclose())


@pytest.fixture
def clock() -> Clock:
    return Clock()


def client(client_id: str = "c1") -> ClientRecord:
    return ClientRecord(client_id, ("https://app.example/cb",), client_name="App", scope="a b")


def code(clock: Clock, ttl: float = 60.0) -> AuthorizationCode:
    return AuthorizationCode(
        "c1", REDIRECT, "x" * 43, ("a",), "https://mcp.example/mcp", ALICE, "fam", clock() + ttl
    )


def refresh(clock: Clock, ttl: float = 3600.0) -> RefreshRecord:
    return RefreshRecord("c1", ("a", "b"), "https://mcp.example/mcp", ALICE, "fam", clock() + ttl)


def pending(clock: Clock, pending_id: str = "p1") -> PendingAuthorization:
    return PendingAuthorization(
        pending_id, "c1", REDIRECT, "x" * 43, "s", ("a",), "r", "browser", clock() + 600
    )


async def test_clients_are_kept_and_their_table_refuses_when_full(make: Make) -> None:
    store = make(max_clients=2)
    await store.save_client(client("c1"))
    await store.save_client(client("c2"))
    assert await store.get_client("c1") == client("c1")
    assert await store.get_client("nobody") is None
    with pytest.raises(StoreFullError):
        await store.save_client(client("c3"))
    await store.save_client(client("c2"))  # saved again: no new room needed
    assert await store.get_client("c3") is None and await store.get_client("c2") == client("c2")


async def test_clients_expire_after_client_ttl(make: Make, clock: Clock) -> None:
    store = make(max_clients=1, client_ttl=100.0)
    await store.save_client(client("c1"))
    clock.now += 101
    assert await store.get_client("c1") is None
    await store.save_client(client("c2"))  # the expired one made room
    assert await store.get_client("c2") == client("c2")


async def test_a_pending_authorization_is_taken_once_and_expires(make: Make, clock: Clock) -> None:
    store = make()
    await store.save_pending(pending(clock))
    assert await store.get_pending("p1") == pending(clock)
    assert await store.take_pending("p1") == pending(clock)
    assert await store.take_pending("p1") is None and await store.get_pending("p1") is None
    await store.save_pending(pending(clock, "p2"))
    clock.now += 601
    assert await store.get_pending("p2") is None and await store.take_pending("p2") is None


async def test_a_code_is_taken_once_its_second_use_told_apart(make: Make, clock: Clock) -> None:
    store = make()
    issued = code(clock)
    await store.save_code("k", issued)
    first = await store.take_code("k")
    assert first == issued and first is not None and not first.used
    second = await store.take_code("k")
    assert second is not None and second.used and second.identity == ALICE
    assert await store.take_code("unknown") is None
    await store.save_code("late", code(clock, ttl=60))
    clock.now += 61
    assert await store.take_code("late") is None


async def test_refresh_tokens_are_taken_once_and_read_as_they_are(make: Make, clock: Clock) -> None:
    store = make()
    await store.save_refresh("r", refresh(clock))
    assert await store.get_refresh("r") == refresh(clock)
    taken = await store.take_refresh("r")
    assert taken is not None and not taken.used and taken.scopes == ("a", "b")
    after = await store.get_refresh("r")
    assert after is not None and after.used
    again = await store.take_refresh("r")
    assert again is not None and again.used
    clock.now += 3601
    assert await store.get_refresh("r") is None


async def test_revocations_and_consents_last_until_they_expire(make: Make, clock: Clock) -> None:
    store = make()
    await store.revoke_family("fam", clock() + 10)
    await store.revoke_access_token("jti", clock() + 20)
    await store.save_consent("browser", "https://app.example/client.json", clock() + 30)
    assert await store.family_revoked("fam") and await store.access_token_revoked("jti")
    assert await store.has_consent("browser", "https://app.example/client.json")
    assert not await store.has_consent("other", "https://app.example/client.json")
    assert not await store.family_revoked("other") and not await store.access_token_revoked("x")
    clock.now += 15
    assert not await store.family_revoked("fam") and await store.access_token_revoked("jti")
    clock.now += 20
    assert not await store.access_token_revoked("jti")
    assert not await store.has_consent("browser", "https://app.example/client.json")


async def test_a_consent_covers_the_scopes_approved_and_no_more(make: Make, clock: Clock) -> None:
    store = make()
    await store.save_consent("b", "c", clock() + 30, ("mcp:read",))
    assert await store.has_consent("b", "c") and await store.has_consent("b", "c", ("mcp:read",))
    assert not await store.has_consent("b", "c", ("mcp:read", "mcp:write"))  # asked again
    await store.save_consent("b", "c", clock() + 30, ("mcp:write",))  # the step-up approved
    assert await store.has_consent("b", "c", ("mcp:write", "mcp:read"))
    assert not await store.has_consent("b", "other", ("mcp:read",))


async def test_full_tables_make_room_by_dropping_the_oldest(make: Make, clock: Clock) -> None:
    store = make(max_codes=2, max_pending=2, max_consents=2, max_revocations=2)
    for n in range(3):
        await store.save_code(f"k{n}", code(clock, ttl=60 + n))
        await store.save_pending(pending(clock, f"p{n}"))
        await store.save_consent(f"b{n}", "c", clock() + 60 + n)
        await store.revoke_family(f"f{n}", clock() + 60 + n)
        clock.now += 0.5
    assert await store.take_code("k0") is None
    assert await store.take_code("k1") is not None and await store.take_code("k2") is not None
    assert await store.get_pending("p0") is None and await store.get_pending("p2") is not None
    assert not await store.has_consent("b0", "c") and await store.has_consent("b2", "c")
    assert not await store.family_revoked("f0") and await store.family_revoked("f2")


async def test_two_instances_taking_one_code_at_once_see_one_first_use(
    make: Make, clock: Clock
) -> None:
    one, other = make(), make()
    for key in ("k1", "k2", "k3"):
        await one.save_code(key, code(clock))
        taken = await asyncio.gather(
            *(store.take_code(key) for store in (one, other, one, other, other, one))
        )
        assert sorted(t is not None and t.used for t in taken) == [False] + [True] * 5
    await other.save_refresh("r", refresh(clock))
    taken_refresh = await asyncio.gather(one.take_refresh("r"), other.take_refresh("r"))
    assert sorted(t is not None and t.used for t in taken_refresh) == [False, True]


@needs_redis
async def test_two_proxies_sharing_redis_redeem_a_code_once(redis_server: RedisServer) -> None:
    """Proxy A issues codes; B (another instance: the same address, key and Redis) redeems
    one; A then refuses it, and one redeemed at both at once is accepted by one alone."""
    key = load_signing_key(None)
    prefix = f"t{uuid.uuid4().hex[:8]}"
    store_a, store_b = (RedisProxyStore(redis_server.url, prefix=prefix) for _ in range(2))
    try:
        async with (
            asyncio.timeout(60),
            proxy_world(store=store_a, signing_key=key) as w,
            httpx.AsyncClient() as browser,
        ):
            upstream = OidcUpstream(w.dev.discovery_url, "mcp-proxy", "proxy-secret", name="dev")
            b = OAuthProxy(
                upstream=upstream,
                base_url=w.base,
                resource=w.mcp_url,
                scopes=("mcp:read", "mcp:write"),
                signing_key=key,
                store=store_b,
            )
            at_a = w.url("/token")
            at_b = f"http://b.internal{w.url('/token')[len(w.base) :]}"
            async with httpx.AsyncClient(transport=httpx.ASGITransport(app=b)) as to_b:
                registered = await register(browser, w)

                async def code_for() -> tuple[str, str]:
                    verifier, challenge = pkce()
                    url = authorize_url(w, registered["client_id"], challenge)
                    return query_of(await sign_in(browser, w, url))["code"], verifier

                def form(code_: str, verifier: str) -> dict[str, str]:
                    return {
                        "grant_type": "authorization_code",
                        "code": code_,
                        "redirect_uri": REDIRECT,
                        "code_verifier": verifier,
                        "client_id": registered["client_id"],
                    }

                issued, verifier = await code_for()
                redeemed = await to_b.post(at_b, data=form(issued, verifier))
                assert redeemed.status_code == 200, redeemed.text
                assert (await b.verifier().verify(redeemed.json()["access_token"])).ok
                again = await browser.post(at_a, data=form(issued, verifier))
                assert again.status_code == 400 and again.json()["error"] == "invalid_grant"

                issued, verifier = await code_for()
                both = await asyncio.gather(
                    browser.post(at_a, data=form(issued, verifier)),
                    to_b.post(at_b, data=form(issued, verifier)),
                )
                assert sorted(r.status_code for r in both) == [200, 400]
            await upstream.aclose()
            await b.aclose()
    finally:
        await store_a.aclose()
        await store_b.aclose()
