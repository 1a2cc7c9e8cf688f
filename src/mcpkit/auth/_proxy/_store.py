"""Where the proxy keeps its state: ``ProxyStore``, the interface (async, so SQLite or
Redis fit behind it); ``TableProxyStore``, the records as JSON entries of named tables, on
which a backend gives four steps (``put``, ``get``, ``take``, ``pop``; ``SqliteProxyStore``,
``RedisProxyStore``); and ``MemoryProxyStore``, one process's tables.

Every table is bounded (a named default each) and every entry expires. Codes and refresh
tokens are kept under the SHA-256 of their value, never the value itself. Taking a code or
a refresh token marks it used in the same step and answers the record as it was found, so
a second use is told from a first even when two come at once.
"""

from __future__ import annotations

import json
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import replace
from types import MappingProxyType
from typing import Any, Generic, Protocol, TypeVar

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

#: The tables, by the name their keys and rows carry.
CLIENTS = "clients"
PENDING = "pending"
CODES = "codes"
REFRESH = "refresh"
CONSENTS = "consents"
REVOKED_FAMILIES = "revoked-families"
REVOKED_TOKENS = "revoked-tokens"
TABLES = (CLIENTS, PENDING, CODES, REFRESH, CONSENTS, REVOKED_FAMILIES, REVOKED_TOKENS)


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

    async def save_consent(
        self, browser: str, client_id: str, until: float, scopes: tuple[str, ...] = ()
    ) -> None:
        """Remember that the user of ``browser`` approved ``client_id`` for ``scopes`` (and
        for those approved before, while they last)."""
        ...

    async def has_consent(self, browser: str, client_id: str, scopes: tuple[str, ...] = ()) -> bool:
        """Whether the user of ``browser`` approved ``client_id`` for every one of
        ``scopes`` (and that has not expired): a client asking for more is asked about."""
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


class TableProxyStore:
    """The proxy's records as JSON entries of bounded, expiring tables (each bound a named
    default). Subclasses give ``put``, ``get``, ``take`` and ``pop``, each one atomic
    where the entries are kept; past a table's bound, ``put`` makes room, except for
    registered clients (``evict`` False): there it raises ``StoreFullError``. An entry
    carries its expiry on the store's ``clock``: past it, reads answer None."""

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
        limits = {
            CLIENTS: max_clients,
            PENDING: max_pending,
            CODES: max_codes,
            REFRESH: max_refresh_tokens,
            CONSENTS: max_consents,
            REVOKED_FAMILIES: max_revocations,
            REVOKED_TOKENS: max_revocations,
        }
        #: Each table's bound (at least 1).
        self.limits: Mapping[str, int] = MappingProxyType(
            {name: max(1, limit) for name, limit in limits.items()}
        )

    # -- the four steps a backend gives ------------------------------------------------------

    async def put(self, table: str, key: str, value: str, until: float, *, evict: bool) -> None:
        """Keep ``value`` under ``key`` until ``until`` (replacing any), within the bound."""
        raise NotImplementedError

    async def get(self, table: str, key: str) -> tuple[str, bool] | None:
        """(value, whether it was taken), None when absent or expired."""
        raise NotImplementedError

    async def take(self, table: str, key: str) -> tuple[str, bool] | None:
        """(value, whether it was taken before), the entry marked taken in the same step."""
        raise NotImplementedError

    async def pop(self, table: str, key: str) -> str | None:
        """The entry's value, removed in the same step."""
        raise NotImplementedError

    # -- ProxyStore ----------------------------------------------------------------------------

    async def save_client(self, client: ClientRecord) -> None:
        """Keep a registered client; raises ``StoreFullError`` when no room is left."""
        until = float("inf") if self.client_ttl is None else self.clock() + self.client_ttl
        await self.put(CLIENTS, client.client_id, _json(client), until, evict=False)

    async def get_client(self, client_id: str) -> ClientRecord | None:
        """The registered client, or None."""
        found = await self.get(CLIENTS, client_id)
        return None if found is None else ClientRecord.from_dict(json.loads(found[0]))

    async def save_pending(self, pending: PendingAuthorization) -> None:
        """Keep (or replace) an authorization waiting for the user."""
        await self.put(PENDING, pending.id, _json(pending), pending.expires_at, evict=True)

    async def get_pending(self, pending_id: str) -> PendingAuthorization | None:
        """The waiting authorization, or None."""
        found = await self.get(PENDING, pending_id)
        return None if found is None else PendingAuthorization.from_dict(json.loads(found[0]))

    async def take_pending(self, pending_id: str) -> PendingAuthorization | None:
        """The waiting authorization, removed."""
        value = await self.pop(PENDING, pending_id)
        return None if value is None else PendingAuthorization.from_dict(json.loads(value))

    async def save_code(self, key: str, code: AuthorizationCode) -> None:
        """Keep an issued code until it expires."""
        await self.put(CODES, key, _json(code), code.expires_at, evict=True)

    async def take_code(self, key: str) -> AuthorizationCode | None:
        """The code as it was, now marked used."""
        return _marked(AuthorizationCode, await self.take(CODES, key))

    async def save_refresh(self, key: str, record: RefreshRecord) -> None:
        """Keep a refresh token until it expires."""
        await self.put(REFRESH, key, _json(record), record.expires_at, evict=True)

    async def take_refresh(self, key: str) -> RefreshRecord | None:
        """The refresh token as it was, now marked used."""
        return _marked(RefreshRecord, await self.take(REFRESH, key))

    async def get_refresh(self, key: str) -> RefreshRecord | None:
        """The refresh token as it is."""
        return _marked(RefreshRecord, await self.get(REFRESH, key))

    async def revoke_family(self, family: str, until: float) -> None:
        """Revoke every token of a family."""
        await self.put(REVOKED_FAMILIES, family, "1", until, evict=True)

    async def family_revoked(self, family: str) -> bool:
        """Whether the family was revoked."""
        return await self.get(REVOKED_FAMILIES, family) is not None

    async def revoke_access_token(self, jti: str, until: float) -> None:
        """Refuse the access token ``jti`` until it expires."""
        await self.put(REVOKED_TOKENS, jti, "1", until, evict=True)

    async def access_token_revoked(self, jti: str) -> bool:
        """Whether the access token ``jti`` was revoked."""
        return await self.get(REVOKED_TOKENS, jti) is not None

    async def save_consent(
        self, browser: str, client_id: str, until: float, scopes: tuple[str, ...] = ()
    ) -> None:
        """Remember a consent, with the scopes approved before it."""
        key = f"{browser} {client_id}"
        before = await self.get(CONSENTS, key)
        approved = dict.fromkeys([*(before[0].split() if before else ()), *scopes])
        # A consent without scopes is kept as "-": an entry is never empty.
        await self.put(CONSENTS, key, " ".join(approved) or "-", until, evict=True)

    async def has_consent(self, browser: str, client_id: str, scopes: tuple[str, ...] = ()) -> bool:
        """Whether the consent is remembered, for every one of ``scopes``."""
        approved = await self.get(CONSENTS, f"{browser} {client_id}")
        return approved is not None and set(scopes) <= set(approved[0].split())


