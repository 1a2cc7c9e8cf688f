"""The app's part of its engine's life: its ``@mcp_lifespan`` functions (in every form
FastMCP and the mcp SDK accept), then its mounts', entered at start and exited in reverse
at stop."""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable
from typing import Any


def lifespan_manager(lifespan: Callable[..., Any], app: Any) -> Any:
    """The async context manager of one lifespan: an async generator function, or one
    ``@asynccontextmanager`` made (FastMCP's and the mcp SDK's form), called with ``app``
    when it takes an argument (their ``lifespan(server)``), else with none."""
    try:
        wants_app = any(
            p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
            for p in inspect.signature(lifespan).parameters.values()
        )
    except (TypeError, ValueError):  # no signature to read: called as it always was
        wants_app = False
    made = lifespan(app) if wants_app else lifespan()
    if inspect.isasyncgen(made):
        return contextlib.asynccontextmanager(lambda: made)()
    if hasattr(made, "__aenter__") and hasattr(made, "__aexit__"):
        return made
    name = getattr(lifespan, "__qualname__", lifespan)
    raise TypeError(
        f"lifespan {name} returned {type(made).__name__}, not an async generator or an async "
        "context manager: write it as an async def with one yield"
    )


class AppLife:
    """The app's part of the engine's life: its lifespans, then its mounts' (stopped in
    reverse), then what they registered announced. A class, not an async generator: a
    generator made on an event loop keeps that loop alive as long as it lives (its
    finalizer is the loop's), and the engine may be started from any loop."""

    def __init__(self, app: Any) -> None:  # an McpServerApp
        self.app = app
        self.stack: contextlib.AsyncExitStack | None = None

    async def __aenter__(self) -> None:
        app = self.app
        stack = contextlib.AsyncExitStack()
        contexts = []
        try:
            for lifespan in app._lifespans:
                contexts.append(await stack.enter_async_context(lifespan_manager(lifespan, app)))
            for mount in app.mounts:  # after this app's own; stopped before them
                await stack.enter_async_context(mount.running())
            # What the lifespans registered is announced by tasks: let them run now, while
            # no connection exists, not into a transport's first one before it is open.
            await app.catalog.announced()
        except BaseException:
            # What did start stops (in reverse) as at a plain stop: it runs on otherwise.
            await stack.aclose()
            raise
        app.lifespan_context = contexts[0] if len(contexts) == 1 else (contexts or None)
        self.stack = stack

    async def __aexit__(self, *exc_info: object) -> None:
        stack, self.stack = self.stack, None
        if stack is not None:  # exited as at a plain stop, whatever stops the engine
            await stack.aclose()


__all__ = ["AppLife", "lifespan_manager"]
