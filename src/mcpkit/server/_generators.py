"""Async-generator tools: a tool written as ``async def`` with ``yield`` streams its work.
Each value it yields but the last is sent as ``notifications/progress`` (its ``message``
the value as text, its ``progress`` the count so far; only when the request carried a
``progressToken``, as any progress), and the last value is the tool's result, typed by
what the function's annotation says it yields (``AsyncIterator[int]``: an ``int``). One
that yields nothing fails (an ``isError`` result).

A tool is made of one as of any function: ``generator_tool`` turns it into a coroutine
function taking the call's ``McpToolContext`` too, so arguments, injection, interceptors,
timeouts and tasks treat it as they treat every tool. A sync generator function, and a
generator resource or prompt, are refused when registered (``TypeError``): they would
fail at every call."""

from __future__ import annotations

import collections.abc
import inspect
import typing
from collections.abc import Callable
from typing import Any

import msgspec

from mcpkit._exceptions import ToolError

#: The name the call's context is given when the function takes none of its own.
_CONTEXT = "_mcpkit_generator_context"
#: The generic types an async generator's annotation may name, whose first argument is
#: what it yields.
_YIELDING = (
    collections.abc.AsyncIterator,
    collections.abc.AsyncIterable,
    collections.abc.AsyncGenerator,
)


def refuse_generator(kind: str, fn: Callable[..., Any]) -> None:
    """``TypeError`` for a generator function registered where none can serve: a resource
    or prompt (any generator), or a tool (a sync one)."""
    name = getattr(fn, "__name__", repr(fn))
    if kind == "tool" and inspect.isgeneratorfunction(fn):
        raise TypeError(
            f"tool {name!r} is a sync generator function: write it as `async def` with"
            " `yield` (each value a progress notification, the last the result), or return"
            " a list"
        )
    if kind != "tool" and (inspect.isasyncgenfunction(fn) or inspect.isgeneratorfunction(fn)):
        raise TypeError(f"{kind} {name!r} is a generator function: a {kind} returns its value")


def _yielded(annotation: Any) -> Any:
    """What an async generator annotated ``annotation`` yields (Any when it does not say)."""
    if typing.get_origin(annotation) in _YIELDING:
        args = typing.get_args(annotation)
        if args:
            return args[0]
    return Any


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return msgspec.json.encode(value).decode()
    except (TypeError, msgspec.EncodeError):
        return repr(value)


def generator_tool(fn: Callable[..., Any], context_type: type) -> Callable[..., Any]:
    """``fn``, an async generator function, as a coroutine function: the same parameters
    (plus the call's context, of ``context_type``, when ``fn`` takes none), returning the
    last value ``fn`` yields after sending the ones before it as progress."""
    signature = inspect.signature(fn)
    hints = typing.get_type_hints(fn, include_extras=True)
    own_context = next(
        (name for name, hint in hints.items() if hint is context_type and name != "return"),
        None,
    )
    context_name = own_context or _CONTEXT

    async def run(*args: Any, **kwargs: Any) -> Any:
        context = kwargs[context_name] if own_context else kwargs.pop(_CONTEXT)
        values = fn(*args, **kwargs)
        count = 0
        last: Any = _NOTHING
        try:
            async for value in values:
                if last is not _NOTHING:
                    count += 1
                    await context.report_progress(count, message=_as_text(last))
                last = value
        finally:
            await values.aclose()
        if last is _NOTHING:  # no result to give: the tool failed, as the model should read
            raise ToolError(f"the tool {fn.__name__} yielded no value")
        return last

    parameters = list(signature.parameters.values())
    if own_context is None:
        parameters.append(
            inspect.Parameter(_CONTEXT, inspect.Parameter.KEYWORD_ONLY, annotation=context_type)
        )
    returns = _yielded(hints.get("return"))
    run.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=parameters, return_annotation=returns
    )
    run.__annotations__ = {
        **{name: hint for name, hint in hints.items() if name != "return"},
        **({} if own_context else {_CONTEXT: context_type}),
        "return": returns,
    }
    for attribute in ("__name__", "__qualname__", "__doc__", "__module__"):
        setattr(run, attribute, getattr(fn, attribute, None))
    return run


class _Nothing:
    """No value yielded yet."""


_NOTHING: Any = _Nothing


__all__ = ["generator_tool", "refuse_generator"]
