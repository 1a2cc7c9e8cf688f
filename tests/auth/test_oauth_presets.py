"""The provider presets' configuration: the documented endpoints and discovery URLs, the
default scopes, how each reads who the user is from representative ID-token claims or
profile JSON, and the issuer rules (Google's two spellings, Entra's tenant template); the
plain OAuth 2.0 upstream's token request and bounds, against httpx's mock transport."""

from __future__ import annotations

import asyncio
import json
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import httpx
import pytest

from mcpkit.auth import (
    Auth0Upstream,
    EntraUpstream,
    GitHubUpstream,
    GoogleUpstream,
    KeycloakUpstream,
    OAuth2Upstream,
    OktaUpstream,
)
from mcpkit.auth._proxy._http import OAuthEndpointError

CHALLENGE = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
TID = "72f988bf-86f1-41af-91ab-2d7cd011db47"


def query(url: str) -> dict[str, str]:
    return dict(parse_qsl(urlsplit(url).query))


# --------------------------------------------------------------------------- endpoints


def test_each_oidc_preset_reads_its_documented_discovery_url() -> None:
    cases = {
        GoogleUpstream("id", "s"): "https://accounts.google.com/.well-known/openid-configuration",
        EntraUpstream("id", "s", tenant=TID): (
            f"https://login.microsoftonline.com/{TID}/v2.0/.well-known/openid-configuration"
        ),
        EntraUpstream("id", "s", tenant="common"): (
            "https://login.microsoftonline.com/common/v2.0/.well-known/openid-configuration"
        ),
        Auth0Upstream("id", "s", domain="example.us.auth0.com"): (
            "https://example.us.auth0.com/.well-known/openid-configuration"
        ),
        OktaUpstream("id", "s", domain="example.okta.com"): (
            "https://example.okta.com/oauth2/default/.well-known/openid-configuration"
        ),
        OktaUpstream("id", "s", domain="example.okta.com", authorization_server="aus1x"): (
            "https://example.okta.com/oauth2/aus1x/.well-known/openid-configuration"
        ),
        OktaUpstream("id", "s", domain="example.okta.com", authorization_server=None): (
            "https://example.okta.com/.well-known/openid-configuration"
        ),
        KeycloakUpstream("id", "s", base_url="https://sso.example.com/", realm="staff"): (
            "https://sso.example.com/realms/staff/.well-known/openid-configuration"
        ),
    }
    for upstream, url in cases.items():
        assert upstream.discovery_url == url
        assert upstream.scopes[0] == "openid" and set(upstream.scopes) == {
            "openid",
            "email",
            "profile",
        }
    names = [u.name for u in cases]
    assert names[:3] == ["google", "entra", "entra"] and names[3:5] == ["auth0", "okta"]


def test_the_base_of_each_preset_can_point_elsewhere() -> None:
    """A stand-in in tests, GitHub Enterprise Server, a national cloud."""
    assert GoogleUpstream("i", "s", issuer="http://127.0.0.1:9/").discovery_url == (
        "http://127.0.0.1:9/.well-known/openid-configuration"
    )
    assert EntraUpstream(
        "i", "s", tenant="organizations", authority="https://login.microsoftonline.us"
    ).discovery_url == (
        "https://login.microsoftonline.us/organizations/v2.0/.well-known/openid-configuration"
    )
    assert Auth0Upstream("i", "s", domain="http://127.0.0.1:9").discovery_url == (
        "http://127.0.0.1:9/.well-known/openid-configuration"
    )
    github = GitHubUpstream("i", "s")
    assert github.authorization_endpoint == "https://github.com/login/oauth/authorize"
    assert github.token_endpoint == "https://github.com/login/oauth/access_token"
    assert github.userinfo_endpoint == "https://api.github.com/user"
    ghes = GitHubUpstream("i", "s", base_url="https://git.example.com/")
    assert ghes.token_endpoint == "https://git.example.com/login/oauth/access_token"
    assert ghes.userinfo_endpoint == "https://git.example.com/api/v3/user"
    assert github.scopes == ("read:user", "user:email") and github.name == "github"


