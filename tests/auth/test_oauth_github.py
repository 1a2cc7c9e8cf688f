"""GitHubUpstream end to end: the proxy in front of a fake GitHub (the OAuth web flow and the
REST API, answering as GitHub documents), the browser driven by plain httpx, the proxy's
token used on the MCP endpoint, where the tool sees the GitHub user."""

from __future__ import annotations

import asyncio
from urllib.parse import parse_qsl, urlsplit

import httpx

from mcpkit.auth import GitHubUpstream
from tests.auth._fake_github import GHOST, HUBOT, OCTOCAT, FakeGitHub, github_provider
from tests.auth._proxy_world import (
    Provider,
    approve,
    authorize_url,
    call_whoami,
    pkce,
    query_of,
    register,
    sign_in,
    tokens_for,
    tool_text,
    world,
)


def calls(fake: FakeGitHub, path: str) -> list[dict[str, str]]:
    return [headers for _, p, headers in fake.requests if p == path]


async def test_a_github_user_reaches_the_tool_by_their_numeric_id() -> None:
    async with asyncio.timeout(30), world(github_provider()) as w, httpx.AsyncClient() as http:
        client = await register(http, w)
        tokens = await tokens_for(http, w, client["client_id"], OCTOCAT)
        seen = tool_text(await call_whoami(http, w, tokens["access_token"]))
        assert seen == {
            "subject": "583231",  # the id, never the login (renamed, then taken by another)
            "email": "octocat@example.test",  # the primary verified one of /user/emails
            "name": "The Octocat",
            "upstream": "github",
            "scopes": ["mcp:read"],
            "client_id": client["client_id"],
        }
        claims = (await w.proxy.verifier().verify(tokens["access_token"])).claims
        assert claims["preferred_username"] == "octocat" and claims["email_verified"] is True
        fake = w.dev
        # The token request asked for JSON and sent the PKCE verifier; the API calls were
        # made as GitHub asks (its media type and API version).
        (token_call,) = calls(fake, "/login/oauth/access_token")
        assert token_call["accept"] == "application/json"
        for path in ("/api/v3/user", "/api/v3/user/emails"):
            (api_call,) = calls(fake, path)
            assert api_call["accept"] == "application/vnd.github+json"
            assert api_call["x-github-api-version"] == "2022-11-28"
            assert api_call["authorization"].startswith("Bearer gho_")


async def test_the_authorization_request_github_gets() -> None:
    async with asyncio.timeout(30), world(github_provider()) as w, httpx.AsyncClient() as http:
        client = await register(http, w)
        _, challenge = pkce()
        shown = await http.get(authorize_url(w, client["client_id"], challenge))
        upstream = await approve(http, w, shown.text)
        location = upstream.headers["location"]
        assert location.startswith(f"{w.dev.base}/login/oauth/authorize?")
        query = dict(parse_qsl(urlsplit(location).query))
        assert query["client_id"] == "Iv1.proxy"
        assert query["redirect_uri"] == w.url("/oauth/callback")
        assert query["scope"] == "read:user user:email"
        assert query["code_challenge_method"] == "S256" and len(query["code_challenge"]) == 43
        assert query["state"] and "nonce" not in query  # no ID token, no nonce


async def test_a_public_email_is_taken_as_it_is_and_the_login_names_a_nameless_user() -> None:
    async with asyncio.timeout(30), world(github_provider()) as w, httpx.AsyncClient() as http:
        client = await register(http, w)
        tokens = await tokens_for(http, w, client["client_id"], HUBOT)
        seen = tool_text(await call_whoami(http, w, tokens["access_token"]))
        assert seen["subject"] == "9919" and seen["email"] == "hubot@example.test"
        assert seen["name"] == "hubot"
        assert calls(w.dev, "/api/v3/user/emails") == []  # not needed


async def test_without_user_email_scope_the_email_list_is_not_read() -> None:
    provider = github_provider(scopes=("read:user",))
    async with asyncio.timeout(30), world(provider) as w, httpx.AsyncClient() as http:
        client = await register(http, w)
        tokens = await tokens_for(http, w, client["client_id"], OCTOCAT)
        seen = tool_text(await call_whoami(http, w, tokens["access_token"]))
        assert seen["subject"] == "583231" and seen["email"] is None
        assert calls(w.dev, "/api/v3/user/emails") == []


async def test_an_unverified_primary_address_is_not_taken() -> None:
    async with asyncio.timeout(30), world(github_provider()) as w, httpx.AsyncClient() as http:
        client = await register(http, w)
        tokens = await tokens_for(http, w, client["client_id"], GHOST)
        seen = tool_text(await call_whoami(http, w, tokens["access_token"]))
        assert seen["subject"] == "10137" and seen["email"] is None


def wrong_secret_provider(provider_base: str, proxy_base: str) -> Provider:
    fake = FakeGitHub(provider_base, "Iv1.proxy", "gh-secret", f"{proxy_base}/oauth/callback")
    upstream = GitHubUpstream("Iv1.proxy", "not-the-secret", base_url=provider_base)
    return Provider(fake, upstream, fake.log_in)


async def test_a_refusal_github_answers_with_200_goes_back_to_the_client() -> None:
    """GitHub answers a bad code or wrong credentials with 200 and an ``error`` member."""
    async with (
        asyncio.timeout(30),
        world(wrong_secret_provider) as w,
        httpx.AsyncClient() as http,
    ):
        client = await register(http, w)
        _, challenge = pkce()
        back = await sign_in(http, w, authorize_url(w, client["client_id"], challenge), OCTOCAT)
        query = query_of(back)
        assert query["error"] == "access_denied" and query["state"] == "client-state"
        assert "incorrect_client_credentials" in query["error_description"]
        assert "code" not in query
