"""What a token verifier answers, and the identity a verified request carries."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from mcpkit._exceptions import MCPError


@dataclass(frozen=True, slots=True)
class AuthResult:
    """A verifier's verdict on one access token.

    ``resource`` is the audience the token carries (a string, or several for a JWT with a
    list ``aud``); ``jkt`` is the SHA-256 JWK thumbprint the token is bound to (``cnf.jkt``,
    RFC 9449) when it is a DPoP-bound token. ``error_description`` is sent back to the
    client in the challenge when ``ok`` is false, so it must not leak secrets.
    """

    ok: bool
    scopes: Sequence[str] = ()
    resource: str | Sequence[str] | None = None
    subject: str | None = None
    client_id: str | None = None
    claims: Mapping[str, Any] = field(default_factory=dict)
    jkt: str | None = None
    expires_at: float | None = None
    error_description: str | None = None

    @classmethod
    def reject(cls, description: str | None = None) -> AuthResult:
        """A refusal, with the ``error_description`` the 401 challenge carries."""
        return cls(ok=False, error_description=description)

    @property
    def audiences(self) -> tuple[str, ...]:
        """The audiences (RFC 8707 resources) the token was issued for, as a tuple."""
        if self.resource is None:
            return ()
        if isinstance(self.resource, str):
            return (self.resource,)
        return tuple(self.resource)


@dataclass(frozen=True, slots=True)
class AuthInfo:
    """The verified identity of a request, as handlers, guards and tools see it."""

    subject: str | None
    scopes: tuple[str, ...]
    token: str
    claims: Mapping[str, Any] = field(default_factory=dict)
    client_id: str | None = None
    resource: str | Sequence[str] | None = None
    expires_at: float | None = None
    #: The thumbprint of the DPoP key the request proved possession of (DPoP requests only).
    dpop_jkt: str | None = None

    def has_scopes(self, *scopes: str) -> bool:
        """Whether the token grants every one of ``scopes``."""
        granted = set(self.scopes)
        return all(scope in granted for scope in scopes)

    def __repr__(self) -> str:  # never print the token
        return (
            f"AuthInfo(subject={self.subject!r}, scopes={self.scopes!r}, client_id={self.client_id!r}, "
            f"dpop={self.dpop_jkt is not None})"
        )


#: The identity of the request being served, set by the HTTP auth gate around the handler.
CURRENT_AUTH: ContextVar[AuthInfo | None] = ContextVar("mcp_auth", default=None)

#: The ASGI scope key the gate stores the ``AuthInfo`` under.
SCOPE_KEY = "mcp.auth"


def current_auth() -> AuthInfo | None:
    """The ``AuthInfo`` of the HTTP request being served (None without auth)."""
    return CURRENT_AUTH.get()


def session_owner(auth: AuthInfo | None) -> str | None:
    """The identity a session is bound to: None without auth, else a digest of the token's
    issuer, client id and subject (the same person through another client is another
    owner). A token naming neither a subject nor a client binds the session to the token
    itself. A digest, so stored session records name no user."""
    if auth is None:
        return None
    if auth.subject is None and auth.client_id is None:
        material = json.dumps(["token", auth.token])
    else:
        issuer = auth.claims.get("iss")
        material = json.dumps(
            ["id", issuer if isinstance(issuer, str) else None, auth.client_id, auth.subject]
        )
    return "sha256:" + hashlib.sha256(material.encode("utf-8")).hexdigest()


class OAuthError(MCPError):
    """An OAuth step failed (discovery, registration, authorization, token request)."""

    def __init__(
        self, message: str, *, error: str | None = None, status_code: int | None = None
    ) -> None:
        super().__init__(message)
        self.error = error
        self.status_code = status_code


__all__ = ["CURRENT_AUTH", "SCOPE_KEY", "AuthInfo", "AuthResult", "OAuthError", "current_auth"]
