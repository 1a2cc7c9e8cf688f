"""Serve any MCP server (a command over stdio, or a URL) over any mcpkit transport:
``McpProxy(backend).app`` is an ``McpServerApp`` forwarding to the backend; see
docs/proxy.md."""

from mcpkit.proxy._backend import (
    DEFAULT_BACKEND_CONNECT_TIMEOUT,
    DEFAULT_BACKEND_IDLE_TIMEOUT,
    DEFAULT_BACKEND_REQUEST_TIMEOUT,
    DEFAULT_MAX_BACKEND_SESSIONS,
    BackendBusyError,
    BackendTimeoutError,
    BackendUnavailableError,
    HttpBackend,
)
from mcpkit.proxy._clashes import ServerNameClashError
from mcpkit.proxy._config import load_servers_config, proxy_servers
from mcpkit.proxy._environment import DEFAULT_INHERITED_ENV_VARS
from mcpkit.proxy._group import ServerGroup
from mcpkit.proxy._proxy import McpProxy

__all__ = [
    "DEFAULT_BACKEND_CONNECT_TIMEOUT",
    "DEFAULT_BACKEND_IDLE_TIMEOUT",
    "DEFAULT_BACKEND_REQUEST_TIMEOUT",
    "DEFAULT_INHERITED_ENV_VARS",
    "DEFAULT_MAX_BACKEND_SESSIONS",
    "BackendBusyError",
    "BackendTimeoutError",
    "BackendUnavailableError",
    "HttpBackend",
    "McpProxy",
    "ServerGroup",
    "ServerNameClashError",
    "load_servers_config",
    "proxy_servers",
]
