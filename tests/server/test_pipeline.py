"""Guards, interceptors, exception handlers and metadata around tool calls."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit import (
    McpCallError,
    McpExecutionContext,
    McpServerApp,
    mcp_server,
    mcp_tool,
    set_metadata,
    use_exception_handlers,
    use_guards,
    use_middleware,
)
from mcpkit.server.middleware import CallNext, Middleware, MiddlewareContext

calls: list[str] = []


class DenyGuard:
    def can_activate(self, ctx: McpExecutionContext) -> bool:
        calls.append(f"deny:{ctx.tool_name}")
        return False


def role_guard(ctx: McpExecutionContext) -> bool:
    calls.append(f"role:{ctx.get_metadata('role')}")
    return ctx.get_metadata("role") == "admin"


class Tracing(Middleware):
    async def on_call_tool(self, context: MiddlewareContext, call_next: CallNext) -> Any:
        calls.append(f"before:{context.name}")
        result = await call_next(context)
        calls.append(f"after:{context.name}")
        return result


class Upper(Middleware):
    async def on_call_tool(self, context: MiddlewareContext, call_next: CallNext) -> Any:
        return (await call_next(context)).upper()


class ValueErrors:
    handles = (ValueError,)

    def catch(self, exc, ctx):
        return f"handled {exc}"


@use_middleware(Tracing())
@set_metadata("role", "admin")
@mcp_server(name="guarded")
class Guarded:
    @mcp_tool()
    def open_tool(self) -> str:
        calls.append("open_tool")
        return "open"

    @use_guards(DenyGuard)
    @mcp_tool()
    def closed_tool(self) -> str:
        calls.append("closed_tool ran")
        return "closed"

    @use_guards(role_guard)
    @set_metadata("role", "guest")
    @mcp_tool()
    def guest_tool(self) -> str:
        return "guest"

    @use_guards(role_guard)
    @use_middleware(Upper())
    @mcp_tool()
    def admin_tool(self) -> str:
        return "admin"

    @use_exception_handlers(ValueErrors)
    @mcp_tool()
    def value_error(self) -> str:
        raise ValueError("bad value")

    @use_exception_handlers(ValueErrors)
    @mcp_tool()
    def key_error(self) -> str:
        raise KeyError("missing")


@pytest.fixture(autouse=True)
def clear_calls():
    calls.clear()


async def test_guard_refusal_is_forbidden_and_method_never_runs(connect):
    async with connect(McpServerApp(Guarded)) as client:
        with pytest.raises(McpCallError) as err:
            await client.call_tool("closed_tool")
        assert err.value.code == -32603
        assert err.value.data == {"type": "FORBIDDEN", "guard": "DenyGuard"}
        assert "closed_tool ran" not in calls
        assert (await client.call_tool("open_tool")).content[0].text == "open"


async def test_method_metadata_overrides_class_metadata(connect):
    async with connect(McpServerApp(Guarded)) as client:
        with pytest.raises(McpCallError) as err:
            await client.call_tool("guest_tool")
        assert err.value.data["guard"] == "role_guard"
        assert (await client.call_tool("admin_tool")).content[0].text == "ADMIN"


async def test_interceptors_wrap_in_declared_order(connect):
    async with connect(McpServerApp(Guarded)) as client:
        await client.call_tool("open_tool")
    assert calls == ["before:open_tool", "open_tool", "after:open_tool"]


async def test_guards_run_before_interceptors(connect):
    async with connect(McpServerApp(Guarded)) as client:
        await client.call_tool("admin_tool")
    assert calls[:2] == ["role:admin", "before:admin_tool"]


async def test_exception_handler_turns_matching_errors_into_results(connect):
    async with connect(McpServerApp(Guarded)) as client:
        handled = await client.call_tool("value_error")
        assert handled.content[0].text == "handled bad value" and not handled.is_error
        passed = await client.call_tool("key_error")
        assert passed.is_error
