"""The bare ASGI app of ``http_bare.py`` served as ``mcpkit run`` serves: uvicorn's
protocol with its request headers bounded (``uvicorn_http_protocol()``, the watch ``mcpkit
run`` puts around it) and the uvicorn settings it uses (no access log, no ``server`` header). The ceiling ``mcpkit-run`` is
measured against, beside the bare app from uvicorn's command line.

    python http_bare_served.py PORT
"""

import sys

import uvicorn
from http_bare import app

from mcpkit.transports.http import StreamableHttpServerOptions
from mcpkit.transports.http._server.protocol import uvicorn_http_protocol

if __name__ == "__main__":
    uvicorn.run(
        app,
        host="127.0.0.1",
        port=int(sys.argv[1]),
        log_level="warning",
        access_log=False,
        lifespan="on",
        server_header=False,
        **uvicorn_http_protocol(StreamableHttpServerOptions()),
    )
