"""Errors of the client side of the 2026-07-28 era."""

from __future__ import annotations

from mcpkit._exceptions import MCPError

__all__ = ["InputRequestError", "ProtocolEraError"]


class InputRequestError(MCPError):
    """A multi round-trip request (SEP-2322) the client cannot complete: the server asked
    for input the client never declared a capability for (which it must not do), sent a
    malformed ``inputRequests``, or kept asking past ``max_input_rounds``."""

    def __init__(self, message: str, *, method: str | None = None, key: str | None = None) -> None:
        super().__init__(message)
        self.method = method
        self.key = key


class ProtocolEraError(MCPError):
    """The operation does not exist in the era the client and server speak (``ping`` or
    ``resources/subscribe`` in 2026-07-28, ...), or no protocol version is shared."""
