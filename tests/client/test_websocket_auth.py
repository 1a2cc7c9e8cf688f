"""Authorization on the WebSocket client transport, end to end: an mcpkit server with bearer
auth on its WebSocket endpoint, the small authorization server of ``tests.auth._authserver``,
and the client, all on 127.0.0.1. A static token; none, or a wrong one (a clear 401 error);
an ``OAuthClientProvider`` that authorizes on the upgrade's 401 and retries it; a step-up on
403 ``insufficient_scope``; a DPoP-bound token; the hooks' view of the upgrade."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest

from mcpkit import McpClient, McpServerApp, TransportError
from mcpkit.auth import BearerAuthConfig, JwtVerifier
from mcpkit.auth.client import (
    MemoryTokenStorage,
    OAuthClientMetadata,
    OAuthClientProvider,
    OAuthToken,
)
from mcpkit.client import (
    HttpRequestHeaderContext,
    HttpResponseChallengeContext,
    HttpStatusError,
    WebSocketClientTransportOptions,
    connect_websocket,
)
from mcpkit.client._websocket import http_form
from tests.auth._authserver import AuthServer, AuthServerConfig, Browser
from tests.auth._support import AuthTest, Signer
from tests.http_server import serve_asgi, serving

REDIRECT = "http://127.0.0.1:33418/callback"
WAIT = 30.0


@dataclass
class World:
    """One authorization server and one protected MCP server with a WebSocket endpoint."""

    auth: AuthServer
    signer: Signer
    #: The server's HTTP MCP endpoint: the protected resource, the provider's server URL.
    mcp_url: str
    ws_url: str

    def token(self, scope: str = "mcp:read", **claims: Any) -> str:
        return self.signer.token(
            audience=self.mcp_url, scope=scope, issuer=self.auth.issuer, **claims
        )

    def provider(self, **kwargs: Any) -> OAuthClientProvider:
        kwargs.setdefault("client_metadata", OAuthClientMetadata(redirect_uris=[REDIRECT]))
        kwargs.setdefault("authorize", Browser())
        return OAuthClientProvider(self.mcp_url, **kwargs)

    def options(
        self, provider: OAuthClientProvider | None = None
    ) -> WebSocketClientTransportOptions:
        options = WebSocketClientTransportOptions(url=self.ws_url)
        return provider.install(options) if provider is not None else options


@contextlib.asynccontextmanager
async def world(as_config: AuthServerConfig | None = None, **bearer: Any) -> AsyncIterator[World]:
    signer = Signer()
    auth = AuthServer(signer, as_config)
    async with serve_asgi(auth) as as_base:
        auth.base = as_base
        verifier = JwtVerifier(jwks=signer.jwks(), issuer=auth.issuer)
        settings: dict[str, Any] = {
            "verify": verifier.verify,
            "authorization_servers": (auth.issuer,),
            "scopes_supported": ("mcp:read", "mcp:write"),
            "required_scopes": ("mcp:read",),
        }
        settings.update(bearer)
        config = BearerAuthConfig(**settings)
        async with serving(McpServerApp(AuthTest), bearer_auth=config, enable_websocket=True) as (
            url,
            _,
        ):
            config.expected_resource = url  # known once the port is
            yield World(auth, signer, url, url.replace("http://", "ws://", 1) + "/ws")


@contextlib.asynccontextmanager
async def connected(target: Any, **kwargs: Any) -> AsyncIterator[McpClient]:
    async with connect_websocket(target, protocol_version="2025-11-25", **kwargs) as client:
        yield client


def watch_statuses(options: WebSocketClientTransportOptions) -> list[int]:
    """The status of every upgrade attempt, seen through the installed observer."""
    statuses: list[int] = []
    observe = options.observe_response_challenge

    def watching(context: HttpResponseChallengeContext) -> None:
        statuses.append(context.status_code)
        if observe is not None:
            observe(context)

    options.observe_response_challenge = watching
    return statuses


async def whoami(client: McpClient) -> dict[str, Any]:
    result = await client.call_tool("whoami", {})
    return json.loads(result.content[0].text)


# -- static credentials ------------------------------------------------------------------


@pytest.mark.parametrize("how", ["options", "additional_headers", "headers"])
async def test_static_bearer_token_is_accepted(how: str) -> None:
    async with asyncio.timeout(WAIT), world() as w:
        header = {"Authorization": f"Bearer {w.token(subject='static')}"}
        if how == "options":
            target, kwargs = (
                WebSocketClientTransportOptions(url=w.ws_url, additional_headers=header),
                {},
            )
        else:
            target, kwargs = w.ws_url, {how: header}
        async with connected(target, **kwargs) as client:
            seen = await whoami(client)
        assert seen["subject"] == "static" and seen["scopes"] == ["mcp:read"]


async def test_missing_token_is_a_clear_401_error() -> None:
    async with asyncio.timeout(WAIT), world() as w:
        with pytest.raises(HttpStatusError) as refused:
            async with connected(w.ws_url):
                pass
        error = refused.value
        assert error.status_code == 401
        message = str(error)
        assert w.ws_url in message and "HTTP 401" in message
        assert "resource_metadata=" in message  # the challenge, to act on
        assert "requires authorization" in message and "OAuthClientProvider" in message


async def test_every_challenge_of_the_refusal_is_read() -> None:
    # A DPoP server that still takes Bearer tokens answers with two WWW-Authenticate headers.
    async with asyncio.timeout(WAIT), world(enable_dpop=True, dpop_allow_bearer=True) as w:
        challenges: list[str | None] = []
        options = WebSocketClientTransportOptions(
            url=w.ws_url, observe_response_challenge=lambda c: challenges.append(c.www_authenticate)
        )
        with pytest.raises(HttpStatusError) as refused:
            async with connected(options):
                pass
        assert refused.value.status_code == 401
        assert "WWW-Authenticate: DPoP " in str(refused.value) and ", Bearer " in str(refused.value)
        assert len(challenges) == 1 and challenges[0] is not None
        assert challenges[0].startswith("DPoP ") and ", Bearer " in challenges[0]


async def test_wrong_token_is_a_401_error() -> None:
    async with asyncio.timeout(WAIT), world() as w:
        foreign = Signer().token(audience=w.mcp_url, issuer=w.auth.issuer)  # signed by another key
        for token in ("not-a-token", foreign):
            with pytest.raises(HttpStatusError) as refused:
                async with connected(
                    w.ws_url, additional_headers={"Authorization": f"Bearer {token}"}
                ):
                    pass
            assert refused.value.status_code == 401
            assert 'error="invalid_token"' in str(refused.value)
            assert "credentials sent were not accepted" in str(refused.value)


# -- an OAuth provider --------------------------------------------------------------------


async def test_provider_authorizes_on_the_401_and_the_upgrade_is_retried() -> None:
    async with asyncio.timeout(WAIT), world() as w:
        provider = w.provider()
        options = w.options(provider)
        statuses = watch_statuses(options)
        try:
            async with connected(options) as client:
                seen = await whoami(client)
                tools = {tool.name for tool in await client.list_tools()}
        finally:
            await provider.aclose()
        assert statuses == [401, 101]
        assert provider.token is not None
        assert seen["subject"].startswith("dcr-") and seen["scopes"] == ["mcp:read"]
        assert "whoami" in tools
        # Discovered from the challenge, registered, one authorization code, one token.
        assert len(w.auth.registrations) == 1 and len(w.auth.token_requests) == 1
        assert w.auth.authorize_requests[0]["resource"] == w.mcp_url
        assert w.auth.token_requests[0]["form"]["grant_type"] == "authorization_code"


async def test_a_token_the_provider_already_has_needs_no_challenge() -> None:
    async with asyncio.timeout(WAIT), world() as w:
        storage = MemoryTokenStorage()
        await storage.set_tokens(w.mcp_url, OAuthToken(access_token=w.token(subject="stored")))
        provider = w.provider(storage=storage)
        await provider.load()
        async with connected(w.options(provider)) as client:
            assert (await whoami(client))["subject"] == "stored"
        assert w.auth.requests == []  # the authorization server was never asked


async def test_insufficient_scope_on_the_upgrade_steps_up() -> None:
    async with asyncio.timeout(WAIT), world(required_scopes=("mcp:read", "mcp:write")) as w:
        storage = MemoryTokenStorage()
        await storage.set_tokens(
            w.mcp_url, OAuthToken(access_token=w.token("mcp:read"), scope="mcp:read")
        )
        provider = w.provider(storage=storage)
        await provider.load()
        options = w.options(provider)
        statuses = watch_statuses(options)
        try:
            async with connected(options) as client:
                written = await client.call_tool("write", {})
                seen = await whoami(client)
        finally:
            await provider.aclose()
        assert statuses == [403, 101]
        assert written.content[0].text == "written"
        assert sorted(seen["scopes"]) == ["mcp:read", "mcp:write"]
        assert set(w.auth.authorize_requests[0]["scope"].split()) == {"mcp:read", "mcp:write"}


async def test_a_provider_that_cannot_authorize_gives_a_transport_error() -> None:
    async with asyncio.timeout(WAIT), world() as w:
        provider = w.provider(authorize=None)  # the authorization code grant needs a callback
        try:
            with pytest.raises(TransportError, match="authorization failed"):
                async with connected(w.options(provider)):
                    pass
        finally:
            await provider.aclose()


async def test_dpop_bound_token_over_the_upgrade() -> None:
    # The upgrade is an HTTP GET: the proof names GET and the URL's http form.
    async with (
        asyncio.timeout(WAIT),
        world(AuthServerConfig(dpop=True, dpop_nonce=True), enable_dpop=True) as w,
    ):
        provider = w.provider(dpop=True)
        options = w.options(provider)
        statuses = watch_statuses(options)
        try:
            async with connected(options) as client:
                seen = await whoami(client)
        finally:
            await provider.aclose()
        assert statuses == [401, 101]
        assert provider.token is not None and provider.token.token_type == "DPoP"
        assert seen["scopes"] == ["mcp:read"]


async def test_use_dpop_nonce_on_the_upgrade_is_retried_with_the_nonce() -> None:
    async with asyncio.timeout(WAIT), world(AuthServerConfig(dpop=True), enable_dpop=True) as w:
        provider = w.provider(dpop=True)
        assert provider.dpop is not None
        bound = w.token(subject="bound", jkt=provider.dpop.jkt)
        await provider.storage.set_tokens(
            w.mcp_url, OAuthToken(access_token=bound, token_type="DPoP")
        )
        await provider.load()
        options = w.options(provider)
        statuses = watch_statuses(options)
        options.auth_challenge_handler = None  # a nonce challenge needs no new credentials
        async with connected(options) as client:
            assert (await whoami(client))["subject"] == "bound"
        # The first proof had no nonce: refused with use_dpop_nonce, sent again with it.
        assert statuses == [401, 101]
        assert w.auth.requests == []


# -- the hooks' view -----------------------------------------------------------------------


async def test_hooks_see_the_upgrade_as_a_get_of_the_http_url() -> None:
    async with asyncio.timeout(WAIT), world() as w:
        requests: list[HttpRequestHeaderContext] = []
        responses: list[HttpResponseChallengeContext] = []
        challenges: list[str] = []
        token = w.token(subject="hooked")

        def record(context: HttpRequestHeaderContext, headers: dict[str, str]) -> None:
            requests.append(context)

        async def answer(challenge: str) -> str:
            challenges.append(challenge)
            return f"Bearer {token}"

        options = WebSocketClientTransportOptions(
            url=w.ws_url,
            apply_per_request_headers=record,
            observe_response_challenge=responses.append,
            auth_challenge_handler=answer,
        )
        async with connected(options) as client:
            assert (await whoami(client))["subject"] == "hooked"
        assert [(r.method, r.url) for r in requests] == [("GET", http_form(w.ws_url))] * 2
        assert [r.status_code for r in responses] == [401, 101]
        assert len(challenges) == 1 and "resource_metadata=" in challenges[0]


def test_http_form_of_websocket_urls() -> None:
    assert http_form("ws://h:1/mcp/ws") == "http://h:1/mcp/ws"
    assert http_form("wss://h/mcp/ws?x=1#f") == "https://h/mcp/ws?x=1"
    assert http_form("WSS://h") == "https://h/"
