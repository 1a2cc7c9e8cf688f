"""mcpkit served as ``mcpkit run -t http`` serves it, by the same code: uvicorn's protocol
inside the header watch, with the time and size bounds of the options, and the collector
frozen after start-up (``AsTheProgram``, which only the command hands over); the same app
as ``http_mcpkit.py``, stateless or stateful by ``BENCH_MODE``.

    python http_mcpkit_served.py PORT
"""

import sys

from http_mcpkit import STATELESS, Bench

from mcpkit import McpServerApp
from mcpkit._runtime import AsTheProgram
from mcpkit.transports.http import StreamableHttpServerOptions
from mcpkit.transports.http._server.process import bind_http_socket, serve_in_this_process

if __name__ == "__main__":
    options = StreamableHttpServerOptions(endpoint="/mcp", stateless=STATELESS, host="127.0.0.1")
    sock = bind_http_socket("127.0.0.1", int(sys.argv[1]))
    serve_in_this_process(McpServerApp(Bench), options, sock=sock, program=AsTheProgram())
