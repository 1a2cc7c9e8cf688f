"""A small stdio server written with the official ``mcp`` SDK (2.x ``MCPServer``), for
driving mcpkit's client against a foreign implementation.

Run as a script: ``python tests/interop/official_server.py``.
"""

from __future__ import annotations

import warnings

import mcp_types as types
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

# The official SDK marks the 2025-era logging/sampling helpers deprecated (2026-07-28);
# they are exactly what this server exercises, and stderr is the test's log.
warnings.simplefilter("ignore")

server = MCPServer(
    "official-interop",
    version="2.3.0-test",
    instructions="Official SDK server for mcpkit interop tests",
)


@server.tool(description="Add two integers")
def add(a: int, b: int) -> int:
    return a + b


@server.tool(description="Echo the text back")
def echo(text: str) -> str:
    return f"echo: {text}"


@server.tool(description="Always fails")
def fail() -> str:
    raise ToolError("deliberate failure")


@server.tool(description="Log each step and report progress")
async def work(steps: int, ctx: Context) -> str:
    await ctx.info(f"starting {steps} steps")
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {step}")
    await ctx.warning("all steps done")
    return f"did {steps} steps"


@server.tool(description="Ask the client's model a question")
async def ask(question: str, ctx: Context) -> str:
    result = await ctx.session.create_message(
        [types.SamplingMessage(role="user", content=types.TextContent(type="text", text=question))],
        max_tokens=50,
    )
    content = result.content
    answer = content.text if isinstance(content, types.TextContent) else str(content)
    return f"model {result.model} says: {answer}"


@server.resource(
    "demo://greeting", name="greeting", mime_type="text/plain", description="A greeting"
)
def greeting() -> str:
    return "Hello from the official SDK"


@server.resource(
    "demo://items/{item_id}", name="item", mime_type="application/json", description="One item"
)
def item(item_id: str) -> str:
    return f'{{"id": "{item_id}"}}'


@server.prompt(description="Ask for a code review")
def review(code: str) -> str:
    return f"Please review this code:\n{code}"


@server.completion()
async def complete(ref, argument, context):  # type: ignore[no-untyped-def]
    if argument.name == "code":
        options = ["print('hi')", "pass", "print(42)"]
        return types.Completion(values=[o for o in options if o.startswith(argument.value)])
    return None


if __name__ == "__main__":
    server.run()
