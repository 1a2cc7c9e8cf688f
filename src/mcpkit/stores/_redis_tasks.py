"""Tasks (``TaskStore``, see ``_tasks/manager.py``) in Redis: a task created by one instance is
polled, updated, answered or cancelled through any other.

One JSON record per task, and an index sorted by expiry (epoch seconds, ``inf`` for a task
without TTL) that bounds the unexpired tasks and lists the expired ones. ``create`` is one
Lua script (exists? full? purge, insert), so the bound holds for every instance at once.
Expired records stay readable to ``list_expired``/``delete`` for ``EXPIRED_GRACE`` seconds,
then Redis drops them by itself.

A ``listed`` task is also in its owner's index, sorted by creation time (``list_owned``);
the index lives as long as its longest-lived task, and members whose record is gone are
dropped as a listing meets them.

An unfinished task some instance runs is also in the runs hash (task id -> runner id), so
the tasks of an instance that died are found and failed (``_redis_task_runners.py``): by
the first call of a store, and by every store's heartbeat.
"""

from __future__ import annotations

import hashlib
import logging
import math
import time
from typing import Any

from mcpkit._exceptions import StoreUnavailableError
from mcpkit.stores._heartbeat import LoopHeartbeat
from mcpkit.stores._redis import DEFAULT_PREFIX, DEFAULT_REDIS_URL, RedisHub, as_hub
from mcpkit.stores._redis_task_runners import RedisTaskRunners
from mcpkit.stores._task_runners import (
    DEFAULT_HEARTBEAT_GRACE,
    DEFAULT_HEARTBEAT_INTERVAL,
    LeasedRunners,
    abandon,
)
from mcpkit.stores._tasks import (
    DEFAULT_LIST_LIMIT,
    DEFAULT_MAX_TASKS,
    ListPosition,
    TaskExistsError,
    TaskRecord,
    TaskStore,
    TaskStoreFullError,
    read_record,
)

logger = logging.getLogger("mcpkit.stores")

#: Seconds an expired task's record outlives its TTL in Redis (for purging and listing).
EXPIRED_GRACE = 3600.0
#: Owner-index members one ``list_owned`` round trip reads.
LIST_BATCH = 200

# KEYS: record, index, owner index ('' = not listed), runs. ARGV: JSON, task id, expiry
# score, now, max tasks ('' = none), expire-at ms ('' = never), key prefix of records,
# created at, runner id ('' = none).
_CREATE = """
if redis.call('EXISTS', KEYS[1]) == 1 then return -1 end
if ARGV[5] ~= '' then
  local now = tonumber(ARGV[4])
  if redis.call('ZCOUNT', KEYS[2], '(' .. ARGV[4], '+inf') >= tonumber(ARGV[5]) then return 0 end
  local expired = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[4], 'LIMIT', 0, 1000)
  for _, id in ipairs(expired) do redis.call('DEL', ARGV[7] .. id) end
  if #expired > 0 then
    redis.call('ZREM', KEYS[2], unpack(expired))
    redis.call('HDEL', KEYS[4], unpack(expired))
  end
end
redis.call('SET', KEYS[1], ARGV[1])
if ARGV[6] ~= '' then redis.call('PEXPIREAT', KEYS[1], ARGV[6]) end
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[2])
if ARGV[9] ~= '' then redis.call('HSET', KEYS[4], ARGV[2], ARGV[9]) end
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

# KEYS: record, index, runs. ARGV: JSON, task id, expiry score, expire-at ms ('' = never),
# runner id ('' = none).
_UPDATE = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('SET', KEYS[1], ARGV[1])
if ARGV[4] ~= '' then redis.call('PEXPIREAT', KEYS[1], ARGV[4]) end
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[2])
if ARGV[5] ~= '' then
  redis.call('HSET', KEYS[3], ARGV[2], ARGV[5])
else
  redis.call('HDEL', KEYS[3], ARGV[2])
end
return 1
"""

# The record failed, unless it changed since it was read (its runner may be declared dead
# while another instance cancels the task). KEYS: record, runs. ARGV: the JSON read, the
# failed record's JSON, task id, expire-at ms ('' = never).
_ABANDON = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
if ARGV[4] ~= '' then redis.call('PEXPIREAT', KEYS[1], ARGV[4]) end
redis.call('HDEL', KEYS[2], ARGV[3])
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


def _runner(record: TaskRecord) -> str:
    """The runs hash's value for the task: its runner while unfinished, else none."""
    return record.runner_id if record.runner_id is not None and not record.terminal else ""


