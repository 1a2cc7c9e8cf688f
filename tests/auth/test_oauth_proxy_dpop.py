"""DPoP through ``OAuthProxy(dpop=True)``, end to end (RFC 9449): mcpkit's client proves
a key at the proxy's token endpoint, gets tokens bound to it, and the MCP endpoint behind
the proxy accepts the bound token only with a proof of that key; a refresh proves the
same key; a client without DPoP still gets a Bearer token that works. Real HTTP on
127.0.0.1, DevAuthServer upstream, the browser driven by httpx."""

from __future__ import annotations

import asyncio
import json

import httpx

from mcpkit.auth import DPoPProofFactory
from mcpkit.auth.client import OAuthClientMetadata, OAuthClientProvider
from mcpkit.client import HttpClientTransportOptions, HttpTransportMode, connect_http
from tests.auth._proxy_world import (
    REDIRECT,
    call_whoami,
    register,
    sign_in,
    tokens_for,
    world,
)


def dpop_client(mcp_url: str, browser: httpx.AsyncClient, w, *, dpop: bool):
    async def authorize(url: str) -> str:
        return await sign_in(browser, w, url)

    provider = OAuthClientProvider(
        mcp_url,
        client_metadata=OAuthClientMetadata(redirect_uris=[REDIRECT], client_name="dpop"),
        authorize=authorize,
        dpop=dpop,
    )
    options = HttpClientTransportOptions(
        endpoint=mcp_url, transport_mode=HttpTransportMode.STREAMABLE_HTTP
    )
    provider.install(options)
    return provider, connect_http(options, protocol_version="2025-11-25", protocol_mode="legacy")


async def test_a_dpop_client_gets_bound_tokens_the_endpoint_checks() -> None:
    async with asyncio.timeout(45), world(dpop=True) as w, httpx.AsyncClient() as browser:
        meta = (await browser.get(w.url("/.well-known/oauth-authorization-server"))).json()
        assert "ES256" in meta["dpop_signing_alg_values_supported"]
        provider, client = dpop_client(w.mcp_url, browser, w, dpop=True)
        try:
            async with client:
                seen = json.loads((await client.call_tool("whoami", {})).content[0].text)
                assert seen["subject"] == "alice"
                token = provider.token
                assert token is not None and token.token_type == "DPoP"
                claims = json.loads(_payload(token.access_token))
                assert claims["cnf"]["jkt"] == provider.dpop.jkt  # type: ignore[union-attr]
                # The bound token alone, as a Bearer token: refused at the endpoint.
                stolen = await call_whoami(browser, w, token.access_token)
                assert stolen.status_code == 401
                # A refresh proves the same key, and the new token is bound to it too.
                refreshed = await provider.refresh()
                assert refreshed is not None and refreshed.token_type == "DPoP"
                again = json.loads((await client.call_tool("whoami", {})).content[0].text)
                assert again["subject"] == "alice"
        finally:
            await provider.aclose()


async def test_a_bound_refresh_token_needs_its_key() -> None:
    async with asyncio.timeout(45), world(dpop=True) as w, httpx.AsyncClient() as http:
        client_id = (await register(http, w))["client_id"]
        key = DPoPProofFactory()
        token_url = w.url("/token")
        proof = {"DPoP": key.proof("POST", token_url)}
        issued = await tokens_for(http, w, client_id, token_headers=proof)
        assert issued["token_type"] == "DPoP"
        refresh = {
            "grant_type": "refresh_token",
            "refresh_token": issued["refresh_token"],
            "client_id": client_id,
        }
        other = DPoPProofFactory()
        for headers in ({}, {"DPoP": other.proof("POST", token_url)}):
            refused = await http.post(token_url, data=refresh, headers=headers)
            assert refused.status_code == 400
            assert refused.json()["error"] == "invalid_dpop_proof"
        replayed = key.proof("POST", token_url)
        good = await http.post(token_url, data=refresh, headers={"DPoP": replayed})
        assert good.status_code == 200 and good.json()["token_type"] == "DPoP"
        again = await http.post(token_url, data=refresh, headers={"DPoP": replayed})
        assert again.json()["error"] == "invalid_dpop_proof"  # the proof's jti, used


async def test_a_client_without_dpop_still_gets_a_bearer_token() -> None:
    async with asyncio.timeout(45), world(dpop=True) as w, httpx.AsyncClient() as browser:
        provider, client = dpop_client(w.mcp_url, browser, w, dpop=False)
        try:
            async with client:
                seen = json.loads((await client.call_tool("whoami", {})).content[0].text)
                assert seen["subject"] == "alice"
                assert provider.token is not None and provider.token.token_type == "Bearer"
        finally:
            await provider.aclose()


def _payload(token: str) -> str:
    import base64

    part = token.split(".")[1]
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)).decode()
