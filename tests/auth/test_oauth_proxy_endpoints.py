"""OAuthProxy's endpoints refuse what they must, with the right OAuth error and status:
PKCE (S256 only, the verifier checked), the exact redirect URI, codes good once, refresh
tokens rotated with reuse detection, revocation, dynamic registration's checks."""

from __future__ import annotations

import asyncio
import base64
from typing import Any

import httpx
import pytest

from tests.auth._proxy_world import (
    REDIRECT,
    World,
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


async def code_for(http: httpx.AsyncClient, w: World, client_id: str) -> tuple[str, str]:
    """(code, verifier) after a whole sign-in."""
    verifier, challenge = pkce()
    back = await sign_in(http, w, authorize_url(w, client_id, challenge))
    return query_of(back)["code"], verifier


async def redeem(
    http: httpx.AsyncClient, w: World, client_id: str, code: str, verifier: str, **extra: str
) -> httpx.Response:
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": REDIRECT,
        "code_verifier": verifier,
        "client_id": client_id,
        **extra,
    }
    return await http.post(w.url("/token"), data=form)


async def refresh(
    http: httpx.AsyncClient, w: World, client_id: str, token: str, **extra: str
) -> httpx.Response:
    form = {"grant_type": "refresh_token", "refresh_token": token, "client_id": client_id, **extra}
    return await http.post(w.url("/token"), data=form)


def error_of(response: httpx.Response, status: int = 400) -> str:
    assert response.status_code == status, response.text
    assert response.headers["cache-control"] == "no-store"
    return str(response.json()["error"])


async def test_pkce_plain_or_missing_is_refused_at_the_authorization_endpoint() -> None:
    async with asyncio.timeout(30), world() as w, httpx.AsyncClient() as http:
        client = (await register(http, w))["client_id"]
        _, challenge = pkce()
        for extra in ({"code_challenge_method": "plain"}, {"code_challenge": ""}):
            url = authorize_url(w, client, challenge, **extra)
            refused = await http.get(url)
            assert refused.status_code == 302
            query = query_of(refused.headers["location"])
            assert query["error"] == "invalid_request" and query["state"] == "client-state"
            assert query["iss"] == w.base


async def test_a_wrong_or_missing_verifier_is_refused_at_the_token_endpoint() -> None:
    async with asyncio.timeout(30), world() as w, httpx.AsyncClient() as http:
        client = (await register(http, w))["client_id"]
        code, _ = await code_for(http, w, client)
        wrong, _ = pkce()
        assert error_of(await redeem(http, w, client, code, wrong)) == "invalid_grant"
        code, _ = await code_for(http, w, client)
        missing = await redeem(http, w, client, code, "")
        assert error_of(missing) == "invalid_request"


async def test_a_redirect_uri_not_registered_is_never_redirected_to() -> None:
    async with asyncio.timeout(30), world() as w, httpx.AsyncClient() as http:
        client = (await register(http, w))["client_id"]
        _, challenge = pkce()
        for uri in ("https://evil.example/cb", REDIRECT + "/", REDIRECT + "?x=1"):
            shown = await http.get(authorize_url(w, client, challenge, redirect_uri=uri))
            assert shown.status_code == 400 and "location" not in shown.headers
        unknown = await http.get(authorize_url(w, "no-such-client", challenge))
        assert unknown.status_code == 400 and "location" not in unknown.headers


async def test_a_loopback_redirect_uri_may_name_any_port() -> None:
    """RFC 8252 §7.3: a native app listens on the port it gets, so the port of a plain http
    loopback redirect URI is not compared; the rest of it is, and only there."""
    async with asyncio.timeout(30), world() as w, httpx.AsyncClient() as http:
        client = (await register(http, w))["client_id"]  # REDIRECT: 127.0.0.1:33418
        _, challenge = pkce()
        other_port = REDIRECT.replace(":33418", ":51234")
        moved = await http.get(authorize_url(w, client, challenge, redirect_uri=other_port))
        assert moved.status_code == 200 and "Allow access?" in moved.text
        for uri in (
            other_port.replace("127.0.0.1", "localhost"),  # another host
            other_port + "/more",  # another path
            other_port.replace("http://", "https://"),  # another scheme
        ):
            shown = await http.get(authorize_url(w, client, challenge, redirect_uri=uri))
            assert shown.status_code == 400 and "location" not in shown.headers, uri
        https_client = await register(http, w, redirect_uris=["https://app.example:8443/cb"])
        refused = await http.get(
            authorize_url(
                w, https_client["client_id"], challenge, redirect_uri="https://app.example:9/cb"
            )
        )
        assert refused.status_code == 400  # only loopback http varies its port


async def test_other_authorization_errors_go_back_to_the_client() -> None:
    async with asyncio.timeout(30), world() as w, httpx.AsyncClient() as http:
        client = (await register(http, w))["client_id"]
        _, challenge = pkce()
        cases = [
            ({"scope": "admin"}, "invalid_scope"),
            ({"resource": "https://other.example/mcp"}, "invalid_target"),
            ({"response_type": "token"}, "unsupported_response_type"),
        ]
        for extra, error in cases:
            refused = await http.get(authorize_url(w, client, challenge, **extra))
            assert refused.status_code == 302, refused.text
            assert query_of(refused.headers["location"])["error"] == error


