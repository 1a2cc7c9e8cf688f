"""The Redis session store, event store and message bus (``mcpkit[redis]``).

Events: per session a counter and a capped list of ``"{seq} {stream} {json}"`` entries;
one Lua script numbers, stores, trims and publishes a batch of events (what a fan-out
stores at once: one round trip and one pub/sub message for thousands of sessions), so
every instance sees a session's events in one order, the order of their ids. Sessions: one JSON record per key
whose TTL is the idle timeout, and an index (sorted by expiry, on Redis's clock) that
enforces the cap across instances. Bus: one pub/sub channel per bus channel, messages
tagged with their publisher so it skips its own.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any

import msgspec

from mcpkit._exceptions import SessionLimitReached, StoreUnavailableError
from mcpkit.stores._bus import DELIVERY_ID, MessageBus, new_instance_id
from mcpkit.stores._event_batches import (
    DEFAULT_MAX_EVENT_BATCH,
    DEFAULT_MAX_PENDING_EVENTS,
    EventBatcher,
)
from mcpkit.stores._events import (
    DEFAULT_MAX_EVENTS,
    EventListener,
    EventStore,
    NewEvent,
    SendEvent,
    StopListening,
    StoredEvent,
    parse_event_id,
)
from mcpkit.stores._redis import DEFAULT_PREFIX, DEFAULT_REDIS_URL, RedisHub, as_hub
from mcpkit.stores._sessions import SessionRecord, SessionStore, read_session_record

logger = logging.getLogger("mcpkit.stores")

#: Seconds a session's events are kept after its last event.
DEFAULT_EVENT_TTL = 3600.0
#: Seconds a broadcast's delivery id is remembered per session (to store it once).
DEFAULT_DELIVERY_WINDOW = 60.0
#: Bus messages received but not yet handled; past it new ones are dropped (and logged).
DEFAULT_MAX_BUS_BACKLOG = 10_000

# Stores a batch of events, in order. KEYS: per event its list, counter and delivery
# marker. ARGV: max events, ttl ms, delivery window ms, batch channel, the number P of
# distinct payloads ("{stream} {json}"), the P payloads, then per event its payload's
# index, "1" to store it once per delivery id, its session id and its session's channel.
# Per event: number, store, trim. One event is published on its session's channel as
# "{seq} {stream} {json}"; several, in one message on the batch channel (JSON
# [payloads, [index, session id, seq, ...]]). Returns each event's seq (0: already stored).
_STORE_EVENTS = """
local max, ttl, window = -tonumber(ARGV[1]), ARGV[2], ARGV[3]
local p = tonumber(ARGV[5])
local n = #KEYS / 3
local seqs, entries = {}, {}
for i = 1, n do
  local k, a = (i - 1) * 3, 5 + p + (i - 1) * 4
  local seq = 0
  if ARGV[a + 2] ~= '1' or redis.call('SET', KEYS[k + 3], '1', 'NX', 'PX', window) then
    seq = redis.call('INCR', KEYS[k + 2])
    local entry = seq .. ' ' .. ARGV[5 + tonumber(ARGV[a + 1])]
    redis.call('RPUSH', KEYS[k + 1], entry)
    redis.call('LTRIM', KEYS[k + 1], max, -1)
    redis.call('PEXPIRE', KEYS[k + 1], ttl)
    redis.call('PEXPIRE', KEYS[k + 2], ttl)
    if n == 1 then
      redis.call('PUBLISH', ARGV[a + 4], entry)
    else
      entries[#entries + 1] = tonumber(ARGV[a + 1])
      entries[#entries + 1] = ARGV[a + 3]
      entries[#entries + 1] = seq
    end
  end
  seqs[i] = seq
end
if #entries > 0 then
  local payloads = {}
  for i = 1, p do payloads[i] = ARGV[5 + i] end
  redis.call('PUBLISH', ARGV[4], cjson.encode({payloads, entries}))
end
return seqs
"""

_NOW_MS = "local t = redis.call('TIME'); local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"

# Each session script keeps the index alive as long as its longest-lived member, and no
# longer (PTTL -1: an index written before it had a TTL).

# KEYS: record, index. ARGV: JSON, max sessions, idle ms, session id.
_CREATE_SESSION = (
    _NOW_MS
    + """
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[2]) then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[3]), ARGV[4])
if redis.call('PTTL', KEYS[2]) < tonumber(ARGV[3]) then redis.call('PEXPIRE', KEYS[2], ARGV[3]) end
return 1
"""
)

# KEYS: record, index. ARGV: idle ms, session id, "1" to return the record.
_TOUCH_SESSION = (
    _NOW_MS
    + """
