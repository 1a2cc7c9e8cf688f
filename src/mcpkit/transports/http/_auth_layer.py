"""Bearer auth as a layer around an HTTP endpoint: ``BearerAuthLayer(endpoint, gate)`` is
itself an ASGI app.

It checks the request's token with the gate (``mcpkit.auth.BearerAuthGate``); a denial is
answered there (401/403 with its ``WWW-Authenticate`` challenge) and the endpoint never
runs. An accepted request runs the endpoint with its identity in ``scope["mcp.auth"]``
and ``CURRENT_AUTH`` (what guards read through ``current_auth()`` and what the
transports put on each call's binding), and with the gate's extra response headers.
CORS preflights (OPTIONS) pass unchecked: a browser sends them without credentials.

``auth_gate(options, endpoint)`` builds the gate the layers share, its DPoP state (nonce
keys, accepted proofs) on the server's Redis when its stores are there: every worker and
instance then issues and accepts the same nonces, and accepts a proof once. Workers of one
supervisor without Redis share a file instead (``with_dpop_file``, in each worker).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from mcpkit.auth._server import Denial, with_extra_headers
from mcpkit.auth._types import CURRENT_AUTH, GATE_SCOPE_KEY, SCOPE_KEY
from mcpkit.transports.http._endpoint import request_headers

if TYPE_CHECKING:
    from mcpkit.auth._dpop_sqlite import FileDPoPState
    from mcpkit.auth._dpop_state import DPoPStateStore
    from mcpkit.auth._server import BearerAuthGate
    from mcpkit.stores._redis import RedisHub
    from mcpkit.transports.http._asgi import Receive, Send
    from mcpkit.transports.http._endpoint import AsgiApp
    from mcpkit.transports.http._options import StreamableHttpServerOptions


def auth_gate(options: StreamableHttpServerOptions, endpoint: str) -> BearerAuthGate:
    """The gate of ``options.bearer_auth`` for the app's ``endpoint``, its DPoP state
    shared through the server's Redis when it has one (and the config names no store)."""
    from mcpkit.auth._server import BearerAuthGate

    return BearerAuthGate(options.bearer_auth, endpoint, dpop_state=shared_dpop_state(options))


def shared_dpop_state(options: StreamableHttpServerOptions) -> DPoPStateStore | None:
    """A ``RedisDPoPState`` on the Redis the server's stores use, when DPoP is on and they
    use one; None otherwise (the gate keeps its state in the process)."""
    config = options.bearer_auth
    if config is None or not config.enable_dpop or config.dpop_store is not None:
        return None
    hub = redis_hub_of(options)
    if hub is None:
        return None
    from mcpkit.auth._dpop_state import RedisDPoPState

    return RedisDPoPState(hub, max_entries=config.dpop_replay_cache_size)


def with_dpop_file(
    options: StreamableHttpServerOptions, path: str
) -> tuple[StreamableHttpServerOptions, FileDPoPState | None]:
    """``options`` whose gate keeps its DPoP state in the SQLite file at ``path`` (a
    ``FileDPoPState`` as the config's ``dpop_store``, returned too for its owner to close),
    when DPoP is on and neither the config names a store nor the server has a Redis; else
    ``options`` as they are, and None. What a worker does with the file its supervisor
    made for them all (``_server/workers.py``)."""
    config = options.bearer_auth
    if config is None or not config.enable_dpop or config.dpop_store is not None:
        return options, None
    if redis_hub_of(options) is not None:
        return options, None
    from mcpkit.auth._dpop_sqlite import FileDPoPState

    store = FileDPoPState(path, max_entries=config.dpop_replay_cache_size, clock=config.clock)
    shared = dataclasses.replace(config, dpop_store=store)
    return dataclasses.replace(options, bearer_auth=shared), store


def redis_hub_of(options: StreamableHttpServerOptions) -> RedisHub | None:
    """The ``RedisHub`` behind the options' session store, event store or message bus."""
    from mcpkit.stores._redis import RedisHub

    for store in (options.session_store, options.event_store, options.message_bus):
        backend = getattr(store, "backend", store)  # a StreamableSessionStore wraps one
        hub = getattr(backend, "hub", None)
        if isinstance(hub, RedisHub):
            return hub
    return None


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
        scope[GATE_SCOPE_KEY] = self.gate
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


__all__ = [
    "BearerAuthLayer",
    "MetadataEndpoint",
    "auth_gate",
    "redis_hub_of",
    "shared_dpop_state",
    "with_dpop_file",
]
