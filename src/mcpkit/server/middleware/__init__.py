"""Middleware around every message an app serves (``McpServerApp(middleware=[...])``,
``app.add_middleware``): the ``Middleware`` base class and its context, and the built-ins
``ErrorHandling`` and ``ResponseSizeLimit``. See docs/middleware.md."""

from mcpkit.server._engine.middleware import (
    METHOD_HOOKS,
    Middleware,
    MiddlewareContext,
)
from mcpkit.server.middleware._builtins import (
    DEFAULT_MAX_RESPONSE_BYTES,
    MAX_ERROR_KINDS,
    ErrorHandling,
    ResponseSizeLimit,
)

__all__ = [
    "DEFAULT_MAX_RESPONSE_BYTES",
    "MAX_ERROR_KINDS",
    "METHOD_HOOKS",
    "ErrorHandling",
    "Middleware",
    "MiddlewareContext",
    "ResponseSizeLimit",
]
