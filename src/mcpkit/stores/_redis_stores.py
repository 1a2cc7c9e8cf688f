"""The Redis session store, event store and message bus (``mcpkit[redis]``).

Events: per session a counter and a capped list of ``"{seq} {stream} {json}"`` entries;
one Lua script numbers, stores, trims and publishes an event, so every instance sees a
session's events in one order, the order of their ids. Sessions: one JSON record per key
whose TTL is the idle timeout, and an index (sorted by expiry, on Redis's clock) that
enforces the cap across instances. Bus: one pub/sub channel per bus channel, messages
tagged with their publisher so it skips its own.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import msgspec

from mcpkit._exceptions import SessionLimitReached, StoreUnavailableError
from mcpkit.stores._bus import DELIVERY_ID, MessageBus, new_instance_id
from mcpkit.stores._events import (
    DEFAULT_MAX_EVENTS,
    EventListener,
    EventStore,
    SendEvent,
    StopListening,
    StoredEvent,
    parse_event_id,
)
from mcpkit.stores._redis import DEFAULT_PREFIX, DEFAULT_REDIS_URL, RedisHub, as_hub
from mcpkit.stores._sessions import SessionRecord, SessionStore

logger = logging.getLogger("mcpkit.stores")

#: Seconds a session's events are kept after its last event.
DEFAULT_EVENT_TTL = 3600.0
#: Seconds a broadcast's delivery id is remembered per session (to store it once).
DEFAULT_DELIVERY_WINDOW = 60.0
#: Bus messages received but not yet handled; past it new ones are dropped (and logged).
DEFAULT_MAX_BUS_BACKLOG = 10_000

# KEYS: list, counter, delivery marker. ARGV: stream id, message JSON, max events, ttl ms,
# channel, "1" to store once per delivery id, delivery window ms.
_STORE_EVENT = """
if ARGV[6] == '1' then
  if not redis.call('SET', KEYS[3], '1', 'NX', 'PX', ARGV[7]) then return 0 end
end
local seq = redis.call('INCR', KEYS[2])
local entry = seq .. ' ' .. ARGV[1] .. ' ' .. ARGV[2]
redis.call('RPUSH', KEYS[1], entry)
redis.call('LTRIM', KEYS[1], -tonumber(ARGV[3]), -1)
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
redis.call('PUBLISH', ARGV[5], entry)
return seq
"""

_NOW_MS = "local t = redis.call('TIME'); local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"

# KEYS: record, index. ARGV: JSON, max sessions, idle ms, session id.
_CREATE_SESSION = (
    _NOW_MS
    + """
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[2]) then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[3]), ARGV[4])
return 1
"""
)

# KEYS: record, index. ARGV: idle ms, session id, "1" to return the record.
_TOUCH_SESSION = (
    _NOW_MS
    + """
if redis.call('PEXPIRE', KEYS[1], ARGV[1]) == 1 then
  redis.call('ZADD', KEYS[2], now + tonumber(ARGV[1]), ARGV[2])
  if ARGV[3] == '1' then return redis.call('GET', KEYS[1]) end
  return 1
end
redis.call('ZREM', KEYS[2], ARGV[2])
return false
"""
)

# KEYS: record, index. ARGV: JSON, idle ms, session id.
_SAVE_SESSION = (
    _NOW_MS
    + """
if redis.call('SET', KEYS[1], ARGV[1], 'XX', 'PX', ARGV[2]) then
  redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]), ARGV[3])
  return 1
end
redis.call('ZREM', KEYS[2], ARGV[3])
return 0
"""
)

_COUNT_SESSIONS = (
    _NOW_MS
    + """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
