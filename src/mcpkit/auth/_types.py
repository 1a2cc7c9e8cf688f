"""What a token verifier answers, the identity a verified request carries, and what a
tool, resource or prompt may require of that identity (``auth=`` on its decorator)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
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


#: A predicate on the caller's identity: ``(AuthInfo | None) -> bool``, sync (it runs on
#: every list and call of the component it guards, so it must not wait).
AuthPredicate = Callable[[AuthInfo | None], bool]


@dataclass(frozen=True, slots=True)
class AuthRequirement:
    """What a caller's identity must satisfy to see and use a tool, resource, resource
    template or prompt (``auth=`` on its decorator). A caller who does not satisfy it finds
    the component absent: not listed, and called, read or got as an unknown one would be.

    Made by ``require_scopes`` or ``require``; ``a & b`` requires both, ``a | b`` either.
    Calling one with an identity (None without auth) says whether it is satisfied.

    ``step_up`` (``require_scopes(..., step_up=True)``): the scopes a signed-in caller is
    asked to step up to instead: the component is listed for any signed-in caller, and a
    call without them is refused with those scopes named (HTTP 403 ``insufficient_scope``),
    so the client can get a token with them and call again. ``a & b`` and ``a | b`` do not
    step up: what they guard is hidden.
    """

    check: AuthPredicate
    description: str
    step_up: tuple[str, ...] = ()

    def __call__(self, auth: AuthInfo | None) -> bool:
        verdict = self.check(auth)
        if hasattr(verdict, "__await__"):
            close = getattr(verdict, "close", None)
            if close is not None:
                close()  # never awaited: no "coroutine was never awaited" warning
            raise TypeError(f"{self.description} returned an awaitable: an auth predicate is sync")
        return bool(verdict)

    def __and__(self, other: object) -> AuthRequirement:
        first, second = self, _operand(other)
        return AuthRequirement(lambda auth: first(auth) and second(auth), f"({first} & {second})")

    def __or__(self, other: object) -> AuthRequirement:
        first, second = self, _operand(other)
        return AuthRequirement(lambda auth: first(auth) or second(auth), f"({first} | {second})")

    def __str__(self) -> str:
        return self.description


def require_scopes(*scopes: str, step_up: bool = False) -> AuthRequirement:
    """A verified identity whose token grants every one of ``scopes``; a scope given as
    ``"a b"`` is two, as in an OAuth ``scope`` parameter. With no scope: any verified
    identity. Never satisfied without auth (no identity).

    ``step_up=True``: a signed-in caller without them still sees the component listed and
    is asked to step up when it calls (403 ``insufficient_scope`` over HTTP, naming the
    scopes its token has and these); without one it stays hidden."""
    wanted = tuple(part for scope in scopes for part in _scope_parts(scope))

    def check(auth: AuthInfo | None) -> bool:
        return auth is not None and auth.has_scopes(*wanted)

    if step_up and not wanted:
        raise ValueError("require_scopes(step_up=True) needs the scopes to step up to")
    shown = ", ".join(map(repr, wanted)) + (", step_up=True" if step_up else "")
    return AuthRequirement(check, f"require_scopes({shown})", wanted if step_up else ())


def require(predicate: AuthPredicate) -> AuthRequirement:
    """A requirement decided by ``predicate(auth)``, given the caller's ``AuthInfo`` (None
    without auth) and returning a bool. It must be a plain (sync) function: it runs on every
    list and call of what it guards. One that raises hides the component."""
    if isinstance(predicate, AuthRequirement):
        return predicate
    if not callable(predicate):
        raise TypeError(f"require() takes a predicate (AuthInfo | None) -> bool, not {predicate!r}")
    import inspect

    # a coroutine function, or an object whose __call__ is one
    if inspect.iscoroutinefunction(predicate) or inspect.iscoroutinefunction(
        type(predicate).__call__
    ):
        raise TypeError("an auth predicate must be sync: it runs on every list and call")
    name = getattr(predicate, "__qualname__", None) or type(predicate).__name__
    return AuthRequirement(predicate, f"require({name})")


def as_requirement(value: object) -> AuthRequirement | None:
    """The ``AuthRequirement`` of an ``auth=`` option: None (no requirement), a scope
    string, a collection of scopes (all required), a predicate, or a requirement."""
    if value is None or isinstance(value, AuthRequirement):
        return value
    if isinstance(value, str):
        if not value.split():
            raise ValueError("auth= got an empty scope")
        return require_scopes(value)
    if callable(value):
        return require(value)
    if isinstance(value, Iterable) and not isinstance(value, (bytes, Mapping)):
        scopes = list(value)
        if not scopes or not all(isinstance(scope, str) for scope in scopes):
            raise TypeError(f"auth= takes a non-empty collection of scope strings, not {value!r}")
        return require_scopes(*scopes)
    raise TypeError(
        "auth= takes a scope, a collection of scopes, a predicate (AuthInfo | None) -> bool "
        f"or require_scopes(...) / require(...), not {value!r}"
    )


def _operand(value: object) -> AuthRequirement:
    """The other side of ``&`` or ``|``: anything ``auth=`` takes but None."""
    requirement = as_requirement(value)
    if requirement is None:
        raise TypeError("an auth requirement cannot be combined with None")
    return requirement


def _scope_parts(scope: str) -> list[str]:
    if not isinstance(scope, str):
        raise TypeError(f"a scope is a string, not {scope!r}")
    return scope.split()


#: The identity of the request being served, set by the HTTP auth gate around the handler.
CURRENT_AUTH: ContextVar[AuthInfo | None] = ContextVar("mcp_auth", default=None)

#: The ASGI scope key the gate stores the ``AuthInfo`` under.
SCOPE_KEY = "mcp.auth"
#: Where the bearer gate that accepted the request is, in its ASGI scope: the transport
#: answers a step-up with the gate's challenge.
GATE_SCOPE_KEY = "mcp.auth_gate"


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


__all__ = [
    "CURRENT_AUTH",
    "GATE_SCOPE_KEY",
    "SCOPE_KEY",
    "AuthInfo",
    "AuthPredicate",
    "AuthRequirement",
    "AuthResult",
    "OAuthError",
    "as_requirement",
    "current_auth",
    "require",
    "require_scopes",
]
