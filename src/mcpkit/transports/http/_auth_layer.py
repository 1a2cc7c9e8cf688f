"""Bearer auth as a layer around an HTTP endpoint: ``BearerAuthLayer(endpoint, gate)`` is
itself an ASGI app.

It checks the request's token with the gate (``mcpkit.auth.BearerAuthGate``); a denial is
answered there (401/403 with its ``WWW-Authenticate`` challenge) and the endpoint never
runs. An accepted request runs the endpoint with its identity in ``scope["mcp.auth"]``
and ``CURRENT_AUTH`` (what guards read through ``current_auth()`` and what the
transports put on each call's binding), and with the gate's extra response headers.
CORS preflights (OPTIONS) pass unchecked: a browser sends them without credentials.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcpkit.auth._server import Denial, with_extra_headers
from mcpkit.auth._types import CURRENT_AUTH, SCOPE_KEY
from mcpkit.transports.http._endpoint import request_headers

if TYPE_CHECKING:
    from mcpkit.auth._server import BearerAuthGate
    from mcpkit.transports.http._asgi import Receive, Send
    from mcpkit.transports.http._endpoint import AsgiApp


class BearerAuthLayer:
    """``endpoint`` behind ``gate``: only requests with an accepted token reach it."""

    __slots__ = ("endpoint", "gate")

    def __init__(self, endpoint: AsgiApp, gate: BearerAuthGate) -> None:
        self.endpoint = endpoint
        self.gate = gate

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope.get("method") == "OPTIONS":
            await self.endpoint(scope, receive, send)
            return
        outcome = await self.gate.authenticate(scope, request_headers(scope))
        if isinstance(outcome, Denial):
            await self.gate.send_denial(send, outcome)
            return
        scope[SCOPE_KEY] = outcome.auth
        token = CURRENT_AUTH.set(outcome.auth)
        try:
            await self.endpoint(scope, receive, with_extra_headers(send, outcome.response_headers))
        finally:
            CURRENT_AUTH.reset(token)


class MetadataEndpoint:
    """The gate's protected-resource metadata document as an ASGI app (served without auth)."""

    __slots__ = ("gate",)

    def __init__(self, gate: BearerAuthGate) -> None:
        self.gate = gate

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        await self.gate.serve_metadata(scope, receive, send, request_headers(scope))


__all__ = ["BearerAuthLayer", "MetadataEndpoint"]
