"""DPoP state shared by every instance of one server: a nonce one worker (or instance)
issued is accepted by another, a proof accepted by one is refused by every other, over
real sockets, with a real Redis and real ``mcpkit run --workers`` processes. And the
record of accepted proofs is bounded, yet requests without a valid token cannot push a
proof out of it to replay it."""

from __future__ import annotations

import asyncio
import contextlib
import json
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcpkit import McpServerApp
from mcpkit.auth import BearerAuthConfig, DPoPProofFactory, JwtVerifier, parse_www_authenticate
from mcpkit.auth._dpop_sqlite import FileDPoPState
from mcpkit.auth._dpop_state import LocalDPoPState, RedisDPoPState
from mcpkit.auth._server import BearerAuthGate
from mcpkit.stores import RedisHub, redis_options
from mcpkit.transports.http._auth_layer import with_dpop_file
from mcpkit.transports.http._options import StreamableHttpServerOptions
from tests.auth._support import ISSUER, AuthTest, FakeClock, Signer
from tests.auth.test_dpop_server import dpop_server
from tests.auth.test_server_gate import ACCEPT, AUDIENCE, INIT
from tests.http_server import serving
from tests.redis_server import RedisServer, needs_redis
from tests.transports.test_workers import (
    answer_of,
    environment,
    fresh_connections,
    mcpkit_run,
    modern_call,
)

WAIT = 10.0
#: Where both instances say they are (``public_url``): a proof names one URL for both, as
#: it does for workers sharing one port.
PUBLIC = "https://mcp.example.test"


def dpop_headers(key: DPoPProofFactory, token: str, url: str, nonce: str | None) -> dict[str, str]:
    proof = key.proof("POST", url, access_token=token, nonce=nonce)
    return {"authorization": f"DPoP {token}", "dpop": proof}


def error_of(response: httpx.Response) -> str | None:
    challenges = parse_www_authenticate(response.headers.get_list("www-authenticate"))
    return challenges[0].error if challenges else None


@contextlib.asynccontextmanager
async def instances_on_one_redis(
    signer: Signer, redis_server: RedisServer, secret: bytes | None = None, count: int = 2
) -> AsyncIterator[list[str]]:
    """``count`` servers of one endpoint (``PUBLIC``/mcp), each with its own hub on one
    Redis, as separate processes would be (``secret``: their ``dpop_nonce_secret``);
    yields their real URLs."""
    redis_server.flush()
    hubs = [RedisHub(redis_server.url, prefix="dpop-shared") for _ in range(count)]
    try:
        async with contextlib.AsyncExitStack() as stack:
            urls = []
            for hub in hubs:
                config = BearerAuthConfig(
                    verify=JwtVerifier(jwks=signer.jwks(), issuer=ISSUER).verify,
                    expected_resource=AUDIENCE,
                    public_url=PUBLIC,
                    enable_dpop=True,
                    dpop_nonce_secret=secret,
                )
                url, _ = await stack.enter_async_context(
                    serving(McpServerApp(AuthTest), bearer_auth=config, **redis_options(hub))
                )
                urls.append(url)
            yield urls
    finally:
        for hub in hubs:
            await hub.aclose()


@needs_redis
@pytest.mark.parametrize("secret", [None, b"s" * 32], ids=["store-keys", "configured-secret"])
async def test_instances_on_one_redis_accept_each_others_nonces_and_refuse_a_replay(
    signer, redis_server, secret
):
    key = DPoPProofFactory()
    token = signer.token(audience=AUDIENCE, jkt=key.jkt)
    htu = f"{PUBLIC}/mcp"
    async with (
        asyncio.timeout(30),
        instances_on_one_redis(signer, redis_server, secret) as (a, b),
        httpx.AsyncClient(timeout=WAIT) as http,
    ):

        async def post(url: str, headers: dict[str, str]) -> httpx.Response:
            return await http.post(url, json=INIT, headers={**ACCEPT, **headers})

        first = await post(a, dpop_headers(key, token, htu, None))
        assert first.status_code == 401 and error_of(first) == "use_dpop_nonce"
        nonce = first.headers["dpop-nonce"]
        # B never issued it, yet takes it: one nonce for the endpoint.
        headers = dpop_headers(key, token, htu, nonce)
        accepted = await post(b, headers)
        assert accepted.status_code == 200, accepted.text
        assert "dpop-nonce" not in accepted.headers  # B's current nonce is that one
        # The proof B accepted, replayed at A (or at B again): refused.
        for url in (a, b):
            again = await post(url, headers)
            assert again.status_code == 401 and error_of(again) == "invalid_dpop_proof", url
        # A fresh proof with that nonce is fine at A.
        assert (await post(a, dpop_headers(key, token, htu, nonce))).status_code == 200


