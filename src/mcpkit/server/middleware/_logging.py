"""``Logging``: one log line per request (app-wide) or per call (on one component)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from mcpkit.server._engine.middleware import CallNext, Middleware, MiddlewareContext
from mcpkit.server.middleware._common import (
    ERROR,
    KIND_OF_METHOD,
    OK,
    REFUSED,
    canonical_arguments,
    outcome_of,
)

#: The logger the call lines go to unless another is named.
DEFAULT_CALL_LOGGER = "mcpkit.calls"


class Logging(Middleware):
    """Logs one line per request when it ends: method, name (of the tool or prompt called,
    the resource read), duration and outcome. App-wide (``McpServerApp(middleware=...)``)
    every request gets its line; attached to a component (``use_interceptors``), each call
    of it.

    ``level`` is used for calls that end ``ok``; ``error_level`` for the others (an
    ``isError`` result, an exception, a JSON-RPC refusal, a cancellation). ``logger`` is a
    ``logging.Logger`` or a logger name. Argument values are left out unless
    ``include_arguments`` (they may hold personal data). The same facts go in the record's
    ``extra`` as ``mcp_method``, ``mcp_name``, ``mcp_duration_ms``, ``mcp_outcome`` and
    ``mcp_session``, for structured log handlers.
    """

    def __init__(
        self,
        *,
        logger: logging.Logger | str = DEFAULT_CALL_LOGGER,
        level: int = logging.INFO,
        error_level: int = logging.WARNING,
        include_arguments: bool = False,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.logger = logging.getLogger(logger) if isinstance(logger, str) else logger
        self.level = level
        self.error_level = error_level
        self.include_arguments = include_arguments
        self.clock = clock

    async def on_request(self, context: MiddlewareContext, call_next: CallNext) -> Any:
        """Run the request and log how it went; the result or exception passes through."""
        arguments = None
        if self.include_arguments and context.method in KIND_OF_METHOD:
            arguments = canonical_arguments(context)
        started = self.clock()
        try:
            value = await call_next(context)
        except BaseException as exc:
            self._log(context, started, outcome_of(exc=exc), arguments, type(exc).__name__)
            raise
        self._log(context, started, outcome_of(value), arguments, None)
        return value

    def _log(
        self,
        context: MiddlewareContext,
        started: float,
        outcome: str,
        arguments: str | None,
        exception: str | None,
    ) -> None:
        level = self.level if outcome == OK else self.error_level
        if not self.logger.isEnabledFor(level):
            return
        duration_ms = (self.clock() - started) * 1000.0
        method, name = context.method, context.name
        line = f"{method} {name} " if name is not None else f"{method} "
        line += f"{outcome} in {duration_ms:.1f} ms"
        if exception is not None and outcome in (ERROR, REFUSED):
            line += f" ({exception})"
        if arguments is not None:
            line += f" arguments={arguments}"
        self.logger.log(
            level,
            "%s",
            line,
            extra={
                "mcp_method": method,
                "mcp_name": name,
                "mcp_duration_ms": duration_ms,
                "mcp_outcome": outcome,
                "mcp_session": context.session_id,
            },
        )
