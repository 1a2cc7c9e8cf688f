"""``McpClient`` and its transports."""

from mcpkit.client._client import McpClient
from mcpkit.client._http_factory import connect_http, connect_websocket
from mcpkit.client._http_options import HttpClientTransportOptions, HttpRedirectPolicy, HttpTransportMode
from mcpkit.client._session import ClientSession
from mcpkit.client._stdio import StdioClientTransport, StdioClientTransportOptions

__all__ = [
    "ClientSession",
    "HttpClientTransportOptions",
    "HttpRedirectPolicy",
    "HttpTransportMode",
    "McpClient",
    "StdioClientTransport",
    "StdioClientTransportOptions",
    "connect_http",
    "connect_websocket",
]
