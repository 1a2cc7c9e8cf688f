"""HTTP server transports as one ASGI app: Streamable HTTP, legacy HTTP+SSE, WebSocket."""

from mcpkit.transports.http._app import McpAsgiApp, create_asgi_app, serve_http
from mcpkit.transports.http._options import StreamableHttpServerOptions, TransportSecuritySettings
from mcpkit.transports.http._sessions import StreamableSession, StreamableSessionStore

__all__ = [
    "McpAsgiApp",
    "StreamableHttpServerOptions",
    "StreamableSession",
    "StreamableSessionStore",
    "TransportSecuritySettings",
    "create_asgi_app",
    "serve_http",
]
