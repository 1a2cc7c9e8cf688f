"""HTTP server transports as one ASGI app: Streamable HTTP, legacy HTTP+SSE, WebSocket."""

from mcpkit.transports.http._app import McpAsgiApp, create_asgi_app
from mcpkit.transports.http._options import StreamableHttpServerOptions, TransportSecuritySettings
from mcpkit.transports.http._server.serve import run_http_server, serve_http
from mcpkit.transports.http._server.workers import WorkersNeedSharedStateError, serve_workers
from mcpkit.transports.http._streamable.sessions import StreamableSession, StreamableSessionStore

__all__ = [
    "McpAsgiApp",
    "StreamableHttpServerOptions",
    "StreamableSession",
    "StreamableSessionStore",
    "TransportSecuritySettings",
    "WorkersNeedSharedStateError",
    "create_asgi_app",
    "run_http_server",
    "serve_http",
    "serve_workers",
]
