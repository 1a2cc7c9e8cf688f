"""lauren-mcp over Streamable HTTP, stateless or stateful by ``BENCH_MODE``. Runs from
bench/.venv-peers.

Stateful mode is the documented ``McpServerModule.for_root(..., transport="streamable")``.
lauren-mcp 1.2.x's ``for_root`` has no stateless switch, but its Streamable HTTP
controller factory does (``stateless=True``); stateless mode mounts that controller next to
the module (built with ``transport="ws"`` so it adds no Streamable HTTP route of its own).
lauren-mcp has no JSON-response switch: a POST whose Accept allows text/event-stream is
answered as SSE, whatever the mode.
"""

import os

from lauren import LaurenFactory, module
from lauren_mcp import McpServerModule, mcp_server, mcp_tool

STATELESS = os.environ.get("BENCH_MODE", "stateless") == "stateless"


@mcp_server("/mcp")
class Bench:
    @mcp_tool()
    async def add(self, a: int, b: int) -> int:
        """Add two integers."""
        return a + b


if STATELESS:
    from lauren_mcp._server._dispatcher import McpDispatcher
    from lauren_mcp._server._registry import McpConnectionRegistry
    from lauren_mcp._server._streamable import (
        StreamableSessionStore,
        mcp_streamable_http_controller,
    )

    _core = McpServerModule.for_root(
        Bench,
        transport="ws",
        log_level="warning",
        exports=[McpDispatcher, StreamableSessionStore, McpConnectionRegistry],
    )

    @module(
        imports=[_core],
        controllers=[mcp_streamable_http_controller("/mcp", source=Bench, stateless=True)],
    )
    class App:
        pass
else:

    @module(imports=[McpServerModule.for_root(Bench, transport="streamable", log_level="warning")])
    class App:
        pass


app = LaurenFactory.create(App)
