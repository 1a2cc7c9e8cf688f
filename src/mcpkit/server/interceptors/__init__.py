"""Deprecated: the ready interceptors are middleware now, in ``mcpkit.server.middleware``
(``LoggingInterceptor`` is ``Logging``, ``TimingInterceptor`` is ``Timing``,
``RateLimitInterceptor`` is ``RateLimit``; ``ResponseCache``, ``cacheable`` and the rest
keep their names). They attach the same way (``use_interceptors``) and also app-wide
(``McpServerApp(middleware=[...])``). Each name read from here still works, with a
``DeprecationWarning``. See docs/middleware.md."""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

#: The old names, and their names in ``mcpkit.server.middleware``.
_MOVED: Mapping[str, str] = MappingProxyType(
    {
        "LoggingInterceptor": "Logging",
        "TimingInterceptor": "Timing",
        "RateLimitInterceptor": "RateLimit",
        **{
            name: name
            for name in (
                "CACHE_METADATA",
                "DEFAULT_CACHE_MAX_ENTRIES",
                "DEFAULT_CACHE_TTL",
                "DEFAULT_CALL_LOGGER",
                "DEFAULT_MAX_RATE_LIMIT_KEYS",
                "RATE_LIMITED",
                "CachePolicy",
                "CallTiming",
                "DurationMetric",
                "RateLimitedError",
                "ResponseCache",
                "TokenBucketTable",
                "by_identity",
                "by_session",
                "cacheable",
            )
        },
    }
)

__all__: tuple[str, ...] = ()


def __getattr__(name: str) -> Any:
    moved = _MOVED.get(name)
    if moved is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(
        f"mcpkit.server.interceptors.{name} is deprecated: use mcpkit.server.middleware.{moved}",
        DeprecationWarning,
        stacklevel=2,
    )
    return getattr(importlib.import_module("mcpkit.server.middleware"), moved)


def __dir__() -> list[str]:
    return sorted(_MOVED)
