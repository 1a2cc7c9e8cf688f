"""The built-in middleware: ``ErrorHandling`` (every failure logged once, with its method,
counted by kind, maybe turned into another error) and ``ResponseSizeLimit`` (no answer
larger than a bound leaves the server)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import msgspec

from mcpkit._exceptions import InternalError, ProtocolError
from mcpkit.server._engine.middleware import CallNext, Middleware, MiddlewareContext

logger = logging.getLogger("mcpkit.middleware")

#: Kinds of error (exception type, method) ``ErrorHandling`` counts; past it, no new kind.
MAX_ERROR_KINDS = 256
#: ``ResponseSizeLimit``'s default bound on one result, in bytes of JSON.
DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024


class ErrorHandling(Middleware):
    """Logs each request that fails (its method, the exception; a ``ProtocolError`` at
    INFO, anything else at WARNING with its traceback), counts them in ``errors`` by
    (exception type, method), and, with ``transform``, raises what ``transform(exc,
    context)`` returns instead (a ``ProtocolError`` the client reads; None keeps the
    exception). What it re-raises is answered as any handler's error is."""

    def __init__(
        self, transform: Callable[[Exception, MiddlewareContext], Exception | None] | None = None
    ) -> None:
        self.transform = transform
        self.errors: dict[tuple[str, str], int] = {}

    async def on_request(self, context: MiddlewareContext, call_next: CallNext) -> Any:
        try:
            return await call_next(context)
        except Exception as exc:
            self._count(exc, context.method)
            if isinstance(exc, ProtocolError):
                logger.info("%s failed: %s", context.method, exc)
            else:
                logger.warning("%s failed", context.method, exc_info=exc)
            replacement = self.transform(exc, context) if self.transform is not None else None
            if replacement is not None:
                raise replacement from exc
            raise

    def _count(self, exc: Exception, method: str) -> None:
        key = (type(exc).__name__, method)
        if key in self.errors or len(self.errors) < MAX_ERROR_KINDS:
            self.errors[key] = self.errors.get(key, 0) + 1


class ResponseSizeLimit(Middleware):
    """No result over ``max_bytes`` of JSON leaves the server: a tool's is answered as a
    failed call (``isError``, the model reads why), any other request's as -32603."""

    def __init__(self, max_bytes: int = DEFAULT_MAX_RESPONSE_BYTES) -> None:
        if max_bytes < 1:
            raise ValueError("max_bytes must be at least 1")
        self.max_bytes = max_bytes

    async def on_request(self, context: MiddlewareContext, call_next: CallNext) -> Any:
        result = await call_next(context)
        size = len(msgspec.json.encode(result))
        if size <= self.max_bytes:
            return result
        said = f"the result of {context.method} is {size} bytes, over the {self.max_bytes} allowed"
        logger.warning("%s", said)
        if context.method == "tools/call":
            return {"content": [{"type": "text", "text": said}], "isError": True}
        raise InternalError(said)


__all__ = ["DEFAULT_MAX_RESPONSE_BYTES", "MAX_ERROR_KINDS", "ErrorHandling", "ResponseSizeLimit"]
