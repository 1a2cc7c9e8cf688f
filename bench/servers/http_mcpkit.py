"""mcpkit over Streamable HTTP: ``create_asgi_app`` with default options, stateless or
stateful by ``BENCH_MODE`` (``stateless`` | ``stateful``). Runs from the project venv. The same
endpoint serves 2026-07-28 requests (``call-modern``): mcpkit picks the era per request."""

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
app = create_asgi_app(
    McpServerApp(Bench), StreamableHttpServerOptions(endpoint="/mcp", stateless=STATELESS)
)
#: ``freeze_gc_at_startup=False``: the row that shows what the freeze is worth.
app_without_gc_freeze = create_asgi_app(
    McpServerApp(Bench),
    StreamableHttpServerOptions(endpoint="/mcp", stateless=STATELESS, freeze_gc_at_startup=False),
)
#: ``own_http_protocol=False``: served on uvicorn's own protocol, as an app mounted in
#: another is (the app otherwise takes mcpkit's at start-up).
app_on_uvicorn_protocol = create_asgi_app(
    McpServerApp(Bench),
    StreamableHttpServerOptions(endpoint="/mcp", stateless=STATELESS, own_http_protocol=False),
)
