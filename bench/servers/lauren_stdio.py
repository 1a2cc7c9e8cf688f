"""The bench's lauren-mcp server on stdio: the same async ``add`` tool, served the way its
CLI's ``--stdio`` does (``run_stdio_server`` over a Lauren app). Runs from bench/.venv-peers."""

import asyncio

from lauren import LaurenFactory, module
from lauren_mcp import McpServerModule, mcp_server, mcp_tool
from lauren_mcp._server._stdio import run_stdio_server


@mcp_server("/mcp")
class Bench:
    @mcp_tool()
    async def add(self, a: int, b: int) -> int:
        """Add two integers."""
        return a + b


@module(imports=[McpServerModule.for_root(Bench, transport="ws", log_level="warning")])
class App:
    pass


if __name__ == "__main__":
    asyncio.run(run_stdio_server(LaurenFactory.create(App)))
