"""What every HTTP endpoint of the app is: a plain ASGI app ``(scope, receive, send)``.

The Streamable HTTP endpoint, the two legacy SSE endpoints and the layers around them
(connection guards, bearer auth) each take an ASGI scope alone, so any of them can be
mounted or driven by a test on its own. They need the request's headers as a lower-case
map; the router has made it for its own checks, and keeps it in the scope
(``HEADERS_SCOPE_KEY``) so that nothing down the chain builds it again.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from mcpkit.transports.http._asgi import Receive, Send, header_map

#: An ASGI application (HTTP scopes here).
AsgiApp = Callable[[dict[str, Any], Receive, Send], Awaitable[None]]

#: The scope entry holding the request's headers, lower-case names, as ``header_map`` made
#: them (ASGI lets a server or middleware add its own keys to the scope).
HEADERS_SCOPE_KEY = "mcp.headers"


def request_headers(scope: dict[str, Any]) -> dict[str, str]:
    """The request's headers by lower-case name, made once per request."""
    headers: dict[str, str] | None = scope.get(HEADERS_SCOPE_KEY)
    if headers is None:
        headers = scope[HEADERS_SCOPE_KEY] = header_map(scope)
    return headers


__all__ = ["HEADERS_SCOPE_KEY", "AsgiApp", "request_headers"]
