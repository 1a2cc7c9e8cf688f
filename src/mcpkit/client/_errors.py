"""Errors of the client side: the 2026-07-28 era, sessions, and tasks."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcpkit._exceptions import ConnectionClosedError, MCPError

if TYPE_CHECKING:
    from mcpkit.client._task_state import TaskState

__all__ = [
    "STREAM_BROKEN",
    "InputRequestError",
    "ProtocolEraError",
    "SessionExpiredError",
    "TaskCancelledError",
    "TasksNotSupportedError",
]

#: ``error.data`` key of the error a modern request gets when its response stream broke
#: before the response: the client sends the request again (new id), as 2026-07-28 wants.
STREAM_BROKEN = "mcpkit/streamBroken"


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


class SessionExpiredError(ConnectionClosedError):
    """The server does not know the HTTP session any more (it answered 404 to a request
    that carried the ``Mcp-Session-Id``): the session expired, was ended, or, for a
    ``known_session_id``, never existed there. It ends the transport; connect again (without
    the session id) to start a new session."""

    def __init__(self, message: str, *, session_id: str | None = None) -> None:
        super().__init__(message)
        self.session_id = session_id

    def renewed(self) -> SessionExpiredError:
        """The same error, for another request that fails with it."""
        return SessionExpiredError(str(self), session_id=self.session_id)


class TasksNotSupportedError(MCPError):
    """The server did not declare the task support an operation needs (2025-11-25:
    ``capabilities.tasks.requests.tools.call`` for a task-augmented ``tools/call``,
    ``tasks.list`` for ``tasks/list``, ``tasks.cancel`` for ``tasks/cancel``), so the
    client must not send it."""


class TaskCancelledError(MCPError):
    """The result of a task that was cancelled was asked for (2026-07-28, where the task
    carries no result of its own once cancelled). ``state`` is the task's last state."""

    def __init__(self, message: str, state: TaskState) -> None:
        super().__init__(message)
        self.state = state
