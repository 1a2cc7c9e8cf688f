"""SSE events kept for ``Last-Event-ID`` resumption, and their live feed.

Event ids are ``{session_id}:{seq}`` with one sequence per session; each event also records
the stream it was sent on, so a resumed stream replays only its own events.

``listen`` feeds every event of a session to a callback as it is stored, in sequence
order: an instance holding a client's stream relays what other instances write to it.
The in-process feed here serves the memory and SQLite stores (one process); the Redis
store feeds every instance through pub/sub.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from mcpkit.stores._bus import DELIVERY_ID

#: Events kept per session; older ones are dropped first.
DEFAULT_MAX_EVENTS = 1000
#: Sessions whose events are kept at once; the least recently written goes first.
DEFAULT_MAX_SESSIONS = 10_000
#: Broadcast deliveries remembered per session to store each at most once (memory store).
DEFAULT_MAX_DELIVERIES = 64


@dataclass(frozen=True, slots=True)
class StoredEvent:
    """One event of an ``EventStore``: its id, the stream it belongs to, and the message
    (None for a priming event, which carries its id only)."""

    event_id: str
    stream_id: str
    message: dict[str, Any] | None  # None: a priming event (id only)


@dataclass(frozen=True, slots=True)
class NewEvent:
    """One event to store in a batch (``EventStore.store_events``): what ``store_event``
    takes, and the delivery id it would read from ``DELIVERY_ID`` (None: store it
    regardless)."""

    session_id: str
    stream_id: str
    message: dict[str, Any] | None
    delivery: str | None = None


SendEvent = Callable[[StoredEvent], Awaitable[None]]
#: Called with each event as it is stored, or with None when events may have been missed
#: (the feed was interrupted: re-read the store from the last event seen).
EventListener = Callable[["StoredEvent | None"], None]
StopListening = Callable[[], Awaitable[None]]


def parse_event_id(event_id: str) -> tuple[str, int] | None:
    """(session id, sequence number) of an id we issued; None for a foreign id."""
    session_id, sep, seq = event_id.rpartition(":")
    if not sep or not seq.isdigit():
        return None
    return session_id, int(seq)


def event_seq(event_id: str) -> int:
    """The sequence number in an id we issued (0 for a foreign one)."""
    parsed = parse_event_id(event_id)
    return parsed[1] if parsed is not None else 0


class EventStore(ABC):
    """Where SSE events wait for a client that may reconnect.

    While ``DELIVERY_ID`` (``mcpkit.stores._bus``) is set, ``store_event`` keeps at most
    one event per (session, delivery id) and returns None for the others: a broadcast that
    several replicas of one session deliver reaches the client once.
    """

    _listeners: dict[str, list[EventListener]] | None = None

    @abstractmethod
    async def store_event(
        self, session_id: str, stream_id: str, message: dict[str, Any] | None
    ) -> str | None:
        """Keep one event; returns its id (None: this delivery was already stored)."""

    async def store_events(self, events: Sequence[NewEvent]) -> list[str | None]:
        """Keep several events (a fan-out: one notification for many sessions); returns
        their ids in order, None where a delivery was already stored. Each session's
        events are numbered in the order given. This default stores them one by one;
        a store with round trips to save does them in few (Redis: one per batch)."""
        ids: list[str | None] = []
        for event in events:
            token = DELIVERY_ID.set(event.delivery)
            try:
                ids.append(await self.store_event(event.session_id, event.stream_id, event.message))
            finally:
                DELIVERY_ID.reset(token)
        return ids

    @abstractmethod
    async def replay_events_after(
        self, session_id: str, last_event_id: str, send: SendEvent
    ) -> str | None:
        """Send the events of ``last_event_id``'s stream that came after it; returns that
        stream's id, or None when the id is unknown (evicted or never issued)."""

    @abstractmethod
    async def evict_session(self, session_id: str) -> None:
        """Forget a session's events."""

    def evict_session_now(self, session_id: str) -> bool:
        """Forget a session's events without waiting, when this store can (True); False
        (the default): the caller runs ``evict_session`` instead. A session ends on every
        DELETE, and a store in memory saves the caller a background task each time."""
        return False

    async def listen(self, session_id: str, listener: EventListener) -> StopListening:
        """Call ``listener(event)`` for each event of ``session_id`` stored from now on, in
        order; returns the coroutine function that stops it. Once this returns, no event
        stored afterwards is missed. This in-process feed sees the events stored through
        this object only."""
        if self._listeners is None:
            self._listeners = {}
        self._listeners.setdefault(session_id, []).append(listener)

        async def stop() -> None:
            listeners = (self._listeners or {}).get(session_id)
            if listeners and listener in listeners:
                listeners.remove(listener)
                if not listeners:
                    del self._listeners[session_id]  # type: ignore[union-attr]

        return stop

    def _announce(self, session_id: str, event: StoredEvent) -> None:
        listeners = self._listeners.get(session_id) if self._listeners else None
        if listeners:
            for listener in list(listeners):
                listener(event)

    async def close(self) -> None:
        """Release what the store holds open (a no-op for memory)."""


class InMemoryEventStore(EventStore):
    """A bounded ring of events per session, in this process."""

    def __init__(
        self, *, max_events: int = DEFAULT_MAX_EVENTS, max_sessions: int = DEFAULT_MAX_SESSIONS
    ) -> None:
        self.max_events = max_events
        self.max_sessions = max_sessions
        # Lists, not deques: an empty deque takes ~600 bytes, and most sessions keep a few events.
        self._events: dict[str, list[tuple[int, StoredEvent]]] = {}
        self._seq: dict[str, int] = {}
        self._deliveries: dict[str, deque[str]] = {}

    async def store_event(
        self, session_id: str, stream_id: str, message: dict[str, Any] | None
    ) -> str | None:
        delivery = DELIVERY_ID.get()
        if delivery is not None and self._seen(session_id, delivery):
            return None
        seq = self._seq.get(session_id, 0) + 1
        self._seq[session_id] = seq
        ring = self._events.get(session_id)
        if ring is None:
            if len(self._events) >= self.max_sessions:
                oldest = next(iter(self._events))
                self._forget(oldest)
            ring = self._events[session_id] = []
        event = StoredEvent(f"{session_id}:{seq}", stream_id, message)
        ring.append((seq, event))
        if len(ring) > self.max_events:
            del ring[0]
        if self._listeners:
            self._announce(session_id, event)
        return event.event_id

    def _seen(self, session_id: str, delivery: str) -> bool:
        recent = self._deliveries.get(session_id)
        if recent is None:
            recent = self._deliveries[session_id] = deque(maxlen=DEFAULT_MAX_DELIVERIES)
        if delivery in recent:
            return True
        recent.append(delivery)
        return False

    async def replay_events_after(
        self, session_id: str, last_event_id: str, send: SendEvent
    ) -> str | None:
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

    def evict_session_now(self, session_id: str) -> bool:
        self._forget(session_id)
        return True

    def _forget(self, session_id: str) -> None:
        self._events.pop(session_id, None)
        self._seq.pop(session_id, None)
        self._deliveries.pop(session_id, None)

    def __len__(self) -> int:
        return sum(len(ring) for ring in self._events.values())
