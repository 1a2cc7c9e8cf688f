"""mcpkit served as ``mcpkit run -t http`` serves it: ``serve_http`` (uvicorn's protocol
with the header time and size bounds of the options), the same app as ``http_mcpkit.py``,
stateless or stateful by ``BENCH_MODE``, with the collector frozen after
start-up as ``mcpkit run`` freezes it.

    python http_mcpkit_served.py PORT
"""

import sys

from http_mcpkit import STATELESS, Bench

from mcpkit import McpServerApp
from mcpkit.transports.http import StreamableHttpServerOptions, serve_http

if __name__ == "__main__":
    options = StreamableHttpServerOptions(
        endpoint="/mcp",
        stateless=STATELESS,
        host="127.0.0.1",
        port=int(sys.argv[1]),
        freeze_gc_at_startup=True,
    )
    serve_http(McpServerApp(Bench), options)