async def test_the_redirect_uri_at_the_token_endpoint_must_match() -> None:
    async with asyncio.timeout(30), world() as w, httpx.AsyncClient() as http:
        client = (await register(http, w, redirect_uris=[REDIRECT, "https://app.example/cb"]))[
            "client_id"
        ]
        code, verifier = await code_for(http, w, client)
        other = await redeem(http, w, client, code, verifier, redirect_uri="https://app.example/cb")
        assert error_of(other) == "invalid_grant"


async def test_a_code_is_good_once_and_its_reuse_revokes_what_it_gave() -> None:
    async with asyncio.timeout(30), world() as w, httpx.AsyncClient() as http:
        client = (await register(http, w))["client_id"]
        code, verifier = await code_for(http, w, client)
        first = await redeem(http, w, client, code, verifier)
        assert first.status_code == 200
        tokens = first.json()
        assert tool_text(await call_whoami(http, w, tokens["access_token"]))["subject"] == "alice"
        assert error_of(await redeem(http, w, client, code, verifier)) == "invalid_grant"
        assert (await call_whoami(http, w, tokens["access_token"])).status_code == 401
        assert error_of(await refresh(http, w, client, tokens["refresh_token"])) == "invalid_grant"


async def test_a_code_issued_to_one_client_is_refused_to_another() -> None:
    async with asyncio.timeout(30), world() as w, httpx.AsyncClient() as http:
        client = (await register(http, w))["client_id"]
        thief = (await register(http, w))["client_id"]
        code, verifier = await code_for(http, w, client)
        assert error_of(await redeem(http, w, thief, code, verifier)) == "invalid_grant"


async def test_refresh_tokens_rotate_and_a_reuse_revokes_the_family() -> None:
    async with asyncio.timeout(30), world() as w, httpx.AsyncClient() as http:
        client = (await register(http, w))["client_id"]
        first = await tokens_for(http, w, client)
        second = await refresh(http, w, client, first["refresh_token"])
        assert second.status_code == 200
        rotated = second.json()
        assert rotated["refresh_token"] != first["refresh_token"]
        assert tool_text(await call_whoami(http, w, rotated["access_token"]))["email"] == (
            "alice@example.test"
        )
        # The old one again: a reuse. Refused, and the whole family with it.
        assert error_of(await refresh(http, w, client, first["refresh_token"])) == "invalid_grant"
        assert error_of(await refresh(http, w, client, rotated["refresh_token"])) == "invalid_grant"
        assert (await call_whoami(http, w, rotated["access_token"])).status_code == 401


async def test_a_refresh_may_narrow_the_scopes_but_not_widen_them() -> None:
    async with asyncio.timeout(30), world() as w, httpx.AsyncClient() as http:
        client = (await register(http, w))["client_id"]
        tokens = await tokens_for(http, w, client, scope="mcp:read mcp:write")
        narrowed = await refresh(http, w, client, tokens["refresh_token"], scope="mcp:read")
        assert narrowed.status_code == 200 and narrowed.json()["scope"] == "mcp:read"
        wider = await refresh(
            http, w, client, narrowed.json()["refresh_token"], scope="mcp:read mcp:admin"
        )
        assert error_of(wider) == "invalid_scope"


async def test_revoking_a_refresh_token_revokes_its_family_and_an_access_token_itself() -> None:
    async with asyncio.timeout(30), world() as w, httpx.AsyncClient() as http:
        client = (await register(http, w))["client_id"]
        tokens = await tokens_for(http, w, client)
        revoked = await http.post(
            w.url("/revoke"), data={"token": tokens["refresh_token"], "client_id": client}
        )
        assert revoked.status_code == 200
        assert error_of(await refresh(http, w, client, tokens["refresh_token"])) == "invalid_grant"
        assert (await call_whoami(http, w, tokens["access_token"])).status_code == 401
        # An access token alone: itself revoked, its refresh token still good.
        other = await tokens_for(http, w, client)
        assert tool_text(await call_whoami(http, w, other["access_token"]))["subject"] == "alice"
        await http.post(
            w.url("/revoke"), data={"token": other["access_token"], "client_id": client}
        )
        assert (await call_whoami(http, w, other["access_token"])).status_code == 401
        assert (await refresh(http, w, client, other["refresh_token"])).status_code == 200
        # Unknown tokens: 200 all the same (RFC 7009 §2.2); another client's: left alone.
        unknown = await http.post(w.url("/revoke"), data={"token": "nope", "client_id": client})
        assert unknown.status_code == 200


async def test_another_client_cannot_revoke_or_refresh_a_token() -> None:
    async with asyncio.timeout(30), world() as w, httpx.AsyncClient() as http:
        client = (await register(http, w))["client_id"]
        thief = (await register(http, w))["client_id"]
        tokens = await tokens_for(http, w, client)
        await http.post(
            w.url("/revoke"), data={"token": tokens["refresh_token"], "client_id": thief}
        )
        assert (await call_whoami(http, w, tokens["access_token"])).status_code == 200


