"""Ready interceptors for ``@use_interceptors`` (on a server class, a method, or a
mounted app): ``LoggingInterceptor``, ``TimingInterceptor``, ``RateLimitInterceptor`` and
``ResponseCache``. See docs/interceptors.md."""

from mcpkit.server.interceptors._cache import (
    CACHE_METADATA,
    DEFAULT_CACHE_MAX_ENTRIES,
    DEFAULT_CACHE_TTL,
    CachePolicy,
    ResponseCache,
    cacheable,
)
from mcpkit.server.interceptors._logging import DEFAULT_CALL_LOGGER, LoggingInterceptor
from mcpkit.server.interceptors._rate_limit import (
    DEFAULT_MAX_RATE_LIMIT_KEYS,
    RATE_LIMITED,
    RateLimitedError,
    RateLimitInterceptor,
    TokenBucketTable,
    by_identity,
    by_session,
)
from mcpkit.server.interceptors._timing import CallTiming, DurationMetric, TimingInterceptor

__all__ = [
    "CACHE_METADATA",
    "DEFAULT_CACHE_MAX_ENTRIES",
    "DEFAULT_CACHE_TTL",
    "DEFAULT_CALL_LOGGER",
    "DEFAULT_MAX_RATE_LIMIT_KEYS",
    "RATE_LIMITED",
    "CachePolicy",
    "CallTiming",
    "DurationMetric",
    "LoggingInterceptor",
    "RateLimitInterceptor",
    "RateLimitedError",
    "ResponseCache",
    "TimingInterceptor",
    "TokenBucketTable",
    "by_identity",
    "by_session",
    "cacheable",
]
