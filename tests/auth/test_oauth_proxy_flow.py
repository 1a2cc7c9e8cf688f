"""OAuthProxy end to end: DevAuthServer as the upstream provider, reached over HTTP as a
real one is; the browser driven by plain httpx (consent form, the provider's login form,
redirects by hand); the proxy's token used on the MCP endpoint, where the tool sees the
dev user on ``ctx.auth``."""

from __future__ import annotations

import asyncio

import httpx

from tests.auth._proxy_world import (
    ALICE,
    BOB,
    REDIRECT,
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


async def test_the_whole_flow_reaches_the_tool_as_the_dev_user() -> None:
    async with asyncio.timeout(30), world() as w, httpx.AsyncClient() as http:
        client = await register(http, w)
        tokens = await tokens_for(http, w, client["client_id"])
        assert tokens["token_type"] == "Bearer" and tokens["refresh_token"]
        assert tokens["scope"] == "mcp:read" and 0 < tokens["expires_in"] <= 900
        seen = tool_text(await call_whoami(http, w, tokens["access_token"]))
        assert seen == {
            "subject": "alice",
            "email": "alice@example.test",
            "name": "Alice Liddell",
            "upstream": "dev",
            "scopes": ["mcp:read"],
            "client_id": client["client_id"],
        }


async def test_without_a_token_the_challenge_names_the_proxy() -> None:
    async with asyncio.timeout(30), world() as w, httpx.AsyncClient() as http:
        refused = await call_whoami(http, w, "not-a-token")
        assert refused.status_code == 401
        prm = (await http.get(f"{w.base}/.well-known/oauth-protected-resource/mcp")).json()
        assert prm["authorization_servers"] == [w.base]
        assert prm["resource"] == w.mcp_url
        meta = (await http.get(w.url("/.well-known/oauth-authorization-server"))).json()
        assert meta["issuer"] == w.base
        assert meta["code_challenge_methods_supported"] == ["S256"]
        assert meta["registration_endpoint"] == w.url("/register")
        assert meta["authorization_response_iss_parameter_supported"] is True
        jwks = (await http.get(meta["jwks_uri"])).json()
        assert jwks["keys"][0]["kty"] == "EC" and "d" not in jwks["keys"][0]


async def test_the_client_gets_its_state_and_the_proxy_issuer_back() -> None:
    async with asyncio.timeout(30), world() as w, httpx.AsyncClient() as http:
        client = await register(http, w)
        _, challenge = pkce()
        back = await sign_in(http, w, authorize_url(w, client["client_id"], challenge))
        assert back.startswith(REDIRECT + "?")
        query = query_of(back)
        assert query["state"] == "client-state" and query["iss"] == w.base and query["code"]


async def test_consent_is_remembered_per_client_and_never_carried_to_another() -> None:
    async with asyncio.timeout(30), world() as w, httpx.AsyncClient() as http:
        first = await register(http, w)
        await tokens_for(http, w, first["client_id"])
        # The same client again, same browser: no consent page, straight to the provider.
        _, challenge = pkce()
        again = await http.get(authorize_url(w, first["client_id"], challenge))
        assert again.status_code == 302
        assert again.headers["location"].startswith(w.dev.issuer)
        # A second client (same redirect URI, same browser): the consent page, always.
        second = await register(http, w, client_name="Another Client")
        shown = await http.get(authorize_url(w, second["client_id"], challenge))
        assert shown.status_code == 200 and "Another Client" in shown.text
        assert shown.headers["x-frame-options"] == "DENY"
        # Another browser, the first client: asked again (consent is per browser too).
        async with httpx.AsyncClient() as other:
            fresh = await other.get(authorize_url(w, first["client_id"], challenge))
            assert fresh.status_code == 200 and "Allow access?" in fresh.text


async def test_a_client_asking_for_more_scopes_is_asked_about_again() -> None:
    """Consent covers the scopes approved: the same client, browser and user asking for
    another scope (a step-up) sees the consent page again, naming it."""
    async with asyncio.timeout(30), world() as w, httpx.AsyncClient() as http:
        client = await register(http, w, scope="mcp:read mcp:write")
        await tokens_for(http, w, client["client_id"])  # mcp:read, approved
        _, challenge = pkce()
        same = await http.get(authorize_url(w, client["client_id"], challenge))
        assert same.status_code == 302  # nothing new asked: straight to the provider
        more = authorize_url(w, client["client_id"], challenge, scope="mcp:read mcp:write")
        shown = await http.get(more)
        assert shown.status_code == 200 and "mcp:write" in shown.text
        approved = await approve(http, w, shown.text)
        assert approved.status_code == 302
        assert approved.headers["location"].startswith(w.dev.issuer)
        again = await http.get(more)  # both approved now
        assert again.status_code == 302 and again.headers["location"].startswith(w.dev.issuer)


async def test_a_denied_consent_sends_access_denied_back() -> None:
    async with asyncio.timeout(30), world() as w, httpx.AsyncClient() as http:
        client = await register(http, w)
        _, challenge = pkce()
        shown = await http.get(authorize_url(w, client["client_id"], challenge))
        denied = await approve(http, w, shown.text, "deny")
        assert denied.status_code == 302
        query = query_of(denied.headers["location"])
        assert query["error"] == "access_denied" and query["state"] == "client-state"


async def test_the_consent_form_is_good_once_and_only_from_its_browser() -> None:
    async with asyncio.timeout(30), world() as w, httpx.AsyncClient() as http:
        client = await register(http, w)
        _, challenge = pkce()
        shown = await http.get(authorize_url(w, client["client_id"], challenge))
        # Posted from another browser (no cookie: a cross-site forgery): refused.
        async with httpx.AsyncClient() as attacker:
            forged = await approve(attacker, w, shown.text)
            assert forged.status_code == 400
        # A wrong CSRF token: refused.
        bad = await http.post(
            w.url("/oauth/consent"),
            data={"request": "x", "csrf": "y", "decision": "approve"},
        )
        assert bad.status_code == 400
        ok = await approve(http, w, shown.text)
        assert ok.status_code == 302
        replayed = await approve(http, w, shown.text)
        assert replayed.status_code == 400


async def test_each_user_gets_their_own_identity() -> None:
    async with asyncio.timeout(30), world() as w:
        async with httpx.AsyncClient() as alice_browser:
            client = await register(alice_browser, w)
            alice = await tokens_for(alice_browser, w, client["client_id"], ALICE)
        async with httpx.AsyncClient() as bob_browser:
            bob = await tokens_for(bob_browser, w, client["client_id"], BOB)
            assert (
                tool_text(await call_whoami(bob_browser, w, bob["access_token"]))["subject"]
                == "bob"
            )
            assert (
                tool_text(await call_whoami(bob_browser, w, alice["access_token"]))["subject"]
                == "alice"
            )


async def test_the_callback_refuses_a_state_it_did_not_issue_or_another_browser() -> None:
    async with asyncio.timeout(30), world() as w, httpx.AsyncClient() as http:
        client = await register(http, w)
        _, challenge = pkce()
        shown = await http.get(authorize_url(w, client["client_id"], challenge))
        upstream = await approve(http, w, shown.text)
        state = query_of(upstream.headers["location"])["state"]
        forged = await http.get(w.url("/oauth/callback"), params={"code": "x", "state": "nope.x"})
        assert forged.status_code == 400
        async with httpx.AsyncClient() as other:
            elsewhere = await other.get(
                w.url("/oauth/callback"), params={"code": "x", "state": state}
            )
            assert elsewhere.status_code == 400