@needs_redis
async def test_the_redis_record_is_bounded_and_its_entries_expire(redis_server):
    redis_server.flush()
    hub = RedisHub(redis_server.url, prefix="dpop-bound")
    try:
        state = RedisDPoPState(hub, max_entries=3)
        assert all([await state.first_use(f"p{i}", 60) for i in range(5)])
        seen = await hub.client.zrange(hub.key("dpop", "seen"), 0, -1)
        assert seen == [b"p2", b"p3", b"p4"]  # the bound held: the oldest went
        assert not await state.first_use("p4", 60)
        assert await state.first_use("short", 0.05)
        assert not await state.first_use("short", 0.05)
        await asyncio.sleep(0.1)
        assert await state.first_use("short", 0.05)  # expired with its window
        # Every instance gets the same key for a period, the next period another.
        other = RedisDPoPState(RedisHub(hub.client, prefix="dpop-bound"))
        assert await state.nonce_key(7, 60) == await other.nonce_key(7, 60)
        assert await state.nonce_key(8, 60) != await state.nonce_key(7, 60)
        assert 0 < await hub.client.pttl(hub.key("dpop", "nonce-key", "7")) <= 60_000
    finally:
        await hub.aclose()


async def test_the_local_record_is_bounded_and_its_entries_expire():
    clock = FakeClock()
    state = LocalDPoPState(max_entries=2, clock=clock)
    assert await state.first_use("a", 10) and await state.first_use("b", 10)
    assert not await state.first_use("b", 10)
    assert await state.first_use("c", 10) and len(state.replays) == 2
    clock.advance(11)
    assert await state.first_use("b", 10)
    assert len(state.replays) == 1


async def test_the_file_record_is_shared_by_its_openers_bounded_and_expiring(tmp_path):
    path = tmp_path / "dpop.sqlite"
    clock = FakeClock()
    one = FileDPoPState(path, max_entries=3, clock=clock)
    two = FileDPoPState(path, max_entries=3, clock=clock)  # another connection, as a process
    try:
        assert await one.first_use("p0", 10)
        assert not await two.first_use("p0", 10)  # recorded by the other
        for i in range(1, 5):
            assert await (one, two)[i % 2].first_use(f"p{i}", 10 + i)
        assert not await one.first_use("p4", 10)  # the newest stays
        assert await two.first_use("p0", 10)  # the oldest made room: bound held at 3
        clock.advance(30)
        assert await one.first_use("p4", 10)  # expired with its window
        assert await one.nonce_key(7, 60) == await two.nonce_key(7, 60)
        assert await one.nonce_key(8, 60) != await two.nonce_key(7, 60)
    finally:
        await one.close()
        await two.close()


