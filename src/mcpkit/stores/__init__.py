"""Durable state behind small interfaces: session records, SSE events (for resumption and
for relaying between instances), tasks. Memory is the default; SQLite keeps one machine's
state across restarts; Redis (``mcpkit[redis]``) lets several instances serve the same
clients. Every backend passes the same contract tests."""

from mcpkit._exceptions import SessionLimitReached, StoreError, StoreUnavailableError
from mcpkit.stores._bus import InProcessMessageBus, MessageBus
from mcpkit.stores._events import DEFAULT_MAX_EVENTS, EventStore, InMemoryEventStore, StoredEvent
from mcpkit.stores._redis import RedisHub
from mcpkit.stores._redis_request_states import RedisUsedRequestStates
from mcpkit.stores._redis_stores import (
    RedisEventStore,
    RedisMessageBus,
    RedisSessionStore,
    redis_options,
)
from mcpkit.stores._redis_tasks import RedisTaskStore
from mcpkit.stores._sessions import InMemorySessionStore, SessionRecord, SessionStore
from mcpkit.stores._sqlite import FileEventStore, FileSessionStore
from mcpkit.stores._sqlite_tasks import SqliteTaskStore
from mcpkit.stores._tasks import (
    DEFAULT_MAX_TASKS,
    InMemoryTaskStore,
    TaskExistsError,
    TaskRecord,
    TaskStore,
    TaskStoreError,
    TaskStoreFullError,
)

__all__ = [
    "DEFAULT_MAX_EVENTS",
    "DEFAULT_MAX_TASKS",
    "EventStore",
    "FileEventStore",
    "FileSessionStore",
    "InMemoryEventStore",
    "InMemorySessionStore",
    "InMemoryTaskStore",
    "InProcessMessageBus",
    "MessageBus",
    "RedisEventStore",
    "RedisHub",
    "RedisMessageBus",
    "RedisSessionStore",
    "RedisTaskStore",
    "RedisUsedRequestStates",
    "SessionLimitReached",
    "SessionRecord",
    "SessionStore",
    "SqliteTaskStore",
    "StoreError",
    "StoreUnavailableError",
    "StoredEvent",
    "TaskExistsError",
    "TaskRecord",
    "TaskStore",
    "TaskStoreError",
    "TaskStoreFullError",
    "redis_options",
]
