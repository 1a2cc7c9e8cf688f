"""What an OAuth client keeps: its registrations (per authorization server) and its
tokens (per resource and authorization server), in memory or in a JSON file."""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Protocol, TypeVar, runtime_checkable

_Record = TypeVar("_Record")


def _from_dict(cls: type[_Record], data: dict[str, Any]) -> _Record:
    names = {f.name for f in fields(cls)}  # type: ignore[arg-type]
    return cls(**{k: v for k, v in data.items() if k in names})


_TEXT = (str,)
_OPTIONAL_TEXT = (str, type(None))
_OPTIONAL_TIME = (int, float, type(None))
# The type each member a file keeps must have (absent: its default).
_TOKEN_MEMBERS: tuple[tuple[str, tuple[type, ...]], ...] = (
    ("access_token", _TEXT),
    ("token_type", _TEXT),
    ("expires_at", _OPTIONAL_TIME),
    ("refresh_token", _OPTIONAL_TEXT),
    ("scope", _OPTIONAL_TEXT),
    ("issuer", _OPTIONAL_TEXT),
    ("resource", _OPTIONAL_TEXT),
)
_CLIENT_MEMBERS: tuple[tuple[str, tuple[type, ...]], ...] = (
    ("client_id", _TEXT),
    ("client_secret", _OPTIONAL_TEXT),
    ("token_endpoint_auth_method", _OPTIONAL_TEXT),
    ("issuer", _OPTIONAL_TEXT),
    ("client_secret_expires_at", _OPTIONAL_TIME),
    ("registration", (dict,)),
)


def _well_formed(
    entry: Any, members: tuple[tuple[str, tuple[type, ...]], ...], required: str
) -> bool:
    """Whether a kept ``entry`` has its ``required`` member, and each member of its type (a
    file edited by hand, or by another program, may hold anything)."""
    if not isinstance(entry, dict) or required not in entry:
        return False
    return all(
        isinstance(entry[name], types) and not isinstance(entry[name], bool)
        for name, types in members
        if name in entry
    )


@dataclass(slots=True)
class OAuthToken:
    """An access token and what came with it. ``expires_at`` is a wall-clock time."""

    access_token: str
    token_type: str = "Bearer"
    expires_at: float | None = None
    refresh_token: str | None = None
    scope: str | None = None
    #: The authorization server that issued it, and the resource it was asked for.
    issuer: str | None = None
    resource: str | None = None

    @classmethod
    def from_response(
        cls, body: dict[str, Any], *, issuer: str | None, resource: str | None, now: float
    ) -> OAuthToken:
        """The tokens of a token endpoint's JSON answer, with ``expires_in`` turned into an
        absolute time from ``now``."""
        expires_in = body.get("expires_in")
        expires_at = None
        if (
            isinstance(expires_in, (int, float))
            and not isinstance(expires_in, bool)
            and expires_in > 0
        ):
            expires_at = now + float(expires_in)
        scope = body.get("scope")
        return cls(
            access_token=str(body["access_token"]),
            token_type=str(body.get("token_type") or "Bearer"),
            expires_at=expires_at,
            refresh_token=body.get("refresh_token")
            if isinstance(body.get("refresh_token"), str)
            else None,
            scope=scope if isinstance(scope, str) else None,
            issuer=issuer,
            resource=resource,
        )

    @property
    def is_dpop(self) -> bool:
        """Whether the access token is DPoP-bound (``token_type`` ``DPoP``)."""
        return self.token_type.lower() == "dpop"

    @property
    def scheme(self) -> str:
        """The ``Authorization`` scheme to send it with: ``DPoP`` or ``Bearer``."""
        return "DPoP" if self.is_dpop else "Bearer"

    def expired(self, now: float | None = None, margin: float = 30.0) -> bool:
        """Whether the access token has expired, or will within ``margin`` seconds."""
        if self.expires_at is None:
            return False
        return (time.time() if now is None else now) >= self.expires_at - margin

    def to_dict(self) -> dict[str, Any]:
        """The tokens as a JSON-ready dict (what ``from_dict`` reads back)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> OAuthToken:
        """Tokens from ``to_dict``'s output; unknown members are ignored."""
        return _from_dict(cls, data)

    def __repr__(self) -> str:
        return f"OAuthToken(type={self.token_type!r}, scope={self.scope!r}, expires_at={self.expires_at!r}, issuer={self.issuer!r})"


@dataclass(slots=True)
class OAuthClientInformation:
    """A client's identity at one authorization server (pre-registered, CIMD, or DCR)."""

    client_id: str
    client_secret: str | None = None
    token_endpoint_auth_method: str | None = None
    #: The authorization server these credentials belong to (RFC 6749 §2.2: ids are per AS).
    issuer: str | None = None
    client_secret_expires_at: float | None = None
    registration: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The registration as a JSON-ready dict (what ``from_dict`` reads back)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> OAuthClientInformation:
        """A registration from ``to_dict``'s output; unknown members are ignored."""
        return _from_dict(cls, data)

    def __repr__(self) -> str:
        return f"OAuthClientInformation(client_id={self.client_id!r}, issuer={self.issuer!r}, method={self.token_endpoint_auth_method!r})"