async def test_instances_sharing_a_file_share_nonces_and_refuse_a_replay(signer, tmp_path):
    key = DPoPProofFactory()
    token = signer.token(audience=AUDIENCE, jkt=key.jkt)
    htu = f"{PUBLIC}/mcp"
    stores = [FileDPoPState(tmp_path / "dpop.sqlite") for _ in "AB"]
    try:
        async with contextlib.AsyncExitStack() as stack:
            urls = []
            for store in stores:
                config = BearerAuthConfig(
                    verify=JwtVerifier(jwks=signer.jwks(), issuer=ISSUER).verify,
                    expected_resource=AUDIENCE,
                    public_url=PUBLIC,
                    enable_dpop=True,
                    dpop_store=store,
                )
                url, _ = await stack.enter_async_context(
                    serving(McpServerApp(AuthTest), bearer_auth=config)
                )
                urls.append(url)
            a, b = urls
            http = await stack.enter_async_context(httpx.AsyncClient(timeout=WAIT))

            async def post(url: str, headers: dict[str, str]) -> httpx.Response:
                return await http.post(url, json=INIT, headers={**ACCEPT, **headers})

            nonce = (await post(a, dpop_headers(key, token, htu, None))).headers["dpop-nonce"]
            headers = dpop_headers(key, token, htu, nonce)
            assert (await post(b, headers)).status_code == 200
            again = await post(a, headers)
            assert again.status_code == 401 and error_of(again) == "invalid_dpop_proof"
    finally:
        for store in stores:
            await store.close()


async def test_a_workers_file_is_used_only_when_nothing_else_shares_the_state(signer, tmp_path):
    def config(**extra: Any) -> BearerAuthConfig:
        verify = JwtVerifier(jwks=signer.jwks(), issuer=ISSUER).verify
        return BearerAuthConfig(verify=verify, expected_resource=AUDIENCE, **extra)

    path = str(tmp_path / "dpop.sqlite")
    clock = FakeClock()
    plain = StreamableHttpServerOptions(
        bearer_auth=config(enable_dpop=True, dpop_replay_cache_size=7, clock=clock)
    )
    options, store = with_dpop_file(plain, path)
    try:
        assert isinstance(store, FileDPoPState) and options.bearer_auth.dpop_store is store
        assert (store.path, store.max_entries, store.clock) == (path, 7, clock)
        assert plain.bearer_auth.dpop_store is None  # the worker's copy, not the app's config
        assert BearerAuthGate(options.bearer_auth).dpop_state is store
    finally:
        assert store is not None
        await store.close()
    own = LocalDPoPState()
    hub = RedisHub("redis://127.0.0.1:1", prefix="unused")  # never connected
    try:
        kept = [
            StreamableHttpServerOptions(),
            StreamableHttpServerOptions(bearer_auth=config()),  # no DPoP
            StreamableHttpServerOptions(bearer_auth=config(enable_dpop=True, dpop_store=own)),
            StreamableHttpServerOptions(
                bearer_auth=config(enable_dpop=True), stateless=True, **redis_options(hub)
            ),
        ]
        for options in kept:
            assert with_dpop_file(options, path) == (options, None)
    finally:
        await hub.aclose()
    assert not (tmp_path / "dpop.sqlite").exists()


# -- unauthenticated requests cannot flush the record -------------------------------------------


@pytest.mark.parametrize("nonces", [False, True])
async def test_proofs_with_no_valid_token_cannot_push_an_accepted_one_out(app, signer, nonces):
    async with (
        asyncio.timeout(30),
        dpop_server(app, signer, dpop_replay_cache_size=4, dpop_require_nonce=nonces) as s,
    ):
        if nonces:
            await s.post(s.headers(nonce=None))  # fetch a nonce
        headers = s.headers()
        assert (await s.post(headers)).status_code == 200
        # Many proofs, each valid and fresh, with tokens that are not: far past the bound.
        attacker = DPoPProofFactory(clock=s.clock)
        for i in range(20):
            junk = f"junk-{i}"
            proof = attacker.proof("POST", s.url, access_token=junk, nonce=s.nonce)
            refused = await s.post({"authorization": f"DPoP {junk}", "dpop": proof})
            assert refused.status_code == 401
        replayed = await s.post(headers)
        assert replayed.status_code == 401, "the accepted proof was pushed out and replayed"
        assert error_of(replayed) == "invalid_dpop_proof"


# -- real workers -----------------------------------------------------------------------


