"""The bench's official-SDK server (mcp 2.x ``MCPServer``): the same ``add`` tool, on stdio."""

from mcp.server.mcpserver import MCPServer

server = MCPServer("bench-official")


@server.tool(description="Add two integers.")
async def add(a: int, b: int) -> int:
    return a + b


if __name__ == "__main__":
    server.run("stdio")
