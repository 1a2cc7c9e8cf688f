"""What the proxy's endpoints share: its URLs, lifetimes and bounds (set by ``OAuthProxy``)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

#: Seconds an authorization may wait for the user (consent, sign-in upstream).
DEFAULT_PENDING_TTL = 10 * 60.0
#: Seconds a code the proxy issues is good for.
DEFAULT_CODE_TTL = 60.0
#: Seconds a refresh token is good for (each use gives a new one).
DEFAULT_REFRESH_TOKEN_TTL = 30 * 24 * 3600.0
#: Seconds a consent is remembered for one browser and client.
DEFAULT_CONSENT_TTL = 30 * 24 * 3600.0

#: The paths of the endpoints, under ``base_url``.
METADATA_PATH = "/.well-known/oauth-authorization-server"
AUTHORIZE_PATH = "/authorize"
TOKEN_PATH = "/token"
REGISTER_PATH = "/register"
REVOKE_PATH = "/revoke"
CONSENT_PATH = "/oauth/consent"
CALLBACK_PATH = "/oauth/callback"
JWKS_PATH = "/jwks"


@dataclass(slots=True)
class ProxySettings:
    """The proxy's URLs, lifetimes and bounds, as its endpoints read them."""

    base_url: str
    resource: str
    scopes_supported: tuple[str, ...] = ()
    pending_ttl: float = DEFAULT_PENDING_TTL
    code_ttl: float = DEFAULT_CODE_TTL
    refresh_token_ttl: float = DEFAULT_REFRESH_TOKEN_TTL
    consent_ttl: float = DEFAULT_CONSENT_TTL
    max_form_bytes: int = 64 * 1024
    #: DPoP (RFC 9449): the token endpoint binds tokens to the key a client proves, and
    #: ``bearer_auth()`` accepts them (None: DPoP proofs are ignored, tokens are Bearer).
    dpop_algorithms: tuple[str, ...] | None = None
    clock: Callable[[], float] = field(default=time.time)

    @property
    def issuer(self) -> str:
        """The issuer identifier: ``base_url`` without a trailing slash."""
        return self.base_url.rstrip("/")

    def url(self, path: str) -> str:
        """The absolute URL of an endpoint."""
        return f"{self.issuer}{path}"

    @property
    def secure(self) -> bool:
        """Whether the proxy is reached over HTTPS (cookies are then Secure)."""
        return urlsplit(self.base_url).scheme == "https"

    @property
    def cookie_path(self) -> str:
        """The path the browser cookie is sent on: the proxy's own."""
        return urlsplit(self.issuer).path or "/"

    @property
    def browser_cookie(self) -> str:
        """The name of the cookie that tells one browser from another (``__Host-`` where
        the browser enforces what it promises: HTTPS, path /)."""
        if self.secure and self.cookie_path == "/":
            return "__Host-mcpkit-browser"
        return "mcpkit-browser"


__all__ = [
    "AUTHORIZE_PATH",
    "CALLBACK_PATH",
    "CONSENT_PATH",
    "DEFAULT_CODE_TTL",
    "DEFAULT_CONSENT_TTL",
    "DEFAULT_PENDING_TTL",
    "DEFAULT_REFRESH_TOKEN_TTL",
    "JWKS_PATH",
    "METADATA_PATH",
    "REGISTER_PATH",
    "REVOKE_PATH",
    "TOKEN_PATH",
    "ProxySettings",
]
