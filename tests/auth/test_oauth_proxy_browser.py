"""OAuthProxy end to end with nothing stood in for: oidc-provider (an OpenID-certified
provider, on Node) upstream, headless Chromium as the user's browser (the pages as served:
the proxy's consent, oidc-provider's login and consent, the redirects, the cookies), and
the official ``mcp`` client's ``OAuthClientProvider`` (and mcpkit's own) doing discovery,
dynamic registration, PKCE, the token exchange and the refresh; the tool sees the
provider's user on ``ctx.auth``."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)

from tests.auth._oidc_world import USER, World, sign_in, stage, world
from tests.auth._proxy_world import mcpkit_client, pkce
from tests.browser import launch, needs_chromium
from tests.http_server import POST_HEADERS
from tests.wire import initialize_request

pytestmark = [
    pytest.mark.interop,
    needs_chromium,
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]


class MemoryStorage:
    """The official client's token storage; every token set it was given, in order."""

    def __init__(self) -> None:
        self.tokens: list[OAuthToken] = []
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens[-1] if self.tokens else None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens.append(tokens)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


async def whoami(session: ClientSession) -> dict[str, Any]:
    result = await session.call_tool("whoami", {})
    assert not result.is_error, result
    return dict(json.loads(result.content[0].text))


async def test_the_official_client_signs_in_through_chromium_and_refreshes() -> None:
    async with asyncio.timeout(50), world(access_token_ttl=2) as w, launch() as browser:
        pages: list[list[str]] = []

        async def redirect_handler(url: str) -> None:
            pages.append(await sign_in(browser, w, url))

        async def callback_handler() -> AuthorizationCodeResult:
            back = await w.redirects.next()
            return AuthorizationCodeResult(
                code=back["code"], state=back.get("state"), iss=back.get("iss")
            )

        storage = MemoryStorage()
        provider = OAuthClientProvider(
            w.mcp_url,
            OAuthClientMetadata(
                redirect_uris=[w.redirects.uri],
                client_name="Official Client",
                grant_types=["authorization_code", "refresh_token"],
                token_endpoint_auth_method="none",
                scope="mcp:read",
            ),
            storage,
            redirect_handler=redirect_handler,
            callback_handler=callback_handler,
        )
        async with (
            httpx2.AsyncClient(auth=provider, timeout=20) as http,
            streamable_http_client(w.mcp_url, http_client=http) as (read, write),
            ClientSession(read, write, read_timeout_seconds=20) as session,
        ):
            await session.initialize()
            seen = await whoami(session)
            # The whole way in Chromium: the proxy's consent, then oidc-provider's pages.
            assert pages == [["proxy-consent", "login", "provider-consent"]]
            assert storage.client is not None
            assert seen["subject"] == USER["sub"] and seen["email"] == USER["email"]
            assert seen["name"] == USER["name"] and seen["upstream"] == "oidc-provider"
            assert seen["client_id"] == storage.client.client_id
            assert seen["scopes"] == ["mcp:read"]
            first = storage.tokens[-1]
            assert first.expires_in == 2 and first.refresh_token
            # Once the access token expired the client refreshes (no browser), same user.
            await asyncio.sleep(2.5)
            again = await whoami(session)
            assert again["subject"] == USER["sub"]
            assert len(pages) == 1 and len(storage.tokens) == 2
            refreshed = storage.tokens[-1]
            assert refreshed.access_token != first.access_token
            assert refreshed.refresh_token not in (None, first.refresh_token)
            async with httpx.AsyncClient() as http:
                headers = {**POST_HEADERS, "authorization": f"Bearer {first.access_token}"}
                stale = await http.post(w.mcp_url, json=initialize_request(), headers=headers)
                assert stale.status_code == 401  # the first token is over: the refresh was due


async def register(w: World, redirect_uri: str, name: str) -> str:
    async with httpx.AsyncClient() as http:
        answer = await http.post(
            f"{w.base}/register",
            json={
                "redirect_uris": [redirect_uri],
                "client_name": name,
                "token_endpoint_auth_method": "none",
                "grant_types": ["authorization_code", "refresh_token"],
            },
        )
    assert answer.status_code == 201, answer.text
    return str(answer.json()["client_id"])


def authorize_url(w: World, client_id: str) -> str:
    _, challenge = pkce()
    params = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": w.redirects.uri,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "state": "second-state",
        "scope": "mcp:read",
        "resource": w.mcp_url,
    }
    return str(httpx.URL(f"{w.base}/authorize", params=params))


async def test_a_new_client_in_a_fresh_browser_is_asked_for_consent_and_gets_no_code() -> None:
    async with asyncio.timeout(50), world() as w:
        first = await register(w, w.redirects.uri, "First Client")
        async with launch() as browser:
            pages = await sign_in(browser, w, authorize_url(w, first))
            assert pages[0] == "proxy-consent"
            assert "code" in await w.redirects.next()
        # A second client, registered now, in another browser profile: the consent page,
        # naming it; nothing reaches its redirect URI while the user has not answered.
        second = await register(w, w.redirects.uri, "Second Client")
        async with launch() as browser:
            await browser.goto(authorize_url(w, second))
            assert await stage(browser, w) == "proxy-consent"
            page = await browser.state()
            assert page["title"] == "Allow access?" and "Second Client" in page["text"]
            assert page["url"].startswith(f"{w.base}/authorize")
            await asyncio.sleep(0.5)
            assert w.redirects.received.empty()
            # Denied: the client hears access_denied, and no code.
            await browser.click("button[name=decision][value=deny]")
            back = await w.redirects.next()
            assert back["error"] == "access_denied" and back["state"] == "second-state"
            assert "code" not in back


async def test_mcpkit_client_signs_in_through_chromium_and_refreshes() -> None:
    async with asyncio.timeout(50), world(access_token_ttl=2) as w, launch() as browser:

        async def authorize(url: str) -> str:
            assert await sign_in(browser, w, url) == ["proxy-consent", "login", "provider-consent"]
            return str(await browser.evaluate("location.href"))

        provider, client = mcpkit_client(w.mcp_url, w.redirects.uri, authorize)
        try:
            async with client:
                seen = json.loads((await client.call_tool("whoami", {})).content[0].text)
                assert seen["subject"] == USER["sub"] and seen["email"] == USER["email"]
                assert seen["upstream"] == "oidc-provider"
                back = await w.redirects.next()
                assert back["iss"] == w.base and back["code"]
                first = provider.token
                assert first is not None and first.refresh_token
                # Expired: the next call refreshes (no browser), the same user.
                await asyncio.sleep(2.5)
                again = json.loads((await client.call_tool("whoami", {})).content[0].text)
                assert again["subject"] == USER["sub"]
                assert provider.token is not None
                assert provider.token.access_token != first.access_token
                assert len(provider.authorization_requests) == 1
        finally:
            await provider.aclose()
