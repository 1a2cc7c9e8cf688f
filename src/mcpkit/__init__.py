"""mcpkit: a fast, complete Python SDK for the Model Context Protocol.

The names below are loaded on first use: ``import mcpkit`` stays cheap (it imports no HTTP
client, server or JOSE library), and ``from mcpkit import McpClient`` imports only what the
client needs.
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
        TransportError,
        UrlElicitationRequiredError,
    )
    from mcpkit.client import (
        HttpClientTransportOptions,
        HttpRedirectPolicy,
        HttpTransportMode,
        McpClient,
        StdioClientTransportOptions,
        WebSocketClientTransportOptions,
    )
    from mcpkit.openapi import RouteMap
    from mcpkit.server import (
        CURRENT_BINDING,
        Audio,
        Depends,
        DirectoryResource,
        ElicitResult,
        FileResource,
        Header,
        Image,
        McpCatalogManager,
        McpConnectionRegistry,
        McpDispatcher,
        McpExecutionContext,
        McpRequestScope,
        McpServerApp,
        McpToolContext,
        ResourceSubscriptionManager,
        State,
        TransportBinding,
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
    )
    from mcpkit.transports import InMemoryTransport
    from mcpkit.transports.http import StreamableHttpServerOptions, create_asgi_app

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
        "TransportError",
        "UrlElicitationRequiredError",
    ),
    "mcpkit.client": (
        "HttpClientTransportOptions",
        "HttpRedirectPolicy",
        "HttpTransportMode",
        "McpClient",
        "StdioClientTransportOptions",
        "WebSocketClientTransportOptions",
    ),
    "mcpkit.openapi": ("RouteMap",),
    "mcpkit.server": (
        "CURRENT_BINDING",
        "Audio",
        "Depends",
        "DirectoryResource",
        "ElicitResult",
        "FileResource",
        "Header",
        "Image",
        "McpCatalogManager",
        "McpConnectionRegistry",
        "McpDispatcher",
        "McpExecutionContext",
        "McpRequestScope",
        "McpServerApp",
        "McpToolContext",
        "ResourceSubscriptionManager",
        "State",
        "TransportBinding",
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
    ),
    "mcpkit.transports": ("InMemoryTransport",),
    "mcpkit.transports.http": ("StreamableHttpServerOptions", "create_asgi_app"),
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
    "CURRENT_BINDING",
    "Audio",
    "ConnectionClosedError",
    "Depends",
    "DirectoryResource",
    "ElicitResult",
    "FileResource",
    "Header",
    "HttpClientTransportOptions",
    "HttpRedirectPolicy",
    "HttpTransportMode",
    "Image",
    "InMemoryTransport",
    "InternalError",
    "InvalidParamsError",
    "InvalidRequestError",
    "MCPError",
    "McpCallError",
    "McpCatalogManager",
    "McpClient",
    "McpConnectionRegistry",
    "McpDispatcher",
    "McpExecutionContext",
    "McpForbiddenError",
    "McpRequestScope",
    "McpServerApp",
    "McpToolContext",
    "MessageTooDeepError",
    "MessageTooLargeError",
    "MethodNotFoundError",
    "MissingCapabilityError",
    "ParseError",
    "ProtocolError",
    "RequestTimeoutError",
    "ResourceNotFoundError",
    "ResourceSubscriptionManager",
    "RouteMap",
    "State",
    "StdioClientTransportOptions",
    "StreamableHttpServerOptions",
    "TransportBinding",
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
    "set_metadata",
    "use_exception_handlers",
    "use_guards",
    "use_interceptors",
]
