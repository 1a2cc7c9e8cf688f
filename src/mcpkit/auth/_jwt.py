"""A ready verifier for JWT access tokens (RFC 9068 style), keys from a JWKS.

``JwtVerifier(jwks_url=..., issuer=..., audience=...)`` fetches the authorization
server's JWKS with httpx and keeps it for ``jwks_ttl`` seconds; a token signed with a key
id the cached set does not know triggers one early refetch (key rotation), at most every
``jwks_min_refresh`` seconds. The set is bounded in bytes and in keys.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from joserfc import jws
from joserfc.errors import JoseError
from joserfc.jwk import KeySet, import_key
from joserfc.jws import JWSRegistry

from mcpkit._exceptions import AuthError
from mcpkit.auth._types import AuthResult

logger = logging.getLogger("mcpkit.auth")

#: Signature algorithms accepted by default: asymmetric only.
DEFAULT_JWT_ALGORITHMS: tuple[str, ...] = (
    "RS256",
    "RS384",
    "RS512",
    "PS256",
    "PS384",
    "PS512",
    "ES256",
    "ES384",
    "ES512",
    "EdDSA",
)
DEFAULT_JWKS_TTL = 300.0
DEFAULT_JWKS_MIN_REFRESH = 30.0
DEFAULT_JWKS_MAX_KEYS = 64
DEFAULT_JWKS_MAX_BYTES = 512 * 1024
DEFAULT_LEEWAY = 30.0
#: Largest token looked at, in characters.
MAX_TOKEN_LENGTH = 16 * 1024
_KTY_OF_ALG = {"RS": "RSA", "PS": "RSA", "ES": "EC", "Ed": "OKP", "HS": "oct"}


class _TokenRegistry(JWSRegistry):
    """joserfc's limits, with room for larger headers (``x5c``) and many claims."""

    max_header_length = 8192
    max_payload_length = MAX_TOKEN_LENGTH
    max_signature_length = 2048


def claim_audiences(aud: Any) -> tuple[str, ...]:
    """The audiences of an ``aud`` claim (RFC 7519: one string or a list of them)."""
    if isinstance(aud, str):
        return (aud,)
    if isinstance(aud, list):
        return tuple(a for a in aud if isinstance(a, str))
    return ()


class JwksError(AuthError):
    """The JWKS could not be fetched or was not a valid key set."""


def _load_key_set(data: Any, max_keys: int) -> KeySet:
    if isinstance(data, KeySet):
        return data
    if not isinstance(data, Mapping) or not isinstance(data.get("keys"), list):
        raise JwksError("a JWKS is an object with a 'keys' array")
    keys = []
    for entry in data["keys"][:max_keys]:
        if not isinstance(entry, Mapping):
            continue
        if entry.get("use") not in (None, "sig"):
            continue
        try:
            keys.append(import_key(dict(entry)))
        except (JoseError, ValueError, TypeError):
            logger.debug("skipping a JWKS key that does not import: kid=%r", entry.get("kid"))
    if not keys:
        raise JwksError("the JWKS holds no usable signing key")
    return KeySet(keys)