def test_entra_refuses_a_tenant_that_is_not_one() -> None:
    with pytest.raises(ValueError):
        EntraUpstream("i", "s", tenant="")
    with pytest.raises(ValueError):
        EntraUpstream("i", "s", tenant="a/b")


async def test_github_authorization_url_is_plain_oauth_with_pkce() -> None:
    url = await GitHubUpstream("Iv1.x", "s").authorization_url(
        "https://mcp.example.com/oauth/callback", "st.ate", CHALLENGE, "unused-nonce"
    )
    assert url.startswith("https://github.com/login/oauth/authorize?")
    assert query(url) == {
        "response_type": "code",
        "client_id": "Iv1.x",
        "redirect_uri": "https://mcp.example.com/oauth/callback",
        "scope": "read:user user:email",
        "state": "st.ate",
        "code_challenge": CHALLENGE,
        "code_challenge_method": "S256",
    }


async def test_google_hosted_domain_is_asked_for_and_then_checked() -> None:
    doc = {
        "issuer": "https://accounts.google.com",
        "authorization_endpoint": "https://accounts.google.com/o/oauth2/v2/auth",
        "token_endpoint": "https://oauth2.googleapis.com/token",
        "jwks_uri": "https://www.googleapis.com/oauth2/v3/certs",
    }
    transport = httpx.MockTransport(lambda request: httpx.Response(200, json=doc))
    async with httpx.AsyncClient(transport=transport) as http:
        google = GoogleUpstream("id", "s", hosted_domain="example.com", http_client=http)
        url = await google.authorization_url("https://m/cb", "st", CHALLENGE, "n")
    assert url.startswith(doc["authorization_endpoint"] + "?")
    assert query(url)["hd"] == "example.com" and query(url)["nonce"] == "n"
    ok = google.identity_of({"sub": "1", "hd": "example.com", "email": "a@example.com"})
    assert ok.email == "a@example.com"
    with pytest.raises(OAuthEndpointError, match=r"outside example\.com"):
        google.identity_of({"sub": "1", "email": "a@gmail.com"})


# --------------------------------------------------------------------------- who the user is


def test_google_claims() -> None:
    google = GoogleUpstream("id", "s")
    claims = {
        "iss": "https://accounts.google.com",
        "azp": "id",
        "aud": "id",
        "sub": "110169484474386276334",
        "email": "jane@example.com",
        "email_verified": True,
        "name": "Jane Doe",
        "picture": "https://lh3.googleusercontent.com/a/x",
        "nonce": "n",
        "at_hash": "h",
    }
    identity = google.identity_of(claims)
    assert (identity.subject, identity.email, identity.name) == (
        "110169484474386276334",
        "jane@example.com",
        "Jane Doe",
    )
    assert identity.provider == "google" and "nonce" not in identity.claims
    assert identity.claims["email_verified"] is True
    issuer = "https://accounts.google.com"
    assert google.issuer_ok({"iss": "https://accounts.google.com"}, issuer)
    assert google.issuer_ok({"iss": "accounts.google.com"}, issuer)
    assert not google.issuer_ok({"iss": "https://evil.example"}, issuer)


ENTRA_CLAIMS: dict[str, Any] = {
    "aud": "6cb04018-a3f5-46a7-b995-940c78f5aef3",
    "iss": f"https://login.microsoftonline.com/{TID}/v2.0",
    "tid": TID,
    "oid": "00000000-0000-0000-66f3-3332eca7ea81",
    "sub": "AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ",
    "name": "Abe Lincoln",
    "preferred_username": "AbeLi@microsoft.com",
    "ver": "2.0",
}


def test_entra_claims() -> None:
    entra = EntraUpstream("id", "s", tenant="organizations")
    identity = entra.identity_of(ENTRA_CLAIMS)
    assert identity.subject == f"00000000-0000-0000-66f3-3332eca7ea81.{TID}"
    assert identity.email == "AbeLi@microsoft.com" and identity.name == "Abe Lincoln"
    assert identity.claims["sub"] == ENTRA_CLAIMS["sub"]  # the pairwise sub, kept as a claim
    with_email = entra.identity_of({**ENTRA_CLAIMS, "email": "abe@contoso.test"})
    assert with_email.email == "abe@contoso.test"
    no_oid = {k: v for k, v in ENTRA_CLAIMS.items() if k != "oid"}
    assert entra.identity_of(no_oid).subject == ENTRA_CLAIMS["sub"]
    not_an_address = entra.identity_of({**ENTRA_CLAIMS, "preferred_username": "+15551234"})
    assert not_an_address.email is None