class RedisTaskStore(LeasedRunners, TaskStore):
    """Tasks in Redis, shared by every instance using the same Redis and prefix; at most
    ``max_tasks`` unexpired ones (None: no bound). ``redis`` is a URL, a
    ``redis.asyncio.Redis`` or a ``RedisHub``.

    The tasks an instance runs name its store (``runner_id``), whose lease in Redis its
    heartbeat renews every ``heartbeat_interval`` seconds. An instance is dead once its
    lease is older than ``heartbeat_interval + heartbeat_grace`` seconds (or, seen from its
    own machine, once its process is gone): the first call of a store, and every store's
    heartbeat, fail the unfinished tasks of dead instances. ``close`` fails the tasks the
    store still ran.
    """

    def __init__(
        self,
        redis: RedisHub | str | Any = DEFAULT_REDIS_URL,
        *,
        max_tasks: int | None = DEFAULT_MAX_TASKS,
        prefix: str = DEFAULT_PREFIX,
        heartbeat_interval: float = DEFAULT_HEARTBEAT_INTERVAL,
        heartbeat_grace: float = DEFAULT_HEARTBEAT_GRACE,
    ) -> None:
        if heartbeat_interval <= 0 or heartbeat_grace < 0:
            raise ValueError("heartbeat_interval must be positive and heartbeat_grace not negative")
        self._owns_hub = not isinstance(redis, RedisHub)
        self.hub = as_hub(redis, prefix)
        self.max_tasks = max_tasks
        self._records = self.hub.key("task", "")
        self._index = self.hub.key("tasks")
        self._owners = self.hub.key("tasks-of", "")
        self._create = self.hub.script(_CREATE)
        self._update = self.hub.script(_UPDATE)
        self._abandon = self.hub.script(_ABANDON)
        self._runners: RedisTaskRunners = RedisTaskRunners(
            self.hub, heartbeat_interval, heartbeat_grace
        )
        self._heartbeat = LoopHeartbeat(self._beat, heartbeat_interval, name="mcp-task-heartbeat")

    # runners ------------------------------------------------------------------------------

    async def _ready(self) -> None:
        """Before a store's first call on a loop: its runner registered (before any task
        names it), its heartbeat started, and what dead runners left failed."""
        if self._heartbeat.running_here():
            return
        await self._runners.renew()
        if self._heartbeat.running_here():
            return  # a call made meanwhile got there first
        self._heartbeat.start()
        await self._sweep(always=True)

    async def _beat(self) -> None:
        await self._runners.renew()
        await self._sweep(always=False)

    async def _sweep(self, *, always: bool) -> list[str]:
        orphans, dead = await self._runners.abandoned(always=always)
        failed = [task_id for task_id in orphans if await self._fail(task_id, orphans[task_id])]
        await self._runners.forget(dead)
        if failed:
            logger.warning("%d task(s) failed: the server process that ran them ended", len(failed))
        return failed

    async def _fail(self, task_id: str, runner_id: str) -> bool:
        """Fail the task, if it is still ``runner_id``'s and unfinished."""
        data = await self.hub.call(self.hub.client.get(self._key(task_id)))
        record = None if data is None else read_record(task_id, data)
        if record is None:  # gone (expired), or unreadable: so is its place in the runs hash
            await self.hub.call(self.hub.client.hdel(self._runners.runs_key, task_id))
            return False
        if record.terminal or record.runner_id != runner_id:
            return False
        failed = abandon(record)
        done = await self._abandon(
            [self._key(task_id), self._runners.runs_key],
            [data, failed.to_json(), task_id, _expire_at_ms(failed)],
        )
        return bool(done)

    async def fail_abandoned(self) -> list[str]:
        await self._ready()
        return await self._sweep(always=True)

    # the contract -------------------------------------------------------------------------

    def _key(self, task_id: str) -> str:
        return self._records + task_id

    def _owner_key(self, owner: str | None) -> str:
        return self._owners + _owner_token(owner)

    async def create(self, record: TaskRecord) -> None:
        await self._ready()
        owner_key = self._owner_key(record.owner) if record.listed else ""
        created = await self._create(
            [self._key(record.task_id), self._index, owner_key, self._runners.runs_key],
            [
                record.to_json(),
                record.task_id,
                _score(record),
                repr(time.time()),
                "" if self.max_tasks is None else self.max_tasks,
                _expire_at_ms(record),
                self._records,
                repr(record.created_at),
                _runner(record),
            ],
        )
        if created == -1:
            raise TaskExistsError(record.task_id)
        if created == 0:
            raise TaskStoreFullError(f"at most {self.max_tasks} tasks may be kept at once")

    async def get(self, task_id: str) -> TaskRecord | None:
        await self._ready()
        data = await self.hub.call(self.hub.client.get(self._key(task_id)))
        record = None if data is None else read_record(task_id, data)
        return None if record is None or record.expired() else record

    async def update(self, record: TaskRecord) -> bool:
        await self._ready()
        updated = await self._update(
            [self._key(record.task_id), self._index, self._runners.runs_key],
            [
                record.to_json(),
                record.task_id,
                _score(record),
                _expire_at_ms(record),
                _runner(record),
            ],
        )
        return bool(updated)

    async def list_expired(self, now: float | None = None, limit: int = 1000) -> list[str]:
        await self._ready()
        moment = time.time() if now is None else now
        ids = await self.hub.call(
            self.hub.client.zrangebyscore(self._index, "-inf", moment, start=0, num=limit)
        )
        return [i.decode() if isinstance(i, bytes) else i for i in ids]

    async def delete(self, task_id: str) -> bool:
        await self._ready()
        async with self.hub.client.pipeline(transaction=True) as pipe:
            pipe.delete(self._key(task_id))
            pipe.zrem(self._index, task_id)
            pipe.hdel(self._runners.runs_key, task_id)
            deleted, _, _ = await self.hub.call(pipe.execute())
        return bool(deleted)  # an owner index member left behind goes at its next listing

    async def list_owned(
        self,
        owner: str | None,
        *,
        after: ListPosition | None = None,
        limit: int = DEFAULT_LIST_LIMIT,
    ) -> list[TaskRecord]:
        await self._ready()
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
                if data is None:  # its record is gone (deleted, or dropped past its expiry)
                    gone.append(task_id)
                    continue
                record = read_record(task_id, data)
                if record is None:  # unreadable: passed over, and kept
                    continue
                if record.owner != owner or not record.listed:
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
        await self._ready()
        return int(await self.hub.call(self.hub.client.zcard(self._index)))

    async def close(self) -> None:
        await self._heartbeat.stop()
        try:
            if self._runners.registered:
                for task_id in await self._runners.mine():
                    await self._fail(task_id, self.runner_id)
                await self._runners.retire()
        except StoreUnavailableError as exc:  # its lease lapses: others fail them later
            logger.warning("task store: could not retire this runner: %s", exc)
        if self._owns_hub:
            await self.hub.aclose()
