"""Middleware around every message an app serves (``McpServerApp(middleware=[...])``,
``app.add_middleware``) or around the calls of one component (``use_middleware``, also
spelled ``use_interceptors``): the ``Middleware`` base class and its context, and the
built-ins ``ErrorHandling``, ``ResponseSizeLimit``, ``ToolSearch``, ``Logging``,
``Timing``, ``RateLimit`` and ``ResponseCache``. See docs/middleware.md."""

from mcpkit.server._engine.middleware import (
    METHOD_HOOKS,
    CallNext,
    Middleware,
    MiddlewareContext,
)
from mcpkit.server.middleware._builtins import (
    DEFAULT_MAX_RESPONSE_BYTES,
    MAX_ERROR_KINDS,
    ErrorHandling,
    ResponseSizeLimit,
)
from mcpkit.server.middleware._cache import (
    CACHE_METADATA,
    DEFAULT_CACHE_MAX_ENTRIES,
    DEFAULT_CACHE_TTL,
    CachePolicy,
    ResponseCache,
    cacheable,
)
from mcpkit.server.middleware._logging import DEFAULT_CALL_LOGGER, Logging
from mcpkit.server.middleware._rate_limit import (
    DEFAULT_MAX_RATE_LIMIT_KEYS,
    RATE_LIMITED,
    RateLimit,
    RateLimitedError,
    TokenBucketTable,
    by_identity,
    by_session,
)
from mcpkit.server.middleware._timing import CallTiming, DurationMetric, Timing
from mcpkit.server.middleware._tool_search import DEFAULT_MAX_RESULTS, ToolSearch

__all__ = [
    "CACHE_METADATA",
    "DEFAULT_CACHE_MAX_ENTRIES",
    "DEFAULT_CACHE_TTL",
    "DEFAULT_CALL_LOGGER",
    "DEFAULT_MAX_RATE_LIMIT_KEYS",
    "DEFAULT_MAX_RESPONSE_BYTES",
    "DEFAULT_MAX_RESULTS",
    "MAX_ERROR_KINDS",
    "METHOD_HOOKS",
    "RATE_LIMITED",
    "CachePolicy",
    "CallNext",
    "CallTiming",
    "DurationMetric",
    "ErrorHandling",
    "Logging",
    "Middleware",
    "MiddlewareContext",
    "RateLimit",
    "RateLimitedError",
    "ResponseCache",
    "ResponseSizeLimit",
    "Timing",
    "TokenBucketTable",
    "ToolSearch",
    "by_identity",
    "by_session",
    "cacheable",
]