APP = textwrap.dedent(
    """
    import json
    import os

    from mcpkit import McpServerApp, mcp_server, mcp_tool
    from mcpkit.auth import BearerAuthConfig, JwtVerifier

    JWKS = json.loads({jwks!r})


    @mcp_server(name="dpop-pids", version="1.0.0")
    class Pids:
        @mcp_tool
        def pid(self) -> int:
            return os.getpid()


    app = McpServerApp(Pids)
    auth = BearerAuthConfig(
        verify=JwtVerifier(jwks=JWKS, issuer={issuer!r}).verify,
        expected_resource={audience!r},
        enable_dpop=True,
    )
    """
)


async def check_workers_share_dpop(signer: Signer, served: Any) -> None:
    """The two workers of ``served`` share DPoP state: every call with the nonce the first
    call got is accepted, whichever worker serves it (both do), and one proof sent ten
    times is accepted once."""
    key = DPoPProofFactory()
    token = signer.token(audience=AUDIENCE, jkt=key.jkt)
    url = served.url
    workers = served.children()
    assert len(workers) == 2
    body, call_headers = modern_call("pid")
    async with fresh_connections() as http:

        async def call(headers: dict[str, str]) -> httpx.Response:
            return await http.post(url, json=body, headers={**call_headers, **headers})

        first = await call(dpop_headers(key, token, url, None))
        assert first.status_code == 401 and error_of(first) == "use_dpop_nonce"
        nonce = first.headers["dpop-nonce"]
        # Each call on a connection of its own, so on either worker: every one is
        # accepted with the nonce the first worker issued (no retry needed).
        pids: list[int] = []
        for _ in range(40):
            answer: Any = await call(dpop_headers(key, token, url, nonce))
            assert answer.status_code == 200, (len(pids), answer.text)
            pids.append(answer_of(answer)["result"]["structuredContent"]["result"])
            if set(pids) == workers and len(pids) >= 10:
                break
        assert set(pids) == workers, f"{len(pids)} calls reached {set(pids)} of {workers}"
        # One proof sent ten times, on connections landing on either worker: one call.
        replayed = dpop_headers(key, token, url, nonce)
        statuses = [(await call(replayed)).status_code for _ in range(10)]
        assert sorted(statuses) == [200] + [401] * 9, statuses


def write_app(signer: Signer, tmp_path: Path) -> Path:
    app_file = tmp_path / "dpop_pids.py"
    app_file.write_text(
        APP.format(jwks=json.dumps(signer.jwks()), issuer=ISSUER, audience=AUDIENCE)
    )
    return app_file


@pytest.mark.timeout(90)
@needs_redis
async def test_workers_sharing_redis_share_dpop_nonces_and_replays(
    signer, redis_server, tmp_path: Path
):
    redis_server.flush()
    app_file = write_app(signer, tmp_path)
    env = environment(MCPKIT_BEARER_AUTH="dpop_pids:auth")
    args = ("--workers", "2", "--redis-url", redis_server.url)
    with mcpkit_run(app_file, *args, env=env) as served:
        await check_workers_share_dpop(signer, served)


@pytest.mark.timeout(90)
async def test_workers_without_redis_share_dpop_state_through_the_supervisors_file(
    signer, tmp_path: Path
):
    app_file = write_app(signer, tmp_path)
    runtime = tmp_path / "tmp"  # the supervisor's temporary directory (TMPDIR)
    runtime.mkdir()
    env = environment(MCPKIT_BEARER_AUTH="dpop_pids:auth", TMPDIR=str(runtime))
    with mcpkit_run(app_file, "--workers", "2", "--stateless", env=env) as served:
        await check_workers_share_dpop(signer, served)
        # One private directory of the supervisor's, the workers' file in it.
        (private,) = runtime.glob("mcpkit-*")
        assert private.stat().st_mode & 0o777 == 0o700
        assert (private / "dpop.sqlite").is_file()
    assert served.process.returncode == 0
    assert not list(runtime.glob("mcpkit-*")), "the supervisor left its directory behind"