async def test_token_endpoint_errors() -> None:
    async with asyncio.timeout(30), world() as w, httpx.AsyncClient() as http:
        client = (await register(http, w))["client_id"]
        form: dict[str, Any] = {"grant_type": "password", "client_id": client}
        assert error_of(await http.post(w.url("/token"), data=form)) == "unsupported_grant_type"
        form = {"grant_type": "authorization_code", "code": "x", "client_id": "nobody"}
        answer = await http.post(w.url("/token"), data=form)
        assert error_of(answer, 401) == "invalid_client"
        assert answer.headers["www-authenticate"].startswith("Basic")
        form = {"grant_type": "authorization_code", "code": "nope", "client_id": client}
        form["code_verifier"] = pkce()[0]
        assert error_of(await http.post(w.url("/token"), data=form)) == "invalid_grant"
        as_json = await http.post(w.url("/token"), json={"grant_type": "refresh_token"})
        assert error_of(as_json) == "invalid_request"
        no_grant = await http.post(w.url("/token"), data={"client_id": client})
        assert error_of(no_grant) == "invalid_request"


async def test_a_client_registered_without_refresh_gets_none_and_may_not_refresh() -> None:
    async with asyncio.timeout(30), world() as w, httpx.AsyncClient() as http:
        client = (await register(http, w, grant_types=["authorization_code"]))["client_id"]
        tokens = await tokens_for(http, w, client)
        assert "refresh_token" not in tokens
        form = {"grant_type": "refresh_token", "refresh_token": "x", "client_id": client}
        assert error_of(await http.post(w.url("/token"), data=form)) == "unauthorized_client"


async def test_a_confidential_client_authenticates_with_its_secret() -> None:
    async with asyncio.timeout(30), world() as w, httpx.AsyncClient() as http:
        answer = await register(http, w, token_endpoint_auth_method="client_secret_basic")
        client, secret = answer["client_id"], answer["client_secret"]
        code, verifier = await code_for(http, w, client)
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": REDIRECT,
            "code_verifier": verifier,
        }
        wrong = base64.b64encode(f"{client}:nope".encode()).decode()
        refused = await http.post(
            w.url("/token"), data=form, headers={"authorization": f"Basic {wrong}"}
        )
        assert error_of(refused, 401) == "invalid_client"
        no_secret = await http.post(w.url("/token"), data={**form, "client_id": client})
        assert error_of(no_secret, 401) == "invalid_client"
        code, verifier = await code_for(http, w, client)
        form.update(code=code, code_verifier=verifier)
        good = base64.b64encode(f"{client}:{secret}".encode()).decode()
        ok = await http.post(w.url("/token"), data=form, headers={"authorization": f"Basic {good}"})
        assert ok.status_code == 200, ok.text


@pytest.mark.parametrize(
    ("metadata", "error"),
    [
        ({"redirect_uris": ["http://app.example/cb"]}, "invalid_redirect_uri"),
        ({"redirect_uris": ["ftp://127.0.0.1/cb"]}, "invalid_redirect_uri"),
        ({"redirect_uris": ["https://app.example/cb#frag"]}, "invalid_redirect_uri"),
        ({"redirect_uris": []}, "invalid_redirect_uri"),
        ({"redirect_uris": "https://app.example/cb"}, "invalid_redirect_uri"),
        ({"token_endpoint_auth_method": "private_key_jwt"}, "invalid_client_metadata"),
        ({"grant_types": ["client_credentials"]}, "invalid_client_metadata"),
        ({"response_types": ["token"]}, "invalid_client_metadata"),
        ({"scope": "mcp:admin"}, "invalid_client_metadata"),
    ],
)
async def test_registration_refuses_bad_metadata(metadata: dict[str, Any], error: str) -> None:
    async with asyncio.timeout(30), world() as w, httpx.AsyncClient() as http:
        body = {"redirect_uris": [REDIRECT], **metadata}
        answer = await http.post(w.url("/register"), json=body)
        assert error_of(answer) == error


async def test_registration_accepts_https_and_loopback_http() -> None:
    async with asyncio.timeout(30), world() as w, httpx.AsyncClient() as http:
        uris = ["https://app.example/cb", "http://localhost:8080/cb", "http://[::1]:9/cb"]
        answer = await register(http, w, redirect_uris=uris, client_name="x")
        assert answer["redirect_uris"] == uris and "client_secret" not in answer
        not_json = await http.post(
            w.url("/register"), content=b"{", headers={"content-type": "application/json"}
        )
        assert error_of(not_json) == "invalid_client_metadata"
        preflight = await http.options(w.url("/register"))
        assert preflight.status_code == 204
        assert preflight.headers["access-control-allow-origin"] == "*"
        wrong_method = await http.get(w.url("/token"))
        assert wrong_method.status_code == 405
