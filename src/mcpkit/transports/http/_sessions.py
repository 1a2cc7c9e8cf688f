"""Streamable HTTP sessions: the protocol state of each ``Mcp-Session-Id``, its standalone
(GET) stream, and the store that creates, finds, caps and expires them."""

from __future__ import annotations

import asyncio
import secrets
import time
from typing import TYPE_CHECKING, Any, Callable

from mcpkit.server._session import McpSession
from mcpkit.transports.http._options import DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE_TIMEOUT
from mcpkit.transports.http._streams import SseStream

if TYPE_CHECKING:
    from mcpkit.stores._events import EventStore


class SessionLimitReached(Exception):
    """The store holds its maximum number of sessions."""


class StreamableSession:
    """One Streamable HTTP session."""

    __slots__ = ("session_id", "standalone", "mcp", "streams", "last_seen", "closed")

    def __init__(self, session_id: str, event_store: EventStore | None, retry_ms: int) -> None:
        self.session_id = session_id
        self.standalone = SseStream("_get", session_id, event_store, retry_ms)
        self.mcp = McpSession(self.standalone.write, session_id=session_id)
        self.streams: dict[str, SseStream] = {}
        self.last_seen = time.monotonic()
        self.closed = False

    def touch(self) -> None:
        self.last_seen = time.monotonic()

    @property
    def protocol_version(self) -> str | None:
        return self.mcp.protocol_version


OnRemove = Callable[[StreamableSession], Any]


class StreamableSessionStore:
    """In-process sessions with a cap and idle expiry."""

    def __init__(
        self,
        *,
        max_sessions: int = DEFAULT_MAX_SESSIONS,
        idle_timeout: float = DEFAULT_SESSION_IDLE_TIMEOUT,
    ) -> None:
        self.max_sessions = max_sessions
        self.idle_timeout = idle_timeout
        self._sessions: dict[str, StreamableSession] = {}
        self._on_remove: list[OnRemove] = []
        self._reaper: asyncio.Task[None] | None = None

    def on_remove(self, callback: OnRemove) -> None:
        self._on_remove.append(callback)

    def create(self, event_store: EventStore | None, retry_ms: int) -> StreamableSession:
        """A new session with a fresh unguessable id; raises ``SessionLimitReached``."""
        if len(self._sessions) >= self.max_sessions:
            self.expire_idle()
            if len(self._sessions) >= self.max_sessions:
                raise SessionLimitReached
        session = StreamableSession(secrets.token_urlsafe(24), event_store, retry_ms)
        self._sessions[session.session_id] = session
        self._start_reaper()
        return session

    def get(self, session_id: str) -> StreamableSession | None:
        session = self._sessions.get(session_id)
        if session is None:
            return None
        if time.monotonic() - session.last_seen > self.idle_timeout and not session.streams:
            self.remove(session_id)
            return None
        session.touch()
        return session

    def remove(self, session_id: str) -> StreamableSession | None:
        session = self._sessions.pop(session_id, None)
        if session is None:
            return None
        session.closed = True
        session.mcp.close()
        session.standalone.close()
        for callback in self._on_remove:
            callback(session)
        return session

    def expire_idle(self) -> int:
        """Remove sessions idle past the timeout (with no open stream); returns how many."""
        cutoff = time.monotonic() - self.idle_timeout
        stale = [
            sid for sid, s in self._sessions.items()
            if s.last_seen < cutoff and not s.streams and not s.standalone.attached
        ]
        for sid in stale:
            self.remove(sid)
        return len(stale)

    def _start_reaper(self) -> None:
        if self._reaper is None or self._reaper.done():
            self._reaper = asyncio.get_running_loop().create_task(self._reap())

    async def _reap(self) -> None:
        interval = max(1.0, min(60.0, self.idle_timeout / 4))
        while self._sessions:
            await asyncio.sleep(interval)
            self.expire_idle()

    def __len__(self) -> int:
        return len(self._sessions)

    def close_all(self) -> None:
        for sid in list(self._sessions):
            self.remove(sid)
        if self._reaper is not None:
            self._reaper.cancel()
