"""SSE events kept for ``Last-Event-ID`` resumption.

Event ids are ``{session_id}:{seq}`` with one sequence per session; each event also records
the stream it was sent on, so a resumed stream replays only its own events.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import deque
from dataclasses import dataclass
from typing import Any, Awaitable, Callable

#: Events kept per session; older ones are dropped first.
DEFAULT_MAX_EVENTS = 1000
#: Sessions whose events are kept at once; the least recently written goes first.
DEFAULT_MAX_SESSIONS = 10_000


@dataclass(frozen=True, slots=True)
class StoredEvent:
    event_id: str
    stream_id: str
    message: dict[str, Any] | None  # None: a priming event (id only)


SendEvent = Callable[[StoredEvent], Awaitable[None]]


def parse_event_id(event_id: str) -> tuple[str, int] | None:
    """(session id, sequence number) of an id we issued; None for a foreign id."""
    session_id, sep, seq = event_id.rpartition(":")
    if not sep or not seq.isdigit():
        return None
    return session_id, int(seq)


class EventStore(ABC):
    """Where SSE events wait for a client that may reconnect."""

    @abstractmethod
    async def store_event(self, session_id: str, stream_id: str, message: dict[str, Any] | None) -> str:
        """Keep one event; returns its id."""

    @abstractmethod
    async def replay_events_after(self, session_id: str, last_event_id: str, send: SendEvent) -> str | None:
        """Send the events of ``last_event_id``'s stream that came after it; returns that
        stream's id, or None when the id is unknown (evicted or never issued)."""

    @abstractmethod
    async def evict_session(self, session_id: str) -> None:
        """Forget a session's events."""


class InMemoryEventStore(EventStore):
    """A bounded ring of events per session, in this process."""

    def __init__(self, *, max_events: int = DEFAULT_MAX_EVENTS, max_sessions: int = DEFAULT_MAX_SESSIONS) -> None:
        self.max_events = max_events
        self.max_sessions = max_sessions
        self._events: dict[str, deque[tuple[int, StoredEvent]]] = {}
        self._seq: dict[str, int] = {}

    async def store_event(self, session_id: str, stream_id: str, message: dict[str, Any] | None) -> str:
        seq = self._seq.get(session_id, 0) + 1
        self._seq[session_id] = seq
        ring = self._events.get(session_id)
        if ring is None:
            if len(self._events) >= self.max_sessions:
                oldest = next(iter(self._events))
                self._forget(oldest)
            ring = self._events[session_id] = deque(maxlen=self.max_events)
        event = StoredEvent(f"{session_id}:{seq}", stream_id, message)
        ring.append((seq, event))
        return event.event_id

    async def replay_events_after(self, session_id: str, last_event_id: str, send: SendEvent) -> str | None:
        parsed = parse_event_id(last_event_id)
        if parsed is None or parsed[0] != session_id:
            return None
        ring = self._events.get(session_id, ())
        after = parsed[1]
        stream_id = next((event.stream_id for seq, event in ring if seq == after), None)
        if stream_id is None:
            return None
        for seq, event in list(ring):
            if seq > after and event.stream_id == stream_id and event.message is not None:
                await send(event)
        return stream_id

    async def evict_session(self, session_id: str) -> None:
        self._forget(session_id)

    def _forget(self, session_id: str) -> None:
        self._events.pop(session_id, None)
        self._seq.pop(session_id, None)

    def __len__(self) -> int:
        return sum(len(ring) for ring in self._events.values())
