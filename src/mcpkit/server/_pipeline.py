"""Runs a call through its guards, interceptors and exception handlers (seed order:
guards, then interceptors around the method, then exception handlers if it raised).

What ``use_interceptors`` attached is middleware (its hooks run around this one call, see
``_engine.middleware.run_component``) or, deprecated, an interceptor: ``intercept(ctx,
call_next)`` or such a function (the mounts and tool transforms still wrap calls so)."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from mcpkit._exceptions import McpForbiddenError, ProtocolError
from mcpkit.server._decorators import Pipeline
from mcpkit.server._engine.binding import TransportBinding
from mcpkit.server._engine.execution import McpExecutionContext
from mcpkit.server._engine.middleware import (
    METHOD_OF_KIND,
    MiddlewareContext,
    is_middleware,
    run_component,
)

Call = Callable[[], Awaitable[Any]]


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


def _name_of(component: Any) -> str:
    if isinstance(component, type):
        return component.__name__
    return getattr(component, "__name__", None) or type(component).__name__


async def run_guards(guards: tuple[Any, ...], ctx: McpExecutionContext) -> None:
    """Raise ``McpForbiddenError`` at the first guard that refuses (returns falsy or raises).
    A guard with ``can_connect`` and no ``can_activate`` checks connections only (the HTTP
    transports run it on each request): it has nothing to say about a call."""
    for guard in guards:
        check = getattr(guard, "can_activate", None)
        if check is None:
            if hasattr(guard, "can_connect"):
                continue
            check = guard
        try:
            allowed = await _maybe_await(check(ctx))
        except McpForbiddenError:
            raise
        except Exception:
            allowed = False
        if not allowed:
            raise McpForbiddenError(_name_of(guard), ctx.tool_name)


def _component_context(ctx: McpExecutionContext) -> MiddlewareContext:
    return MiddlewareContext(
        METHOD_OF_KIND.get(ctx.kind, ctx.kind),
        ctx.params,
        True,
        ctx.tool_use_id,
        ctx.binding if ctx.binding is not None else TransportBinding(),
        component=ctx.tool_name,
        component_arguments=ctx.arguments,
        metadata=ctx.metadata,
    )


def _through_middleware(item: Any, ctx: McpExecutionContext, call: Call) -> Call:
    async def innermost(context: MiddlewareContext) -> Any:
        given = context.component_arguments
        if given is not None and given is not ctx.arguments:  # a hook replaced them
            ctx.arguments.clear()
            ctx.arguments.update(given)
        return await call()

    async def run() -> Any:
        return await run_component(item, _component_context(ctx), innermost)

    return run


def _intercepted(interceptors: tuple[Any, ...], ctx: McpExecutionContext, call: Call) -> Call:
    for interceptor in reversed(interceptors):
        if is_middleware(interceptor):
            call = _through_middleware(interceptor, ctx, call)
            continue
        intercept = getattr(interceptor, "intercept", interceptor)

        def wrap(intercept: Any = intercept, inner: Call = call) -> Call:
            async def run() -> Any:
                return await _maybe_await(intercept(ctx, inner))

            return run

        call = wrap()
    return call


async def _handle(handlers: tuple[Any, ...], exc: Exception, ctx: McpExecutionContext) -> Any:
    for handler in handlers:
        handles = getattr(handler, "handles", (Exception,))
        if not isinstance(exc, handles):
            continue
        catch = getattr(handler, "catch", handler)
        try:
            return await _maybe_await(catch(exc, ctx))
        except Exception as passed_on:
            exc = passed_on
    raise exc


async def run_pipeline(pipeline: Pipeline, ctx: McpExecutionContext, call: Call) -> Any:
    """Guards, then the (intercepted) call; exceptions go through the exception handlers."""
    await run_guards(pipeline.guards, ctx)
    try:
        return await _intercepted(pipeline.interceptors, ctx, call)()
    except ProtocolError:
        raise
    except Exception as exc:
        if not pipeline.exception_handlers:
            raise
        return await _handle(pipeline.exception_handlers, exc, ctx)
