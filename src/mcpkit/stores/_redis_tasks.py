"""Tasks (``TaskStore``, see ``_tasks.py``) in Redis: a task created by one instance is
polled, updated, answered or cancelled through any other.

One JSON record per task, and an index sorted by expiry (epoch seconds, ``inf`` for a task
without TTL) that bounds the unexpired tasks and lists the expired ones. ``create`` is one
Lua script (exists? full? purge, insert), so the bound holds for every instance at once.
Expired records stay readable to ``list_expired``/``delete`` for ``EXPIRED_GRACE`` seconds,
then Redis drops them by itself.

A ``listed`` task is also in its owner's index, sorted by creation time (``list_owned``);
the index lives as long as its longest-lived task, and members whose record is gone are
dropped as a listing meets them.
"""

from __future__ import annotations

import hashlib
import math
import time
from typing import Any

from mcpkit.stores._redis import DEFAULT_PREFIX, DEFAULT_REDIS_URL, RedisHub, as_hub
from mcpkit.stores._tasks import (
    DEFAULT_LIST_LIMIT,
    DEFAULT_MAX_TASKS,
    ListPosition,
    TaskExistsError,
    TaskRecord,
    TaskStore,
    TaskStoreFullError,
)

#: Seconds an expired task's record outlives its TTL in Redis (for purging and listing).
EXPIRED_GRACE = 3600.0
#: Owner-index members one ``list_owned`` round trip reads.
LIST_BATCH = 200

# KEYS: record, index, owner index ('' = not listed). ARGV: JSON, task id, expiry score,
# now, max tasks ('' = none), expire-at ms ('' = never), key prefix of records, created at.
_CREATE = """
if redis.call('EXISTS', KEYS[1]) == 1 then return -1 end
if ARGV[5] ~= '' then
  local now = tonumber(ARGV[4])
  if redis.call('ZCOUNT', KEYS[2], '(' .. ARGV[4], '+inf') >= tonumber(ARGV[5]) then return 0 end
  local expired = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[4], 'LIMIT', 0, 1000)
  for _, id in ipairs(expired) do redis.call('DEL', ARGV[7] .. id) end
  if #expired > 0 then redis.call('ZREM', KEYS[2], unpack(expired)) end
end
redis.call('SET', KEYS[1], ARGV[1])
if ARGV[6] ~= '' then redis.call('PEXPIREAT', KEYS[1], ARGV[6]) end
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[2])
if KEYS[3] ~= '' then
  -- the owner index lives as long as its longest-lived task (-1: one never expires)
  local left = redis.call('PTTL', KEYS[3])
  redis.call('ZADD', KEYS[3], ARGV[8], ARGV[2])
  if ARGV[6] == '' then
    redis.call('PERSIST', KEYS[3])
  elseif left == -2 or (left >= 0 and tonumber(ARGV[4]) * 1000 + left < tonumber(ARGV[6])) then
    redis.call('PEXPIREAT', KEYS[3], ARGV[6])
  end
end
return 1
"""

# KEYS: record, index. ARGV: JSON, task id, expiry score, expire-at ms ('' = never).
_UPDATE = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('SET', KEYS[1], ARGV[1])
if ARGV[4] ~= '' then redis.call('PEXPIREAT', KEYS[1], ARGV[4]) end
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[2])
return 1
"""


def _owner_token(owner: str | None) -> str:
    """The owner's index key suffix: a digest, so any owner string makes a short key."""
    text = "n" if owner is None else f"s:{owner}"
    return hashlib.sha256(text.encode()).hexdigest()


def _score(record: TaskRecord) -> str:
    expires = record.expires_at
    return "+inf" if expires is None else repr(expires)


def _expire_at_ms(record: TaskRecord) -> str:
    expires = record.expires_at
    return "" if expires is None else str(math.ceil((expires + EXPIRED_GRACE) * 1000))


