"""Streamable HTTP sessions: the protocol state of each ``Mcp-Session-Id``, its standalone
(GET) stream, and the table that creates, finds, caps and expires them.

Alone, this process's table is the truth. With a ``SessionStore`` backend (``mcpkit.stores``)
the backend is: a session is written there once ``initialize`` succeeds and whenever its
state changes, the backend enforces the cap and the idle timeout for every instance, and
a session another instance created is *adopted* here from its record on first use. The
local entry is then a replica: dropping it when idle forgets nothing, and it checks back
with the backend at most every ``touch_interval`` seconds (so the hot path of a request
on a known session does no store I/O).

``max_sessions`` is one bound for the whole app: the legacy SSE sessions and WebSocket
connections it serves are counted here too (``admit_connection``), so that neither kind
slips past it. With a backend, which counts only Streamable HTTP sessions (across
instances), those connections are counted against this instance's replicas.

Under bearer auth a session belongs to the identity that created it (``owner``, see
``mcpkit.auth._types.session_owner``), kept in its record too: ``find_owned`` answers
None for another identity's session exactly as for an unknown one, so a session id alone
never lets anyone into someone else's session.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from os import urandom
from typing import TYPE_CHECKING, Any

from mcpkit._exceptions import SessionLimitReached, StoreUnavailableError
from mcpkit.server._engine.session import McpSession
from mcpkit.stores._sessions import SessionRecord
from mcpkit.transports.http._options import DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE_TIMEOUT
from mcpkit.transports.http._streamable.relay import StreamRelay
from mcpkit.transports.http._streamable.streams import SseStream

if TYPE_CHECKING:
    from mcpkit.stores._events import EventStore
    from mcpkit.stores._sessions import SessionStore

logger = logging.getLogger("mcpkit.http")

#: Longest time a shared session's replica goes without telling the backend it is in use.
DEFAULT_MAX_TOUCH_INTERVAL = 60.0
#: ``owned_here``'s owner for a lookup that checks no owner (``get``).
_ANY_OWNER: Any = object()

__all__ = ["SessionLimitReached", "StreamableSession", "StreamableSessionStore"]


class StreamableSession:
    """One Streamable HTTP session (or this instance's replica of a shared one)."""

    __slots__ = (
        "answer_headers",
        "calls",
        "closed",
        "created_at",
        "last_seen",
        "listener",
        "mcp",
        "owner",
        "relays",
        "saved",
        "session_id",
        "standalone",
        "store_seen",
        "streams",
    )

    def __init__(
        self,
        session_id: str,
        event_store: EventStore | None,
        retry_ms: int,
        *,
        shared: bool = False,
        owner: str | None = None,
    ) -> None:
        self.session_id = session_id
        #: The identity the session is bound to (None without auth).
        self.owner = owner
        self.standalone = SseStream("_get", session_id, event_store, retry_ms, relayed=shared)
        self.mcp = McpSession(self.standalone.write, session_id=session_id)
        self.streams: dict[str, SseStream] = {}
        self.last_seen = time.monotonic()
        self.closed = False
        self.created_at = time.time()
        # Shared sessions only: when the backend last confirmed the session, the state
        # last saved there, the GET relaying the standalone stream, and every relay.
        self.store_seen = self.last_seen
        self.saved: tuple[Any, ...] | None = None
        self.listener: StreamRelay | None = None
        self.relays: set[StreamRelay] | None = None
        #: Requests of this session running now (a call answered as JSON has no stream).
        self.calls = 0
        #: The headers of its answers, with the version they name (``response_headers``).
        self.answer_headers: tuple[str, list[tuple[bytes, bytes]]] | None = None

    def touch(self, now: float | None = None) -> None:
        """Mark the session used now (its idle timeout starts again); ``now``: the
        ``time.monotonic()`` the caller has just read. (The store's lookup sets
        ``last_seen`` itself: it runs on every request.)"""
        self.last_seen = time.monotonic() if now is None else now

    @property
    def protocol_version(self) -> str | None:
        """The version the session negotiated."""
        return self.mcp.protocol_version

    @property
    def busy(self) -> bool:
        """A stream is open or a call runs: the session must not expire."""
        return self.calls > 0 or bool(self.streams) or self.standalone.attached or bool(self.relays)

    # the shared record ----------------------------------------------------------------------

    def state(self, subscriptions: set[str]) -> tuple[Any, ...]:
        """What the record holds that may change after ``initialize``."""
        mcp = self.mcp
        return (mcp.protocol_version, mcp.initialized, mcp.log_level, frozenset(subscriptions))

    def record(self, subscriptions: set[str]) -> SessionRecord:
        """The session as a store keeps it (with its subscriptions)."""
        mcp = self.mcp
        return SessionRecord(
            self.session_id,
            protocol_version=mcp.protocol_version,
            client_capabilities=mcp.client_capabilities,
            client_info=mcp.client_info,
            log_level=mcp.log_level,
            initialized=mcp.initialized,
            subscriptions=sorted(subscriptions),
            created_at=self.created_at,
            owner=self.owner,
        )

    def apply(self, record: SessionRecord) -> None:
        """Take the protocol state of a stored record (adoption, or another instance's change)."""
        mcp = self.mcp
        mcp.initialize_seen = True
        mcp.protocol_version = record.protocol_version
        mcp.client_capabilities = record.client_capabilities
        mcp.client_info = record.client_info
        mcp.log_level = record.log_level
        mcp.initialized = record.initialized
        self.created_at = record.created_at or self.created_at
        self.owner = record.owner
        self.saved = self.state(set(record.subscriptions))

    def add_relay(self, relay: StreamRelay) -> None:
        """Keep a relay (a GET of this session served from the shared store)."""
        if self.relays is None:
            self.relays = set()
        self.relays.add(relay)

    def discard_relay(self, relay: StreamRelay) -> None:
        """Forget a relay that ended."""
        if self.relays is not None:
            self.relays.discard(relay)
        if self.listener is relay:
            self.listener = None

    def close_relays(self) -> None:
        """Close every relay of the session."""
        for relay in list(self.relays or ()):
            relay.close()


#: ``(session, ended)``: ended is False when only this instance's replica goes.
OnRemove = Callable[[StreamableSession, bool], Any]
OnAdopt = Callable[[StreamableSession, SessionRecord], Any]


class StreamableSessionStore:
    """This process's sessions, with a cap and idle expiry; with a ``backend``, replicas of
    the sessions it holds for every instance.

    Its size: one table answers every question about a session, here and across instances
    (create, find, adopt, persist, end, expire, count against ``max_sessions``); they share
    its tables and counts, which a split would pass between objects."""

    def __init__(
        self,
        *,
        max_sessions: int = DEFAULT_MAX_SESSIONS,
        idle_timeout: float = DEFAULT_SESSION_IDLE_TIMEOUT,
        backend: SessionStore | None = None,
        event_store: EventStore | None = None,
        retry_ms: int = 1000,
        touch_interval: float | None = None,
    ) -> None:
        self.max_sessions = max_sessions
        self.idle_timeout = idle_timeout
        self.backend = backend
        self.event_store = event_store
        self.retry_ms = retry_ms
        self.touch_interval = (
            touch_interval
            if touch_interval is not None
            else min(idle_timeout / 4, DEFAULT_MAX_TOUCH_INTERVAL)
        )
        #: Given to each session's McpSession (server-to-client request ids).
        self.request_id_prefix = ""
        self._sessions: dict[str, StreamableSession] = {}
        self._on_remove: list[OnRemove] = []
        self._on_adopt: list[OnAdopt] = []
        self._adopting: dict[str, asyncio.Future[StreamableSession | None]] = {}
        self._reaper: asyncio.Task[None] | None = None
        #: The app's legacy SSE sessions and WebSocket connections open now, counted
        #: against ``max_sessions`` with the sessions here (``admit_connection``).
        self.connections = 0

    @property
    def shared(self) -> bool:
        """Whether sessions live in a shared store (several instances)."""
        return self.backend is not None

    def on_remove(self, callback: OnRemove) -> None:
        """Call ``callback`` when a session is removed."""
        self._on_remove.append(callback)

    def on_adopt(self, callback: OnAdopt) -> None:
        """Call ``callback`` when a session held elsewhere is taken over here."""
        self._on_adopt.append(callback)

    def _new(
        self,
        session_id: str,
        event_store: EventStore | None,
        retry_ms: int,
        owner: str | None = None,
    ) -> StreamableSession:
        session = StreamableSession(
            session_id, event_store, retry_ms, shared=self.shared, owner=owner
        )
        session.mcp.request_id_prefix = self.request_id_prefix
        self._sessions[session_id] = session
        self._start_reaper()
        return session

    def create(
        self, event_store: EventStore | None, retry_ms: int, *, owner: str | None = None
    ) -> StreamableSession:
        """A new session with a fresh unguessable id, bound to ``owner``; raises
        ``SessionLimitReached`` (alone: the backend applies the cap when the session is
        stored, see ``persist``; it knows nothing of the other connections counted here)."""
        if (not self.shared or self.connections) and not self._has_room():
            raise SessionLimitReached(f"at most {self.max_sessions} sessions may be live at once")
        # 192 random bits as hex: about a quarter of token_urlsafe's cost, on every session made.
        return self._new(urandom(24).hex(), event_store, retry_ms, owner)

    @property
    def live(self) -> int:
        """The sessions held here and the other connections counted with them."""
        return len(self._sessions) + self.connections

    def _has_room(self) -> bool:
        if self.live < self.max_sessions:
            return True
        self.expire_idle()
        return self.live < self.max_sessions

    def admit_connection(self) -> bool:
        """Count a legacy SSE session or a WebSocket connection of the app against
        ``max_sessions``: False, nothing counted, when the app has as many as it may; else
        True, and ``release_connection`` when it ends."""
        if not self._has_room():
            return False
        self.connections += 1
        return True

    def release_connection(self) -> None:
        """A connection counted by ``admit_connection`` ended."""
        self.connections -= 1

    def get(self, session_id: str) -> StreamableSession | None:
        """This process's session (no backend): None when unknown or idle too long."""
        return self.owned_here(session_id, _ANY_OWNER)

    async def find(self, session_id: str) -> StreamableSession | None:
        """The session, adopted from the backend when this instance does not hold it yet;
        None when unknown or expired. Raises ``StoreUnavailableError``."""
        backend = self.backend
        if backend is None:
            return self.get(session_id)
        session = self._sessions.get(session_id)
        if session is None:
            return await self._adopt(session_id)
        now = time.monotonic()
        if now - session.store_seen < self.touch_interval:
            session.last_seen = now
            return session
        if not await backend.touch(session_id, idle_timeout=self.idle_timeout):
            self.remove(session_id)  # expired, or ended by another instance
            return None
        session.store_seen = session.last_seen = time.monotonic()
        return session

    async def find_owned(self, session_id: str, owner: str | None) -> StreamableSession | None:
        """``find``, for a request made by ``owner`` (``session_owner`` of its identity):
        None also when the session belongs to someone else, the answer an unknown session
        gets, so nothing tells the two apart. Owners must match exactly: a session made
        without auth (or a record stored before owners were) is no one's, and refused to
        every authenticated request; one made under auth is refused to a request without.
        Another identity's attempt does not keep the session alive here. Raises
        ``StoreUnavailableError``."""
        if self.backend is None:
            return self.owned_here(session_id, owner)
        if self._held_by_another(session_id, owner):
            return None
        session = await self.find(session_id)
        if session is not None and session.owner != owner:
            self._refused(session_id)
            return None
        return session

    def owned_here(self, session_id: str, owner: str | None) -> StreamableSession | None:
        """``find_owned`` of a table with no backend, which has nothing to wait for: what
        every POST of an in-memory session calls, with no coroutine and one lookup; ``get``
        when ``owner`` is ``_ANY_OWNER``. A session idle too long is dropped, and one used is
        marked used now (its idle timeout starts again), unless another identity asked."""
        session = self._sessions.get(session_id)
        if session is None:
            return None
        if session.owner != owner and owner is not _ANY_OWNER:
            self._refused(session_id)
            return None
        now = time.monotonic()
        if now - session.last_seen > self.idle_timeout and not session.busy:
            self.remove(session_id)
            return None
        session.last_seen = now
        return session

    def _held_by_another(self, session_id: str, owner: str | None) -> bool:
        """Whether this instance holds the session for an identity other than ``owner``
        (refused, and logged, before the lookup could keep it alive)."""
        held = self._sessions.get(session_id)
        if held is not None and held.owner != owner:
            self._refused(session_id)
            return True
        return False

    @staticmethod
    def _refused(session_id: str) -> None:
        logger.info("session %s refused: it belongs to another identity", session_id)

    async def _adopt(self, session_id: str) -> StreamableSession | None:
        pending = self._adopting.get(session_id)
        if pending is not None:
            return await asyncio.shield(pending)
        future: asyncio.Future[StreamableSession | None] = (
            asyncio.get_running_loop().create_future()
        )
        self._adopting[session_id] = future
        try:
            session = await self._load(session_id)
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: concurrent waiters get it too
            raise
        finally:
            self._adopting.pop(session_id, None)
        future.set_result(session)
        return session

    async def _load(self, session_id: str) -> StreamableSession | None:
        record = await self.backend.get(session_id, idle_timeout=self.idle_timeout)  # type: ignore[union-attr]
        if record is None:
            return None
        session = self._sessions.get(session_id)
        if session is not None:
            return session
        session = self._new(session_id, self.event_store, self.retry_ms)
        session.apply(record)
        for callback in self._on_adopt:
            callback(session, record)
        return session

    async def persist(self, session: StreamableSession, subscriptions: set[str]) -> None:
        """Store a session whose ``initialize`` succeeded; raises ``SessionLimitReached``
        (the cap, across instances) or ``StoreUnavailableError``."""
        if self.backend is None:
            return
        await self.backend.create(
            session.record(subscriptions),
            max_sessions=self.max_sessions,
            idle_timeout=self.idle_timeout,
        )
        session.saved = session.state(subscriptions)
        session.store_seen = time.monotonic()

    async def save_if_changed(
        self, session: StreamableSession, subscriptions: set[str]
    ) -> SessionRecord | None:
        """Store the session's state when it changed since last stored; returns the record
        written (None when nothing changed). Raises ``StoreUnavailableError``."""
        state = session.state(subscriptions)
        if self.backend is None or state == session.saved or session.saved is None:
            return None
        record = session.record(subscriptions)
        if await self.backend.save(record, idle_timeout=self.idle_timeout):
            session.saved = state
            session.store_seen = time.monotonic()
            return record
        return None

    async def end(self, session_id: str) -> bool:
        """End a session everywhere (DELETE); False when no one knew it."""
        deleted = False
        if self.backend is not None:
            deleted = await self.backend.delete(session_id)
        return self.remove(session_id) is not None or deleted

    def remove(self, session_id: str, *, ended: bool = True) -> StreamableSession | None:
        """Forget a session here. ``ended=False`` drops only this instance's replica of a
        shared session (it lives on in the backend)."""
        session = self._sessions.pop(session_id, None)
        if session is None:
            return None
        session.closed = True
        session.mcp.close()
        session.standalone.close()
        session.close_relays()
        for callback in self._on_remove:
            callback(session, ended)
        return session

    def expire_idle(self) -> int:
        """Remove sessions idle past the timeout (with no open stream); returns how many.
        Shared sessions only lose their replica here: the backend expires the session."""
        cutoff = time.monotonic() - self.idle_timeout
        stale = [sid for sid, s in self._sessions.items() if s.last_seen < cutoff and not s.busy]
        for sid in stale:
            self.remove(sid, ended=not self.shared)
        return len(stale)

    async def touch_busy(self) -> None:
        """Keep the backend's records of sessions busy here (a long call, an open GET) alive."""
        backend = self.backend
        if backend is None:
            return
        due = time.monotonic() - self.touch_interval
        for session in [s for s in self._sessions.values() if s.busy and s.store_seen < due]:
            try:
                alive = await backend.touch(session.session_id, idle_timeout=self.idle_timeout)
            except StoreUnavailableError as exc:
                logger.warning("could not keep session %s alive: %s", session.session_id, exc)
                return
            if alive:
                session.store_seen = time.monotonic()
            else:
                self.remove(session.session_id)

    def _start_reaper(self) -> None:
        if self._reaper is None or self._reaper.done():
            self._reaper = asyncio.get_running_loop().create_task(self._reap())

    async def _reap(self) -> None:
        interval = max(1.0, min(60.0, self.idle_timeout / 4))
        if self.shared:
            interval = max(0.05, min(interval, self.touch_interval))
        while self._sessions:
            await asyncio.sleep(interval)
            self.expire_idle()
            await self.touch_busy()

    def local(self, session_id: str) -> StreamableSession | None:
        """This instance's replica, if it holds one (no expiry check, no store I/O)."""
        return self._sessions.get(session_id)

    def __len__(self) -> int:
        return len(self._sessions)

    def held(self) -> list[StreamableSession]:
        """The sessions (or replicas) this instance holds now."""
        return list(self._sessions.values())

    def close_all(self) -> None:
        """Remove every session held here (shutdown)."""
        for sid in list(self._sessions):
            self.remove(sid, ended=not self.shared)
        if self._reaper is not None:
            self._reaper.cancel()
