"""The bench's mcpkit server: one tool, ``add``."""

from mcpkit import McpServerApp, mcp_server, mcp_tool


@mcp_server(name="bench-mcpkit")
class Bench:
    @mcp_tool()
    async def add(self, a: int, b: int) -> int:
        """Add two integers."""
        return a + b


app = McpServerApp(Bench)
