"""The proxy's own access tokens: JWTs signed with its key (ES256 by default), ``aud`` the
MCP resource, and ``ProxyTokenVerifier``, which checks them in process (signature, issuer,
audience, expiry through ``JwtVerifier``, then the revocations the store holds)."""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Mapping
from typing import Any

from joserfc import jwt
from joserfc.jwk import ECKey, KeySet, import_key

from mcpkit.auth._jwt import JwtVerifier
from mcpkit.auth._proxy._records import UpstreamIdentity
from mcpkit.auth._proxy._store import ProxyStore
from mcpkit.auth._types import AuthResult

#: Seconds an access token is good for.
DEFAULT_ACCESS_TOKEN_TTL = 15 * 60
#: Seconds the clocks of instances sharing the proxy's key may differ by: what ``exp``, ``nbf``
#: and ``iat`` forgive. The proxy mints and checks its own tokens, so no more than that.
DEFAULT_CLOCK_SKEW = 5.0
#: The claims of the upstream identity copied into the access token (when present).
PROFILE_CLAIMS = ("email", "email_verified", "name", "preferred_username")


def load_signing_key(key: Any) -> Any:
    """A joserfc private key: ``key`` as given (a joserfc key), from a JWK dict or a PEM;
    None: a new P-256 key (tokens then last as long as the process)."""
    if key is None:
        return ECKey.generate_key("P-256", parameters={"kid": secrets.token_urlsafe(8)})
    if isinstance(key, Mapping):
        return import_key(dict(key))
    if isinstance(key, (str, bytes)):
        data = key.encode() if isinstance(key, str) else key
        for kind in ("EC", "RSA", "OKP"):
            try:
                return import_key(data, kind)
            except Exception:
                continue
        raise ValueError("signing_key is not a PEM EC, RSA or OKP private key")
    return key


def algorithm_of(key: Any) -> str:
    """The JWS algorithm a key signs with."""
    kind = key.key_type
    if kind == "EC":
        return {"P-256": "ES256", "P-384": "ES384", "P-521": "ES512"}[key.curve_name]
    if kind == "OKP":
        return "EdDSA"
    return "RS256"


class AccessTokens:
    """Mints and checks the proxy's access tokens."""

    def __init__(
        self,
        key: Any,
        issuer: str,
        resource: str,
        store: ProxyStore,
        *,
        ttl: float = DEFAULT_ACCESS_TOKEN_TTL,
        clock: Callable[[], float] = time.time,
        clock_skew: float = DEFAULT_CLOCK_SKEW,
    ) -> None:
        self.key = key
        self.algorithm = algorithm_of(key)
        if key.kid is None:
            key.ensure_kid()
        self.issuer = issuer
        self.resource = resource
        self.store = store
        self.ttl = ttl
        self.clock = clock
        self.clock_skew = clock_skew
        self._verifier: ProxyTokenVerifier | None = None

    def jwks(self) -> dict[str, Any]:
        """The public key set (what ``/jwks`` serves)."""
        public: dict[str, Any] = dict(KeySet([self.key]).as_dict(private=False))
        for entry in public["keys"]:
            entry.setdefault("use", "sig")
            entry.setdefault("alg", self.algorithm)
        return public

    def mint(
        self,
        identity: UpstreamIdentity,
        client_id: str,
        scopes: tuple[str, ...],
        resource: str,
        family: str,
        jkt: str = "",
    ) -> tuple[str, int]:
        """(access token, seconds it lasts) for ``identity`` at ``client_id``; bound to the
        DPoP key of thumbprint ``jkt`` when given (its ``cnf`` claim, RFC 9449 §6)."""
        now = int(self.clock())
        ttl = int(self.ttl)
        claims: dict[str, Any] = {
            "iss": self.issuer,
            "sub": identity.subject,
            "aud": resource,
            "iat": now,
            "exp": now + ttl,
            "jti": secrets.token_urlsafe(16),
            "client_id": client_id,
            "scope": " ".join(scopes),
            "upstream": identity.provider,
            "sid": family,
        }
        if jkt:
            claims["cnf"] = {"jkt": jkt}
        if identity.email is not None:
            claims["email"] = identity.email
        if identity.name is not None:
            claims["name"] = identity.name
        for name in PROFILE_CLAIMS:
            if name not in claims and name in identity.claims:
                claims[name] = identity.claims[name]
        header = {"alg": self.algorithm, "typ": "at+jwt", "kid": self.key.kid}
        return jwt.encode(header, claims, self.key, algorithms=[self.algorithm]), ttl

    def verifier(self) -> ProxyTokenVerifier:
        """The verifier of these tokens, for ``BearerAuthConfig.verify``."""
        if self._verifier is None:
            self._verifier = ProxyTokenVerifier(self)
        return self._verifier


class ProxyTokenVerifier:
    """Checks the proxy's access tokens in process: the JWT (signature with the proxy's
    key, issuer, audience the MCP resource, expiry), then that neither the token nor its
    refresh-token family was revoked. ``verify`` is a ready ``BearerAuthConfig.verify``."""

    def __init__(self, tokens: AccessTokens) -> None:
        self.tokens = tokens
        self.audience = tokens.resource
        self.jwt = JwtVerifier(
            jwks=tokens.jwks(),
            issuer=tokens.issuer,
            audience=tokens.resource,
            algorithms=[tokens.algorithm],
            clock=tokens.clock,
            leeway=tokens.clock_skew,
        )

    async def __call__(self, token: str) -> AuthResult:
        return await self.verify(token)

    async def verify(self, token: str) -> AuthResult:
        """The identity the token carries, or a refusal saying why."""
        result = await self.jwt.verify(token)
        if not result.ok:
            return result
        store = self.tokens.store
        jti, family = result.claims.get("jti"), result.claims.get("sid")
        if isinstance(jti, str) and await store.access_token_revoked(jti):
            return AuthResult.reject("the access token was revoked")
        if isinstance(family, str) and await store.family_revoked(family):
            return AuthResult.reject("the access token was revoked")
        return result


__all__ = [
    "DEFAULT_ACCESS_TOKEN_TTL",
    "AccessTokens",
    "ProxyTokenVerifier",
    "algorithm_of",
    "load_signing_key",
]
