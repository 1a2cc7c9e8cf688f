"""The header time bound of a server's connections, kept by one sweeper instead of a timer
per request: a connection waiting for its request headers (``header_read_timeout``) stores
when the wait began and how long it may last, and the sweep closes those past it."""

from __future__ import annotations

import asyncio
from typing import Any


class ConnectionClock:
    """The open connections of one server and a sweeper, alive while there are any. It keeps
    a coarse time (``now``, the last sweep's), so a request pays for no timer and no clock
    read: only attribute stores on its connection (``clock_since``, ``clock_limit``)."""

    def __init__(self, header_timeout: float) -> None:
        #: Seconds between sweeps: a quarter of the header timeout, at most 1 s.
        self.interval = min(1.0, max(0.01, header_timeout / 4))
        # A start read from ``now`` is up to one sweep early: a connection is closed after
        # more than its limit, at most two sweeps past it.
        self.header_limit = header_timeout + self.interval
        self.now = 0.0
        self.connections: set[Any] = set()
        self._sweeper: asyncio.Task[None] | None = None

    def add(self, protocol: Any, loop: asyncio.AbstractEventLoop) -> None:
        self.connections.add(protocol)
        if self._sweeper is None or self._sweeper.done():
            self.now = loop.time()
            self._sweeper = loop.create_task(self._sweep(loop))

    async def _sweep(self, loop: asyncio.AbstractEventLoop) -> None:
        connections = self.connections
        while connections:
            await asyncio.sleep(self.interval)
            now = self.now = loop.time()
            for protocol in list(connections):
                since = protocol.clock_since
                if since is not None and now - since > protocol.clock_limit:
                    protocol.out_of_time()


__all__ = ["ConnectionClock"]
