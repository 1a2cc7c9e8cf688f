"""The ``requestState`` ids accepted by any instance sharing a Redis, so that a state is
accepted once across instances and workers, not once per process (the 2026-07-28 MRTR page:
single use enforced server-side). One key per accepted state, gone when the state expires."""

from __future__ import annotations

import math

from mcpkit.stores._redis import RedisHub


class RedisUsedRequestStates:
    """``RequestStates.shared`` on a ``RedisHub``: ``SET key NX`` with the state's expiry, so
    of two instances taking one state, one wins."""

    def __init__(self, hub: RedisHub) -> None:
        self.hub = hub

    async def spend(self, state_id: str, expires_at: float) -> bool:
        """Record ``state_id`` until ``expires_at`` (a Unix time); False when it already was.
        A state past its expiry is refused before it gets here."""
        key = self.hub.key("request-state", state_id)
        at_ms = max(1, math.ceil(expires_at * 1000))
        taken = await self.hub.call(self.hub.client.set(key, b"1", nx=True, pxat=at_ms))
        return bool(taken)
