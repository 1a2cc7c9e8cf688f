"""``LoggingInterceptor``: one log line per call."""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from mcpkit.server._engine.execution import McpExecutionContext
from mcpkit.server.interceptors._common import (
    ERROR,
    OK,
    canonical_arguments,
    method_of,
    outcome_of,
)

#: The logger the call lines go to unless another is named.
DEFAULT_CALL_LOGGER = "mcpkit.calls"


class LoggingInterceptor:
    """Logs one line per call when it ends: method, name, duration and outcome.

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

    async def intercept(
        self, ctx: McpExecutionContext, call_next: Callable[[], Awaitable[Any]]
    ) -> Any:
        """Run the call and log how it went; the result or exception passes through."""
        arguments = canonical_arguments(ctx) if self.include_arguments else None
        started = self.clock()
        try:
            value = await call_next()
        except BaseException as exc:
            self._log(ctx, started, outcome_of(exc=exc), arguments, type(exc).__name__)
            raise
        self._log(ctx, started, outcome_of(value), arguments, None)
        return value

    def _log(
        self,
        ctx: McpExecutionContext,
        started: float,
        outcome: str,
        arguments: str | None,
        exception: str | None,
    ) -> None:
        level = self.level if outcome == OK else self.error_level
        if not self.logger.isEnabledFor(level):
            return
        duration_ms = (self.clock() - started) * 1000.0
        method = method_of(ctx)
        line = f"{method} {ctx.tool_name} {outcome} in {duration_ms:.1f} ms"
        if exception is not None and outcome in (ERROR, "refused"):
            line += f" ({exception})"
        if arguments is not None:
            line += f" arguments={arguments}"
        self.logger.log(
            level,
            "%s",
            line,
            extra={
                "mcp_method": method,
                "mcp_name": ctx.tool_name,
                "mcp_duration_ms": duration_ms,
                "mcp_outcome": outcome,
                "mcp_session": ctx.session_id,
            },
        )
