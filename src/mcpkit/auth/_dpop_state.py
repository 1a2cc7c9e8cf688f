"""Where the DPoP state of a resource server lives: the key of each nonce period and the
proofs already accepted (their ``jti``, to refuse a replay).

Every instance serving one endpoint (``--workers``, or several servers behind a balancer)
must share it: a nonce one issued is presented to another, and a proof accepted by one
must be refused by every other. ``LocalDPoPState`` keeps it in the process (one instance);
``RedisDPoPState`` keeps it in the Redis the instances already share sessions through.
Both are bounded: at most ``max_entries`` proofs, each kept only while it could still be
accepted.
"""

from __future__ import annotations

import hmac
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from mcpkit.auth._dpop import DEFAULT_REPLAY_CACHE_SIZE, Clock, ReplayCache


class DPoPStateStore(Protocol):
    """The DPoP state several instances share (see the module's docstring)."""

    def nonce_key(self, period: int, ttl: float) -> Awaitable[bytes]:
        """The key nonces of ``period`` are made with: made by the first instance to ask,
        read by every other; kept ``ttl`` seconds."""
        ...

    def first_use(self, key: str, ttl: float) -> Awaitable[bool]:
        """Record a proof (``replay_key``) for ``ttl`` seconds; False when it was already
        recorded and has not expired (a replay)."""
        ...


class LocalDPoPState:
    """The DPoP state of one process: nonce keys derived from a random secret of its own,
    accepted proofs in a ``ReplayCache`` of ``max_entries``."""

    def __init__(
        self, max_entries: int = DEFAULT_REPLAY_CACHE_SIZE, clock: Clock = time.time
    ) -> None:
        self.replays = ReplayCache(0.0, max_entries, clock)
        self._secret = secrets.token_bytes(32)

    async def nonce_key(self, period: int, ttl: float) -> bytes:
        """The key nonces of ``period`` are made with (``DPoPStateStore.nonce_key``)."""
        return hmac.new(self._secret, period.to_bytes(8, "big", signed=True), "sha256").digest()

    async def first_use(self, key: str, ttl: float) -> bool:
        """Record a proof; False for a replay (``DPoPStateStore.first_use``)."""
        return self.replays.add(key, ttl)


class ScriptHost(Protocol):
    """What ``RedisDPoPState`` needs of a ``mcpkit.stores.RedisHub`` (this layer does not
    import the stores): keys under its prefix, and Lua scripts run on its pool."""

    def key(self, *parts: str) -> str: ...

    def script(self, source: str) -> Callable[..., Awaitable[Any]]: ...


# The period's key: the one stored, else ARGV[1], stored for ARGV[2] ms. One script, so two
# instances asking at once get the same key.
_NONCE_KEY = """
local key = redis.call('GET', KEYS[1])
if key then return key end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return ARGV[1]
"""

# Record a proof: KEYS[1] a sorted set of proof keys scored by expiry (ms, Redis's clock, so
# every instance agrees on it). ARGV: the proof's key, its ttl in ms, the most entries.
# Expired entries go first; at the bound, those expiring soonest make room (before the new
# one is added: it is never the one dropped). 0 when already there.
_FIRST_USE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
local over = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[3]) + 1
if over > 0 then redis.call('ZPOPMIN', KEYS[1], over) end
local ttl = tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
if redis.call('PTTL', KEYS[1]) < ttl then redis.call('PEXPIRE', KEYS[1], ttl) end
return 1
"""


class RedisDPoPState:
    """The DPoP state in Redis, on ``hub`` (a ``mcpkit.stores.RedisHub``: the one the
    instances share sessions through), so every instance issues and accepts the same
    nonces and a proof is accepted once across all of them. At most ``max_entries``
    proofs are kept (one sorted set; Redis Cluster is not supported, as for sessions).
    Redis unreachable: ``StoreUnavailableError`` (the gate answers 503)."""

    def __init__(self, hub: ScriptHost, *, max_entries: int = DEFAULT_REPLAY_CACHE_SIZE) -> None:
        self.max_entries = max(1, max_entries)
        self._seen = hub.key("dpop", "seen")
        self._nonce_prefix = hub.key("dpop", "nonce-key")
        self._nonce_key = hub.script(_NONCE_KEY)
        self._first_use = hub.script(_FIRST_USE)

    async def nonce_key(self, period: int, ttl: float) -> bytes:
        """The key nonces of ``period`` are made with (``DPoPStateStore.nonce_key``)."""
        # Hex text: read back the same whether or not the client decodes responses.
        fresh = secrets.token_hex(32)
        stored = await self._nonce_key(
            [f"{self._nonce_prefix}:{period}"], [fresh, max(1, int(ttl * 1000))]
        )
        return stored if isinstance(stored, bytes) else str(stored).encode("ascii")

    async def first_use(self, key: str, ttl: float) -> bool:
        """Record a proof; False for a replay (``DPoPStateStore.first_use``)."""
        ttl_ms = max(1, int(ttl * 1000))
        return bool(await self._first_use([self._seen], [key, ttl_ms, self.max_entries]))


__all__ = ["DPoPStateStore", "LocalDPoPState", "RedisDPoPState", "ScriptHost"]