def test_entra_issuer_rules() -> None:
    template = "https://login.microsoftonline.com/{tenantid}/v2.0"
    entra = EntraUpstream("id", "s", tenant="organizations")
    assert entra.issuer_ok(ENTRA_CLAIMS, template)
    other = "9e8d7c6b-5a49-4837-8261-5f4e3d2c1b0a"
    assert not entra.issuer_ok({**ENTRA_CLAIMS, "tid": other}, template)  # iss names TID
    assert not entra.issuer_ok({**ENTRA_CLAIMS, "tid": "contoso"}, template)  # not a GUID
    assert not entra.issuer_ok({k: v for k, v in ENTRA_CLAIMS.items() if k != "tid"}, template)
    fixed = f"https://login.microsoftonline.com/{TID}/v2.0"
    assert EntraUpstream("id", "s", tenant=TID).issuer_ok(ENTRA_CLAIMS, fixed)
    assert not EntraUpstream("id", "s", tenant=TID).issuer_ok(
        {**ENTRA_CLAIMS, "iss": f"https://login.microsoftonline.com/{other}/v2.0"}, fixed
    )
    only = EntraUpstream("id", "s", tenant="organizations", allowed_tenants=[other.upper()])
    assert not only.issuer_ok(ENTRA_CLAIMS, template)
    assert only.issuer_ok(
        {
            **ENTRA_CLAIMS,
            "tid": other,
            "iss": f"https://login.microsoftonline.com/{other}/v2.0",
        },
        template,
    )


@pytest.mark.parametrize(
    ("upstream", "claims"),
    [
        (
            Auth0Upstream("id", "s", domain="example.us.auth0.com"),
            {
                "iss": "https://example.us.auth0.com/",
                "sub": "auth0|64f1c2",
                "email": "kim@example.com",
                "email_verified": False,
                "name": "Kim",
                "nickname": "kim",
            },
        ),
        (
            OktaUpstream("id", "s", domain="example.okta.com"),
            {
                "iss": "https://example.okta.com/oauth2/default",
                "sub": "00uid4BxXw6I6TV4m0g3",
                "email": "kim@example.com",
                "name": "Kim",
                "preferred_username": "kim@example.com",
            },
        ),
        (
            KeycloakUpstream("id", "s", base_url="https://sso.example.com", realm="staff"),
            {
                "iss": "https://sso.example.com/realms/staff",
                "sub": "f1c3a4c0-3b1e-4d8e-9d1a-0b5f2e6c7d8e",
                "email": "kim@example.com",
                "name": "Kim",
                "preferred_username": "kim",
            },
        ),
    ],
)
def test_the_generic_oidc_presets_read_sub_email_and_name(upstream: Any, claims: Any) -> None:
    identity = upstream.identity_of(claims)
    assert identity.subject == claims["sub"]
    assert (identity.email, identity.name) == ("kim@example.com", "Kim")
    assert upstream.issuer_ok(claims, claims["iss"])
    assert not upstream.issuer_ok(claims, claims["iss"] + "x")


GITHUB_USER = {
    "login": "octocat",
    "id": 583231,
    "node_id": "MDQ6VXNlcjU4MzIzMQ==",
    "avatar_url": "https://avatars.githubusercontent.com/u/583231?v=4",
    "html_url": "https://github.com/octocat",
    "type": "User",
    "name": "The Octocat",
    "company": "@github",
    "email": None,
    "followers_url": "https://api.github.com/users/octocat/followers",
}


