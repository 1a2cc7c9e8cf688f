"""What the parts of the tasks extension (SEP-2663) share: its wire names, a task's shapes
on the wire, and the settings the parts read from their ``TaskManager``.

Holds no state and does no I/O; the parts themselves are the other modules of ``mcpkit.server._tasks``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Protocol

from mcpkit._codes import ErrorCode
from mcpkit._exceptions import ProtocolError
from mcpkit.auth._types import session_owner
from mcpkit.protocol._jsonrpc import JsonRpcRequest
from mcpkit.server._engine.binding import TransportBinding
from mcpkit.stores._tasks import TaskRecord, TaskStore

if TYPE_CHECKING:
    from mcpkit.server._host import CatalogHost

#: The 2026-07-28 tasks extension's identifier (SEP-2663), as clients declare it.
TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
DEFERRED_ATTR = "__mcp_task_deferred__"
#: The ``statusMessage`` of a task the client cancelled.
CANCELLED_MESSAGE = "Cancelled at the client's request"

ExecuteTool = Callable[
    [Any, dict[str, Any], JsonRpcRequest, TransportBinding], Awaitable[dict[str, Any]]
]
Principal = Callable[[TransportBinding], "str | None"]


class TaskSettings(Protocol):
    """The ``TaskManager`` settings the parts read at each use, so that one changed on the
    manager (``app.tasks.ttl_ms = ...``, ``app.tasks.store = ...``) applies at once."""

    app: CatalogHost
    store: TaskStore
    max_running: int
    ttl_ms: int | None
    poll_interval_ms: int | None
    sweep_interval: float
    principal: Principal
    execute_tool: ExecuteTool | None


class MissingTasksExtensionError(ProtocolError):
    """-32021: the request needs the tasks extension the client did not declare."""

    code = ErrorCode.MISSING_REQUIRED_CAPABILITY

    def __init__(
        self, message: str = f"Missing required client capability: extension {TASKS_EXTENSION}"
    ) -> None:
        super().__init__(message, {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}})


def declares_tasks(binding: TransportBinding) -> bool:
    """Whether this (2026-07-28) request declares the tasks extension in its capabilities."""
    if not binding.modern:
        return False
    extensions = (binding.client_capabilities or {}).get("extensions")
    return isinstance(extensions, dict) and isinstance(extensions.get(TASKS_EXTENSION), dict)


def iso_time(timestamp: float) -> str:
    """A POSIX timestamp as the wire's ISO 8601 UTC time, to the millisecond (``...Z``)."""
    return (
        datetime.fromtimestamp(timestamp, UTC)
        .isoformat(timespec="milliseconds")
        .replace("+00:00", "Z")
    )


def task_wire(
    record: TaskRecord, *, ttl_key: str = "ttlMs", poll_key: str = "pollIntervalMs"
) -> dict[str, Any]:
    """The ``Task`` fields of a record; the keys of its TTL and polling interval are the
    SEP-2663 ones unless given (2025-11-25 names them ``ttl`` and ``pollInterval``)."""
    wire: dict[str, Any] = {
        "taskId": record.task_id,
        "status": record.status,
        "createdAt": iso_time(record.created_at),
        "lastUpdatedAt": iso_time(record.last_updated_at),
        ttl_key: record.ttl_ms,
    }
    if record.poll_interval_ms is not None:
        wire[poll_key] = record.poll_interval_ms
    if record.status_message:
        wire["statusMessage"] = record.status_message
    return wire


def detailed_task(record: TaskRecord) -> dict[str, Any]:
    """The ``DetailedTask`` of ``tasks/get`` and ``notifications/tasks``."""
    wire = task_wire(record)
    if record.status == "input_required":
        wire["inputRequests"] = dict(record.input_requests)
    elif record.status == "completed":
        wire["result"] = record.result if record.result is not None else {"content": []}
    elif record.status == "failed":
        wire["error"] = record.error or {"code": ErrorCode.INTERNAL_ERROR, "message": "Task failed"}
    return wire


def create_task_result(record: TaskRecord) -> dict[str, Any]:
    """The flat ``CreateTaskResult`` (``Result & Task``) answering the call."""
    return {"resultType": "task", **task_wire(record)}


def default_principal(binding: TransportBinding) -> str | None:
    """Who a task belongs to: the verified identity, told apart as a session's owner is
    (issuer, client and subject; the token itself when it names neither), None without
    auth."""
    return session_owner(binding.auth)


async def discard(message: dict[str, Any]) -> None:
    """Where a task's progress and log notifications go: nowhere (SEP-2663)."""
