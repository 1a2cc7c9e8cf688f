"""``IntrospectionVerifier`` (RFC 7662) and ``OidcVerifier`` (OpenID discovery, then JWT)
against a real authorization server: a small Starlette app on 127.0.0.1 with keys made
here, protecting a real mcpkit server that a real client calls. Inactive or foreign tokens
are 401; an authorization server that cannot answer is 503 with ``Retry-After``."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import secrets
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from mcpkit import McpClient, McpServerApp
from mcpkit.auth import (
    BearerAuthConfig,
    IntrospectionVerifier,
    OidcVerifier,
    VerifierUnavailableError,
    parse_www_authenticate,
)
from mcpkit.client import HttpClientTransportOptions
from tests.auth._support import AuthTest, FakeClock, Signer
from tests.http_server import bound_socket, serve_asgi, serving
from tests.ports import refused_port
from tests.waiting import wait_until

AUDIENCE = "https://mcp.example.test/mcp"
CLIENT_ID, CLIENT_SECRET = "resource-server", "s3cret"
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
ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


@dataclass
class AuthServer:
    """The authorization server's state: tokens it knows, keys, and how it misbehaves."""

    signer: Signer
    issuer: str = ""
    #: opaque token -> its introspection answer (without ``active``)
    tokens: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: "ok", "down" (HTTP 500), "garbage" (not JSON), "slow" (waits for ``release``)
    mode: str = "ok"
    release: asyncio.Event = field(default_factory=asyncio.Event)
    published_issuer: str | None = None
    jwks_path: str = "/jwks"
    introspections: list[dict[str, str]] = field(default_factory=list)
    jwks_fetches: int = 0

    def mint(self, **claims: Any) -> str:
        token = secrets.token_urlsafe(24)
        base = {"sub": "alice", "client_id": "app", "scope": "mcp:read", "aud": AUDIENCE}
        self.tokens[token] = {**base, "exp": int(time.time()) + 300, **claims}
        return token

    async def introspect(self, request: Request) -> Response:
        form = {k: str(v) for k, v in (await request.form()).items()}
        self.introspections.append(form)
        if self.mode == "down":
            return PlainTextResponse("boom", status_code=500)
        if self.mode == "garbage":
            return PlainTextResponse("<html>hello</html>")
        if self.mode == "slow":
            await self.release.wait()
        basic = request.headers.get("authorization", "")
        expected = base64.b64encode(f"{CLIENT_ID}:{CLIENT_SECRET}".encode()).decode()
        posted = form.get("client_id") == CLIENT_ID and form.get("client_secret") == CLIENT_SECRET
        if basic != f"Basic {expected}" and not posted:
            return JSONResponse({"error": "invalid_client"}, status_code=401)
        claims = self.tokens.get(form.get("token", ""))
        if claims is None:
            return JSONResponse({"active": False})
        return JSONResponse({"active": True, "iss": self.issuer, **claims})

    async def discovery(self, request: Request) -> Response:
        if self.mode == "down":
            return PlainTextResponse("boom", status_code=503)
        return JSONResponse(
            {
                "issuer": self.published_issuer or self.issuer,
                "jwks_uri": f"{self.issuer}{self.jwks_path}",
                "introspection_endpoint": f"{self.issuer}/introspect",
                "response_types_supported": ["code"],
                "subject_types_supported": ["public"],
                "id_token_signing_alg_values_supported": ["ES256", "RS256"],
            }
        )

    async def jwks(self, request: Request) -> Response:
        if request.url.path != self.jwks_path:  # keys moved away from here
            return PlainTextResponse("gone", status_code=404)
        self.jwks_fetches += 1
        return JSONResponse(self.signer.jwks())

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/introspect", self.introspect, methods=["POST"]),
                Route("/.well-known/openid-configuration", self.discovery),
                Route("/jwks", self.jwks),
                Route("/keys-v2", self.jwks),
            ]
        )


@pytest.fixture(scope="module")
def signer() -> Signer:
    return Signer()


