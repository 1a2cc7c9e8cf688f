"""The replay record of ``requestState``: the ids of the states an app accepted, each kept
until the state itself expires, so that none is accepted twice (the MRTR page: single use
must be enforced server-side). Bounded: past ``max_entries`` unexpired ids, retries are
refused as "busy" (and their states not consumed) rather than a remembered id forgotten,
which would make that state good again."""

from __future__ import annotations

import threading
from collections import OrderedDict

from mcpkit._exceptions import InternalError

#: Unexpired accepted states one app remembers (about 100 bytes each).
DEFAULT_MAX_USED_REQUEST_STATES = 100_000


class UsedRequestStatesFull(InternalError):
    """More unexpired ``requestState`` ids than the record holds: the retry is refused
    (-32603) without consuming its state, so the client may send it again shortly."""

    def __init__(self, bound: int) -> None:
        super().__init__(
            f"Server busy: {bound} requestState retries remembered (max_used_request_states);"
            " try again shortly"
        )


class UsedRequestStates:
    """The ids of accepted states, in this process (one record per app), with when each
    expires. Checked and recorded in one step, without awaiting and under a lock (an app
    may serve calls on several event loops), so two retries racing with one state cannot
    both get in."""

    def __init__(self, max_entries: int = DEFAULT_MAX_USED_REQUEST_STATES) -> None:
        if max_entries < 1:
            raise ValueError(f"max_used_request_states must be at least 1: {max_entries!r}")
        self.max_entries = max_entries
        # id -> expiry, in the order accepted: with one TTL that is about the order they
        # expire in, so the expired ones are found at the front.
        self._expiry: OrderedDict[str, float] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._expiry)

    def spend(self, state_id: str, expires_at: float, now: float) -> bool:
        """Record ``state_id`` as used until ``expires_at``; False when it already was.
        Raises ``UsedRequestStatesFull`` when the record is full of unexpired ids."""
        expiry = self._expiry
        with self._lock:
            if state_id in expiry:
                return False
            while expiry:
                oldest, until = next(iter(expiry.items()))
                if until > now:
                    break
                del expiry[oldest]
            if len(expiry) >= self.max_entries:
                raise UsedRequestStatesFull(self.max_entries)
            expiry[state_id] = expires_at
            return True
