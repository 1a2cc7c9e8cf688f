"""A small server written with the official ``mcp`` SDK (2.x ``MCPServer``), run over stdio
as a proxy backend."""

import asyncio
import os
import sys
import warnings

import mcp_types as types
from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel

warnings.simplefilter("ignore")  # the 2025-era helpers are deprecated; stderr is the log
server = MCPServer("official-backend")
CANCEL_MARKER = os.environ.get("CANCEL_MARKER", "")


class Name(BaseModel):
    name: str


@server.tool()
def echo(text: str) -> str:
    """Say it back."""
    return f"{os.environ.get('ECHO_PREFIX', '')}{text}"


@server.tool()
async def count(steps: int, ctx: Context) -> str:
    """Report progress and log each step."""
    for step in range(steps):
        await ctx.report_progress(step + 1, steps, f"step {step + 1}")
        await ctx.info(f"step {step + 1}")
    return f"counted {steps}"


@server.tool()
async def ask_model(question: str, ctx: Context) -> str:
    """Sample the client's model."""
    result = await ctx.session.create_message(
        [types.SamplingMessage(role="user", content=types.TextContent(type="text", text=question))],
        max_tokens=20,
    )
    return f"model said: {result.content.text}"  # type: ignore[union-attr]


@server.tool()
async def ask_name(ctx: Context) -> str:
    """Elicit the user's name."""
    answer = await ctx.elicit("Your name?", Name)
    return f"hello {answer.data.name}" if answer.action == "accept" else answer.action


@server.tool()
async def my_capabilities(ctx: Context) -> str:
    """The client capabilities this server was told at its handshake."""
    params = ctx.session.client_params
    declared = params.capabilities.model_dump(exclude_none=True) if params else {}
    return ",".join(sorted(declared)) or "none"


@server.tool()
async def wait_forever() -> str:
    """Sleep until cancelled; the start and the cancellation leave marker files."""
    with open(CANCEL_MARKER + ".started", "w") as started:
        started.write("started")
    try:
        await asyncio.sleep(60)
    except asyncio.CancelledError:
        with open(CANCEL_MARKER, "w") as marker:
            marker.write("cancelled")
        raise
    return "woke"


@server.tool()
def die() -> str:
    """End the process mid-call."""
    sys.stdout.flush()
    os._exit(3)


if __name__ == "__main__":
    server.run("stdio")
