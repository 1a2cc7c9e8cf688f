"""``Timing``: how long each request (or call) took, to a callback, a metric or ``_meta``."""

from __future__ import annotations

import inspect
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from mcpkit.server._engine.middleware import CallNext, Middleware, MiddlewareContext
from mcpkit.server.middleware._common import outcome_of

logger = logging.getLogger("mcpkit.server")


@dataclass(frozen=True, slots=True)
class CallTiming:
    """One finished request: its method, the name it called (a resource's URI; empty for
    requests that name none), how long it took (seconds), how it ended."""

    method: str
    name: str
    duration: float
    outcome: str
    session_id: str | None

    @property
    def duration_ms(self) -> float:
        """The duration in milliseconds."""
        return self.duration * 1000.0


class DurationMetric(Protocol):
    """A histogram-like metric: ``record(seconds, attributes)`` (an OpenTelemetry
    ``Histogram`` has this shape; so does a small adapter around prometheus_client)."""

    def record(self, amount: float, attributes: dict[str, str] | None = None) -> Any:
        """Record one duration (seconds) with its attributes."""


OnTiming = Callable[[CallTiming], "Awaitable[None] | None"]


class Timing(Middleware):
    """Measures every request (app-wide) or every call of a component it is attached to
    (monotonic clock) and hands the figure on.

    ``on_timing(timing)`` (sync or async) gets a ``CallTiming`` when each call ends, however
    it ended; ``metric.record(seconds, {"mcp.method", "mcp.name", "mcp.outcome"})`` is fed
    the same. With ``meta_key``, a tool whose value is already a ``CallToolResult`` (a dict
    with ``content``) gets ``_meta[meta_key] = {"durationMs": ...}``; other values are left
    alone, since turning them into a result here would bypass the tool's output schema. A
    failing callback or metric is logged and never fails the call.
    """

    def __init__(
        self,
        on_timing: OnTiming | None = None,
        *,
        metric: DurationMetric | None = None,
        meta_key: str | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        if on_timing is None and metric is None and meta_key is None:
            raise ValueError("Timing needs on_timing, metric or meta_key")
        self.on_timing = on_timing
        self.metric = metric
        self.meta_key = meta_key
        self.clock = clock

    async def on_request(self, context: MiddlewareContext, call_next: CallNext) -> Any:
        """Time the request; the result (with its ``_meta`` entry) or exception passes
        through."""
        started = self.clock()
        try:
            value = await call_next(context)
        except BaseException as exc:
            await self._report(context, self.clock() - started, outcome_of(exc=exc))
            raise
        duration = self.clock() - started
        await self._report(context, duration, outcome_of(value))
        if self.meta_key is not None and context.method == "tools/call":
            value = self._with_meta(value, duration)
        return value

    def _with_meta(self, value: Any, duration: float) -> Any:
        if not isinstance(value, dict) or not isinstance(value.get("content"), list):
            return value
        meta = dict(value.get("_meta") or {})
        meta[self.meta_key or ""] = {"durationMs": round(duration * 1000.0, 3)}
        return {**value, "_meta": meta}

    async def _report(self, context: MiddlewareContext, duration: float, outcome: str) -> None:
        timing = CallTiming(
            context.method, context.name or "", duration, outcome, context.session_id
        )
        if self.on_timing is not None:
            try:
                result = self.on_timing(timing)
                if inspect.isawaitable(result):
                    await result
            except Exception:
                logger.warning("the on_timing callback failed", exc_info=True)
        if self.metric is not None:
            try:
                self.metric.record(
                    duration,
                    {"mcp.method": timing.method, "mcp.name": timing.name, "mcp.outcome": outcome},
                )
            except Exception:
                logger.warning("the duration metric failed", exc_info=True)