def _marked(cls: type[_G], found: tuple[str, bool] | None) -> _G | None:
    """The code or refresh token an entry holds, ``used`` when the entry was taken."""
    if found is None:
        return None
    record = cls.from_dict(json.loads(found[0]))
    return replace(record, used=record.used or found[1])


def _json(record: ClientRecord | PendingAuthorization | AuthorizationCode | RefreshRecord) -> str:
    return json.dumps(record.as_dict(), separators=(",", ":"))


class MemoryProxyStore(TableProxyStore):
    """``ProxyStore`` in this process's memory: one instance's state, gone at restart.
    Several workers or instances need a shared store (``SqliteProxyStore``,
    ``RedisProxyStore``). Past a table's bound its oldest entry is dropped."""

    def __init__(self, **bounds: Any) -> None:
        super().__init__(**bounds)
        self.tables: dict[str, ExpiringTable[tuple[str, bool]]] = {
            name: ExpiringTable(limit, self.clock) for name, limit in self.limits.items()
        }
        self.clients = self.tables[CLIENTS]
        self.pending = self.tables[PENDING]
        self.codes = self.tables[CODES]
        self.refresh_tokens = self.tables[REFRESH]
        self.consents = self.tables[CONSENTS]

    async def put(self, table: str, key: str, value: str, until: float, *, evict: bool) -> None:
        """Keep ``value`` under ``key`` until ``until``, within the table's bound."""
        self.tables[table].put(key, (value, False), until, evict=evict)

    async def get(self, table: str, key: str) -> tuple[str, bool] | None:
        """(value, taken), None when absent or expired."""
        return self.tables[table].get(key)

    async def take(self, table: str, key: str) -> tuple[str, bool] | None:
        """(value, taken before), the entry marked taken."""
        return self.tables[table].take(key, _taken)

    async def pop(self, table: str, key: str) -> str | None:
        """The entry's value, removed."""
        found = self.tables[table].pop(key)
        return None if found is None else found[0]


def _taken(entry: tuple[str, bool]) -> tuple[str, bool]:
    return entry[0], True


__all__ = [
    "DEFAULT_CLIENT_TTL",
    "DEFAULT_MAX_CLIENTS",
    "DEFAULT_MAX_CODES",
    "DEFAULT_MAX_CONSENTS",
    "DEFAULT_MAX_PENDING",
    "DEFAULT_MAX_REFRESH_TOKENS",
    "DEFAULT_MAX_REVOCATIONS",
    "TABLES",
    "ExpiringTable",
    "MemoryProxyStore",
    "ProxyStore",
    "StoreFullError",
    "TableProxyStore",
]
