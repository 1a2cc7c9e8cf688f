"""What the authorization server keeps: registered clients, authorizations waiting for the
user, one-time codes, refresh tokens and consents. Plain values, so any store (memory,
SQLite, Redis) can keep them as JSON (``as_dict`` / ``from_dict``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

_R = TypeVar("_R")


def _from_dict(cls: type[_R], data: Mapping[str, Any]) -> _R:
    names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    values = {k: (tuple(v) if isinstance(v, list) else v) for k, v in data.items() if k in names}
    identity = data.get("identity")
    if isinstance(identity, Mapping):  # a grant's user, a record of its own
        values["identity"] = UpstreamIdentity.from_dict(identity)
    return cls(**values)


class _Record:
    """JSON round trip of a record (tuples come back from lists)."""

    __slots__ = ()

    def as_dict(self) -> dict[str, Any]:
        """The record as JSON-ready values."""
        return dataclasses.asdict(self)  # type: ignore[call-overload,no-any-return]

    @classmethod
    def from_dict(cls: type[_R], data: Mapping[str, Any]) -> _R:
        """The record ``as_dict`` made."""
        return _from_dict(cls, data)


@dataclass(frozen=True, slots=True)
class ClientRecord(_Record):
    """A client registered at the proxy (RFC 7591). ``client_secret_hash``: the SHA-256 of
    its secret for a confidential client, "" for a public one."""

    client_id: str
    redirect_uris: tuple[str, ...]
    client_name: str = ""
    token_endpoint_auth_method: str = "none"
    client_secret_hash: str = ""
    grant_types: tuple[str, ...] = ("authorization_code", "refresh_token")
    scope: str = ""
    client_uri: str = ""
    created_at: float = 0.0


@dataclass(frozen=True, slots=True)
class UpstreamIdentity(_Record):
    """Who the upstream provider says the user is: its subject, email and name, the
    provider's name, and the claims it gave."""

    subject: str
    provider: str
    email: str | None = None
    name: str | None = None
    claims: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class PendingAuthorization(_Record):
    """An authorization request between the client's ``/authorize`` and the upstream
    callback: what the client asked, the browser it came from, and the proxy's own PKCE
    verifier, state and nonce for the upstream leg (set once the user consented)."""

    id: str
    client_id: str
    redirect_uri: str
    code_challenge: str
    state: str | None
    scopes: tuple[str, ...]
    resource: str
    browser: str
    expires_at: float
    #: The consent form's one-time token (the HMAC of it is what the form carries).
    csrf: str = ""
    upstream_state: str = ""
    upstream_verifier: str = ""
    upstream_nonce: str = ""


@dataclass(frozen=True, slots=True)
class AuthorizationCode(_Record):
    """A one-time code the proxy gave a client, and what it stands for. ``family``: the
    refresh-token family its tokens start (revoked when the code is used twice). ``used``:
    as the store found it when the code was taken (True: a second use)."""

    client_id: str
    redirect_uri: str
    code_challenge: str
    scopes: tuple[str, ...]
    resource: str
    identity: UpstreamIdentity
    family: str
    expires_at: float
    used: bool = False


@dataclass(frozen=True, slots=True)
class RefreshRecord(_Record):
    """A refresh token the proxy issued (kept under the hash of its value). ``used``: as
    the store found it when the token was taken (True: a reuse, the family is revoked)."""

    client_id: str
    scopes: tuple[str, ...]
    resource: str
    identity: UpstreamIdentity
    family: str
    expires_at: float
    used: bool = False
    #: The thumbprint of the DPoP key the token is bound to ("" when it is not): a refresh
    #: must prove possession of that key (RFC 9449 §5).
    jkt: str = ""


__all__ = [
    "AuthorizationCode",
    "ClientRecord",
    "PendingAuthorization",
    "RefreshRecord",
    "UpstreamIdentity",
]
