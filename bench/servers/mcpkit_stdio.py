"""The bench's mcpkit server: one async tool, ``add``. ``mcpkit run`` serves it on uvloop
(when installed); ``python mcpkit_stdio.py asyncio`` serves it on the stdlib loop,
otherwise as ``mcpkit run`` does (the collector frozen once the app is made, as a program
of the user's may do itself)."""

import sys

from mcpkit import McpServerApp, mcp_server, mcp_tool


@mcp_server(name="bench-mcpkit")
class Bench:
    @mcp_tool()
    async def add(self, a: int, b: int) -> int:
        """Add two integers."""
        return a + b


app = McpServerApp(Bench)

if __name__ == "__main__" and sys.argv[1:] == ["asyncio"]:
    import asyncio
    import gc

    from mcpkit.transports import serve_stdio

    gc.collect()
    gc.freeze()
    asyncio.run(serve_stdio(app))