class JwksCache:
    """One JWKS URL's key set, fetched on demand and kept for ``ttl`` seconds."""

    def __init__(
        self,
        url: str,
        *,
        ttl: float = DEFAULT_JWKS_TTL,
        min_refresh: float = DEFAULT_JWKS_MIN_REFRESH,
        max_keys: int = DEFAULT_JWKS_MAX_KEYS,
        max_bytes: int = DEFAULT_JWKS_MAX_BYTES,
        http_client: Any = None,
        timeout: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.url = url
        self.ttl = ttl
        self.min_refresh = min_refresh
        self.max_keys = max_keys
        self.max_bytes = max_bytes
        self.timeout = timeout
        self.clock = clock
        self._http = http_client
        self._keys: KeySet | None = None
        self._fetched_at = float("-inf")
        self._lock = asyncio.Lock()
        self.fetches = 0

    async def get(self, *, refresh: bool = False) -> KeySet:
        """The key set; ``refresh`` refetches unless the last fetch was under ``min_refresh`` ago."""
        now = self.clock()
        if self._keys is not None and not refresh and now - self._fetched_at < self.ttl:
            return self._keys
        async with self._lock:
            now = self.clock()
            age = now - self._fetched_at
            if self._keys is not None and (
                age < self.min_refresh or (not refresh and age < self.ttl)
            ):
                return self._keys
            try:
                self._keys = await self._fetch()
                self._fetched_at = self.clock()
            except JwksError:
                if self._keys is None:
                    raise
                logger.warning(
                    "JWKS refresh from %s failed; keeping the cached keys", self.url, exc_info=True
                )
                self._fetched_at = self.clock() - self.ttl + self.min_refresh  # retry soon
            return self._keys

    async def _fetch(self) -> KeySet:
        import httpx

        self.fetches += 1
        client = self._http
        own = client is None
        if own:
            client = httpx.AsyncClient(timeout=self.timeout, follow_redirects=False)
        try:
            async with client.stream(
                "GET", self.url, headers={"accept": "application/json"}
            ) as response:
                if response.status_code != 200:
                    raise JwksError(f"GET {self.url} answered HTTP {response.status_code}")
                body = bytearray()
                async for chunk in response.aiter_bytes():
                    body += chunk
                    if len(body) > self.max_bytes:
                        raise JwksError(f"the JWKS at {self.url} exceeds {self.max_bytes} bytes")
        except httpx.HTTPError as exc:
            raise JwksError(f"GET {self.url} failed: {exc!r}") from exc
        finally:
            if own:
                await client.aclose()
        try:
            data = json.loads(bytes(body))
        except ValueError as exc:
            raise JwksError(f"the JWKS at {self.url} is not JSON") from exc
        return _load_key_set(data, self.max_keys)


class JwtVerifier:
    """Verifies JWT access tokens: signature (JWKS), ``exp``/``nbf``/``iat`` with ``leeway``,
    ``iss`` and ``aud``; its ``verify(token)`` is a ready ``BearerAuthConfig.verify``.

    Scopes come from ``scope`` (space-separated) or ``scp`` (list or string); the subject
    from ``sub``; the client from ``client_id`` or ``azp``; the DPoP binding from
    ``cnf.jkt``. Tokens typed ``dpop+jwt`` are refused (a DPoP proof is not a token).
    """

    def __init__(
        self,
        *,
        jwks: Mapping[str, Any] | KeySet | None = None,
        jwks_url: str | None = None,
        issuer: str | Sequence[str] | None = None,
        audience: str | Sequence[str] | None = None,
        leeway: float = DEFAULT_LEEWAY,
        algorithms: Sequence[str] = DEFAULT_JWT_ALGORITHMS,
        require_exp: bool = True,
        jwks_ttl: float = DEFAULT_JWKS_TTL,
        jwks_min_refresh: float = DEFAULT_JWKS_MIN_REFRESH,
        jwks_max_keys: int = DEFAULT_JWKS_MAX_KEYS,
        jwks_max_bytes: int = DEFAULT_JWKS_MAX_BYTES,
        http_client: Any = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if (jwks is None) == (jwks_url is None):
            raise ValueError("give exactly one of jwks= or jwks_url=")
        if "none" in algorithms:
            raise ValueError("'none' is never an acceptable algorithm")
        self.issuers = (issuer,) if isinstance(issuer, str) else tuple(issuer or ())
        self.audiences = (audience,) if isinstance(audience, str) else tuple(audience or ())
        self.leeway = leeway
        self.algorithms = tuple(algorithms)
        self.require_exp = require_exp
        self.clock = clock
        self._static = _load_key_set(jwks, jwks_max_keys) if jwks is not None else None
        self.jwks = (
            JwksCache(
                jwks_url,
                ttl=jwks_ttl,
                min_refresh=jwks_min_refresh,
                max_keys=jwks_max_keys,
                max_bytes=jwks_max_bytes,
                http_client=http_client,
            )
            if jwks_url is not None
            else None
        )

    async def _key_set(self, refresh: bool = False) -> KeySet:
        if self._static is not None:
            return self._static
        assert self.jwks is not None
        return await self.jwks.get(refresh=refresh)

    async def __call__(self, token: str) -> AuthResult:
        return await self.verify(token)

    async def verify(self, token: str) -> AuthResult:
        """Check a bearer token: signature against the key set, issuer, audience, expiry and
        required scopes; the identity it carries, or a refusal saying why."""
        if not token or len(token) > MAX_TOKEN_LENGTH or token.count(".") != 2:
            return AuthResult.reject("the access token is not a JWT")
        try:
            header = jws.extract_compact(token.encode("ascii"), registry=_TokenRegistry()).protected
        except (JoseError, ValueError, UnicodeError):
            return AuthResult.reject("the access token is not a well-formed JWT")
        alg = header.get("alg")
        if not isinstance(alg, str) or alg not in self.algorithms:
            return AuthResult.reject("the access token's algorithm is not accepted")
        if str(header.get("typ", "")).lower() in ("dpop+jwt", "application/dpop+jwt"):
            return AuthResult.reject("a DPoP proof is not an access token")
        try:
            keys = await self._key_set()
        except JwksError:
            logger.warning("cannot verify tokens: JWKS unavailable", exc_info=True)
            return AuthResult.reject("the token signing keys are unavailable")
        claims = self._check_signature(token, header, alg, keys)
        if claims is None and self.jwks is not None and self._unknown_kid(header, keys):
            try:
                keys = await self._key_set(refresh=True)
            except JwksError:
                keys = None  # type: ignore[assignment]
            if keys is not None:
                claims = self._check_signature(token, header, alg, keys)
        if claims is None:
            return AuthResult.reject("the access token signature does not verify")
        return self._check_claims(claims)

    @staticmethod
    def _unknown_kid(header: Mapping[str, Any], keys: KeySet) -> bool:
        kid = header.get("kid")
        return isinstance(kid, str) and all(k.kid != kid for k in keys.keys)

    @staticmethod
    def _check_signature(
        token: str, header: Mapping[str, Any], alg: str, keys: KeySet
    ) -> dict[str, Any] | None:
        kid = header.get("kid")
        kty = _KTY_OF_ALG.get(alg[:2])
        if isinstance(kid, str):
            candidates = [k for k in keys.keys if k.kid == kid]
        else:
            candidates = [k for k in keys.keys if k.key_type == kty]
        for key in candidates:
            if key.key_type != kty:
                continue
            try:
                payload = jws.deserialize_compact(
                    token, key, registry=_TokenRegistry(algorithms=[alg])
                ).payload
                claims = json.loads(payload)
            except (JoseError, ValueError, TypeError):
                continue
            return claims if isinstance(claims, dict) else None
        return None

    def _check_claims(self, claims: dict[str, Any]) -> AuthResult:
        now = self.clock()
        leeway = self.leeway

        def number(name: str) -> float | None:
            value = claims.get(name)
            if value is None:
                return None
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ValueError(name)
            return float(value)

        try:
            exp, nbf, iat = number("exp"), number("nbf"), number("iat")
        except ValueError as exc:
            return AuthResult.reject(f"the {exc} claim is not a number")
        if exp is None and self.require_exp:
            return AuthResult.reject("the access token has no exp claim")
        if exp is not None and now >= exp + leeway:
            return AuthResult.reject("the access token has expired")
        if nbf is not None and now < nbf - leeway:
            return AuthResult.reject("the access token is not valid yet")
        if iat is not None and iat > now + leeway:
            return AuthResult.reject("the access token was issued in the future")
        if self.issuers and claims.get("iss") not in self.issuers:
            return AuthResult.reject("the access token was issued by another authorization server")
        audiences = claim_audiences(claims.get("aud"))
        if self.audiences and not set(audiences).intersection(self.audiences):
            return AuthResult.reject("the access token was not issued for this resource")
        scope = claims.get("scope", claims.get("scp"))
        if isinstance(scope, str):
            scopes = tuple(scope.split())
        elif isinstance(scope, list):
            scopes = tuple(s for s in scope if isinstance(s, str))
        else:
            scopes = ()
        cnf = claims.get("cnf")
        jkt = cnf.get("jkt") if isinstance(cnf, dict) and isinstance(cnf.get("jkt"), str) else None
        sub = claims.get("sub")
        client_id = claims.get("client_id", claims.get("azp"))
        return AuthResult(
            ok=True,
            scopes=scopes,
            resource=audiences[0] if len(audiences) == 1 else (audiences or None),
            subject=sub if isinstance(sub, str) else None,
            client_id=client_id if isinstance(client_id, str) else None,
            claims=claims,
            jkt=jkt,
            expires_at=exp,
        )


__all__ = ["DEFAULT_JWT_ALGORITHMS", "JwksCache", "JwksError", "JwtVerifier"]
