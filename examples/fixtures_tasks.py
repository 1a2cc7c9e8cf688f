"""The fixtures the MCP conformance suite's ``tasks-*`` scenarios expect of a server (the
``io.modelcontextprotocol/tasks`` extension, SEP-2663). ``examples/everything.py`` serves
them beside the other fixtures.

A tool declared with ``task_support="optional"`` runs as a task when the client declares
the extension (else synchronously); ``"required"`` runs only as a task (-32021 otherwise).
"""

from __future__ import annotations

import asyncio

from mcpkit import InternalError, McpToolContext, mcp_server, mcp_tool
from mcpkit.server import deferred_task, start_task

NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
CONFIRM_SCHEMA = {
    "type": "object",
    "properties": {"confirm": {"type": "boolean"}},
    "required": ["confirm"],
}


@mcp_server(name="mcpkit-everything")
class ConformanceTasks:
    @mcp_tool(description="Greets synchronously (never a task)")
    def greet(self, name: str) -> str:
        return f"Hello, {name}!"

    @mcp_tool(
        description="Sleeps `seconds`, then reports; runs as a task when the client allows",
        task_support="optional",
    )
    async def slow_compute(self, seconds: float = 1.0, label: str = "") -> str:
        await asyncio.sleep(max(0.0, min(seconds, 600.0)))
        return f"{label or 'slow_compute'}: done after {seconds} s"

    @mcp_tool(
        description="Fails as a tool (isError) after about a second; runs only as a task",
        task_support="required",
    )
    async def failing_job(self) -> str:
        await asyncio.sleep(1.0)
        raise RuntimeError("failing_job failed, as it always does")

    @mcp_tool(
        description="Fails with a JSON-RPC error (the task ends failed)", task_support="optional"
    )
    async def protocol_error_job(self) -> str:
        await asyncio.sleep(0.2)
        raise InternalError("protocol_error_job: the job hit an internal error")

    @mcp_tool(
        description="Asks the user to confirm, then deletes (pretends to)", task_support="optional"
    )
    async def confirm_delete(self, filename: str, ctx: McpToolContext) -> str:
        answer = await ctx.elicit(f"Delete {filename}?", CONFIRM_SCHEMA, key="confirm")
        confirmed = answer.accepted and bool((answer.content or {}).get("confirm"))
        return f"Deleted {filename}" if confirmed else f"Kept {filename}"

    @mcp_tool(description="Asks two questions at once", task_support="optional")
    async def multi_input(self, ctx: McpToolContext) -> str:
        answers = await ctx.gather_inputs(
            {
                "name": (
                    "elicitation/create",
                    {
                        "mode": "form",
                        "message": "What is your name?",
                        "requestedSchema": NAME_SCHEMA,
                    },
                ),
                "confirm": (
                    "elicitation/create",
                    {"mode": "form", "message": "Proceed?", "requestedSchema": CONFIRM_SCHEMA},
                ),
            }
        )
        name = ((answers.get("name") or {}).get("content") or {}).get("name")
        confirmed = ((answers.get("confirm") or {}).get("content") or {}).get("confirm")
        return f"name={name} confirmed={confirmed}"

    @mcp_tool(
        description="Asks a name over MRTR, then continues as a task", task_support="required"
    )
    @deferred_task
    async def test_tool_with_task(self, ctx: McpToolContext) -> str:
        answer = await ctx.elicit("What is your name?", NAME_SCHEMA, key="user_name")
        name = (answer.content or {}).get("name")
        await start_task(ctx)  # the client gets its CreateTaskResult here
        await asyncio.sleep(0.5)
        return f"Hello, {name}! (finished as a task)"
