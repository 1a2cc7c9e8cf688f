"""``McpClient`` and its transports.

The names are loaded on first use: ``from mcpkit.client import McpClient`` imports no HTTP
client (a transport over HTTP loads it when one is made).
"""

from __future__ import annotations

import importlib

# Not ``typing.TYPE_CHECKING``: importing typing is most of a lazy module's import time.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from mcpkit.client._auth_hooks import HttpRequestHeaderContext, HttpResponseChallengeContext
    from mcpkit.client._client import McpClient, ServerDiscovery, connect_http, connect_websocket
    from mcpkit.client._endpoint_memory import EndpointMemory
    from mcpkit.client._errors import (
        InputRequestError,
        ProtocolEraError,
        SessionExpiredError,
        TaskCancelledError,
        TasksNotSupportedError,
    )
    from mcpkit.client._http_options import (
        HttpClientTransportOptions,
        HttpRedirectPolicy,
        HttpStatusError,
    )
    from mcpkit.client._legacy_sse import LegacySseClientTransport
    from mcpkit.client._session import ClientSession
    from mcpkit.client._stdio import StdioClientTransport, StdioClientTransportOptions
    from mcpkit.client._streamable_http import StreamableHttpClientTransport
    from mcpkit.client._subscriptions import ListenStream, ServerNotification
    from mcpkit.client._task_state import TaskState
    from mcpkit.client._tasks import ToolTask
    from mcpkit.client._tool_results import ToolResult
    from mcpkit.client._tool_versions import tool_versions
    from mcpkit.client._transport_mode import HttpTransportMode
    from mcpkit.client._websocket import WebSocketClientTransportOptions

# Where each public name lives: the module imported the first time the name is read.
_EXPORTS: dict[str, tuple[str, ...]] = {
    "mcpkit.client._auth_hooks": ("HttpRequestHeaderContext", "HttpResponseChallengeContext"),
    "mcpkit.client._client": ("McpClient", "ServerDiscovery", "connect_http", "connect_websocket"),
    "mcpkit.client._endpoint_memory": ("EndpointMemory",),
    "mcpkit.client._errors": (
        "InputRequestError",
        "ProtocolEraError",
        "SessionExpiredError",
        "TaskCancelledError",
        "TasksNotSupportedError",
    ),
    "mcpkit.client._http_options": (
        "HttpClientTransportOptions",
        "HttpRedirectPolicy",
        "HttpStatusError",
    ),
    "mcpkit.client._legacy_sse": ("LegacySseClientTransport",),
    "mcpkit.client._session": ("ClientSession",),
    "mcpkit.client._stdio": ("StdioClientTransport", "StdioClientTransportOptions"),
    "mcpkit.client._tool_results": ("ToolResult",),
    "mcpkit.client._tool_versions": ("tool_versions",),
    "mcpkit.client._streamable_http": ("StreamableHttpClientTransport",),
    "mcpkit.client._subscriptions": ("ListenStream", "ServerNotification"),
    "mcpkit.client._task_state": ("TaskState",),
    "mcpkit.client._tasks": ("ToolTask",),
    "mcpkit.client._transport_mode": ("HttpTransportMode",),
    "mcpkit.client._websocket": ("WebSocketClientTransportOptions",),
}
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later reads skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = [
    "ClientSession",
    "EndpointMemory",
    "HttpClientTransportOptions",
    "HttpRedirectPolicy",
    "HttpRequestHeaderContext",
    "HttpResponseChallengeContext",
    "HttpStatusError",
    "HttpTransportMode",
    "InputRequestError",
    "LegacySseClientTransport",
    "ListenStream",
    "McpClient",
    "ProtocolEraError",
    "ServerDiscovery",
    "ServerNotification",
    "SessionExpiredError",
    "StdioClientTransport",
    "StdioClientTransportOptions",
    "StreamableHttpClientTransport",
    "TaskCancelledError",
    "TaskState",
    "TasksNotSupportedError",
    "ToolResult",
    "ToolTask",
    "WebSocketClientTransportOptions",
    "connect_http",
    "connect_websocket",
    "tool_versions",
]
