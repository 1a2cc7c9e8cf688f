"""``McpClient`` and its transports."""

from mcpkit.client._client import McpClient, ServerDiscovery
from mcpkit.client._errors import (
    InputRequestError,
    ProtocolEraError,
    SessionExpiredError,
    TaskCancelledError,
    TasksNotSupportedError,
)
from mcpkit.client._http_factory import connect_http, connect_websocket
from mcpkit.client._http_options import (
    HttpClientTransportOptions,
    HttpRedirectPolicy,
    HttpTransportMode,
)
from mcpkit.client._session import ClientSession
from mcpkit.client._stdio import StdioClientTransport, StdioClientTransportOptions
from mcpkit.client._subscriptions import ListenStream, ServerNotification
from mcpkit.client._tasks import TaskState, ToolTask
from mcpkit.client._websocket import WebSocketClientTransportOptions

__all__ = [
    "ClientSession",
    "HttpClientTransportOptions",
    "HttpRedirectPolicy",
    "HttpTransportMode",
    "InputRequestError",
    "ListenStream",
    "McpClient",
    "ProtocolEraError",
    "ServerDiscovery",
    "ServerNotification",
    "SessionExpiredError",
    "StdioClientTransport",
    "StdioClientTransportOptions",
    "TaskCancelledError",
    "TaskState",
    "TasksNotSupportedError",
    "ToolTask",
    "WebSocketClientTransportOptions",
    "connect_http",
    "connect_websocket",
]
