"""mcpkit's own OAuth client against OAuthProxy: ``OAuthClientProvider`` discovers the
proxy from the server's challenge, registers, and signs in through a headless
``authorize`` callback (httpx doing what the user would: consent, the provider's login);
then the memory store's bounds."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from mcpkit.auth import MemoryProxyStore, StoreFullError, UpstreamIdentity
from mcpkit.auth._proxy._records import AuthorizationCode, ClientRecord, PendingAuthorization
from tests.auth._proxy_world import REDIRECT, mcpkit_client, sign_in, world
from tests.auth._support import FakeClock


async def test_mcpkit_oauth_client_runs_the_whole_flow_headless() -> None:
    async with asyncio.timeout(30), world() as w, httpx.AsyncClient() as browser:

        async def authorize(url: str) -> str:
            return await sign_in(browser, w, url)

        provider, client = mcpkit_client(w.mcp_url, REDIRECT, authorize)
        try:
            async with client:
                result = await client.call_tool("whoami", {})
                seen = json.loads(result.content[0].text)
                assert seen["subject"] == "alice" and seen["upstream"] == "dev"
                assert seen["name"] == "Alice Liddell"
                # A refresh through the proxy: a new access token, the same user.
                first = provider.token
                assert first is not None and first.refresh_token
                refreshed = await provider.refresh()
                assert refreshed is not None
                assert refreshed.access_token != first.access_token
                again = json.loads((await client.call_tool("whoami", {})).content[0].text)
                assert again["subject"] == "alice"
        finally:
            await provider.aclose()
        # The request carried the resource, PKCE S256 and the scopes the proxy offers.
        asked = dict(httpx.URL(provider.authorization_requests[0]).params)
        assert asked["resource"] == w.mcp_url and asked["code_challenge_method"] == "S256"


IDENTITY = UpstreamIdentity(subject="alice", provider="dev")


def pending(n: int, clock: FakeClock, ttl: float = 600) -> PendingAuthorization:
    return PendingAuthorization(
        id=f"p{n}",
        client_id="c",
        redirect_uri=REDIRECT,
        code_challenge="x" * 43,
        state=None,
        scopes=(),
        resource="r",
        browser="b",
        expires_at=clock() + ttl,
    )


def code(clock: FakeClock, ttl: float = 60) -> AuthorizationCode:
    return AuthorizationCode(
        client_id="c",
        redirect_uri=REDIRECT,
        code_challenge="x" * 43,
        scopes=(),
        resource="r",
        identity=IDENTITY,
        family="f",
        expires_at=clock() + ttl,
    )


async def test_the_memory_store_drops_the_oldest_pending_and_expires_them() -> None:
    clock = FakeClock()
    store = MemoryProxyStore(max_pending=3, clock=clock)
    for n in range(5):
        await store.save_pending(pending(n, clock))
    assert len(store.pending) == 3
    assert await store.get_pending("p0") is None and await store.get_pending("p4") is not None
    clock.advance(601)
    assert await store.get_pending("p4") is None
    await store.save_pending(pending(9, clock))
    assert len(store.pending) == 1  # the expired ones swept on the way


async def test_codes_expire_and_are_marked_used_once_taken() -> None:
    clock = FakeClock()
    store = MemoryProxyStore(max_codes=2, clock=clock)
    await store.save_code("k", code(clock))
    first = await store.take_code("k")
    second = await store.take_code("k")
    assert first is not None and not first.used
    assert second is not None and second.used
    await store.save_code("k2", code(clock))
    clock.advance(61)
    assert await store.take_code("k2") is None
    for n in range(4):
        await store.save_code(f"n{n}", code(clock))
    assert len(store.codes) == 2


async def test_registered_clients_are_never_pushed_out_registration_is_refused() -> None:
    store = MemoryProxyStore(max_clients=2)
    for n in range(2):
        await store.save_client(ClientRecord(client_id=f"c{n}", redirect_uris=(REDIRECT,)))
    with pytest.raises(StoreFullError):
        await store.save_client(ClientRecord(client_id="c9", redirect_uris=(REDIRECT,)))
    assert await store.get_client("c0") is not None


async def test_a_full_client_table_answers_registration_503() -> None:
    async with asyncio.timeout(30), world(store=MemoryProxyStore(max_clients=1)) as w:
        async with httpx.AsyncClient() as http:
            body = {"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none"}
            assert (await http.post(w.url("/register"), json=body)).status_code == 201
            full = await http.post(w.url("/register"), json=body)
            assert full.status_code == 503 and full.json()["error"] == "temporarily_unavailable"


async def test_consents_and_revocations_expire() -> None:
    clock = FakeClock()
    store = MemoryProxyStore(max_consents=2, max_revocations=2, clock=clock)
    await store.save_consent("b", "c", clock() + 10)
    assert await store.has_consent("b", "c") and not await store.has_consent("b", "other")
    await store.revoke_family("f", clock() + 10)
    await store.revoke_access_token("j", clock() + 10)
    clock.advance(11)
    assert not await store.has_consent("b", "c")
    assert not await store.family_revoked("f") and not await store.access_token_revoked("j")


def test_records_round_trip_as_json() -> None:
    clock = FakeClock()
    record = code(clock)
    assert AuthorizationCode.from_dict(json.loads(json.dumps(record.as_dict()))) == record
    client = ClientRecord(client_id="c", redirect_uris=(REDIRECT,))
    assert ClientRecord.from_dict(json.loads(json.dumps(client.as_dict()))) == client
