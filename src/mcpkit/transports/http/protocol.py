"""mcpkit's HTTP/1.1 protocol for uvicorn's command line (uvicorn 0.35 or later), with the
default header bounds of ``StreamableHttpServerOptions``::

    uvicorn server:app --http mcpkit.transports.http.protocol:McpHttpProtocol

What ``mcpkit run -t http`` serves with: the same answers as uvicorn's own protocol, less
work per request, and slow or huge request headers bounded (docs/deployment.md). Under a
uvicorn release it is not tested with (``TESTED_UVICORN``), this name is uvicorn's own
protocol and a warning says why. Importing this module makes the class;
``uvicorn_http_protocol(options)`` makes one with other bounds.
"""

from mcpkit.transports.http._server.protocol import default_http_protocol

McpHttpProtocol = default_http_protocol()

__all__ = ["McpHttpProtocol"]