return redis.call('ZCARD', KEYS[1])
"""
)


def _ms(seconds: float) -> int:
    return max(1, int(seconds * 1000))


class RedisEventStore(EventStore):
    """SSE events in Redis: any instance replays a session's stream (``Last-Event-ID``)
    and ``listen`` feeds every instance the events any of them stores. ``redis`` is a
    URL, a ``redis.asyncio.Redis`` or a ``RedisHub``."""

    def __init__(
        self,
        redis: RedisHub | str | Any = DEFAULT_REDIS_URL,
        *,
        max_events: int = DEFAULT_MAX_EVENTS,
        ttl: float = DEFAULT_EVENT_TTL,
        prefix: str = DEFAULT_PREFIX,
    ) -> None:
        self._owns_hub = not isinstance(redis, RedisHub)
        self.hub = as_hub(redis, prefix)
        self.max_events = max_events
        self.ttl = ttl
        self._store = self.hub.script(_STORE_EVENT)

    def _keys(self, session_id: str) -> tuple[str, str]:
        base = self.hub.key("ev", "{" + session_id + "}")
        return base, base + ":seq"

    def channel(self, session_id: str) -> str:
        """The Redis pub/sub channel that carries a session's new events."""
        return self.hub.key("ev", session_id)

    async def store_event(
        self, session_id: str, stream_id: str, message: dict[str, Any] | None
    ) -> str | None:
        events, counter = self._keys(session_id)
        delivery = DELIVERY_ID.get()
        marker = f"{events}:once:{delivery}" if delivery is not None else f"{events}:once"
        data = b"null" if message is None else msgspec.json.encode(message)
        seq = await self._store(
            [events, counter, marker],
            [
                stream_id,
                data,
                self.max_events,
                _ms(self.ttl),
                self.channel(session_id),
                "1" if delivery is not None else "0",
                _ms(DEFAULT_DELIVERY_WINDOW),
            ],
        )
        if not seq:
            return None
        return f"{session_id}:{int(seq)}"

    @staticmethod
    def _parse(session_id: str, entry: bytes) -> tuple[int, StoredEvent]:
        seq, stream_id, data = entry.split(b" ", 2)
        message = msgspec.json.decode(data)
        return int(seq), StoredEvent(f"{session_id}:{int(seq)}", stream_id.decode(), message)

    async def replay_events_after(
        self, session_id: str, last_event_id: str, send: SendEvent
    ) -> str | None:
        parsed = parse_event_id(last_event_id)
        if parsed is None or parsed[0] != session_id:
            return None
        after = parsed[1]
        entries = await self.hub.call(self.hub.client.lrange(self._keys(session_id)[0], 0, -1))
        events = [self._parse(session_id, entry) for entry in entries]
        stream_id = next((event.stream_id for seq, event in events if seq == after), None)
        if stream_id is None:
            return None
        for seq, event in events:
            if seq > after and event.stream_id == stream_id and event.message is not None:
                await send(event)
        return stream_id

    async def evict_session(self, session_id: str) -> None:
        await self.hub.call(self.hub.client.delete(*self._keys(session_id)))

    async def listen(self, session_id: str, listener: EventListener) -> StopListening:
        def on_message(data: bytes | None) -> None:
            listener(None if data is None else self._parse(session_id, data)[1])

        channel = self.channel(session_id)
        await self.hub.subscribe(channel, on_message)

        async def stop() -> None:
            await self.hub.unsubscribe(channel, on_message)

        return stop

    async def close(self) -> None:
        if self._owns_hub:
            await self.hub.aclose()


class RedisSessionStore(SessionStore):
    """Session records in Redis, shared by every instance pointing at the same Redis and
    prefix: the cap and the idle timeout hold for all of them together."""

    def __init__(
        self, redis: RedisHub | str | Any = DEFAULT_REDIS_URL, *, prefix: str = DEFAULT_PREFIX
    ) -> None:
        self._owns_hub = not isinstance(redis, RedisHub)
        self.hub = as_hub(redis, prefix)
        self._index = self.hub.key("sessions")
        self._create = self.hub.script(_CREATE_SESSION)
        self._touch = self.hub.script(_TOUCH_SESSION)
        self._save = self.hub.script(_SAVE_SESSION)
        self._count = self.hub.script(_COUNT_SESSIONS)

    def _key(self, session_id: str) -> str:
        return self.hub.key("session", session_id)

    async def create(
        self, record: SessionRecord, *, max_sessions: int, idle_timeout: float
    ) -> None:
        sid = record.session_id
        created = await self._create(
            [self._key(sid), self._index], [record.to_json(), max_sessions, _ms(idle_timeout), sid]
        )
        if not created:
            raise SessionLimitReached(f"at most {max_sessions} sessions may be live at once")

    async def get(self, session_id: str, *, idle_timeout: float) -> SessionRecord | None:
        data = await self._touch(
            [self._key(session_id), self._index], [_ms(idle_timeout), session_id, "1"]
        )
        return SessionRecord.from_json(data) if data else None

    async def touch(self, session_id: str, *, idle_timeout: float) -> bool:
        return bool(
            await self._touch(
                [self._key(session_id), self._index], [_ms(idle_timeout), session_id, "0"]
            )
        )

    async def save(self, record: SessionRecord, *, idle_timeout: float) -> bool:
        sid = record.session_id
        return bool(
            await self._save(
                [self._key(sid), self._index], [record.to_json(), _ms(idle_timeout), sid]
            )
        )

    async def delete(self, session_id: str) -> bool:
        client = self.hub.client
        async with client.pipeline(transaction=True) as pipe:
            pipe.delete(self._key(session_id))
            pipe.zrem(self._index, session_id)
            deleted, _ = await self.hub.call(pipe.execute())
        return bool(deleted)

    async def count(self) -> int:
        return int(await self._count([self._index], []))

    async def close(self) -> None:
        if self._owns_hub:
            await self.hub.aclose()