@pytest.fixture
async def authority(signer: Signer) -> AsyncIterator[AuthServer]:
    sock = bound_socket()
    server = AuthServer(signer, issuer=f"http://127.0.0.1:{sock.getsockname()[1]}")
    try:
        async with serve_asgi(server.app(), sock=sock):
            yield server
    finally:
        server.release.set()


@contextlib.asynccontextmanager
async def protected(verify: Any) -> AsyncIterator[str]:
    """A real mcpkit server behind ``verify``; yields its endpoint URL."""
    config = BearerAuthConfig(
        verify=verify,
        required_scopes=("mcp:read",),
        expected_resource=AUDIENCE,
        authorization_servers=("https://as.example.test",),
    )
    async with serving(McpServerApp(AuthTest), bearer_auth=config) as (url, _):
        yield url


async def whoami(url: str, token: str) -> dict[str, Any]:
    options = HttpClientTransportOptions(
        endpoint=url, additional_headers={"authorization": f"Bearer {token}"}
    )
    async with McpClient.http(options, protocol_mode="legacy") as client:
        result = await client.call_tool("whoami")
    assert not result.is_error
    return dict(json.loads(result.content[0].text))


async def post_initialize(url: str, token: str) -> httpx.Response:
    async with httpx.AsyncClient(timeout=10) as http:
        return await http.post(
            url, json=INIT, headers={**ACCEPT, "authorization": f"Bearer {token}"}
        )


def introspection(authority: AuthServer, **options: Any) -> IntrospectionVerifier:
    options.setdefault("client_id", CLIENT_ID)
    options.setdefault("client_secret", CLIENT_SECRET)
    return IntrospectionVerifier(f"{authority.issuer}/introspect", **options)


# -- introspection ------------------------------------------------------------------------------


async def test_introspected_token_reaches_the_tool_and_is_cached(authority: AuthServer) -> None:
    verifier = introspection(authority, audience=AUDIENCE, issuer=authority.issuer)
    token = authority.mint(scope="mcp:read mcp:write", sub="carol")
    async with protected(verifier.verify) as url:
        seen = await whoami(url, token)
        assert seen["subject"] == "carol"
        assert seen["scopes"] == ["mcp:read", "mcp:write"]
        assert seen["client_id"] == "app"
        await whoami(url, token)  # a second client, many more HTTP requests
    assert verifier.requests == 1
    (sent,) = authority.introspections
    assert sent == {"token": token, "token_type_hint": "access_token"}  # credentials: Basic


@pytest.mark.parametrize(
    ("claims", "why"),
    [
        (None, "not active"),
        ({"exp": int(time.time()) - 600}, "expired"),
        ({"aud": "https://other.example.test/mcp"}, "not issued for this resource"),
        ({"nbf": int(time.time()) + 600}, "not valid yet"),
    ],
)
async def test_refused_tokens_are_401(
    authority: AuthServer, claims: dict[str, Any] | None, why: str
) -> None:
    verifier = introspection(authority, audience=AUDIENCE)
    token = secrets.token_urlsafe(16) if claims is None else authority.mint(**claims)
    async with protected(verifier.verify) as url:
        response = await post_initialize(url, token)
    assert response.status_code == 401
    (challenge,) = parse_www_authenticate(response.headers.get_list("www-authenticate"))
    assert challenge.params["error"] == "invalid_token"
    assert why in challenge.params["error_description"]


@pytest.mark.parametrize("mode", ["down", "garbage", "bad-credentials", "unreachable", "slow"])
async def test_an_authorization_server_that_cannot_answer_is_503(
    authority: AuthServer, mode: str
) -> None:
    token = authority.mint()
    options: dict[str, Any] = {"retry_after": 7, "timeout": 0.5}
    if mode == "bad-credentials":
        options["client_secret"] = "wrong"
    elif mode != "unreachable":
        authority.mode = mode
    with refused_port() as nowhere:  # where nothing answers: the unreachable endpoint
        endpoint = f"http://127.0.0.1:{nowhere}/introspect" if mode == "unreachable" else None
        verifier = (
            IntrospectionVerifier(endpoint, client_id=CLIENT_ID, client_secret="x", **options)
            if endpoint
            else introspection(authority, **options)
        )
        async with protected(verifier.verify) as url:
            response = await post_initialize(url, token)
            assert response.status_code == 503
            assert response.headers["retry-after"] == "7"
            assert response.json()["error"] == "temporarily_unavailable"
            with pytest.raises(VerifierUnavailableError, match="introspection endpoint"):
                await verifier.verify(token)
            authority.mode = "ok"
            authority.release.set()
            if mode in ("down", "garbage", "slow"):  # the server is back: the token is fine
                assert (await whoami(url, token))["subject"] == "alice"


