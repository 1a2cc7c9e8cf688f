"""The bearer-auth gate on every HTTP transport: Streamable HTTP POST and GET, legacy SSE
GET and POST, the WebSocket upgrade. Real signed tokens (EC and RSA keys made here),
real sockets; each outcome of the gate on each transport, the metadata document, and no
change at all when auth is not configured."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from mcpkit import McpServerApp
from mcpkit.auth import AuthResult, BearerAuthConfig, JwtVerifier, parse_www_authenticate
from tests.auth._support import ISSUER, JwksApp, Signer, announced_endpoint
from tests.http_server import serve_asgi, serving

AUDIENCE = "https://mcp.example.test/mcp"
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
INIT_LEGACY = {**INIT, "params": {**INIT["params"], "protocolVersion": "2024-11-05"}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
WAIT = 10.0


def make_config(signer: Signer, **overrides: Any) -> BearerAuthConfig:
    verifier = JwtVerifier(jwks=signer.jwks(), issuer=ISSUER, audience=None)
    options: dict[str, Any] = dict(
        verify=verifier.verify,
        scopes_supported=("mcp:read", "mcp:write"),
        required_scopes=("mcp:read",),
        expected_resource=AUDIENCE,
        authorization_servers=(ISSUER,),
    )
    options.update(overrides)
    return BearerAuthConfig(**options)


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


def challenge_of(headers: Any) -> Any:
    values = (
        headers.get_list("www-authenticate")
        if hasattr(headers, "get_list")
        else [headers["www-authenticate"]]
    )
    challenges = parse_www_authenticate(values)
    assert challenges, "no WWW-Authenticate challenge"
    return challenges[0]


# -- the ways to reach the server ---------------------------------------------------------


class Reach:
    """Sends one request of a given transport with given headers; returns (status, headers).

    For the "accepted" case each also proves the request really got through (a session, a
    stream, a tool call that sees the identity)."""

    def __init__(self, http: httpx.AsyncClient, url: str, good: dict[str, str]) -> None:
        self.http = http
        self.url = url
        self.good = good  # headers that pass, to set up sessions

    async def streamable_post(self, headers: dict[str, str]) -> tuple[int, Any]:
        response = await self.http.post(self.url, json=INIT, headers={**ACCEPT, **headers})
        return response.status_code, response.headers

    async def _session(self) -> str:
        response = await self.http.post(self.url, json=INIT, headers={**ACCEPT, **self.good})
        assert response.status_code == 200, response.text
        sid = response.headers["mcp-session-id"]
        note = await self.http.post(
            self.url,
            json=INITIALIZED,
            headers={
                **ACCEPT,
                **self.good,
                "mcp-session-id": sid,
                "mcp-protocol-version": "2025-11-25",
            },
        )
        assert note.status_code == 202
        return sid

    async def streamable_get(self, headers: dict[str, str]) -> tuple[int, Any]:
        sid = await self._session()
        async with self.http.stream(
            "GET",
            self.url,
            headers={
                "accept": "text/event-stream",
                "mcp-session-id": sid,
                "mcp-protocol-version": "2025-11-25",
                **headers,
            },
        ) as response:
            return response.status_code, response.headers

    async def legacy_get(self, headers: dict[str, str]) -> tuple[int, Any]:
        async with self.http.stream(
            "GET", f"{self.url}/sse", headers={"accept": "text/event-stream", **headers}
        ) as response:
            if response.status_code == 200:
                async for line in response.aiter_lines():
                    if line.startswith("data:"):
                        assert "/mcp/messages?session_id=" in line
                        break
            return response.status_code, response.headers

    async def legacy_post(self, headers: dict[str, str]) -> tuple[int, Any]:
        async with self.http.stream(
            "GET", f"{self.url}/sse", headers={"accept": "text/event-stream", **self.good}
        ) as stream:
            assert stream.status_code == 200
            endpoint = await announced_endpoint(stream)
            base = self.url.rsplit("/mcp", 1)[0]
            response = await self.http.post(
                f"{base}{endpoint}",
                json=INIT_LEGACY,
                headers={"content-type": "application/json", **headers},
            )
            return response.status_code, response.headers

    async def websocket(self, headers: dict[str, str]) -> tuple[int, Any]:
        ws_url = self.url.replace("http://", "ws://") + "/ws"
        try:
            async with connect(
                ws_url, additional_headers=headers, subprotocols=["mcp"], open_timeout=WAIT
            ) as ws:
                await ws.send(json.dumps(INIT_LEGACY))
                reply = json.loads(await asyncio.wait_for(ws.recv(), WAIT))
                assert reply["id"] == 1 and "result" in reply
                return 101, {}
        except InvalidStatus as exc:
            return exc.response.status_code, exc.response.headers


TRANSPORTS = ["streamable_post", "streamable_get", "legacy_get", "legacy_post", "websocket"]


@contextlib.asynccontextmanager
async def reach(app: McpServerApp, signer: Signer, **config: Any) -> AsyncIterator[Reach]:
    auth = make_config(signer, **config)
    async with (
        serving(app, bearer_auth=auth, enable_legacy_sse=True, enable_websocket=True) as (url, _),
        httpx.AsyncClient(timeout=WAIT) as http,
    ):
        good = bearer(signer.token(audience=AUDIENCE, scope="mcp:read mcp:write"))
        yield Reach(http, url, good)


# -- outcomes on every transport ----------------------------------------------------------


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_missing_or_malformed_authorization_gets_the_401_challenge(app, signer, transport):
    async with asyncio.timeout(30), reach(app, signer) as r:
        send = getattr(r, transport)
        for headers in (
            {},
            {"authorization": "Basic dXNlcjpwYXNz"},
            {"authorization": "Bearer"},
            {"authorization": "Bearer a b"},
            {"authorization": "DPoP abc"},
        ):
            status, response_headers = await send(headers)
            assert status == 401, (transport, headers, status)
            challenge = challenge_of(response_headers)
            assert challenge.is_scheme("Bearer")
            assert challenge.error is None  # no credentials: no error code (RFC 6750 §3.1)
            port = r.url.split(":")[2].split("/")[0]
            assert (
                challenge.resource_metadata
                == f"http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp"
            )
            assert challenge.scopes == ["mcp:read"]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_rejected_tokens_get_invalid_token(app, signer, transport):
    other = Signer()  # a key the server does not know
    bad_tokens = {
        "foreign signature": other.token(audience=AUDIENCE),
        "expired": signer.token(audience=AUDIENCE, lifetime=-120),
        "other issuer": signer.token(audience=AUDIENCE, issuer="https://evil.example.test"),
        "wrong audience": signer.token(audience="https://other.example.test/mcp"),
        "no audience": signer.token(audience=None),
        "not a jwt": "opaque-token-value",
    }
    async with asyncio.timeout(40), reach(app, signer) as r:
        send = getattr(r, transport)
        for why, token in bad_tokens.items():
            status, headers = await send(bearer(token))
            assert status == 401, (transport, why, status)
            challenge = challenge_of(headers)
            assert challenge.is_scheme("Bearer") and challenge.error == "invalid_token", (
                transport,
                why,
            )
            assert challenge.resource_metadata.endswith("/.well-known/oauth-protected-resource/mcp")


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_missing_scope_gets_403_insufficient_scope(app, signer, transport):
    async with (
        asyncio.timeout(30),
        reach(app, signer, required_scopes=("mcp:read", "mcp:admin")) as r,
    ):
        token = signer.token(audience=AUDIENCE, scope="mcp:read mcp:write")
        r.good = bearer(signer.token(audience=AUDIENCE, scope="mcp:read mcp:admin"))
        status, headers = await getattr(r, transport)(bearer(token))
        assert status == 403
        challenge = challenge_of(headers)
        assert challenge.error == "insufficient_scope"
        assert challenge.scopes == [
            "mcp:read",
            "mcp:admin",
        ]  # every required scope, in one challenge
        assert challenge.resource_metadata


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_valid_token_gets_through(app, signer, transport):
    async with asyncio.timeout(30), reach(app, signer) as r:
        status, _ = await getattr(r, transport)(r.good)
        assert status in (200, 202, 101), (transport, status)


async def test_rsa_signed_tokens_and_audience_lists_are_accepted(app, signer):
    async with asyncio.timeout(30), reach(app, signer) as r:
        for token in (
            signer.token(audience=AUDIENCE, key="rsa"),
            signer.token(audience=["https://other.example.test", AUDIENCE]),
            signer.token(audience="HTTPS://MCP.EXAMPLE.TEST:443/mcp/"),  # canonical-equivalent
        ):
            status, _ = await r.streamable_post(bearer(token))
            assert status == 200


async def test_audience_check_can_be_turned_off(app, signer):
    async with asyncio.timeout(30), reach(app, signer, validate_token_resource=False) as r:
        status, _ = await r.streamable_post(
            bearer(signer.token(audience="https://other.example.test"))
        )
        assert status == 200


# -- identity reaches the call -------------------------------------------------------------


async def call_tool_streamable(
    http: httpx.AsyncClient, url: str, headers: dict[str, str], name: str
) -> dict[str, Any]:
    response = await http.post(url, json=INIT, headers={**ACCEPT, **headers})
    sid = response.headers["mcp-session-id"]
    session = {**ACCEPT, **headers, "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"}
    await http.post(url, json=INITIALIZED, headers=session)
    reply = await http.post(
        url,
        json={
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": name, "arguments": {}},
        },
        headers=session,
    )
    return reply.json()


async def test_identity_and_scopes_reach_tools_and_guards(app, signer):
    async with asyncio.timeout(30), reach(app, signer) as r:
        reader = bearer(signer.token(audience=AUDIENCE, scope="mcp:read", subject="bob"))
        result = await call_tool_streamable(r.http, r.url, reader, "whoami")
        seen = json.loads(result["result"]["content"][0]["text"])
        assert (
            seen["subject"] == "bob"
            and seen["scopes"] == ["mcp:read"]
            and seen["client_id"] == "client-1"
        )
        refused = await call_tool_streamable(r.http, r.url, reader, "write")
        assert "error" in refused or refused["result"].get("isError")
        writer = bearer(
            signer.token(audience=AUDIENCE, scope="mcp:read mcp:write", subject="carol")
        )
        allowed = await call_tool_streamable(r.http, r.url, writer, "write")
        assert allowed["result"]["content"][0]["text"] == "written"


async def test_identity_reaches_tools_over_websocket(app, signer):
    async with asyncio.timeout(30), reach(app, signer) as r:
        ws_url = r.url.replace("http://", "ws://") + "/ws"
        token = signer.token(audience=AUDIENCE, scope="mcp:read", subject="dave")
        async with connect(ws_url, additional_headers=bearer(token), subprotocols=["mcp"]) as ws:
            await ws.send(json.dumps(INIT_LEGACY))
            await ws.recv()
            await ws.send(json.dumps(INITIALIZED))
            await ws.send(
                json.dumps(
                    {
                        "jsonrpc": "2.0",
                        "id": 2,
                        "method": "tools/call",
                        "params": {"name": "whoami", "arguments": {}},
                    }
                )
            )
            reply = json.loads(await asyncio.wait_for(ws.recv(), WAIT))
            assert json.loads(reply["result"]["content"][0]["text"])["subject"] == "dave"


# -- verifiers: sync, async, failing ------------------------------------------------------


async def test_sync_and_async_verifiers_and_a_raising_one(app, signer):
    def sync_verify(token: str) -> AuthResult:
        return AuthResult(ok=token == "good", scopes=("mcp:read",), resource=AUDIENCE, subject="s")

    async def async_verify(token: str) -> AuthResult:
        await asyncio.sleep(0)
        return sync_verify(token)

    def raising(token: str) -> AuthResult:
        raise RuntimeError("verifier down")

    for verify in (sync_verify, async_verify):
        async with asyncio.timeout(30), reach(app, signer, verify=verify) as r:
            assert (await r.streamable_post(bearer("good")))[0] == 200
            status, headers = await r.streamable_post(bearer("bad"))
            assert status == 401 and challenge_of(headers).error == "invalid_token"
    async with asyncio.timeout(30), reach(app, signer, verify=raising) as r:
        status, headers = await r.streamable_post(bearer("good"))
        assert status == 401 and challenge_of(headers).error == "invalid_token"

    def chatty(token: str) -> AuthResult:
        return AuthResult.reject('revoqu\u00e9 "now"\n')

    async with asyncio.timeout(30), reach(app, signer, verify=chatty) as r:
        status, headers = await r.streamable_post(bearer("good"))
        assert status == 401 and challenge_of(headers).get("error_description") == 'revoqu? "now"'


async def test_dpop_bound_token_presented_as_bearer_is_refused(app, signer):
    async with asyncio.timeout(30), reach(app, signer) as r:
        token = signer.token(audience=AUDIENCE, jkt="some-thumbprint")
        status, headers = await r.streamable_post(bearer(token))
        assert status == 401 and challenge_of(headers).error == "invalid_token"


# -- the metadata document -----------------------------------------------------------------


async def test_metadata_served_without_auth_at_root_and_path_suffixed(app, signer):
    async with asyncio.timeout(30), reach(app, signer, resource_name="Auth test") as r:
        origin = r.url.rsplit("/mcp", 1)[0]
        for path in (
            "/.well-known/oauth-protected-resource/mcp",
            "/.well-known/oauth-protected-resource",
        ):
            response = await r.http.get(f"{origin}{path}")
            assert response.status_code == 200
            assert response.headers["content-type"] == "application/json"
            doc = response.json()
            assert doc == {
                "resource": AUDIENCE,
                "authorization_servers": [ISSUER],
                "bearer_methods_supported": ["header"],
                "scopes_supported": ["mcp:read", "mcp:write"],
                "resource_name": "Auth test",
            }
        assert (
            await r.http.post(f"{origin}/.well-known/oauth-protected-resource", json={})
        ).status_code == 405


async def test_metadata_resource_defaults_to_the_endpoint_url_and_can_be_turned_off(app, signer):
    async with asyncio.timeout(30), reach(app, signer, expected_resource="") as r:
        origin = r.url.rsplit("/mcp", 1)[0]
        doc = (await r.http.get(f"{origin}/.well-known/oauth-protected-resource/mcp")).json()
        assert doc["resource"] == r.url
    async with asyncio.timeout(30), reach(app, signer, serve_metadata_endpoint=False) as r:
        origin = r.url.rsplit("/mcp", 1)[0]
        assert (
            await r.http.get(f"{origin}/.well-known/oauth-protected-resource/mcp")
        ).status_code == 404


async def test_configured_metadata_url_is_in_the_challenge_and_served_at_its_path(app, signer):
    metadata_url = "https://mcp.example.test/custom/prm.json"  # the public URL, behind a proxy
    async with asyncio.timeout(30), reach(app, signer, resource_metadata_url=metadata_url) as r:
        response = await r.http.post(r.url, json=INIT, headers=ACCEPT)
        assert challenge_of(response.headers).resource_metadata == metadata_url
        origin = r.url.rsplit("/mcp", 1)[0]
        assert (await r.http.get(f"{origin}/custom/prm.json")).json()["resource"] == AUDIENCE


async def test_public_url_sets_the_derived_urls(app, signer):
    async with (
        asyncio.timeout(30),
        reach(app, signer, public_url="https://mcp.example.test", expected_resource="") as r,
    ):
        response = await r.http.post(r.url, json=INIT, headers=ACCEPT)
        assert challenge_of(response.headers).resource_metadata == (
            "https://mcp.example.test/.well-known/oauth-protected-resource/mcp"
        )
        origin = r.url.rsplit("/mcp", 1)[0]
        doc = (await r.http.get(f"{origin}/.well-known/oauth-protected-resource")).json()
        assert doc["resource"] == "https://mcp.example.test/mcp"


# -- unconfigured: nothing changes ----------------------------------------------------------


async def test_without_bearer_auth_nothing_changes(app):
    async with (
        asyncio.timeout(30),
        serving(app) as (url, asgi),
        httpx.AsyncClient(timeout=WAIT) as http,
    ):
        assert asgi.auth is None
        response = await http.post(url, json=INIT, headers=ACCEPT)
        assert response.status_code == 200 and "www-authenticate" not in response.headers
        response = await http.post(
            url, json=INIT, headers={**ACCEPT, "authorization": "Bearer whatever"}
        )
        assert response.status_code == 200
        origin = url.rsplit("/mcp", 1)[0]
        assert (await http.get(f"{origin}/.well-known/oauth-protected-resource")).status_code == 404
        assert (
            await http.get(f"{origin}/.well-known/oauth-protected-resource/mcp")
        ).status_code == 404


# -- JWKS over HTTP ------------------------------------------------------------------------


async def test_jwks_fetched_over_http_cached_and_refetched_on_key_rotation(app):
    first, second = Signer(), Signer()
    jwks_app = JwksApp(first.jwks())
    async with asyncio.timeout(30), serve_asgi(jwks_app) as base:
        verifier = JwtVerifier(
            jwks_url=f"{base}/jwks.json", issuer=ISSUER, audience=AUDIENCE, jwks_min_refresh=0
        )
        for _ in range(3):
            result = await verifier.verify(first.token(audience=AUDIENCE))
            assert result.ok and result.subject == "alice"
        assert jwks_app.fetches == 1  # cached
        # The AS rotates its keys: a token with an unknown kid makes one early refetch.
        jwks_app.jwks = second.jwks()
        assert (await verifier.verify(second.token(audience=AUDIENCE))).ok
        assert jwks_app.fetches == 2
        # A wrong audience is refused by the verifier itself when it is given one.
        assert not (await verifier.verify(second.token(audience="https://other.example.test"))).ok


async def test_jwks_refetch_is_rate_limited_and_ttl_expires():
    signer = Signer()
    jwks_app = JwksApp(signer.jwks())
    async with asyncio.timeout(30), serve_asgi(jwks_app) as base:
        now = [1000.0]
        verifier = JwtVerifier(
            jwks_url=f"{base}/jwks.json", issuer=ISSUER, jwks_ttl=60, jwks_min_refresh=30
        )
        verifier.jwks.clock = lambda: now[0]
        stranger = Signer()
        assert (await verifier.verify(signer.token(audience=AUDIENCE))).ok
        for _ in range(5):  # unknown kids: no refetch storm
            assert not (await verifier.verify(stranger.token(audience=AUDIENCE))).ok
        assert jwks_app.fetches == 1
        now[0] += 61  # past the TTL
        assert (await verifier.verify(signer.token(audience=AUDIENCE))).ok
        assert jwks_app.fetches == 2


async def test_jwt_verifier_refuses_none_hs_and_dpop_typed_tokens():
    from joserfc import jwt as jose_jwt
    from joserfc.jwk import OctKey

    signer = Signer()
    verifier = JwtVerifier(jwks=signer.jwks(), issuer=ISSUER)
    secret = OctKey.generate_key(256)
    hs = jose_jwt.encode({"alg": "HS256"}, {"iss": ISSUER, "exp": 2**31}, secret)
    assert not (await verifier.verify(hs)).ok
    header = '{"alg":"none"}'
    import base64

    unsigned = base64.urlsafe_b64encode(header.encode()).rstrip(b"=").decode() + ".eyJpc3MiOiJ4In0."
    assert not (await verifier.verify(unsigned)).ok
    proof_typed = jose_jwt.encode(
        {"alg": "ES256", "kid": signer.ec.kid, "typ": "dpop+jwt"},
        {"iss": ISSUER, "exp": 2**31},
        signer.ec,
    )
    assert not (await verifier.verify(proof_typed)).ok
    with pytest.raises(ValueError):
        JwtVerifier(jwks=signer.jwks(), algorithms=("none",))
