"""``RedisProxyStore``: the proxy's state in Redis (``mcpkit[redis]``), for instances on
several machines behind one address.

Each entry is a hash (its JSON value, its expiry, whether it was taken) under
``{prefix}:oauth:{table}:e:{key}``, with a key TTL at its expiry, so Redis drops it by
itself; each table has an index, a sorted set of its keys by expiry, that bounds it by
count: past the bound the entries expiring soonest are deleted (registered clients
excepted: ``StoreFullError``). Every step is one Lua script, so taking a code or a refresh
token reads it and marks it taken atomically: two instances given the same code at once
answer one of them as a second use. The index holds keys it does not name to the script
(the evicted ones): Redis Cluster is not supported, as for sessions.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from typing import Any

from mcpkit._exceptions import StoreUnavailableError
from mcpkit._extras import require
from mcpkit.auth._dpop_state import ScriptHost
from mcpkit.auth._proxy._store import StoreFullError, TableProxyStore

DEFAULT_PROXY_REDIS_URL = "redis://127.0.0.1:6379/0"
DEFAULT_PROXY_REDIS_PREFIX = "mcpkit"
#: Seconds a Redis command may take (a store made from a URL).
DEFAULT_PROXY_REDIS_TIMEOUT = 5.0

# KEYS: the entry, the table's index. ARGV: now, expiry (a score: "+inf" for none), TTL in
# ms (0: none), the value, the bound, "1" to evict (else answer 0 when full), the key, the
# entries' key prefix. Expired index entries go first (their keys expire by their TTL).
_PUT = """
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[7])
local over = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[5]) + 1
if over > 0 then
  if ARGV[6] ~= '1' then return 0 end
  local popped = redis.call('ZPOPMIN', KEYS[2], over)
  for i = 1, #popped, 2 do redis.call('DEL', ARGV[8] .. popped[i]) end
end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'v', ARGV[4], 'u', ARGV[2], 't', '0')
if tonumber(ARGV[3]) > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[7])
return 1
"""

_GET = "return redis.call('HMGET', KEYS[1], 'v', 'u', 't')"

# KEYS: the entry. The entry as it was, now marked taken.
_TAKE = """
local r = redis.call('HMGET', KEYS[1], 'v', 'u', 't')
if not r[1] then return false end
if r[3] ~= '1' then redis.call('HSET', KEYS[1], 't', '1') end
return r
"""

# KEYS: the entry, the table's index. ARGV: the key. The entry as it was, now deleted.
_POP = """
local r = redis.call('HMGET', KEYS[1], 'v', 'u', 't')
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
if not r[1] then return false end
return r
"""


def _text(value: Any) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


class _OwnRedis:
    """A Redis client of the store's own (made from a URL, or given as a
    ``redis.asyncio.Redis``), as the ``ScriptHost`` the store runs its scripts on."""

    def __init__(self, client: Any, prefix: str) -> None:
        from redis.exceptions import RedisError

        self.client = client
        self.prefix = prefix
        self.errors: tuple[type[BaseException], ...] = (RedisError, OSError, TimeoutError)

    def key(self, *parts: str) -> str:
        return ":".join((self.prefix, *parts))

    def script(self, source: str) -> Callable[..., Awaitable[Any]]:
        compiled = self.client.register_script(source)

        async def run(keys: list[str], args: list[Any]) -> Any:
            try:
                return await compiled(keys=keys, args=args)
            except self.errors as exc:
                raise StoreUnavailableError(f"Redis is unavailable: {exc!r}") from exc

        return run


class RedisProxyStore(TableProxyStore):
    """``ProxyStore`` in Redis, shared by every instance given the same Redis. ``redis``: a
    URL, a ``redis.asyncio.Redis``, or the ``mcpkit.stores.RedisHub`` the instances share
    sessions through (its prefix then applies). Every table is bounded as in
    ``MemoryProxyStore`` (the same keyword arguments), by count, and every entry carries a
    key TTL. Redis unreachable: ``StoreUnavailableError``."""

    def __init__(
        self,
        redis: ScriptHost | str | Any = DEFAULT_PROXY_REDIS_URL,
        *,
        prefix: str = DEFAULT_PROXY_REDIS_PREFIX,
        timeout: float = DEFAULT_PROXY_REDIS_TIMEOUT,
        **bounds: Any,
    ) -> None:
        super().__init__(**bounds)
        self._own: Any = None
        if isinstance(redis, str):
            aioredis = require("redis.asyncio", "redis", "RedisProxyStore")
            self._own = aioredis.Redis.from_url(
                redis, socket_timeout=timeout, socket_connect_timeout=timeout
            )
            redis = _OwnRedis(self._own, prefix)
        elif not (hasattr(redis, "script") and hasattr(redis, "key")):
            require("redis.asyncio", "redis", "RedisProxyStore")
            redis = _OwnRedis(redis, prefix)
        self.hub: ScriptHost = redis
        self._put = redis.script(_PUT)
        self._get = redis.script(_GET)
        self._take = redis.script(_TAKE)
        self._pop = redis.script(_POP)

    def _entry(self, table: str, key: str) -> str:
        return self.hub.key("oauth", table, "e", key)

    def _index(self, table: str) -> str:
        return self.hub.key("oauth", table, "i")

    def _found(self, reply: Any) -> tuple[str, bool] | None:
        """(value, taken) of a live entry from ``HMGET v u t``, else None."""
        if not reply or reply[0] is None:
            return None
        if float(_text(reply[1])) <= self.clock():
            return None
        return _text(reply[0]), _text(reply[2]) == "1"

    async def put(self, table: str, key: str, value: str, until: float, *, evict: bool) -> None:
        """Keep ``value`` under ``key`` until ``until``, within the table's bound."""
        now = self.clock()
        finite = math.isfinite(until)
        ttl_ms = max(1, math.ceil((until - now) * 1000)) if finite else 0
        done = await self._put(
            [self._entry(table, key), self._index(table)],
            [
                repr(now),
                repr(until) if finite else "+inf",
                ttl_ms,
                value,
                self.limits[table],
                "1" if evict else "0",
                key,
                self._entry(table, ""),
            ],
        )
        if not int(done):
            raise StoreFullError(f"the {table} table is full ({self.limits[table]} entries)")

    async def get(self, table: str, key: str) -> tuple[str, bool] | None:
        """(value, taken), None when absent or expired."""
        return self._found(await self._get([self._entry(table, key)], []))

    async def take(self, table: str, key: str) -> tuple[str, bool] | None:
        """(value, taken before), the entry marked taken by the same script."""
        return self._found(await self._take([self._entry(table, key)], []))

    async def pop(self, table: str, key: str) -> str | None:
        """The entry's value, deleted by the same script."""
        found = self._found(await self._pop([self._entry(table, key), self._index(table)], [key]))
        return None if found is None else found[0]

    async def aclose(self) -> None:
        """Close the Redis client the store made (a hub or client given is left open)."""
        if self._own is not None:
            own, self._own = self._own, None
            await own.aclose()


__all__ = ["DEFAULT_PROXY_REDIS_URL", "RedisProxyStore"]
