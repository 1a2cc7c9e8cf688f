"""Where the proxy keeps its state: ``ProxyStore``, the interface (async, so SQLite or
Redis fit behind it), and ``MemoryProxyStore``, one process's tables.

Every table is bounded (a named default each) and every entry expires. Codes and refresh
tokens are kept under the SHA-256 of their value, never the value itself. Taking a code or
a refresh token marks it used in the same step and answers the record as it was found, so
a second use is told from a first even when two come at once.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import replace
from typing import Generic, Protocol, TypeVar

from mcpkit._exceptions import MCPError
from mcpkit.auth._proxy._records import (
    AuthorizationCode,
    ClientRecord,
    PendingAuthorization,
    RefreshRecord,
)

#: Registered clients kept; past it, registration is refused (503).
DEFAULT_MAX_CLIENTS = 10_000
#: Authorizations waiting for the user (login, consent); past it the oldest is dropped.
DEFAULT_MAX_PENDING = 10_000
#: Codes issued and not yet expired (a used one is kept to spot its reuse).
DEFAULT_MAX_CODES = 10_000
#: Refresh tokens live at once; past it the oldest is dropped (its holder signs in again).
DEFAULT_MAX_REFRESH_TOKENS = 100_000
#: Consents remembered (browser, client); past it the oldest is forgotten (asked again).
DEFAULT_MAX_CONSENTS = 100_000
#: Revoked access tokens and refresh-token families remembered until they expire.
DEFAULT_MAX_REVOCATIONS = 100_000
#: Seconds a registered client is kept unused (None: until the table's bound pushes it out).
DEFAULT_CLIENT_TTL: float | None = None

_V = TypeVar("_V")
_G = TypeVar("_G", AuthorizationCode, RefreshRecord)


class StoreFullError(MCPError):
    """A table that never drops live entries (registered clients) is full."""


class ProxyStore(Protocol):
    """What the proxy reads and writes; every method is a coroutine."""

    async def save_client(self, client: ClientRecord) -> None:
        """Keep a registered client; raises ``StoreFullError`` when no room is left."""
        ...

    async def get_client(self, client_id: str) -> ClientRecord | None:
        """The registered client, or None."""
        ...

    async def save_pending(self, pending: PendingAuthorization) -> None:
        """Keep (or replace) an authorization waiting for the user until its ``expires_at``."""
        ...

    async def get_pending(self, pending_id: str) -> PendingAuthorization | None:
        """The waiting authorization, or None when unknown or expired."""
        ...

    async def take_pending(self, pending_id: str) -> PendingAuthorization | None:
        """The waiting authorization, removed (good once)."""
        ...

    async def save_code(self, key: str, code: AuthorizationCode) -> None:
        """Keep an issued code under ``key`` (the hash of its value) until it expires."""
        ...

    async def take_code(self, key: str) -> AuthorizationCode | None:
        """The code as it was (``used`` True when taken before), now marked used."""
        ...

    async def save_refresh(self, key: str, record: RefreshRecord) -> None:
        """Keep a refresh token under ``key`` (the hash of its value) until it expires."""
        ...

    async def take_refresh(self, key: str) -> RefreshRecord | None:
        """The refresh token as it was (``used`` True when taken before), now marked used."""
        ...

    async def get_refresh(self, key: str) -> RefreshRecord | None:
        """The refresh token as it is, left as it is."""
        ...

    async def revoke_family(self, family: str, until: float) -> None:
        """Revoke every token of a family (refresh tokens and the access tokens naming it)."""
        ...

    async def family_revoked(self, family: str) -> bool:
        """Whether the family was revoked."""
        ...

    async def revoke_access_token(self, jti: str, until: float) -> None:
        """Refuse the access token ``jti`` until it would have expired anyway."""
        ...

    async def access_token_revoked(self, jti: str) -> bool:
        """Whether the access token ``jti`` was revoked."""
        ...

    async def save_consent(self, browser: str, client_id: str, until: float) -> None:
        """Remember that the user of ``browser`` approved ``client_id``."""
        ...

    async def has_consent(self, browser: str, client_id: str) -> bool:
        """Whether the user of ``browser`` approved ``client_id`` (and it has not expired)."""
        ...


class ExpiringTable(Generic[_V]):
    """Entries by key, each with its expiry, oldest first; at most ``limit``."""

    __slots__ = ("clock", "entries", "limit")

    def __init__(self, limit: int, clock: Callable[[], float]) -> None:
        self.limit = limit
        self.clock = clock
        self.entries: OrderedDict[str, tuple[float, _V]] = OrderedDict()

    def get(self, key: str) -> _V | None:
        entry = self.entries.get(key)
        if entry is None:
            return None
        if entry[0] <= self.clock():
            del self.entries[key]
            return None
        return entry[1]

    def _sweep(self) -> None:
        """Drop expired entries from the old end, up to a first live one."""
        now = self.clock()
        while self.entries:
            key, (until, _) = next(iter(self.entries.items()))
            if until > now:
                break
            del self.entries[key]

    def put(self, key: str, value: _V, until: float, *, evict: bool = True) -> None:
        self._sweep()
        self.entries.pop(key, None)
        if len(self.entries) >= self.limit and not evict:  # a scan only where nothing is dropped
            expired = [k for k, (u, _) in self.entries.items() if u <= self.clock()]
            for k in expired:
                del self.entries[k]
        while len(self.entries) >= self.limit:
            if not evict:
                raise StoreFullError(f"the table is full ({self.limit} entries)")
            self.entries.popitem(last=False)
        self.entries[key] = (until, value)

    def take(self, key: str, mark: Callable[[_V], _V]) -> _V | None:
        """The entry as it was, replaced by ``mark(entry)`` (its expiry kept)."""
        entry = self.entries.get(key)
        if entry is None or entry[0] <= self.clock():
            return self.get(key)
        self.entries[key] = (entry[0], mark(entry[1]))
        return entry[1]

    def pop(self, key: str) -> _V | None:
        value = self.get(key)
        self.entries.pop(key, None)
        return value

    def __len__(self) -> int:
        return len(self.entries)


def _used(record: _G) -> _G:
    return replace(record, used=True)


class MemoryProxyStore:
    """``ProxyStore`` in this process's memory: one instance's state, gone at restart.
    Several workers or instances need a shared store."""

    def __init__(
        self,
        *,
        max_clients: int = DEFAULT_MAX_CLIENTS,
        client_ttl: float | None = DEFAULT_CLIENT_TTL,
        max_pending: int = DEFAULT_MAX_PENDING,
        max_codes: int = DEFAULT_MAX_CODES,
        max_refresh_tokens: int = DEFAULT_MAX_REFRESH_TOKENS,
        max_consents: int = DEFAULT_MAX_CONSENTS,
        max_revocations: int = DEFAULT_MAX_REVOCATIONS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.clock = clock
        self.client_ttl = client_ttl
        self.clients: ExpiringTable[ClientRecord] = ExpiringTable(max_clients, clock)
        self.pending: ExpiringTable[PendingAuthorization] = ExpiringTable(max_pending, clock)
        self.codes: ExpiringTable[AuthorizationCode] = ExpiringTable(max_codes, clock)
        self.refresh_tokens: ExpiringTable[RefreshRecord] = ExpiringTable(max_refresh_tokens, clock)
        self.consents: ExpiringTable[bool] = ExpiringTable(max_consents, clock)
        self.revoked_families: ExpiringTable[bool] = ExpiringTable(max_revocations, clock)
        self.revoked_tokens: ExpiringTable[bool] = ExpiringTable(max_revocations, clock)

    async def save_client(self, client: ClientRecord) -> None:
        """Keep a registered client; raises ``StoreFullError`` when no room is left."""
        until = float("inf") if self.client_ttl is None else self.clock() + self.client_ttl
        self.clients.put(client.client_id, client, until, evict=False)

    async def get_client(self, client_id: str) -> ClientRecord | None:
        """The registered client, or None."""
        return self.clients.get(client_id)

    async def save_pending(self, pending: PendingAuthorization) -> None:
        """Keep (or replace) an authorization waiting for the user."""
        self.pending.put(pending.id, pending, pending.expires_at)

    async def get_pending(self, pending_id: str) -> PendingAuthorization | None:
        """The waiting authorization, or None."""
        return self.pending.get(pending_id)

    async def take_pending(self, pending_id: str) -> PendingAuthorization | None:
        """The waiting authorization, removed."""
        return self.pending.pop(pending_id)

    async def save_code(self, key: str, code: AuthorizationCode) -> None:
        """Keep an issued code until it expires."""
        self.codes.put(key, code, code.expires_at)

    async def take_code(self, key: str) -> AuthorizationCode | None:
        """The code as it was, now marked used."""
        return self.codes.take(key, _used)

    async def save_refresh(self, key: str, record: RefreshRecord) -> None:
        """Keep a refresh token until it expires."""
        self.refresh_tokens.put(key, record, record.expires_at)

    async def take_refresh(self, key: str) -> RefreshRecord | None:
        """The refresh token as it was, now marked used."""
        return self.refresh_tokens.take(key, _used)

    async def get_refresh(self, key: str) -> RefreshRecord | None:
        """The refresh token as it is."""
        return self.refresh_tokens.get(key)

    async def revoke_family(self, family: str, until: float) -> None:
        """Revoke every token of a family."""
        self.revoked_families.put(family, True, until)

    async def family_revoked(self, family: str) -> bool:
        """Whether the family was revoked."""
        return self.revoked_families.get(family) is not None

    async def revoke_access_token(self, jti: str, until: float) -> None:
        """Refuse the access token ``jti`` until it expires."""
        self.revoked_tokens.put(jti, True, until)

    async def access_token_revoked(self, jti: str) -> bool:
        """Whether the access token ``jti`` was revoked."""
        return self.revoked_tokens.get(jti) is not None

    async def save_consent(self, browser: str, client_id: str, until: float) -> None:
        """Remember a consent."""
        self.consents.put(f"{browser} {client_id}", True, until)

    async def has_consent(self, browser: str, client_id: str) -> bool:
        """Whether the consent is remembered."""
        return self.consents.get(f"{browser} {client_id}") is not None


__all__ = [
    "DEFAULT_CLIENT_TTL",
    "DEFAULT_MAX_CLIENTS",
    "DEFAULT_MAX_CODES",
    "DEFAULT_MAX_CONSENTS",
    "DEFAULT_MAX_PENDING",
    "DEFAULT_MAX_REFRESH_TOKENS",
    "DEFAULT_MAX_REVOCATIONS",
    "ExpiringTable",
    "MemoryProxyStore",
    "ProxyStore",
    "StoreFullError",
]
