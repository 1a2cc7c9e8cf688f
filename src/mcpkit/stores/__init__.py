"""Durable state behind small interfaces: events for SSE resumption (sessions and tasks
follow). Memory is the default; other backends implement the same contract."""

from mcpkit.stores._events import DEFAULT_MAX_EVENTS, EventStore, InMemoryEventStore, StoredEvent

__all__ = ["DEFAULT_MAX_EVENTS", "EventStore", "InMemoryEventStore", "StoredEvent"]
