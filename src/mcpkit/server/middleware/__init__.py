"""Middleware around every message an app serves (``McpServerApp(middleware=[...])``,
``app.add_middleware``): the ``Middleware`` base class and its context, and the built-ins
``ErrorHandling``, ``ResponseSizeLimit`` and ``ToolSearch``. See docs/middleware.md."""

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
from mcpkit.server.middleware._tool_search import DEFAULT_MAX_RESULTS, ToolSearch

__all__ = [
    "DEFAULT_MAX_RESPONSE_BYTES",
    "DEFAULT_MAX_RESULTS",
    "MAX_ERROR_KINDS",
    "METHOD_HOOKS",
    "ErrorHandling",
    "Middleware",
    "MiddlewareContext",
    "ResponseSizeLimit",
    "ToolSearch",
]
