"""FastMCP over Streamable HTTP: ``FastMCP.http_app`` with JSON responses, stateless or
stateful by ``BENCH_MODE``. Runs from bench/.venv-peers. FastMCP runs on the official SDK's
session manager, so the same app also answers 2026-07-28 requests (``call-modern``)."""

import os

from fastmcp import FastMCP

mcp = FastMCP("bench-fastmcp")


@mcp.tool
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


STATELESS = os.environ.get("BENCH_MODE", "stateless") == "stateless"
app = mcp.http_app(path="/mcp", json_response=True, stateless_http=STATELESS)
