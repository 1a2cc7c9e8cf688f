"""Tools the transport tests' servers have in common. A test's ``@mcp_server`` class
subclasses these and adds its own; mcpkit collects tools from base classes too."""

from __future__ import annotations

import asyncio

from mcpkit import McpToolContext, mcp_tool


class CancellableTools:
    """``add``, a quick call; ``hang``, a call that only ends by cancellation. ``started``
    is set once ``hang`` runs and ``cancelled`` once the cancellation reaches it: how a test
    sees a disconnect or ``notifications/cancelled`` arrive at the work."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.cancelled = asyncio.Event()

    @mcp_tool()
    def add(self, a: int, b: int) -> int:
        return a + b

    @mcp_tool()
    async def hang(self) -> str:
        self.started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        return "never"


class ElicitingTool:
    """``ask``: a server-to-client request in the middle of a call, answered as ``action:name``."""

    @mcp_tool()
    async def ask(self, ctx: McpToolContext) -> str:
        answer = await ctx.elicit(
            "Name?",
            {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
        )
        return f"{answer.action}:{(answer.content or {}).get('name')}"
