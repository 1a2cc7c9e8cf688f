"""The provider the proxy signs users in with: ``Upstream`` (what the proxy needs of one)
and ``OidcUpstream``, any OpenID Connect provider found from its discovery URL.

The proxy is registered at the provider once (its client id and secret) with its callback
URL as redirect URI. For each sign-in it sends the browser to the provider's authorization
endpoint with its own PKCE challenge, state and nonce; at the callback it trades the code
for tokens, reads who the user is from the ID token (verified against the provider's JWKS:
issuer, audience, expiry, nonce) or else the userinfo endpoint, and drops the provider's
tokens: they never leave the proxy.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol
from urllib.parse import urlsplit

import httpx

from mcpkit.auth._jwt import JwtVerifier
from mcpkit.auth._proxy._http import OAuthEndpointError, with_query
from mcpkit.auth._proxy._records import UpstreamIdentity
from mcpkit.auth.client._discovery import fetch_json
from mcpkit.auth.client._token_endpoint import basic_credentials

#: Seconds the discovery document is kept before it is read again.
DEFAULT_DISCOVERY_TTL = 3600.0
#: Seconds one request to the provider may take.
DEFAULT_UPSTREAM_TIMEOUT = 15.0
#: Largest token or userinfo answer read from the provider.
MAX_UPSTREAM_ANSWER_BYTES = 256 * 1024


class Upstream(Protocol):
    """What the proxy needs of the provider it signs users in with."""

    #: The provider's name, as the access tokens' ``upstream`` claim carries it.
    name: str

    async def authorization_url(
        self, redirect_uri: str, state: str, code_challenge: str, nonce: str
    ) -> str:
        """Where to send the browser to sign in (PKCE S256 ``code_challenge``)."""
        ...

    async def identify(
        self, code: str, redirect_uri: str, code_verifier: str, nonce: str
    ) -> UpstreamIdentity:
        """Trade the code the provider gave for who the user is. Raises
        ``OAuthEndpointError`` when the provider refuses or answers something unusable."""
        ...


def _upstream_failure(description: str) -> OAuthEndpointError:
    return OAuthEndpointError("access_denied", f"the identity provider {description}", 502)


class OidcUpstream:
    """An OpenID Connect provider, from its discovery URL (``.../.well-known/openid-
    configuration``) and the proxy's client id and secret there. ``scopes``: what the
    proxy asks the provider for (``openid`` is always included). ``name``: the provider's
    name in the access tokens (by default its host)."""

    def __init__(
        self,
        discovery_url: str,
        client_id: str,
        client_secret: str | None = None,
        scopes: Sequence[str] = ("openid", "email", "profile"),
        *,
        name: str | None = None,
        http_client: httpx.AsyncClient | None = None,
        timeout: float = DEFAULT_UPSTREAM_TIMEOUT,
        discovery_ttl: float = DEFAULT_DISCOVERY_TTL,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.discovery_url = discovery_url
        self.client_id = client_id
        self.client_secret = client_secret
        self.scopes = tuple(dict.fromkeys(("openid", *scopes)))
        self.name = name or (urlsplit(discovery_url).hostname or "oidc")
        self.timeout = timeout
        self.discovery_ttl = discovery_ttl
        self.clock = clock
        self._http = http_client
        self._metadata: dict[str, Any] | None = None
        self._read_at = float("-inf")
        self._verifier: JwtVerifier | None = None
        self._lock = asyncio.Lock()

    @property
    def http(self) -> httpx.AsyncClient:
        """The HTTP client for the provider (made on first use unless given)."""
        if self._http is None:
            self._http = httpx.AsyncClient(timeout=self.timeout, follow_redirects=False)
        return self._http

    async def aclose(self) -> None:
        """Close the HTTP client the upstream made."""
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    async def metadata(self) -> dict[str, Any]:
        """The provider's discovery document, read once per ``discovery_ttl``."""
        if self._metadata is not None and self.clock() - self._read_at < self.discovery_ttl:
            return self._metadata
        async with self._lock:
            if self._metadata is None or self.clock() - self._read_at >= self.discovery_ttl:
                status, doc = await fetch_json(self.http, self.discovery_url)
                if status != 200 or not isinstance(doc, dict):
                    raise _upstream_failure(f"discovery document could not be read (HTTP {status})")
                for member in ("issuer", "authorization_endpoint", "token_endpoint", "jwks_uri"):
                    if not isinstance(doc.get(member), str):
                        raise _upstream_failure(f"discovery document has no {member}")
                self._metadata = doc
                self._read_at = self.clock()
                self._verifier = JwtVerifier(
                    jwks_url=doc["jwks_uri"],
                    issuer=doc["issuer"],
                    audience=self.client_id,
                    http_client=self.http,
                    clock=self.clock,
                )
        assert self._metadata is not None
        return self._metadata

    async def authorization_url(
        self, redirect_uri: str, state: str, code_challenge: str, nonce: str
    ) -> str:
        """The provider's authorization endpoint with the proxy's request."""
        doc = await self.metadata()
        return with_query(
            doc["authorization_endpoint"],
            {
                "response_type": "code",
                "client_id": self.client_id,
                "redirect_uri": redirect_uri,
                "scope": " ".join(self.scopes),
                "state": state,
                "nonce": nonce,
                "code_challenge": code_challenge,
                "code_challenge_method": "S256",
            },
        )

    async def identify(
        self, code: str, redirect_uri: str, code_verifier: str, nonce: str
    ) -> UpstreamIdentity:
        """The code traded at the token endpoint; the user from the ID token, completed
        from userinfo when it lacks the email or name."""
        doc = await self.metadata()
        tokens = await self._token_request(doc, code, redirect_uri, code_verifier)
        claims: dict[str, Any] = {}
        id_token = tokens.get("id_token")
        if isinstance(id_token, str):
            claims = await self._id_token_claims(id_token, nonce)
        access_token = tokens.get("access_token")
        userinfo = doc.get("userinfo_endpoint")
        if (
            ("email" not in claims or "name" not in claims)
            and isinstance(userinfo, str)
            and isinstance(access_token, str)
        ):
            info = await self._userinfo(userinfo, access_token)
            if claims and info.get("sub") != claims.get("sub"):
                raise _upstream_failure("answered userinfo for another subject")
            claims = {**info, **claims}
        subject = claims.get("sub")
        if not isinstance(subject, str) or not subject:
            raise _upstream_failure("did not say who the user is (no sub)")
        email, name = claims.get("email"), claims.get("name")
        return UpstreamIdentity(
            subject=subject,
            provider=self.name,
            email=email if isinstance(email, str) else None,
            name=name if isinstance(name, str) else None,
            claims={k: v for k, v in claims.items() if k not in ("nonce", "at_hash", "c_hash")},
        )

    async def _token_request(
        self, doc: dict[str, Any], code: str, redirect_uri: str, code_verifier: str
    ) -> dict[str, Any]:
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": redirect_uri,
            "code_verifier": code_verifier,
        }
        headers = {"accept": "application/json"}
        methods = doc.get("token_endpoint_auth_methods_supported") or ["client_secret_basic"]
        if self.client_secret is None:
            form["client_id"] = self.client_id
        elif "client_secret_basic" in methods:
            headers["authorization"] = basic_credentials(self.client_id, self.client_secret)
        else:
            form["client_id"] = self.client_id
            form["client_secret"] = self.client_secret
        body = await self._post_json(doc["token_endpoint"], form, headers)
        if not isinstance(body.get("access_token"), str) and not isinstance(
            body.get("id_token"), str
        ):
            raise _upstream_failure("refused the code")
        return body

    async def _post_json(
        self, url: str, form: dict[str, str], headers: dict[str, str]
    ) -> dict[str, Any]:
        try:
            async with asyncio.timeout(self.timeout):
                async with self.http.stream("POST", url, data=form, headers=headers) as response:
                    status = response.status_code
                    raw = bytearray()
                    async for chunk in response.aiter_bytes():
                        raw += chunk
                        if len(raw) > MAX_UPSTREAM_ANSWER_BYTES:
                            raise _upstream_failure("answered too much")
        except (httpx.HTTPError, TimeoutError) as exc:
            raise _upstream_failure(f"could not be reached ({type(exc).__name__})") from exc
        try:
            body = json.loads(bytes(raw))
        except ValueError:
            body = None
        if status != 200 or not isinstance(body, dict):
            error = body.get("error") if isinstance(body, dict) else None
            raise _upstream_failure(f"refused the code (HTTP {status} {error or ''})")
        return body

    async def _id_token_claims(self, id_token: str, nonce: str) -> dict[str, Any]:
        assert self._verifier is not None
        result = await self._verifier.verify(id_token)
        if not result.ok:
            raise _upstream_failure(
                f"gave an ID token that does not verify ({result.error_description})"
            )
        claims = dict(result.claims)
        if claims.get("nonce") != nonce:
            raise _upstream_failure("gave an ID token for another sign-in (nonce)")
        return claims

    async def _userinfo(self, url: str, access_token: str) -> dict[str, Any]:
        status, info = await fetch_json(self.http, url, {"authorization": f"Bearer {access_token}"})
        if status != 200 or not isinstance(info, dict):
            raise _upstream_failure(f"userinfo could not be read (HTTP {status})")
        return info


__all__ = [
    "DEFAULT_DISCOVERY_TTL",
    "DEFAULT_UPSTREAM_TIMEOUT",
    "OidcUpstream",
    "Upstream",
]
