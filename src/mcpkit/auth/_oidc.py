"""``OidcVerifier``: JWT access tokens of an issuer found by OpenID Connect discovery.

Given only the issuer, it reads ``{issuer}/.well-known/openid-configuration``, checks that
the document names that same issuer (OpenID Connect Discovery 1.0, section 4.3: a document
for another issuer is refused, whoever serves it), takes its ``jwks_uri`` and checks tokens
with a ``JwtVerifier`` on those keys, ``iss`` included. The document is read again after
``discovery_ttl``; a ``jwks_uri`` that changed brings a new key cache.

When the document or the keys cannot be had (and no earlier copy is cached), it raises
``VerifierUnavailableError``: the gate answers 503 with ``Retry-After``, not 401.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import urlsplit

import httpx

from mcpkit.auth._jwt import (
    DEFAULT_JWKS_MAX_BYTES,
    DEFAULT_JWKS_MAX_KEYS,
    DEFAULT_JWKS_MIN_REFRESH,
    DEFAULT_JWKS_TTL,
    DEFAULT_JWT_ALGORITHMS,
    DEFAULT_LEEWAY,
    JwksError,
    JwtVerifier,
)
from mcpkit.auth._types import AuthResult
from mcpkit.auth._unavailable import DEFAULT_RETRY_AFTER, VerifierUnavailableError, fetch_json

logger = logging.getLogger("mcpkit.auth")

OIDC_CONFIGURATION = "/.well-known/openid-configuration"
#: Seconds the discovery document is reused before it is read again.
DEFAULT_DISCOVERY_TTL = 3600.0
#: After a failed refresh, seconds before the next attempt (the old document serves).
DEFAULT_DISCOVERY_RETRY = 30.0
#: Largest discovery document read.
DEFAULT_MAX_DISCOVERY_BYTES = 256 * 1024
#: Seconds one discovery (or JWKS) request may take.
DEFAULT_DISCOVERY_TIMEOUT = 10.0
_LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1"})


def _checked_url(url: str, what: str) -> str:
    """``url`` when it is https (or http to a loopback host, for development), else an error."""
    parts = urlsplit(url)
    if parts.scheme == "https" and parts.netloc:
        return url
    if parts.scheme == "http" and (parts.hostname or "") in _LOOPBACK:
        return url
    raise ValueError(f"{what} must be an https URL (http only to a loopback host): {url!r}")


class OidcVerifier:
    """Checks JWT access tokens of ``issuer``, its keys found by OIDC discovery; its
    ``verify(token)`` is a ready ``BearerAuthConfig.verify``.

    ``audience``, ``leeway``, ``algorithms``, ``require_exp`` and the ``jwks_*`` bounds
    are ``JwtVerifier``'s. ``discovery_ttl`` (``DEFAULT_DISCOVERY_TTL``) is how long the
    discovery document is reused; a failed refresh keeps the previous one and is retried
    after ``discovery_retry`` seconds. The issuer must be https (http only to localhost).
    """

    def __init__(
        self,
        issuer: str,
        *,
        audience: str | Sequence[str] | None = None,
        leeway: float = DEFAULT_LEEWAY,
        algorithms: Sequence[str] = DEFAULT_JWT_ALGORITHMS,
        require_exp: bool = True,
        discovery_ttl: float = DEFAULT_DISCOVERY_TTL,
        discovery_retry: float = DEFAULT_DISCOVERY_RETRY,
        max_discovery_bytes: int = DEFAULT_MAX_DISCOVERY_BYTES,
        timeout: float = DEFAULT_DISCOVERY_TIMEOUT,
        jwks_ttl: float = DEFAULT_JWKS_TTL,
        jwks_min_refresh: float = DEFAULT_JWKS_MIN_REFRESH,
        jwks_max_keys: int = DEFAULT_JWKS_MAX_KEYS,
        jwks_max_bytes: int = DEFAULT_JWKS_MAX_BYTES,
        retry_after: int = DEFAULT_RETRY_AFTER,
        http_client: httpx.AsyncClient | None = None,
        clock: Callable[[], float] = time.time,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.issuer = _checked_url(issuer, "issuer")
        self.discovery_url = issuer.rstrip("/") + OIDC_CONFIGURATION
        self.audience = audience
        self.leeway = leeway
        self.algorithms = tuple(algorithms)
        self.require_exp = require_exp
        self.discovery_ttl = discovery_ttl
        self.discovery_retry = discovery_retry
        self.max_discovery_bytes = max_discovery_bytes
        self.timeout = timeout
        self.jwks_ttl = jwks_ttl
        self.jwks_min_refresh = jwks_min_refresh
        self.jwks_max_keys = jwks_max_keys
        self.jwks_max_bytes = jwks_max_bytes
        self.retry_after = retry_after
        self.clock = clock
        self.monotonic = monotonic
        self._http = http_client
        self._lock = asyncio.Lock()
        self._jwt: JwtVerifier | None = None
        self._next_refresh = float("-inf")
        #: The discovery document in use (None until first read).
        self.configuration: dict[str, Any] | None = None
        #: Discovery documents read (for monitoring and tests).
        self.discoveries = 0

    async def __call__(self, token: str) -> AuthResult:
        return await self.verify(token)

    async def verify(self, token: str) -> AuthResult:
        """The verdict on ``token``: signature by the issuer's keys, ``iss``, ``aud``,
        expiry. Raises ``VerifierUnavailableError`` when keys cannot be had at all."""
        verifier = await self._verifier()
        assert verifier.jwks is not None
        try:
            await verifier.jwks.get()
        except JwksError as exc:  # no key set ever fetched: nothing to judge with
            raise VerifierUnavailableError(
                f"the signing keys of {self.issuer} are unavailable: {exc}",
                retry_after=self.retry_after,
            ) from exc
        return await verifier.verify(token)

    async def _verifier(self) -> JwtVerifier:
        if self._jwt is not None and self.monotonic() < self._next_refresh:
            return self._jwt
        async with self._lock:
            if self._jwt is not None and self.monotonic() < self._next_refresh:
                return self._jwt
            try:
                document = await self._discover()
            except VerifierUnavailableError:
                if self._jwt is None:
                    raise
                logger.warning(
                    "refreshing %s failed; keeping the previous document",
                    self.discovery_url,
                    exc_info=True,
                )
                self._next_refresh = self.monotonic() + self.discovery_retry
                return self._jwt
            self._adopt(document)
            assert self._jwt is not None
            return self._jwt

    def _adopt(self, document: dict[str, Any]) -> None:
        jwks_uri = document["jwks_uri"]
        current = self._jwt
        if current is None or current.jwks is None or current.jwks.url != jwks_uri:
            self._jwt = JwtVerifier(
                jwks_url=jwks_uri,
                issuer=self.issuer,
                audience=self.audience,
                leeway=self.leeway,
                algorithms=self.algorithms,
                require_exp=self.require_exp,
                jwks_ttl=self.jwks_ttl,
                jwks_min_refresh=self.jwks_min_refresh,
                jwks_max_keys=self.jwks_max_keys,
                jwks_max_bytes=self.jwks_max_bytes,
                http_client=self._http,
                clock=self.clock,
            )
        self.configuration = document
        self._next_refresh = self.monotonic() + self.discovery_ttl

    def _unavailable(self, what: str) -> VerifierUnavailableError:
        return VerifierUnavailableError(
            f"OpenID discovery at {self.discovery_url} {what}", retry_after=self.retry_after
        )

    async def _discover(self) -> dict[str, Any]:
        self.discoveries += 1
        document = await fetch_json(
            self._http,
            "GET",
            self.discovery_url,
            timeout=self.timeout,
            max_bytes=self.max_discovery_bytes,
            unavailable=self._unavailable,
        )
        if not isinstance(document, dict):
            raise self._unavailable("answered something that is not a JSON object")
        if document.get("issuer") != self.issuer:
            raise self._unavailable(
                f"names the issuer {document.get('issuer')!r}, not {self.issuer!r}"
            )
        jwks_uri = document.get("jwks_uri")
        if not isinstance(jwks_uri, str):
            raise self._unavailable("has no jwks_uri")
        try:
            _checked_url(jwks_uri, "jwks_uri")
        except ValueError as exc:
            raise self._unavailable(str(exc)) from None
        return document


__all__ = ["DEFAULT_DISCOVERY_TTL", "OIDC_CONFIGURATION", "OidcVerifier"]
