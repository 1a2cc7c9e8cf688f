"""``ProxyStore`` over named tables of JSON text, for the stores shared by several
instances (``SqliteProxyStore``, ``RedisProxyStore``): each implements four steps on one
entry (``put``, ``get``, ``take``, ``pop``), every one atomic where it is kept, and this
class turns the proxy's records into them and back.

The tables and their bounds are the memory store's (``DEFAULT_MAX_CLIENTS``...). Each entry
carries its expiry (the store's ``clock``, as every record's ``expires_at`` is): a get
past it answers None, whatever the backend still holds.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from types import MappingProxyType
from typing import TypeVar

from mcpkit.auth._proxy._records import (
    AuthorizationCode,
    ClientRecord,
    PendingAuthorization,
    RefreshRecord,
)
from mcpkit.auth._proxy._store import (
    DEFAULT_CLIENT_TTL,
    DEFAULT_MAX_CLIENTS,
    DEFAULT_MAX_CODES,
    DEFAULT_MAX_CONSENTS,
    DEFAULT_MAX_PENDING,
    DEFAULT_MAX_REFRESH_TOKENS,
    DEFAULT_MAX_REVOCATIONS,
)

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


def table_limits(
    *,
    max_clients: int,
    max_pending: int,
    max_codes: int,
    max_refresh_tokens: int,
    max_consents: int,
    max_revocations: int,
) -> Mapping[str, int]:
    """Each table's bound (at least 1)."""
    limits = {
        CLIENTS: max_clients,
        PENDING: max_pending,
        CODES: max_codes,
        REFRESH: max_refresh_tokens,
        CONSENTS: max_consents,
        REVOKED_FAMILIES: max_revocations,
        REVOKED_TOKENS: max_revocations,
    }
    return MappingProxyType({name: max(1, limit) for name, limit in limits.items()})


class TableProxyStore:
    """The proxy's records as JSON entries of bounded, expiring tables. Subclasses give
    ``put``, ``get``, ``take`` and ``pop``; past a table's bound, ``put`` makes room by
    dropping the entries that expire soonest, except for registered clients (``evict``
    False): there it raises ``StoreFullError``."""

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
        self.limits = table_limits(
            max_clients=max_clients,
            max_pending=max_pending,
            max_codes=max_codes,
            max_refresh_tokens=max_refresh_tokens,
            max_consents=max_consents,
            max_revocations=max_revocations,
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

    async def save_consent(self, browser: str, client_id: str, until: float) -> None:
        """Remember a consent."""
        await self.put(CONSENTS, f"{browser} {client_id}", "1", until, evict=True)

    async def has_consent(self, browser: str, client_id: str) -> bool:
        """Whether the consent is remembered."""
        return await self.get(CONSENTS, f"{browser} {client_id}") is not None


def _marked(cls: type[_G], found: tuple[str, bool] | None) -> _G | None:
    """The code or refresh token an entry holds, ``used`` when the entry was taken."""
    if found is None:
        return None
    record = cls.from_dict(json.loads(found[0]))
    return replace(record, used=record.used or found[1])


def _json(record: ClientRecord | PendingAuthorization | AuthorizationCode | RefreshRecord) -> str:
    return json.dumps(record.as_dict(), separators=(",", ":"))


__all__ = ["TABLES", "TableProxyStore", "table_limits"]
