"""The official SDK (mcp 2.3.0) over Streamable HTTP: ``MCPServer.streamable_http_app`` with
JSON responses, stateless or stateful by ``BENCH_MODE``. Runs from bench/.venv-peers.

The same app serves 2026-07-28 (``call-modern``) with no flag: mcp 2.3.0's session manager
sends every request whose ``MCP-Protocol-Version`` header is not a handshake-era version to its
single-exchange entry (``mcp.server._streamable_http_modern.handle_modern_request``), which
ignores ``stateless_http`` and, with ``json_response=True``, answers JSON in the request's own
task."""

import os

from mcp.server.mcpserver import MCPServer

server = MCPServer("bench-official", log_level="WARNING")


@server.tool(description="Add two integers.")
async def add(a: int, b: int) -> int:
    return a + b


STATELESS = os.environ.get("BENCH_MODE", "stateless") == "stateless"
app = server.streamable_http_app(
    streamable_http_path="/mcp", json_response=True, stateless_http=STATELESS
)
