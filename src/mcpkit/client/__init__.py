"""``McpClient`` and its transports."""

from mcpkit.client._client import McpClient
from mcpkit.client._session import ClientSession
from mcpkit.client._stdio import StdioClientTransport, StdioClientTransportOptions

__all__ = ["ClientSession", "McpClient", "StdioClientTransport", "StdioClientTransportOptions"]