@runtime_checkable
class TokenStorage(Protocol):
    """Where ``OAuthClientProvider`` keeps tokens and client registrations."""

    async def get_tokens(self, key: str) -> OAuthToken | None:
        """The tokens kept under ``key`` (a server's resource), if any."""

    async def set_tokens(self, key: str, tokens: OAuthToken | None) -> None:
        """Keep ``tokens`` under ``key``; None forgets them."""

    async def get_client(self, issuer: str) -> OAuthClientInformation | None:
        """The client registration kept for the authorization server ``issuer``, if any."""

    async def set_client(self, issuer: str, client: OAuthClientInformation | None) -> None:
        """Keep the client registration for ``issuer``; None forgets it."""


class MemoryTokenStorage:
    """Keeps everything in this process."""

    def __init__(self) -> None:
        self.tokens: dict[str, OAuthToken] = {}
        self.clients: dict[str, OAuthClientInformation] = {}

    async def get_tokens(self, key: str) -> OAuthToken | None:
        """The tokens kept under ``key``, if any."""
        return self.tokens.get(key)

    async def set_tokens(self, key: str, tokens: OAuthToken | None) -> None:
        """Keep ``tokens`` under ``key``; None forgets them."""
        if tokens is None:
            self.tokens.pop(key, None)
        else:
            self.tokens[key] = tokens

    async def get_client(self, issuer: str) -> OAuthClientInformation | None:
        """The client registration kept for ``issuer``, if any."""
        return self.clients.get(issuer)

    async def set_client(self, issuer: str, client: OAuthClientInformation | None) -> None:
        """Keep the client registration for ``issuer``; None forgets it."""
        if client is None:
            self.clients.pop(issuer, None)
        else:
            self.clients[issuer] = client


def _private_directories(directory: Path) -> None:
    """Make ``directory`` and its missing parents, each only for its owner (0700);
    directories already there are left as they are."""
    missing = []
    while not directory.exists() and directory != directory.parent:
        missing.append(directory)
        directory = directory.parent
    for path in reversed(missing):
        path.mkdir(mode=0o700, exist_ok=True)


class JsonFileTokenStorage:
    """Keeps tokens and registrations in one JSON file, readable by its owner only (0600;
    the directories it makes, 0700).

    Every change rewrites the file atomically (a temporary file renamed over it). The file
    holds secrets (refresh tokens, client secrets): keep it out of shared places. What is
    not well formed in it (not JSON, a member of the wrong type) is read as not kept, and
    written over at the next change.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._lock = asyncio.Lock()

    def _load(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text("utf-8"))
        except FileNotFoundError:
            return {"tokens": {}, "clients": {}}
        except ValueError:
            return {"tokens": {}, "clients": {}}
        if not isinstance(data, dict):
            return {"tokens": {}, "clients": {}}
        for section in ("tokens", "clients"):
            if not isinstance(data.get(section), dict):
                data[section] = {}
        return data

    def _save(self, data: dict[str, Any]) -> None:
        _private_directories(self.path.parent)
        fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", dir=str(self.path.parent))
        try:
            os.chmod(tmp, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(data, handle, indent=1, sort_keys=True)
            os.replace(tmp, self.path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise

    async def get_tokens(self, key: str) -> OAuthToken | None:
        """The tokens the file keeps under ``key``, if any."""
        entry = self._load()["tokens"].get(key)
        return (
            OAuthToken.from_dict(entry)
            if _well_formed(entry, _TOKEN_MEMBERS, "access_token")
            else None
        )

    async def set_tokens(self, key: str, tokens: OAuthToken | None) -> None:
        """Write ``tokens`` under ``key`` to the file (None removes them)."""
        async with self._lock:
            data = self._load()
            if tokens is None:
                data["tokens"].pop(key, None)
            else:
                data["tokens"][key] = tokens.to_dict()
            self._save(data)

    async def get_client(self, issuer: str) -> OAuthClientInformation | None:
        """The client registration the file keeps for ``issuer``, if any."""
        entry = self._load()["clients"].get(issuer)
        if not _well_formed(entry, _CLIENT_MEMBERS, "client_id"):
            return None
        return OAuthClientInformation.from_dict(entry)

    async def set_client(self, issuer: str, client: OAuthClientInformation | None) -> None:
        """Write the client registration for ``issuer`` to the file (None removes it)."""
        async with self._lock:
            data = self._load()
            if client is None:
                data["clients"].pop(issuer, None)
            else:
                data["clients"][issuer] = client.to_dict()
            self._save(data)


__all__ = [
    "JsonFileTokenStorage",
    "MemoryTokenStorage",
    "OAuthClientInformation",
    "OAuthToken",
    "TokenStorage",
]