class RedisMessageBus(MessageBus):
    """The bus over Redis pub/sub: one channel per bus channel under the hub's prefix.
    Received messages are handled one at a time, in order, by one task."""

    def __init__(
        self,
        redis: RedisHub | str | Any = DEFAULT_REDIS_URL,
        *,
        prefix: str = DEFAULT_PREFIX,
        instance_id: str | None = None,
        max_backlog: int = DEFAULT_MAX_BUS_BACKLOG,
    ) -> None:
        super().__init__()
        self._owns_hub = not isinstance(redis, RedisHub)
        self.hub = as_hub(redis, prefix)
        self.instance_id = instance_id or new_instance_id()
        self._queue: asyncio.Queue[tuple[str, dict[str, Any]]] | None = None
        self._max_backlog = max_backlog
        self._worker: asyncio.Task[None] | None = None
        self._subscribed: dict[str, Any] = {}
        self._started = False
        self._background: set[asyncio.Task[Any]] = set()

    def _redis_channel(self, channel: str) -> str:
        return self.hub.key("bus", channel)

    def subscribe(self, channel: str, handler: Any) -> None:
        super().subscribe(channel, handler)
        if self._started and channel not in self._subscribed:
            task = asyncio.get_running_loop().create_task(self._listen(channel))
            self._background.add(task)
            task.add_done_callback(self._background.discard)

    async def start(self) -> None:
        if self._started:
            return
        self._queue = asyncio.Queue(self._max_backlog)
        self._worker = asyncio.get_running_loop().create_task(self._work())
        try:
            for channel in self.channels:
                await self._listen(channel)
        except BaseException:
            self._worker.cancel()
            raise
        self._started = True

    async def _listen(self, channel: str) -> None:
        if channel in self._subscribed:
            return

        def on_message(data: bytes | None) -> None:
            if data is None:
                return  # missed messages are lost: the bus is best effort
            envelope = msgspec.json.decode(data)
            if envelope.get("o") == self.instance_id:
                return
            try:
                self._queue.put_nowait((channel, envelope["m"]))  # type: ignore[union-attr]
            except asyncio.QueueFull:
                logger.warning("bus backlog full: dropped a message on %s", channel)

        self._subscribed[channel] = on_message
        try:
            await self.hub.subscribe(self._redis_channel(channel), on_message)
        except BaseException:
            del self._subscribed[channel]
            raise

    async def _work(self) -> None:
        assert self._queue is not None
        while True:
            channel, message = await self._queue.get()
            await self.dispatch(channel, message)

    async def publish(self, channel: str, message: dict[str, Any]) -> int:
        """Redis counts the subscribers that got it: each instance subscribes once per channel."""
        data = msgspec.json.encode({"o": self.instance_id, "m": message})
        return int(await self.hub.call(self.hub.client.publish(self._redis_channel(channel), data)))

    async def aclose(self) -> None:
        for channel, callback in list(self._subscribed.items()):
            try:
                await self.hub.unsubscribe(self._redis_channel(channel), callback)
            except StoreUnavailableError:
                pass
        self._subscribed.clear()
        if self._worker is not None:
            self._worker.cancel()
            await asyncio.gather(self._worker, return_exceptions=True)
        self._started = False
        if self._owns_hub:
            await self.hub.aclose()


def redis_options(
    url: str | Any = DEFAULT_REDIS_URL, *, prefix: str = DEFAULT_PREFIX, **hub_options: Any
) -> dict[str, Any]:
    """``session_store``, ``event_store`` and ``message_bus`` on one ``RedisHub``, for
    ``StreamableHttpServerOptions(**redis_options(url))``: instances started this way
    share sessions, events and broadcasts."""
    hub = url if isinstance(url, RedisHub) else RedisHub(url, prefix=prefix, **hub_options)
    return {
        "session_store": RedisSessionStore(hub),
        "event_store": RedisEventStore(hub),
        "message_bus": RedisMessageBus(hub),
    }
