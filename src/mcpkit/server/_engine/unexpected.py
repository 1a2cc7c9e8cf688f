"""What a client is told about a fault nobody anticipated (a bug in a handler, a codec, a
store): a generic -32603 carrying an error id, while the detail and its traceback go to the
server log under that id. Exception text can hold paths, SQL or secrets, so it reaches the
client only with ``McpServerApp(expose_internal_errors=True)``, for development."""

from __future__ import annotations

import logging
import secrets

from mcpkit._exceptions import InternalError, McpCallError

_logger = logging.getLogger("mcpkit.server")


def new_error_id() -> str:
    """A short random id naming one logged fault (12 hex digits)."""
    return secrets.token_hex(6)


def internal_error(
    exc: BaseException,
    what: str,
    *,
    expose: bool = False,
    logger: logging.Logger = _logger,
) -> InternalError:
    """Log ``exc`` once, with its traceback, as "``what`` failed (error id …)"; return the
    -32603 to send: "Internal error (id …); see the server log" with ``data.errorId``, or,
    with ``expose``, "Internal error: {exc}" (what mcpkit sent before) with the same data."""
    error_id = new_error_id()
    logger.error("%s failed (error id %s)", what, error_id, exc_info=exc)
    if expose:
        message = f"Internal error: {exc}"
    else:
        message = f"Internal error (id {error_id}); see the server log"
    return InternalError(message, {"errorId": error_id})


def client_request_failed(exc: McpCallError) -> InternalError:
    """The -32603 of a request whose handler asked the client something (sampling,
    elicitation, roots) and got an error back, or could not ask. Not a bug, so not hidden
    behind an error id: the client is told its own answer, under ``data.clientError``."""
    failure: dict[str, object] = {"code": exc.code, "message": exc.message}
    if exc.data is not None:
        failure["data"] = exc.data
    return InternalError(f"A request to the client failed: {exc.message}", {"clientError": failure})


__all__ = ["client_request_failed", "internal_error", "new_error_id"]
