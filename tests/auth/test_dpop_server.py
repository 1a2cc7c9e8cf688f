"""DPoP (RFC 9449) on the server: proof checks, replay refusal, the ``iat`` window at its
edges (injected clock), server nonces and their rotation, and the ``DPoP`` challenge, over
real sockets on every transport plus direct checks of the verifier."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from joserfc import jws
from joserfc.jwk import ECKey, RSAKey
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from mcpkit import McpServerApp
from mcpkit.auth import (
    BearerAuthConfig,
    DPoPError,
    DPoPNonceManager,
    DPoPProofFactory,
    DPoPProofVerifier,
    JwtVerifier,
    parse_www_authenticate,
)
from tests.auth._support import ISSUER, FakeClock, Signer, announced_endpoint
from tests.auth.test_server_gate import ACCEPT, AUDIENCE, INIT, INIT_LEGACY
from tests.http_server import serving

WAIT = 10.0


class DPoPSetup:
    def __init__(
        self, http: httpx.AsyncClient, url: str, signer: Signer, clock: FakeClock, asgi: Any
    ) -> None:
        self.http = http
        self.url = url
        self.signer = signer
        self.clock = clock
        self.asgi = asgi
        self.key = DPoPProofFactory(clock=clock)
        self.token = signer.token(
            audience=AUDIENCE, scope="mcp:read", jkt=self.key.jkt, now=clock()
        )
        self.nonce: str | None = None

    def headers(
        self,
        method: str = "POST",
        url: str | None = None,
        *,
        nonce: Any = "current",
        token: str | None = None,
        proof: str | None = None,
    ) -> dict[str, str]:
        token = token or self.token
        if nonce == "current":
            nonce = self.nonce
        proof = proof or self.key.proof(method, url or self.url, access_token=token, nonce=nonce)
        return {"authorization": f"DPoP {token}", "dpop": proof}

    async def post(self, headers: dict[str, str]) -> httpx.Response:
        response = await self.http.post(self.url, json=INIT, headers={**ACCEPT, **headers})
        if "dpop-nonce" in response.headers:
            self.nonce = response.headers["dpop-nonce"]
        return response


@contextlib.asynccontextmanager
async def dpop_server(
    app: McpServerApp, signer: Signer, **overrides: Any
) -> AsyncIterator[DPoPSetup]:
    clock = FakeClock()
    verifier = JwtVerifier(jwks=signer.jwks(), issuer=ISSUER, clock=clock)
    options: dict[str, Any] = dict(
        verify=verifier.verify,
        required_scopes=("mcp:read",),
        expected_resource=AUDIENCE,
        authorization_servers=(ISSUER,),
        enable_dpop=True,
        clock=clock,
    )
    options.update(overrides)
    async with (
        serving(app, bearer_auth=BearerAuthConfig(**options)) as (url, asgi),
        httpx.AsyncClient(timeout=WAIT) as http,
    ):
        yield DPoPSetup(http, url, signer, clock, asgi)


def challenge(response: Any) -> Any:
    challenges = parse_www_authenticate(response.headers.get_list("www-authenticate"))
    assert challenges
    return challenges[0]


async def test_nonce_dance_then_accepted(app, signer):
    async with asyncio.timeout(30), dpop_server(app, signer) as s:
        # No nonce yet: refused with use_dpop_nonce and a fresh nonce.
        first = await s.post(s.headers(nonce=None))
        assert first.status_code == 401
        c = challenge(first)
        assert c.is_scheme("DPoP") and c.error == "use_dpop_nonce"
        assert c.get("algs") and "ES256" in c.get("algs").split()
        assert first.headers["dpop-nonce"] == s.nonce
        # With the nonce: accepted.
        ok = await s.post(s.headers())
        assert ok.status_code == 200, ok.text
        assert "dpop-nonce" not in ok.headers  # the nonce is current: nothing new to hand out


async def test_missing_credentials_get_a_dpop_challenge_with_a_nonce(app, signer):
    async with asyncio.timeout(30), dpop_server(app, signer) as s:
        for headers in ({}, {"authorization": f"Bearer {s.token}"}):
            response = await s.post(headers)
            assert response.status_code == 401
            c = challenge(response)
            assert c.is_scheme("DPoP") and c.error is None
            assert c.resource_metadata.endswith("/.well-known/oauth-protected-resource/mcp")
            assert response.headers["dpop-nonce"]


async def test_bad_proofs_are_refused_with_a_nonce(app, signer):
    async with asyncio.timeout(30), dpop_server(app, signer) as s:
        await s.post(s.headers(nonce=None))  # fetch a nonce
        other_key = DPoPProofFactory(clock=s.clock)
        bad = {
            "no proof": {"authorization": f"DPoP {s.token}"},
            "wrong method": s.headers("GET"),
            "wrong uri": s.headers(url=s.url.replace("/mcp", "/other")),
            "wrong host": s.headers(url=s.url.replace("127.0.0.1", "localhost")),
            "other token hash": {
                "authorization": f"DPoP {s.token}",
                "dpop": s.key.proof("POST", s.url, access_token="another-token", nonce=s.nonce),
            },
            "not a jws": {"authorization": f"DPoP {s.token}", "dpop": "abc.def"},
        }
        for why, headers in bad.items():
            response = await s.post(headers)
            assert response.status_code == 401, why
            assert challenge(response).error == "invalid_dpop_proof", why
            assert response.headers.get("dpop-nonce"), why
        # A proof by a key the token is not bound to: the proof is fine, the binding is not.
        response = await s.post(
            {
                "authorization": f"DPoP {s.token}",
                "dpop": other_key.proof("POST", s.url, access_token=s.token, nonce=s.nonce),
            }
        )
        assert response.status_code == 401 and challenge(response).error == "invalid_token"
        # A token with no cnf.jkt presented with DPoP.
        unbound = s.signer.token(audience=AUDIENCE, now=s.clock())
        response = await s.post(s.headers(token=unbound))
        assert response.status_code == 401 and challenge(response).error == "invalid_token"


async def test_query_in_the_request_uri_is_ignored_but_not_in_htu(app, signer):
    async with asyncio.timeout(30), dpop_server(app, signer, dpop_require_nonce=False) as s:
        response = await s.http.post(f"{s.url}?x=1", json=INIT, headers={**ACCEPT, **s.headers()})
        assert response.status_code == 200
        proof = s.key.proof("POST", s.url, access_token=s.token)
        header, payload, sig = proof.split(".")
        # htu with a query is refused (made by hand: the factory strips queries).
        claims = json.loads(base64.urlsafe_b64decode(payload + "=="))
        claims["htu"] = s.url + "?x=1"
        forged = jws.serialize_compact(
            {"typ": "dpop+jwt", "alg": "ES256", "jwk": s.key.public_jwk},
            json.dumps(claims).encode(),
            s.key.key,
        )
        response = await s.post({"authorization": f"DPoP {s.token}", "dpop": forged})
        assert response.status_code == 401 and challenge(response).error == "invalid_dpop_proof"


async def test_replayed_proof_is_refused(app, signer):
    async with asyncio.timeout(30), dpop_server(app, signer) as s:
        await s.post(s.headers(nonce=None))
        headers = s.headers()
        assert (await s.post(headers)).status_code == 200
        again = await s.post(headers)
        assert again.status_code == 401
        assert challenge(again).error == "invalid_dpop_proof"


async def test_iat_window_edges(app, signer):
    async with (
        asyncio.timeout(30),
        dpop_server(app, signer, dpop_max_age=60, dpop_clock_skew=5, dpop_require_nonce=False) as s,
    ):
        now = s.clock()
        cases = [(-65, True), (-66, False), (5, True), (6, False)]
        for offset, accepted in cases:
            s.key.clock = lambda offset=offset: now + offset
            response = await s.post(s.headers())
            assert (response.status_code == 200) is accepted, (
                offset,
                response.status_code,
                response.text,
            )
            if not accepted:
                assert challenge(response).error == "invalid_dpop_proof"


async def test_nonce_rotation(app, signer):
    async with asyncio.timeout(30), dpop_server(app, signer, dpop_nonce_lifetime=100) as s:
        await s.post(s.headers(nonce=None))
        old = s.nonce
        assert (await s.post(s.headers())).status_code == 200
        # One period on: the old nonce is still accepted, and the new one handed out.
        s.clock.advance(100)
        response = await s.post(s.headers(nonce=old))
        assert response.status_code == 200
        assert response.headers["dpop-nonce"] != old
        newer = response.headers["dpop-nonce"]
        # Two periods on: the old nonce is refused with use_dpop_nonce and a fresh nonce.
        s.clock.advance(100)
        s.token = s.signer.token(audience=AUDIENCE, jkt=s.key.jkt, now=s.clock())
        response = await s.post(s.headers(nonce=old))
        assert response.status_code == 401 and challenge(response).error == "use_dpop_nonce"
        assert response.headers["dpop-nonce"] not in (old, None)
        assert (await s.post(s.headers(nonce=newer))).status_code == 200


async def test_dpop_on_every_transport(app, signer):
    async with asyncio.timeout(30), dpop_server(app, signer, dpop_require_nonce=False) as s:
        # Streamable GET needs a session first.
        init = await s.post(s.headers())
        sid = init.headers["mcp-session-id"]
        get_headers = {
            **s.headers("GET"),
            "accept": "text/event-stream",
            "mcp-session-id": sid,
            "mcp-protocol-version": "2025-11-25",
        }
        async with s.http.stream("GET", s.url, headers=get_headers) as response:
            assert response.status_code == 200
        async with s.http.stream(
            "GET",
            s.url,
            headers={**get_headers, "dpop": s.key.proof("POST", s.url, access_token=s.token)},
        ) as response:
            assert response.status_code == 401
        # Legacy SSE GET and POST.
        sse_url = f"{s.url}/sse"
        async with s.http.stream(
            "GET", sse_url, headers={"accept": "text/event-stream", **s.headers("GET", sse_url)}
        ) as stream:
            assert stream.status_code == 200
            endpoint = await announced_endpoint(stream)
            post_url = s.url.rsplit("/mcp", 1)[0] + endpoint
            # htu excludes the query: sign the path only.
            response = await s.http.post(
                post_url,
                json=INIT_LEGACY,
                headers={
                    "content-type": "application/json",
                    **s.headers("POST", post_url.split("?")[0]),
                },
            )
            assert response.status_code == 202
        # WebSocket upgrade: htu is the ws URL's http form; GET is the method.
        ws_url = s.url.replace("http://", "ws://") + "/ws"
        async with connect(
            ws_url, additional_headers=s.headers("GET", ws_url), subprotocols=["mcp"]
        ) as ws:
            await ws.send(json.dumps(INIT_LEGACY))
            assert "result" in json.loads(await asyncio.wait_for(ws.recv(), WAIT))
        with pytest.raises(InvalidStatus) as refused:
            async with connect(
                ws_url,
                additional_headers={"authorization": f"DPoP {s.token}"},
                subprotocols=["mcp"],
            ):
                pass
        assert refused.value.response.status_code == 401


async def test_bearer_still_accepted_when_allowed(app, signer):
    async with asyncio.timeout(30), dpop_server(app, signer, dpop_allow_bearer=True) as s:
        plain = s.signer.token(audience=AUDIENCE, now=s.clock())
        response = await s.post({"authorization": f"Bearer {plain}"})
        assert response.status_code == 200
        # The DPoP-bound token as Bearer is still refused.
        response = await s.post({"authorization": f"Bearer {s.token}"})
        assert response.status_code == 401
        schemes = [
            c.scheme for c in parse_www_authenticate(response.headers.get_list("www-authenticate"))
        ]
        assert schemes == ["DPoP", "Bearer"]


async def test_metadata_advertises_dpop(app, signer):
    async with (
        asyncio.timeout(30),
        dpop_server(app, signer, dpop_algorithms=("ES256", "PS256")) as s,
    ):
        origin = s.url.rsplit("/mcp", 1)[0]
        doc = (await s.http.get(f"{origin}/.well-known/oauth-protected-resource")).json()
        assert doc["dpop_signing_alg_values_supported"] == ["ES256", "PS256"]
        assert doc["dpop_bound_access_tokens_required"] is True


# -- the verifier directly ---------------------------------------------------------------


def test_verifier_refuses_malformed_proofs():
    clock = FakeClock()
    verifier = DPoPProofVerifier(clock=clock)
    key = ECKey.generate_key("P-256")
    public = key.as_dict(private=False)
    url = "https://mcp.example.test/mcp"

    def make(
        header: dict[str, Any], claims: dict[str, Any], signing_key: Any = key, alg: str = "ES256"
    ) -> str:
        return jws.serialize_compact(
            header, json.dumps(claims).encode(), signing_key, algorithms=[alg]
        )

    good_claims = {"jti": "j1", "htm": "POST", "htu": url, "iat": int(clock())}
    base = {"typ": "dpop+jwt", "alg": "ES256", "jwk": public}
    cases = {
        "wrong typ": make({**base, "typ": "JWT"}, good_claims),
        "no jwk": make({"typ": "dpop+jwt", "alg": "ES256"}, good_claims),
        "private jwk": make({**base, "jwk": key.as_dict(private=True)}, good_claims),
        "symmetric jwk": make({**base, "jwk": {"kty": "oct", "k": "c2VjcmV0"}}, good_claims),
        "no jti": make(base, {k: v for k, v in good_claims.items() if k != "jti"}),
        "no iat": make(base, {k: v for k, v in good_claims.items() if k != "iat"}),
        "signed by another key": make(base, good_claims, ECKey.generate_key("P-256")),
    }
    for why, proof in cases.items():
        with pytest.raises(DPoPError) as info:
            verifier.verify(proof, method="POST", url=url)
        assert info.value.error == "invalid_dpop_proof", why
    rsa = RSAKey.generate_key(2048)
    rs_proof = make(
        {"typ": "dpop+jwt", "alg": "PS256", "jwk": rsa.as_dict(private=False)},
        good_claims,
        rsa,
        "PS256",
    )
    assert verifier.verify(rs_proof, method="POST", url=url).jkt == rsa.thumbprint()
    only_es = DPoPProofVerifier(algorithms=("ES256",), clock=clock)
    with pytest.raises(DPoPError):
        only_es.verify(
            make(
                {"typ": "dpop+jwt", "alg": "PS256", "jwk": rsa.as_dict(private=False)},
                {**good_claims, "jti": "j2"},
                rsa,
                "PS256",
            ),
            method="POST",
            url=url,
        )
    with pytest.raises(ValueError):
        DPoPProofVerifier(algorithms=("HS256",))


def test_replay_cache_is_bounded_in_size_and_time():
    clock = FakeClock()
    verifier = DPoPProofVerifier(clock=clock, max_age=10, clock_skew=1, replay_cache_size=3)
    factory = DPoPProofFactory(clock=clock)
    url = "https://mcp.example.test/mcp"
    for _ in range(10):
        verifier.verify(factory.proof("POST", url), method="POST", url=url)
    assert len(verifier.replays) == 3
    clock.advance(13)
    verifier.verify(factory.proof("POST", url), method="POST", url=url)
    assert len(verifier.replays) == 1  # the expired ones are gone


def test_htu_comparison_normalizes_scheme_host_port_and_encoding():
    clock = FakeClock()
    verifier = DPoPProofVerifier(clock=clock)
    factory = DPoPProofFactory(clock=clock)
    proof = factory.proof("GET", "HTTPS://MCP.Example.TEST:443/m%63p")
    assert verifier.verify(proof, method="GET", url="https://mcp.example.test/mcp?x=1").htm == "GET"


def test_nonce_manager_is_stateless_across_instances_sharing_a_secret():
    clock = FakeClock(1_000_000)
    a = DPoPNonceManager(60, b"s" * 32, clock)
    b = DPoPNonceManager(60, b"s" * 32, clock)
    c = DPoPNonceManager(60, b"t" * 32, clock)
    nonce = a.current()
    assert b.is_valid(nonce) and not c.is_valid(nonce)
    assert not a.is_valid("garbage") and not a.is_valid(None)
    clock.advance(60)
    assert a.is_valid(nonce) and not a.is_current(nonce)
    clock.advance(60)
    assert not a.is_valid(nonce)
