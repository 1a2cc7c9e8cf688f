"""``RateLimit``: a token bucket per caller (the authenticated principal, or the
session), in a bounded table of keys."""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal

from mcpkit._exceptions import ProtocolError
from mcpkit.server._engine.middleware import CallNext, Middleware, MiddlewareContext
from mcpkit.server.middleware._common import identity_of, session_of

#: The JSON-RPC error code of a refused call. JSON-RPC leaves -32000…-32099 to servers;
#: -32029 echoes HTTP 429 and is used by no MCP version.
RATE_LIMITED = -32029
#: Callers whose buckets are remembered at once; the least recently seen is forgotten
#: first (it starts again with a full bucket).
DEFAULT_MAX_RATE_LIMIT_KEYS = 10_000

KeyFunction = Callable[[MiddlewareContext], "str | None"]


class RateLimitedError(ProtocolError):
    """A call refused by a rate limit: -32029, ``data`` says when to retry
    (``retryAfter`` seconds, ``retryAfterMs``) and which limit it was."""

    code = RATE_LIMITED

    def __init__(self, retry_after: float, rate: float, burst: int, scope: str) -> None:
        retry_after = max(retry_after, 0.0)
        super().__init__(
            f"Rate limit exceeded: retry in {retry_after:.2f} s",
            {
                "type": "RATE_LIMITED",
                "retryAfter": math.ceil(retry_after * 1000) / 1000,
                "retryAfterMs": math.ceil(retry_after * 1000),
                "rate": rate,
                "burst": burst,
                "scope": scope,
            },
        )
        self.retry_after = retry_after


@dataclass(slots=True)
class _Bucket:
    tokens: float
    updated: float


def by_identity(context: MiddlewareContext) -> str:
    """The authenticated principal; without bearer auth the session; else one shared key."""
    identity = identity_of(context)
    if identity is not None:
        return f"identity:{identity}"
    session = session_of(context)
    if session is not None:
        return f"session:{session}"
    return "anonymous"


def by_session(context: MiddlewareContext) -> str:
    """The session (handshake era); without one (2026-07-28 has none) the principal; else
    one shared key."""
    session = session_of(context)
    if session is not None:
        return f"session:{session}"
    identity = identity_of(context)
    if identity is not None:
        return f"identity:{identity}"
    return "anonymous"


_KEYS: Mapping[str, KeyFunction] = MappingProxyType(
    {"identity": by_identity, "session": by_session}
)


class TokenBucketTable:
    """Token buckets by key: each holds up to ``burst`` tokens and gains ``rate`` a second;
    at most ``max_keys`` are kept (least recently used forgotten first). Thread-safe: sync
    tools run in worker threads."""

    def __init__(
        self,
        rate: float,
        burst: int,
        *,
        max_keys: int = DEFAULT_MAX_RATE_LIMIT_KEYS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not rate > 0:
            raise ValueError("rate must be a positive number of calls per second")
        if burst < 1:
            raise ValueError("burst must be at least 1")
        if max_keys < 1:
            raise ValueError("max_keys must be at least 1")
        self.rate = float(rate)
        self.burst = int(burst)
        self.max_keys = max_keys
        self.clock = clock
        self._buckets: OrderedDict[str, _Bucket] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._buckets)

    def take(self, key: str, cost: float = 1.0) -> float:
        """Take ``cost`` tokens from ``key``'s bucket: 0.0 when they were there (taken),
        else the seconds until they will be (nothing taken)."""
        with self._lock:
            now = self.clock()
            bucket = self._buckets.get(key)
            if bucket is None:
                bucket = _Bucket(float(self.burst), now)
                self._buckets[key] = bucket
                while len(self._buckets) > self.max_keys:
                    self._buckets.popitem(last=False)
            else:
                self._buckets.move_to_end(key)
                elapsed = max(now - bucket.updated, 0.0)
                bucket.tokens = min(float(self.burst), bucket.tokens + elapsed * self.rate)
                bucket.updated = now
            if bucket.tokens >= cost:
                bucket.tokens -= cost
                return 0.0
            return (cost - bucket.tokens) / self.rate


class RateLimit(Middleware):
    """Refuses calls beyond ``rate`` per second (with bursts of up to ``burst``) per caller:
    ``tools/call``, ``resources/read`` and ``prompts/get``, every one app-wide, or those of
    the components it is attached to. Other requests (lists, pings) are not limited.

    ``key`` picks the caller: ``"identity"`` (the default: the bearer token's principal,
    i.e. issuer, client and subject; without auth the session; without either, one key
    shared by all), ``"session"`` (the session first), or a function of the
    ``MiddlewareContext`` returning a key (None: not limited; ``context.name`` tells the
    tool, so one function can limit some tools only). A refused call is a
    JSON-RPC error -32029 (``RateLimitedError``), not an ``isError`` result: the request
    itself was not served, and a client can back off by ``data.retryAfter`` seconds without
    a model reading the refusal as the tool's answer. At most ``max_keys`` callers are
    remembered (``DEFAULT_MAX_RATE_LIMIT_KEYS``). ``cost(ctx)`` may make some calls
    count more than one token.
    """

    def __init__(
        self,
        rate: float,
        burst: int | None = None,
        *,
        key: Literal["identity", "session"] | KeyFunction = "identity",
        max_keys: int = DEFAULT_MAX_RATE_LIMIT_KEYS,
        cost: Callable[[MiddlewareContext], float] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        burst = max(1, math.ceil(rate)) if burst is None else burst
        self.buckets = TokenBucketTable(rate, burst, max_keys=max_keys, clock=clock)
        if isinstance(key, str):
            if key not in _KEYS:
                raise ValueError(f"key must be 'identity', 'session' or a function, not {key!r}")
            self.scope: str = key
            self.key: KeyFunction = _KEYS[key]
        else:
            self.scope = "custom"
            self.key = key
        self.cost = cost

    async def on_call_tool(self, context: MiddlewareContext, call_next: CallNext) -> Any:
        """Let the call through when its caller's bucket has a token, else refuse it."""
        self._take(context)
        return await call_next(context)

    on_read_resource = on_call_tool
    on_get_prompt = on_call_tool

    def _take(self, context: MiddlewareContext) -> None:
        key = self.key(context)
        if key is not None:
            cost = self.cost(context) if self.cost is not None else 1.0
            if cost > self.buckets.burst:
                raise ProtocolError(
                    f"{context.method} {context.name} costs {cost} tokens, more than the "
                    f"burst of {self.buckets.burst}: it can never run",
                    {"type": "RATE_LIMITED", "cost": cost, "burst": self.buckets.burst},
                    code=RATE_LIMITED,
                )
            wait = self.buckets.take(key, cost)
            if wait > 0:
                raise RateLimitedError(wait, self.buckets.rate, self.buckets.burst, self.scope)
