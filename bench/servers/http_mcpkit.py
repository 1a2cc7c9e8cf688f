"""mcpkit over Streamable HTTP: ``create_asgi_app`` with default options, stateless or
stateful by ``BENCH_MODE`` (``stateless`` | ``stateful``). Runs from the project venv. The same
endpoint serves 2026-07-28 requests (``call-modern``): mcpkit picks the era per request."""

import dataclasses
import os

from mcpkit import McpServerApp, mcp_server, mcp_tool
from mcpkit.transports.http import StreamableHttpServerOptions, create_asgi_app


@mcp_server(name="bench-mcpkit")
class Bench:
    @mcp_tool()
    async def add(self, a: int, b: int) -> int:
        """Add two integers."""
        return a + b


STATELESS = os.environ.get("BENCH_MODE", "stateless") == "stateless"


def options(**fields: object) -> StreamableHttpServerOptions:
    """The bench's options. A revision from before the app stopped taking uvicorn's protocol
    at start-up (``--baseline``) is kept on the protocol the command line names, as every
    revision since is."""
    if any(f.name == "own_http_protocol" for f in dataclasses.fields(StreamableHttpServerOptions)):
        fields["own_http_protocol"] = False
    return StreamableHttpServerOptions(endpoint="/mcp", stateless=STATELESS, **fields)  # type: ignore[arg-type]


app = create_asgi_app(McpServerApp(Bench), options())
