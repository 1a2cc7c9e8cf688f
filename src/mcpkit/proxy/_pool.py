"""The backend connections one proxy keeps, and which front calls run on which.

- The **shared** connection: the catalog, completions, and every call to a 2026-07-28
  backend (whose requests to the client come back in each call's own result, and which
  is told each call's client capabilities in it).
- One per **handshake-era front session**, made on its first call: the backend sees one
  client per front client, as if each had started it.
- One per **running call** of a 2026-07-28 or stateless front client to a handshake-era
  backend, *leased* for that call alone: what the backend asks or logs during it can only
  be that call's. Once the call ends it is kept idle for the next call of the same
  principal (the bearer token's issuer, client and subject; every anonymous caller is one
  principal) with the same client capabilities.

At most ``max_sessions`` besides the shared one: past it the least recently used idle one
is closed, and when every one is running a call the front call fails (``BackendBusyError``)
rather than close one under another user's call. Idle ones close after ``idle_timeout``.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator, Callable, Iterable

from mcpkit.client import McpClient
from mcpkit.proxy._backend import (
    DEFAULT_BACKEND_CONNECT_TIMEOUT,
    DEFAULT_BACKEND_IDLE_TIMEOUT,
    DEFAULT_MAX_BACKEND_SESSIONS,
    BackendBusyError,
    BackendConnection,
)

#: What the shared connection declares: what a backend asks only within a call, so that the
#: catalog it reads is the one a capable client sees (a backend may list a tool only to
#: clients that can sample). No handshake-era call runs on it (each has a connection of its
#: own), and a request that came anyway is refused. Not roots: a backend may ask for those
#: at any time, and nobody on the shared connection could answer.
SHARED_DECLARED = frozenset({"sampling", "elicitation"})


class BackendPool:
    """The shared connection, the front sessions' and the leased ones (module docstring)."""

    def __init__(
        self,
        make: Callable[[BackendConnection], McpClient],
        *,
        max_sessions: int = DEFAULT_MAX_BACKEND_SESSIONS,
        idle_timeout: float = DEFAULT_BACKEND_IDLE_TIMEOUT,
        connect_timeout: float = DEFAULT_BACKEND_CONNECT_TIMEOUT,
        label: str = "",
    ) -> None:
        if max_sessions < 1:
            raise ValueError("max_backend_sessions must be at least 1")
        if idle_timeout <= 0:
            raise ValueError("backend_idle_timeout must be positive")
        if connect_timeout <= 0:
            raise ValueError("backend_connect_timeout must be positive")
        self._make = make
        self.max_sessions = max_sessions
        self.idle_timeout = idle_timeout
        self.connect_timeout = connect_timeout
        self.label = label
        self.shared = self._connection(SHARED_DECLARED, None)
        #: Front session key -> its connection, least recently used first.
        self._sessions: dict[str, BackendConnection] = {}
        #: Leased connections running a call, and idle ones kept for reuse (oldest first).
        self._leased: set[BackendConnection] = set()
        self._spare: list[BackendConnection] = []
        self._closed = False

    def __len__(self) -> int:
        """The connections kept besides the shared one."""
        return len(self._sessions) + len(self._leased) + len(self._spare)

    def _connection(self, capabilities: Iterable[str], party: str | None) -> BackendConnection:
        return BackendConnection(
            self._make,
            self.label,
            connect_timeout=self.connect_timeout,
            capabilities=capabilities,
            party=party,
        )

    def existing(self, key: str) -> BackendConnection | None:
        """The connection of front session ``key``, if it has one now."""
        return self._sessions.get(key)

    async def for_session(
        self, key: str | None, capabilities: Iterable[str] = ()
    ) -> BackendConnection:
        """The connection of front session ``key`` (the shared one for None); a new one
        declares the front client's ``capabilities`` to the backend."""
        if key is None:
            return self.shared
        await self.close_idle()
        connection = self._sessions.pop(key, None)
        evicted = None
        if connection is None:
            evicted = self._evict()
            connection = self._connection(capabilities, f"session:{key}")
        self._sessions[key] = connection  # most recently used last
        if evicted is not None:  # closed once the new one holds its place (see _evict)
            await evicted.aclose()
        return connection

    @contextlib.asynccontextmanager
    async def lease(
        self, principal: str, capabilities: Iterable[str] = ()
    ) -> AsyncIterator[BackendConnection]:
        """A connection for one call of ``principal`` alone, declaring ``capabilities``:
        an idle one of theirs with the same capabilities, else a new one."""
        await self.close_idle()
        declared = frozenset(capabilities)
        party = f"principal:{principal}"
        connection = next(
            (c for c in self._spare if c.party == party and c.front_capabilities == declared),
            None,
        )
        evicted = None
        if connection is not None:
            self._spare.remove(connection)
        else:
            evicted = self._evict()
            connection = self._connection(declared, party)
        self._leased.add(connection)
        try:
            if evicted is not None:
                await evicted.aclose()
            yield connection
        finally:
            self._leased.discard(connection)
            await self._give_back(connection)

    async def _give_back(self, connection: BackendConnection) -> None:
        if self._closed or not connection.connected:
            await connection.aclose()
            return
        connection.last_used = time.monotonic()
        self._spare.append(connection)

    def _evict(self) -> BackendConnection | None:
        """Room for one more connection: when the pool is full, the least recently used
        idle one, taken out for the caller to close; fail (``BackendBusyError``) when every
        one runs a call. Synchronous: the caller puts its new connection in before it
        awaits anything, so calls made at once never overfill the pool, nor make a second
        connection for one front session."""
        if len(self) < self.max_sessions:
            return None
        if self._spare:
            return self._spare.pop(0)
        idle = next((key for key, c in self._sessions.items() if not c.active), None)
        if idle is None:
            raise BackendBusyError(
                f"Too many backend connections in use: all {self.max_sessions} "
                f"(max_backend_sessions={self.max_sessions}) are running calls; retry later"
            )
        return self._sessions.pop(idle)

    async def close_idle(self) -> None:
        """Close the connections unused for ``idle_timeout`` seconds (none runs a call)."""
        cutoff = time.monotonic() - self.idle_timeout
        idle = [key for key, c in self._sessions.items() if c.last_used < cutoff and not c.active]
        closing = [self._sessions.pop(key) for key in idle]
        closing += [c for c in self._spare if c.last_used < cutoff]
        self._spare = [c for c in self._spare if c.last_used >= cutoff]
        for connection in closing:  # taken out first: a call meanwhile makes a new one
            await connection.aclose()

    async def aclose(self) -> None:
        self._closed = True
        connections = [self.shared, *self._sessions.values(), *self._leased, *self._spare]
        self._sessions.clear()
        self._spare.clear()
        for connection in connections:
            await connection.aclose()
