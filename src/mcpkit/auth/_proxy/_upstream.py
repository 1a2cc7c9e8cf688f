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
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol
from urllib.parse import urlsplit

import httpx

from mcpkit.auth._jwt import JwtVerifier
from mcpkit.auth._proxy._http import with_query
from mcpkit.auth._proxy._records import UpstreamIdentity
from mcpkit.auth._proxy._upstream_http import (
    DEFAULT_UPSTREAM_TIMEOUT,
    UpstreamClient,
    code_exchange,
    upstream_failure,
)
from mcpkit.auth.client._discovery import fetch_json

#: Seconds the discovery document is kept before it is read again.
DEFAULT_DISCOVERY_TTL = 3600.0
#: Claims of the ID token that say nothing about the user (left out of the identity).
TOKEN_ONLY_CLAIMS = ("nonce", "at_hash", "c_hash")


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


def text_claim(claims: Mapping[str, Any], name: str) -> str | None:
    """``claims[name]`` when it is a non-empty string, else None."""
    value = claims.get(name)
    return value if isinstance(value, str) and value else None


class OidcUpstream(UpstreamClient):
    """An OpenID Connect provider, from its discovery URL (``.../.well-known/openid-
    configuration``) and the proxy's client id and secret there. ``scopes``: what the
    proxy asks the provider for (``openid`` is always included). ``name``: the provider's
    name in the access tokens (by default its host). ``authorize_params``: more parameters
    of the authorization request (a provider's own, such as Google's ``hd``).

    The provider presets (``GoogleUpstream``, ``EntraUpstream``, ``Auth0Upstream``,
    ``OktaUpstream``, ``KeycloakUpstream``) are this class with their discovery URL and
    defaults; a subclass changes how the issuer is checked (``issuer_ok``), whether userinfo
    is read (``use_userinfo``) and who the claims say the user is (``identity_of``).
    """

    #: Whether userinfo completes an ID token that lacks the email or the name.
    use_userinfo: bool = True

    def __init__(
        self,
        discovery_url: str,
        client_id: str,
        client_secret: str | None = None,
        scopes: Sequence[str] = ("openid", "email", "profile"),
        *,
        name: str | None = None,
        authorize_params: Mapping[str, str] | None = None,
        http_client: httpx.AsyncClient | None = None,
        timeout: float = DEFAULT_UPSTREAM_TIMEOUT,
        discovery_ttl: float = DEFAULT_DISCOVERY_TTL,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(http_client, timeout)
        self.discovery_url = discovery_url
        self.client_id = client_id
        self.client_secret = client_secret
        self.scopes = tuple(dict.fromkeys(("openid", *scopes)))
        self.name = name or (urlsplit(discovery_url).hostname or "oidc")
        self.authorize_params = dict(authorize_params or {})
        self.discovery_ttl = discovery_ttl
        self.clock = clock
        self._metadata: dict[str, Any] | None = None
        self._read_at = float("-inf")
        self._verifier: JwtVerifier | None = None
        self._lock = asyncio.Lock()

    async def metadata(self) -> dict[str, Any]:
        """The provider's discovery document, read once per ``discovery_ttl``."""
        if self._metadata is not None and self.clock() - self._read_at < self.discovery_ttl:
            return self._metadata
        async with self._lock:
            if self._metadata is None or self.clock() - self._read_at >= self.discovery_ttl:
                status, doc = await fetch_json(self.http, self.discovery_url)
                if status != 200 or not isinstance(doc, dict):
                    raise upstream_failure(f"discovery document could not be read (HTTP {status})")
                for member in ("issuer", "authorization_endpoint", "token_endpoint", "jwks_uri"):
                    if not isinstance(doc.get(member), str):
                        raise upstream_failure(f"discovery document has no {member}")
                self._metadata = doc
                self._read_at = self.clock()
                # The issuer is checked apart (issuer_ok), so a provider may have its way.
                self._verifier = JwtVerifier(
                    jwks_url=doc["jwks_uri"],
                    audience=self.client_id,
                    http_client=self.http,
                    clock=self.clock,
                )
        assert self._metadata is not None
        return self._metadata

    def issuer_ok(self, claims: Mapping[str, Any], issuer: str) -> bool:
        """Whether the ID token's ``iss`` is the provider's: the discovery document's
        ``issuer``, exactly (OpenID Connect Core §3.1.3.7)."""
        return claims.get("iss") == issuer

    def identity_of(self, claims: Mapping[str, Any]) -> UpstreamIdentity:
        """Who the ID token (completed from userinfo) says the user is: ``sub``, ``email``,
        ``name``."""
        subject = text_claim(claims, "sub")
        if subject is None:
            raise upstream_failure("did not say who the user is (no sub)")
        return UpstreamIdentity(
            subject=subject,
            provider=self.name,
            email=text_claim(claims, "email"),
            name=text_claim(claims, "name"),
            claims={k: v for k, v in claims.items() if k not in TOKEN_ONLY_CLAIMS},
        )

    async def authorization_url(
        self, redirect_uri: str, state: str, code_challenge: str, nonce: str
    ) -> str:
        """The provider's authorization endpoint with the proxy's request."""
        doc = await self.metadata()
        return with_query(
            doc["authorization_endpoint"],
            {
                **self.authorize_params,
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
            claims = await self._id_token_claims(id_token, nonce, doc["issuer"])
        access_token = tokens.get("access_token")
        userinfo = doc.get("userinfo_endpoint")
        if (
            self.use_userinfo
            and ("email" not in claims or "name" not in claims)
            and isinstance(userinfo, str)
            and isinstance(access_token, str)
        ):
            info = await self.get_json(userinfo, access_token, "userinfo")
            if not isinstance(info, dict):
                raise upstream_failure("userinfo could not be read (not an object)")
            if claims and info.get("sub") != claims.get("sub"):
                raise upstream_failure("answered userinfo for another subject")
            claims = {**info, **claims}
        return self.identity_of(claims)

    async def _token_request(
        self, doc: dict[str, Any], code: str, redirect_uri: str, code_verifier: str
    ) -> dict[str, Any]:
        methods = doc.get("token_endpoint_auth_methods_supported") or ["client_secret_basic"]
        if self.client_secret is None:
            method = "none"
        elif "client_secret_basic" in methods:
            method = "client_secret_basic"
        else:
            method = "client_secret_post"
        form, headers = code_exchange(
            code, redirect_uri, code_verifier, self.client_id, self.client_secret, method
        )
        return await self.post_token_request(doc["token_endpoint"], form, headers)

    async def _id_token_claims(self, id_token: str, nonce: str, issuer: str) -> dict[str, Any]:
        assert self._verifier is not None
        result = await self._verifier.verify(id_token)
        if not result.ok:
            raise upstream_failure(
                f"gave an ID token that does not verify ({result.error_description})"
            )
        claims = dict(result.claims)
        if not self.issuer_ok(claims, issuer):
            raise upstream_failure("gave an ID token of another issuer")
        if claims.get("nonce") != nonce:
            raise upstream_failure("gave an ID token for another sign-in (nonce)")
        return claims


__all__ = [
    "DEFAULT_DISCOVERY_TTL",
    "DEFAULT_UPSTREAM_TIMEOUT",
    "TOKEN_ONLY_CLAIMS",
    "OidcUpstream",
    "Upstream",
    "text_claim",
]
