"""Graceful shutdown: how long running requests get to finish, and what the rest are told.

Every transport stops the same way (stdin closed, SIGTERM, SIGINT): stop taking input,
give the requests already running up to ``shutdown_grace`` seconds to finish and answer,
then cancel what still runs, each request answered with ``shutting_down_error()`` rather
than left unanswered, and stop the app (its lifespans, its stores).

The default grace, 5 s, lets ordinary calls (well under a second, a few seconds at most)
finish, and keeps grace, cancellation and flushing (about a second more) well inside the
time supervisors wait after SIGTERM before SIGKILL: 10 s for ``docker stop``, 30 s for
Kubernetes' ``terminationGracePeriodSeconds``, 90 s for systemd. A stdio client that
signals a server still in its grace (the official Python SDK sends SIGTERM 2 s after
closing stdin) ends the grace at once: the calls are still answered.
"""

from __future__ import annotations

from mcpkit._exceptions import ProtocolError

#: Seconds requests still running at shutdown get to finish before they are cancelled.
DEFAULT_SHUTDOWN_GRACE = 5.0
#: Seconds the requests cancelled at the end of the grace get to send their error answers.
ABORT_SETTLE = 1.0
#: JSON-RPC error code of the answer to a request cancelled by shutdown (implementation-
#: defined server error range; the official SDK answers -32000 "Connection closed").
SERVER_SHUTTING_DOWN = -32000
SHUTTING_DOWN_MESSAGE = "Server shutting down"


def shutting_down_error() -> ProtocolError:
    """The error a request cancelled by shutdown is answered with."""
    return ProtocolError(SHUTTING_DOWN_MESSAGE, code=SERVER_SHUTTING_DOWN)


def check_grace(grace: float) -> float:
    """``grace`` as seconds (a number, 0 or more), else ValueError."""
    value = float(grace)
    if not value >= 0:  # also NaN
        raise ValueError(f"shutdown_grace must be 0 or more seconds, not {grace!r}")
    return value


__all__ = [
    "ABORT_SETTLE",
    "DEFAULT_SHUTDOWN_GRACE",
    "SERVER_SHUTTING_DOWN",
    "SHUTTING_DOWN_MESSAGE",
    "check_grace",
    "shutting_down_error",
]
