"""mcpkit: a fast, complete Python SDK for the Model Context Protocol.

The names below are loaded on first use: ``import mcpkit`` stays cheap (it imports no HTTP
client, server or JOSE library), and ``from mcpkit import McpClient`` imports only what the
client needs.

What is here is what programs use: the app and its decorators, the per-call context, the
client and its options, the exceptions, and the helpers that serve an app. The engine's
internals (``McpDispatcher``, ``TransportBinding``, ``CURRENT_BINDING``,
``McpConnectionRegistry``, ``McpRequestScope``...) are in ``mcpkit.server``.
"""

from __future__ import annotations

import importlib

from mcpkit._version import __version__

# Not ``typing.TYPE_CHECKING``: importing typing would be most of this module's import time.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from mcpkit._exceptions import (
        ConnectionClosedError,
        InternalError,
        InvalidParamsError,
        InvalidRequestError,
        McpCallError,
        MCPError,
        McpForbiddenError,
        MessageTooDeepError,
        MessageTooLargeError,
        MethodNotFoundError,
        MissingCapabilityError,
        ParseError,
        ProtocolError,
        RequestTimeoutError,
        ResourceNotFoundError,
        StateLimitError,
        ToolError,
        TransportError,
        UrlElicitationRequiredError,
    )
    from mcpkit.client import (
        HttpClientTransportOptions,
        HttpRedirectPolicy,
        HttpTransportMode,
        InputRequestError,
        McpClient,
        ProtocolEraError,
        SessionExpiredError,
        StdioClientTransportOptions,
        TaskCancelledError,
        TasksNotSupportedError,
        WebSocketClientTransportOptions,
    )
    from mcpkit.openapi import RouteMap
    from mcpkit.server import (
        Audio,
        Depends,
        DirectoryResource,
        ElicitResult,
        File,
        FileResource,
        Header,
        Image,
        McpCatalogManager,
        McpExecutionContext,
        McpServerApp,
        McpToolContext,
        ResourceSubscriptionManager,
        State,
        mcp_completion,
        mcp_lifespan,
        mcp_prompt,
        mcp_resource,
        mcp_server,
        mcp_tool,
        set_metadata,
        use_exception_handlers,
        use_guards,
        use_interceptors,
        use_middleware,
    )
    from mcpkit.transports import InMemoryTransport, serve_stdio
    from mcpkit.transports.http import StreamableHttpServerOptions, create_asgi_app, serve_http

# Where each public name lives: the module imported the first time the name is read.
_EXPORTS: dict[str, tuple[str, ...]] = {
    "mcpkit._exceptions": (
        "ConnectionClosedError",
        "InternalError",
        "InvalidParamsError",
        "InvalidRequestError",
        "McpCallError",
        "MCPError",
        "McpForbiddenError",
        "MessageTooDeepError",
        "MessageTooLargeError",
        "MethodNotFoundError",
        "MissingCapabilityError",
        "ParseError",
        "ProtocolError",
        "RequestTimeoutError",
        "ResourceNotFoundError",
        "StateLimitError",
        "ToolError",
        "TransportError",
        "UrlElicitationRequiredError",
    ),
    "mcpkit.client": (
        "HttpClientTransportOptions",
        "HttpRedirectPolicy",
        "HttpTransportMode",
        "InputRequestError",
        "McpClient",
        "ProtocolEraError",
        "SessionExpiredError",
        "StdioClientTransportOptions",
        "TaskCancelledError",
        "TasksNotSupportedError",
        "WebSocketClientTransportOptions",
    ),
    "mcpkit.openapi": ("RouteMap",),
    "mcpkit.server": (
        "Audio",
        "Depends",
        "DirectoryResource",
        "ElicitResult",
        "File",
        "FileResource",
        "Header",
        "Image",
        "McpCatalogManager",
        "McpExecutionContext",
        "McpServerApp",
        "McpToolContext",
        "ResourceSubscriptionManager",
        "State",
        "mcp_completion",
        "mcp_lifespan",
        "mcp_prompt",
        "mcp_resource",
        "mcp_server",
        "mcp_tool",
        "set_metadata",
        "use_exception_handlers",
        "use_guards",
        "use_interceptors",
        "use_middleware",
    ),
    "mcpkit.transports": ("InMemoryTransport", "serve_stdio"),
    "mcpkit.transports.http": ("StreamableHttpServerOptions", "create_asgi_app", "serve_http"),
}
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}
# Subpackages reachable as attributes (``mcpkit.server``) without importing them first.
_SUBPACKAGES = frozenset(
    {"auth", "cli", "client", "openapi", "protocol", "server", "stores", "testing", "transports"}
)


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is not None:
        value = getattr(importlib.import_module(module), name)
    elif name in _SUBPACKAGES:
        value = importlib.import_module(f"{__name__}.{name}")
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value  # later reads skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = [
    "Audio",
    "ConnectionClosedError",
    "Depends",
    "DirectoryResource",
    "ElicitResult",
    "File",
    "FileResource",
    "Header",
    "HttpClientTransportOptions",
    "HttpRedirectPolicy",
    "HttpTransportMode",
    "Image",
    "InMemoryTransport",
    "InputRequestError",
    "InternalError",
    "InvalidParamsError",
    "InvalidRequestError",
    "MCPError",
    "McpCallError",
    "McpCatalogManager",
    "McpClient",
    "McpExecutionContext",
    "McpForbiddenError",
    "McpServerApp",
    "McpToolContext",
    "MessageTooDeepError",
    "MessageTooLargeError",
    "MethodNotFoundError",
    "MissingCapabilityError",
    "ParseError",
    "ProtocolEraError",
    "ProtocolError",
    "RequestTimeoutError",
    "ResourceNotFoundError",
    "ResourceSubscriptionManager",
    "RouteMap",
    "SessionExpiredError",
    "State",
    "StateLimitError",
    "StdioClientTransportOptions",
    "StreamableHttpServerOptions",
    "TaskCancelledError",
    "TasksNotSupportedError",
    "ToolError",
    "TransportError",
    "UrlElicitationRequiredError",
    "WebSocketClientTransportOptions",
    "__version__",
    "create_asgi_app",
    "mcp_completion",
    "mcp_lifespan",
    "mcp_prompt",
    "mcp_resource",
    "mcp_server",
    "mcp_tool",
    "serve_http",
    "serve_stdio",
    "set_metadata",
    "use_exception_handlers",
    "use_guards",
    "use_interceptors",
    "use_middleware",
]