def test_github_profile() -> None:
    github = GitHubUpstream("i", "s")
    identity = github.identity_of(GITHUB_USER)
    assert identity.subject == "583231" and identity.name == "The Octocat"
    assert identity.email is None and identity.provider == "github"
    assert identity.claims == {
        "id": 583231,
        "login": "octocat",
        "name": "The Octocat",
        "avatar_url": GITHUB_USER["avatar_url"],
        "html_url": "https://github.com/octocat",
        "type": "User",
        "sub": "583231",
        "preferred_username": "octocat",
    }
    with pytest.raises(OAuthEndpointError, match="no id"):
        github.identity_of({**GITHUB_USER, "id": True})
    with pytest.raises(OAuthEndpointError, match="no id"):
        github.identity_of({"login": "octocat"})


# --------------------------------------------------------------------------- plain OAuth 2.0


def plain(handler: Any, **options: Any) -> OAuth2Upstream:
    options.setdefault("client_secret", "sec ret")
    return OAuth2Upstream(
        authorization_endpoint="https://p.example/authorize",
        token_endpoint="https://p.example/token",
        userinfo_endpoint="https://api.p.example/me",
        client_id="cid",
        name="p",
        subject_claim="user_id",
        http_client=httpx.AsyncClient(transport=httpx.MockTransport(handler)),
        **options,
    )


async def test_plain_oauth2_trades_the_code_and_reads_the_profile() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.url.path == "/token":
            return httpx.Response(200, json={"access_token": "at", "token_type": "bearer"})
        return httpx.Response(200, json={"user_id": 42, "email": "x@p.example", "name": "X"})

    upstream = plain(handler, token_auth="client_secret_basic")
    identity = await upstream.identify("the-code", "https://m/cb", "v" * 43, "n")
    await upstream.aclose()
    assert (identity.subject, identity.email, identity.name) == ("42", "x@p.example", "X")
    token, me = seen
    assert token.headers["authorization"] == "Basic Y2lkOnNlYyUyMHJldA=="
    form = dict(parse_qsl(token.content.decode()))
    assert form == {
        "grant_type": "authorization_code",
        "code": "the-code",
        "redirect_uri": "https://m/cb",
        "code_verifier": "v" * 43,
    }
    assert me.headers["authorization"] == "Bearer at"


def test_plain_oauth2_checks_its_configuration() -> None:
    with pytest.raises(ValueError, match="token_auth"):
        plain(lambda r: httpx.Response(200), token_auth="private_key_jwt")
    with pytest.raises(ValueError, match="needs a client_secret"):
        plain(lambda r: httpx.Response(200), client_secret=None)


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (httpx.Response(200, json={"error": "bad_verification_code"}), "bad_verification_code"),
        (httpx.Response(400, json={"error": "invalid_grant"}), "HTTP 400 invalid_grant"),
        (httpx.Response(200, text="access_token=x&scope=&token_type=bearer"), "refused"),
        (httpx.Response(200, content=b"{" + b" " * 300_000 + b"}"), "answered too much"),
    ],
)
async def test_token_answers_that_are_refusals_or_unusable(answer: Any, expected: str) -> None:
    upstream = plain(lambda request: answer)
    with pytest.raises(OAuthEndpointError, match=expected) as caught:
        await upstream.identify("c", "https://m/cb", "v" * 43, "n")
    assert caught.value.error == "access_denied" and caught.value.status == 502
    await upstream.aclose()


async def test_a_provider_that_does_not_answer_in_time_is_given_up_on() -> None:
    async def slow(request: httpx.Request) -> httpx.Response:
        await asyncio.sleep(5)
        return httpx.Response(200, json={})

    upstream = plain(slow, timeout=0.2)
    with pytest.raises(OAuthEndpointError, match="could not be reached"):
        await upstream.identify("c", "https://m/cb", "v" * 43, "n")
    await upstream.aclose()


async def test_a_profile_without_the_subject_is_refused() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/token":
            return httpx.Response(200, json={"access_token": "at"})
        return httpx.Response(200, content=json.dumps({"email": "x@p.example"}).encode())

    upstream = plain(handler)
    with pytest.raises(OAuthEndpointError, match="no user_id"):
        await upstream.identify("c", "https://m/cb", "v" * 43, "n")
    await upstream.aclose()
