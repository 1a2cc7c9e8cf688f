"""The official SDK (mcp 2.3.0) over Streamable HTTP: ``MCPServer.streamable_http_app`` with
JSON responses, stateless or stateful by ``BENCH_MODE``. Runs from bench/.venv-peers."""

import os

from mcp.server.mcpserver import MCPServer

server = MCPServer("bench-official", log_level="WARNING")


@server.tool(description="Add two integers.")
async def add(a: int, b: int) -> int:
    return a + b


STATELESS = os.environ.get("BENCH_MODE", "stateless") == "stateless"
app = server.streamable_http_app(streamable_http_path="/mcp", json_response=True, stateless_http=STATELESS)