async def test_client_secret_post_and_bounded_expiring_cache(authority: AuthServer) -> None:
    clock = FakeClock()
    verifier = introspection(
        authority,
        client_auth_method="client_secret_post",
        cache_ttl=60,
        inactive_cache_ttl=5,
        max_cache_entries=2,
        clock=clock,
    )
    tokens = [authority.mint(exp=int(clock.now) + 3600) for _ in range(3)]
    for token in tokens:
        assert (await verifier.verify(token)).ok
    assert len(verifier._cache) == 2  # bounded: the oldest went
    assert authority.introspections[0]["client_secret"] == CLIENT_SECRET
    await verifier.verify(tokens[2])
    assert verifier.requests == 3  # cached
    clock.advance(61)
    await verifier.verify(tokens[2])
    assert verifier.requests == 4  # past the cache TTL: asked again
    short = authority.mint(exp=int(clock.now) + 10)
    assert (await verifier.verify(short)).ok
    clock.advance(45)  # past exp and the leeway: the cached verdict no longer counts
    assert verifier.requests == 5
    refused = await verifier.verify(short)
    assert not refused.ok and "expired" in (refused.error_description or "")
    unknown = secrets.token_urlsafe(8)
    assert not (await verifier.verify(unknown)).ok
    assert not (await verifier.verify(unknown)).ok
    assert verifier.requests == 7  # the refusal is kept, briefly
    clock.advance(6)
    await verifier.verify(unknown)
    assert verifier.requests == 8


async def test_concurrent_checks_of_one_token_share_one_request(authority: AuthServer) -> None:
    verifier = introspection(authority)
    token = authority.mint()
    authority.mode = "slow"
    checks = [asyncio.create_task(verifier.verify(token)) for _ in range(5)]
    await wait_until(lambda: bool(authority.introspections), "the first introspection")
    authority.release.set()
    results = await asyncio.gather(*checks)
    assert all(result.ok for result in results)
    assert len(authority.introspections) == 1


def test_introspection_options_are_checked() -> None:
    with pytest.raises(ValueError, match="client_id and client_secret"):
        IntrospectionVerifier("https://as.example.test/introspect")
    with pytest.raises(ValueError, match="http"):
        IntrospectionVerifier("as.example.test/introspect", client_auth_method="none")
    with pytest.raises(ValueError):
        IntrospectionVerifier(
            "https://as.example.test/i", client_auth_method="none", max_cache_entries=0
        )


# -- OpenID discovery ---------------------------------------------------------------------------


async def test_oidc_discovered_keys_verify_real_tokens(
    authority: AuthServer, signer: Signer
) -> None:
    verifier = OidcVerifier(authority.issuer, audience=AUDIENCE)
    token = signer.token(audience=AUDIENCE, issuer=authority.issuer, subject="dora")
    async with protected(verifier.verify) as url:
        assert (await whoami(url, token))["subject"] == "dora"
        assert (await whoami(url, token))["subject"] == "dora"
        foreign = signer.token(audience=AUDIENCE, issuer="https://elsewhere.example.test")
        response = await post_initialize(url, foreign)
        assert response.status_code == 401
        forged = Signer().token(audience=AUDIENCE, issuer=authority.issuer)
        assert (await post_initialize(url, forged)).status_code == 401
    assert verifier.discoveries == 1
    assert authority.jwks_fetches >= 1
    assert verifier.configuration is not None
    assert verifier.configuration["jwks_uri"] == f"{authority.issuer}/jwks"


