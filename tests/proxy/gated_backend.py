"""A handshake-era backend (the official ``mcp`` SDK's ``MCPServer`` over stdio) whose tools
wait for a gate file before they log and ask the client: a test starts several users'
calls, then opens their gates in the order it wants. It also shows its environment."""

import asyncio
import json
import os
import warnings
from pathlib import Path

from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel

warnings.simplefilter("ignore")  # the 2025-era helpers are deprecated; stderr is the log
server = MCPServer("gated-backend")


class Pin(BaseModel):
    pin: str


async def _gate(gate: str) -> None:
    Path(gate + ".started").write_text("started")
    while not Path(gate).exists():
        await asyncio.sleep(0.02)


@server.tool()
async def pin(who: str, gate: str, ctx: Context) -> str:
    """Once ``gate`` exists: log a line for ``who``, then ask the user for a PIN."""
    await _gate(gate)
    await ctx.info(f"log for {who}")
    answer = await ctx.elicit(f"enter your PIN, {who}", Pin)
    return f"{who} pin={answer.data.pin}" if answer.action == "accept" else answer.action


@server.tool()
async def announce(who: str, gate: str, ctx: Context) -> str:
    """Once ``gate`` exists: log a line for ``who``."""
    await _gate(gate)
    await ctx.info(f"log for {who}")
    return f"announced {who}"


@server.tool()
def environment() -> str:
    """This process's environment, as JSON."""
    return json.dumps(dict(os.environ))


if __name__ == "__main__":
    server.run("stdio")
