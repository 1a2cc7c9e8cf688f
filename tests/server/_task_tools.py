"""Tools the task tests of both eras have in common. A test's ``@mcp_server`` class
subclasses these and adds its own; mcpkit collects tools from base classes too."""

from __future__ import annotations

from mcpkit import InternalError, mcp_tool


class FailingTaskTools:
    """``tool_error``, a tool that raises (its task completes with an isError result);
    ``protocol_error``, one that raises a protocol error (its task fails)."""

    @mcp_tool(task_support="optional")
    async def tool_error(self) -> str:
        raise RuntimeError("the job broke")

    @mcp_tool(task_support="optional")
    async def protocol_error(self) -> str:
        raise InternalError("the backend is gone")