if redis.call('PEXPIRE', KEYS[1], ARGV[1]) == 1 then
  redis.call('ZADD', KEYS[2], now + tonumber(ARGV[1]), ARGV[2])
  if redis.call('PTTL', KEYS[2]) < tonumber(ARGV[1]) then redis.call('PEXPIRE', KEYS[2], ARGV[1]) end
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
  if redis.call('PTTL', KEYS[2]) < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[2], ARGV[2]) end
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
    URL, a ``redis.asyncio.Redis`` or a ``RedisHub``.

    ``store_event`` calls made together (a fan-out to many sessions) are stored in
    batches of at most ``max_batch``, one script call each (``EventBatcher``); a batch's
    events reach the listening instances in one pub/sub message, a lone event on its
    session's channel. Both arrive on the hub's one pub/sub connection, in the order
    Redis stored them, so a session's events keep their order whichever way they came."""

    def __init__(
        self,
        redis: RedisHub | str | Any = DEFAULT_REDIS_URL,
        *,
        max_events: int = DEFAULT_MAX_EVENTS,
        ttl: float = DEFAULT_EVENT_TTL,
        prefix: str = DEFAULT_PREFIX,
        max_batch: int = DEFAULT_MAX_EVENT_BATCH,
        max_pending: int = DEFAULT_MAX_PENDING_EVENTS,
    ) -> None:
        self._owns_hub = not isinstance(redis, RedisHub)
        self.hub = as_hub(redis, prefix)
        self.max_events = max_events
        self.ttl = ttl
        self.max_batch = max(1, max_batch)
        self._store = self.hub.script(_STORE_EVENTS)
        self._batcher = EventBatcher(
            self.store_events, max_batch=self.max_batch, max_pending=max_pending
        )
        #: This instance's listeners by session, for the events that come in batches.
        self._local: dict[str, list[EventListener]] = {}
        self._batch_channel = self.hub.key("ev-batch")
        self._joined = False
        self._joining: asyncio.Lock | None = None

    def _keys(self, session_id: str) -> tuple[str, str]:
        base = self.hub.key("ev", "{" + session_id + "}")
        return base, base + ":seq"

    def channel(self, session_id: str) -> str:
        """The Redis pub/sub channel that carries a session's new events (one at a time;
        batches travel on one channel for all sessions)."""
        return self.hub.key("ev", session_id)

    async def store_event(
        self, session_id: str, stream_id: str, message: dict[str, Any] | None
    ) -> str | None:
        return await self._batcher.submit(
            NewEvent(session_id, stream_id, message, DELIVERY_ID.get())
        )

    async def store_events(self, events: Sequence[NewEvent]) -> list[str | None]:
        """One script call per ``max_batch`` events: each numbered, stored and trimmed in
        its session's list, and published."""
        ids: list[str | None] = []
        for start in range(0, len(events), self.max_batch):
            ids += await self._store_batch(events[start : start + self.max_batch])
        return ids

    async def _store_batch(self, events: Sequence[NewEvent]) -> list[str | None]:
        keys: list[str] = []
        per_event: list[Any] = []
        # A fan-out stores one message for every session: encoded and sent once.
        payloads: dict[tuple[int, str], int] = {}
        encoded: list[bytes] = []
        for event in events:
            ref = (id(event.message), event.stream_id)
            index = payloads.get(ref)
            if index is None:
                data = b"null" if event.message is None else msgspec.json.encode(event.message)
                encoded.append(event.stream_id.encode() + b" " + data)
                index = payloads[ref] = len(encoded)
            events_key, counter = self._keys(event.session_id)
            delivery = event.delivery
            keys += (
                events_key,
                counter,
                f"{events_key}:once:{delivery}" if delivery is not None else f"{events_key}:once",
            )
            per_event += (
                index,
                "1" if delivery is not None else "0",
                event.session_id,
                self.channel(event.session_id),
            )
        args: list[Any] = [
            self.max_events,
            _ms(self.ttl),
            _ms(DEFAULT_DELIVERY_WINDOW),
            self._batch_channel,
            len(encoded),
            *encoded,
            *per_event,
        ]
        seqs = await self._store(keys, args)
        return [
            f"{event.session_id}:{int(seq)}" if seq else None
            for event, seq in zip(events, seqs, strict=True)
        ]

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
        events = []
        for entry in entries:
            try:
                events.append(self._parse(session_id, entry))
            except ValueError:  # not what the script writes: the rest still replays
                logger.warning(
                    "session %s: unreadable event in Redis skipped: %.80r", session_id, entry
                )
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

        await self._join_batches()
        channel = self.channel(session_id)
        await self.hub.subscribe(channel, on_message)
        self._local.setdefault(session_id, []).append(listener)

        async def stop() -> None:
            listeners = self._local.get(session_id)
            if listeners is not None and listener in listeners:
                listeners.remove(listener)
                if not listeners:
                    del self._local[session_id]
            await self.hub.unsubscribe(channel, on_message)

        return stop

    async def _join_batches(self) -> None:
        """Subscribe to the batch channel (once, confirmed before the first listener)."""
        if self._joined:
            return
        if self._joining is None:
            self._joining = asyncio.Lock()
        async with self._joining:
            if not self._joined:
                await self.hub.subscribe(self._batch_channel, self._on_batch)
                self._joined = True

    def _on_batch(self, data: bytes | None) -> None:
        """A batch of events: each goes to this instance's listeners of its session."""
        local = self._local
        if data is None:  # the feed was interrupted: every listener re-reads the store
            for held in list(local.values()):
                for listener in list(held):
                    _tell(listener, None)
            return
        payloads, entries = msgspec.json.decode(data)
        parsed: dict[int, tuple[str, Any]] = {}
        for i in range(0, len(entries), 3):
            session_id = entries[i + 1]
            listeners = local.get(session_id)
            if not listeners:
                continue
            index = entries[i]
            payload = parsed.get(index)
            if payload is None:
                stream_id, _, body = payloads[index - 1].partition(" ")
                payload = parsed[index] = (stream_id, msgspec.json.decode(body))
            event = StoredEvent(f"{session_id}:{entries[i + 2]}", payload[0], payload[1])
            for listener in list(listeners):
                _tell(listener, event)

    async def close(self) -> None:
        await self._batcher.aclose()
        if self._joined:
            self._joined = False
            try:
                await self.hub.unsubscribe(self._batch_channel, self._on_batch)
            except StoreUnavailableError:
                pass
        if self._owns_hub:
            await self.hub.aclose()


def _tell(listener: EventListener, event: StoredEvent | None) -> None:
    try:
        listener(event)
    except Exception:
        logger.warning("event listener failed", exc_info=True)


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
        return read_session_record(session_id, data, "Redis") if data else None

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
    share sessions, events and broadcasts. A hub made here from ``url`` is closed with the
    bus (which the app closes when it stops); a ``RedisHub`` passed in stays the caller's."""
    owned = not isinstance(url, RedisHub)
    hub = RedisHub(url, prefix=prefix, **hub_options) if owned else url
    bus = RedisMessageBus(hub)
    bus._owns_hub = owned  # closed last: the app closes its bus after its sessions
    return {
        "session_store": RedisSessionStore(hub),
        "event_store": RedisEventStore(hub),
        "message_bus": bus,
    }