async def test_oidc_issuer_must_match_the_document(authority: AuthServer, signer: Signer) -> None:
    authority.published_issuer = "https://impostor.example.test"
    verifier = OidcVerifier(authority.issuer, retry_after=3)
    token = signer.token(audience=AUDIENCE, issuer=authority.issuer)
    async with protected(verifier.verify) as url:
        response = await post_initialize(url, token)
    assert response.status_code == 503
    assert response.headers["retry-after"] == "3"
    with pytest.raises(VerifierUnavailableError, match="impostor"):
        await verifier.verify(token)


async def test_oidc_refresh_follows_a_new_jwks_uri_and_survives_an_outage(
    authority: AuthServer, signer: Signer
) -> None:
    monotonic = FakeClock(0.0)
    verifier = OidcVerifier(
        authority.issuer, discovery_ttl=100, discovery_retry=10, monotonic=monotonic
    )
    token = signer.token(audience=AUDIENCE, issuer=authority.issuer)
    assert (await verifier.verify(token)).ok
    authority.mode = "down"
    monotonic.advance(101)
    assert (await verifier.verify(token)).ok  # the document and keys already had still serve
    assert verifier.discoveries == 2
    assert (await verifier.verify(token)).ok
    assert verifier.discoveries == 2  # retried only after discovery_retry
    # the authorization server moves its keys, and rotates them
    authority.mode = "ok"
    rotated = Signer()
    authority.signer = rotated
    authority.jwks_path = "/keys-v2"
    monotonic.advance(11)
    new_token = rotated.token(audience=AUDIENCE, issuer=authority.issuer)
    assert (await verifier.verify(new_token)).ok
    assert verifier.discoveries == 3
    assert verifier.configuration is not None
    assert verifier.configuration["jwks_uri"] == f"{authority.issuer}/keys-v2"
    assert not (await verifier.verify(token)).ok  # the old keys are gone with the old URI


async def test_oidc_unreachable_issuer_is_503_and_options_are_checked() -> None:
    with refused_port() as nowhere:
        verifier = OidcVerifier(f"http://127.0.0.1:{nowhere}", timeout=1)
        with pytest.raises(VerifierUnavailableError, match="could not be reached"):
            await verifier.verify("a.b.c")
    with pytest.raises(ValueError, match="https"):
        OidcVerifier("http://as.example.test")


async def test_every_http_transport_answers_503_when_tokens_cannot_be_checked() -> None:
    """The gate's 503 is the same on Streamable HTTP, legacy SSE and the WebSocket upgrade,
    for any verifier that raises ``VerifierUnavailableError``."""
    from websockets.asyncio.client import connect
    from websockets.exceptions import InvalidStatus

    async def verify(token: str) -> Any:
        raise VerifierUnavailableError("the token service is down", retry_after=11)

    async with protected(verify) as url:
        bearer = {"authorization": "Bearer whatever"}
        async with httpx.AsyncClient(timeout=10) as http:
            post = await http.post(url, json=INIT, headers={**ACCEPT, **bearer})
            sse = await http.get(f"{url}/sse", headers={"accept": "text/event-stream", **bearer})
        with pytest.raises(InvalidStatus) as ws:
            async with connect(
                url.replace("http://", "ws://") + "/ws",
                additional_headers=bearer,
                subprotocols=["mcp"],
                open_timeout=10,
            ):
                pass
    assert post.status_code == sse.status_code == ws.value.response.status_code == 503
    assert post.headers["retry-after"] == sse.headers["retry-after"] == "11"
    assert ws.value.response.headers["retry-after"] == "11"
    assert post.json() == sse.json()
    assert post.json()["error"] == "temporarily_unavailable"


async def test_a_waiter_outlives_the_cancelled_check_it_waited_on(authority: AuthServer) -> None:
    verifier = introspection(authority)
    token = authority.mint(sub="erin")
    authority.mode = "slow"
    first = asyncio.create_task(verifier.verify(token))
    await wait_until(lambda: bool(authority.introspections), "the first introspection")
    second = asyncio.create_task(verifier.verify(token))
    await asyncio.sleep(0)  # the second now waits on the first's request
    first.cancel()
    # the second asks on its own
    await wait_until(lambda: len(authority.introspections) == 2, "a second introspection")
    authority.release.set()
    result = await second
    assert result.ok and result.subject == "erin"
    assert first.cancelled()