class RedisTaskStore(TaskStore):
    """Tasks in Redis, shared by every instance using the same Redis and prefix; at most
    ``max_tasks`` unexpired ones (None: no bound). ``redis`` is a URL, a
    ``redis.asyncio.Redis`` or a ``RedisHub``."""

    def __init__(
        self,
        redis: RedisHub | str | Any = DEFAULT_REDIS_URL,
        *,
        max_tasks: int | None = DEFAULT_MAX_TASKS,
        prefix: str = DEFAULT_PREFIX,
    ) -> None:
        self._owns_hub = not isinstance(redis, RedisHub)
        self.hub = as_hub(redis, prefix)
        self.max_tasks = max_tasks
        self._records = self.hub.key("task", "")
        self._index = self.hub.key("tasks")
        self._owners = self.hub.key("tasks-of", "")
        self._create = self.hub.script(_CREATE)
        self._update = self.hub.script(_UPDATE)

    def _key(self, task_id: str) -> str:
        return self._records + task_id

    def _owner_key(self, owner: str | None) -> str:
        return self._owners + _owner_token(owner)

    async def create(self, record: TaskRecord) -> None:
        owner_key = self._owner_key(record.owner) if record.listed else ""
        created = await self._create(
            [self._key(record.task_id), self._index, owner_key],
            [
                record.to_json(),
                record.task_id,
                _score(record),
                repr(time.time()),
                "" if self.max_tasks is None else self.max_tasks,
                _expire_at_ms(record),
                self._records,
                repr(record.created_at),
            ],
        )
        if created == -1:
            raise TaskExistsError(record.task_id)
        if created == 0:
            raise TaskStoreFullError(f"at most {self.max_tasks} tasks may be kept at once")

    async def get(self, task_id: str) -> TaskRecord | None:
        data = await self.hub.call(self.hub.client.get(self._key(task_id)))
        if data is None:
            return None
        record = TaskRecord.from_json(data)
        return None if record.expired() else record

    async def update(self, record: TaskRecord) -> bool:
        updated = await self._update(
            [self._key(record.task_id), self._index],
            [record.to_json(), record.task_id, _score(record), _expire_at_ms(record)],
        )
        return bool(updated)

    async def list_expired(self, now: float | None = None, limit: int = 1000) -> list[str]:
        moment = time.time() if now is None else now
        ids = await self.hub.call(
            self.hub.client.zrangebyscore(self._index, "-inf", moment, start=0, num=limit)
        )
        return [i.decode() if isinstance(i, bytes) else i for i in ids]

    async def delete(self, task_id: str) -> bool:
        async with self.hub.client.pipeline(transaction=True) as pipe:
            pipe.delete(self._key(task_id))
            pipe.zrem(self._index, task_id)
            deleted, _ = await self.hub.call(pipe.execute())
        return bool(deleted)  # an owner index member left behind goes at its next listing

    async def list_owned(
        self,
        owner: str | None,
        *,
        after: ListPosition | None = None,
        limit: int = DEFAULT_LIST_LIMIT,
    ) -> list[TaskRecord]:
        client, key = self.hub.client, self._owner_key(owner)
        low = "-inf" if after is None else repr(after[0])
        found: list[TaskRecord] = []
        gone: list[str] = []  # members whose record is no more: dropped after the reads
        offset = 0
        while len(found) < limit:
            batch = await self.hub.call(
                client.zrangebyscore(
                    key, low, "+inf", start=offset, num=LIST_BATCH, withscores=True
                )
            )
            if not batch:
                break
            ids = [m.decode() if isinstance(m, bytes) else m for m, _ in batch]
            datas = await self.hub.call(client.mget([self._key(i) for i in ids]))
            for task_id, (_, score), data in zip(ids, batch, datas, strict=True):
                if after is not None and (score, task_id) <= after:
                    continue
                record = TaskRecord.from_json(data) if data is not None else None
                if record is None or record.owner != owner or not record.listed:
                    gone.append(task_id)
                elif not record.expired() and len(found) < limit:
                    found.append(record)
            if len(batch) < LIST_BATCH:
                break
            offset += len(batch)
        if gone:
            await self.hub.call(client.zrem(key, *gone))
        return found

    async def count(self) -> int:
        """How many tasks the index holds (expired ones not yet purged included)."""
        return int(await self.hub.call(self.hub.client.zcard(self._index)))

    async def close(self) -> None:
        if self._owns_hub:
            await self.hub.aclose()
