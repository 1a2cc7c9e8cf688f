"""Records of Streamable HTTP sessions, kept where every instance can read them.

A record holds what the server needs to serve a session's next request anywhere: the
negotiated protocol version, the client's capabilities and info, the log level, whether
``notifications/initialized`` came, the resource subscriptions, and under bearer auth the
identity that owns the session (every backend keeps it, as part of the JSON record, so an
instance adopting the session checks it too). It is written when
``initialize`` succeeds and whenever one of those changes; an instance that gets a request
for a session it does not know reads the record and adopts the session.

The store enforces the session cap and the idle timeout for every instance at once: a
record expires ``idle_timeout`` seconds after it was last read, touched or saved, and
``create`` refuses a record past ``max_sessions`` live ones. Both bounds are the caller's
(the HTTP transport passes its options), so several transports may share one store.

It does not own the live side of a session (streams, waiting requests): that stays in the
process serving it (``mcpkit.transports.http._streamable.sessions``).
"""

from __future__ import annotations

import logging
import time
from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass, field, fields
from typing import Any

import msgspec

from mcpkit._exceptions import SessionLimitReached

__all__ = ["InMemorySessionStore", "SessionLimitReached", "SessionRecord", "SessionStore"]

logger = logging.getLogger("mcpkit.stores")


@dataclass(slots=True)
class SessionRecord:
    """What any instance needs to serve a session. ``created_at`` is epoch seconds.

    ``owner`` is the identity that created the session under bearer auth (a digest, see
    ``mcpkit.auth._types.session_owner``); None when auth was off. Records written before
    it existed read as None, and are then refused to every authenticated request.
    """

    session_id: str
    protocol_version: str | None = None
    client_capabilities: dict[str, Any] | None = None
    client_info: dict[str, Any] | None = None
    log_level: str | None = None
    initialized: bool = False
    subscriptions: list[str] = field(default_factory=list)
    created_at: float = 0.0
    owner: str | None = None

    def to_json(self) -> bytes:
        """The record as JSON bytes (what ``from_json`` reads back)."""
        return msgspec.json.encode(asdict(self))

    @classmethod
    def from_json(cls, data: bytes | str) -> SessionRecord:
        """A record from ``to_json``'s output, or from an older version's (``from_dict``)."""
        return cls.from_dict(msgspec.json.decode(data))

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> SessionRecord:
        """A record from its fields; keys this version does not know are dropped, so a
        record written by a newer instance still reads (rolling upgrades)."""
        known = {f.name for f in fields(cls)}
        return cls(**{key: value for key, value in raw.items() if key in known})


def read_session_record(session_id: str, data: bytes | str, where: str) -> SessionRecord | None:
    """The record ``where`` (a store) keeps for ``session_id``; None, with a warning, when
    ``data`` is not one (written by hand, cut short): the session is unknown, so its client
    starts a new one, and the other sessions are served."""
    try:
        return SessionRecord.from_json(data)
    except (ValueError, TypeError, AttributeError):
        logger.warning("session %s: unreadable record in %s; taken as unknown", session_id, where)
        return None


class SessionStore(ABC):
    """Where session records live; every method may raise ``StoreUnavailableError``."""

    @abstractmethod
    async def create(
        self, record: SessionRecord, *, max_sessions: int, idle_timeout: float
    ) -> None:
        """Add a new session. Raises ``SessionLimitReached`` when ``max_sessions`` live
        sessions exist (expired ones are dropped first)."""

    @abstractmethod
    async def get(self, session_id: str, *, idle_timeout: float) -> SessionRecord | None:
        """The session's record, its idle clock restarted; None when unknown or expired."""

    @abstractmethod
    async def touch(self, session_id: str, *, idle_timeout: float) -> bool:
        """Restart the session's idle clock; False when it is unknown or expired."""

    @abstractmethod
    async def save(self, record: SessionRecord, *, idle_timeout: float) -> bool:
        """Replace an existing record (its idle clock restarted); False when it is gone."""

    @abstractmethod
    async def delete(self, session_id: str) -> bool:
        """Forget a session; False when it was not there."""

    @abstractmethod
    async def count(self) -> int:
        """Live sessions (expired ones are dropped first)."""

    async def close(self) -> None:
        """Release what the store holds open (a no-op for memory)."""


class InMemorySessionStore(SessionStore):
    """Records in this process. The HTTP transport's default needs no record store at all
    (its live sessions are the records); this one lets several apps of one process share
    sessions, and is the reference for the contract the other backends pass."""

    def __init__(self) -> None:
        self._records: dict[str, tuple[float, bytes]] = {}  # id -> (expires_at, json)

    async def create(
        self, record: SessionRecord, *, max_sessions: int, idle_timeout: float
    ) -> None:
        if len(self._records) >= max_sessions:
            self._sweep()
            if len(self._records) >= max_sessions:
                raise SessionLimitReached(f"at most {max_sessions} sessions may be live at once")
        self._records[record.session_id] = (time.time() + idle_timeout, record.to_json())

    async def get(self, session_id: str, *, idle_timeout: float) -> SessionRecord | None:
        if not await self.touch(session_id, idle_timeout=idle_timeout):
            return None
        return SessionRecord.from_json(self._records[session_id][1])

    async def touch(self, session_id: str, *, idle_timeout: float) -> bool:
        found = self._records.get(session_id)
        now = time.time()
        if found is None:
            return False
        if found[0] <= now:
            del self._records[session_id]
            return False
        self._records[session_id] = (now + idle_timeout, found[1])
        return True

    async def save(self, record: SessionRecord, *, idle_timeout: float) -> bool:
        if not await self.touch(record.session_id, idle_timeout=idle_timeout):
            return False
        self._records[record.session_id] = (time.time() + idle_timeout, record.to_json())
        return True

    async def delete(self, session_id: str) -> bool:
        return self._records.pop(session_id, None) is not None

    async def count(self) -> int:
        self._sweep()
        return len(self._records)

    def _sweep(self) -> None:
        now = time.time()
        for session_id in [sid for sid, (expires, _) in self._records.items() if expires <= now]:
            del self._records[session_id]
