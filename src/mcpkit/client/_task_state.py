"""Where a task stands (``TaskState``), as the server last said: the one shape the client
gives for a task of either era, read from its wire form. ``TaskCancelledError`` carries one,
and ``mcpkit.client._tasks`` polls and follows them."""

from __future__ import annotations

from typing import Any

import msgspec

__all__ = ["TASK_STATUSES", "TERMINAL_TASK_STATUSES", "TaskState"]

TASK_STATUSES = ("working", "input_required", "completed", "failed", "cancelled")
TERMINAL_TASK_STATUSES = frozenset({"completed", "failed", "cancelled"})


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def dict_or_none(value: Any) -> dict[str, Any] | None:
    """``value`` when it is a JSON object, else None."""
    return value if isinstance(value, dict) else None


class TaskState(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Where a task stands, as ``tasks/get`` (or ``tasks/cancel``, ``tasks/list``, a status
    notification, the ``CreateTaskResult``) last said. One shape for both eras: the
    2025-11-25 ``ttl`` / ``pollInterval`` and the 2026-07-28 ``ttlMs`` / ``pollIntervalMs``
    are both milliseconds here; ``result``, ``error`` and ``input_requests`` are inline in
    2026-07-28 only (2025-11-25 gives the result through ``tasks/result``)."""

    task_id: str
    #: One of ``TASK_STATUSES``.
    status: str
    status_message: str | None = None
    #: ISO 8601 timestamps.
    created_at: str | None = None
    last_updated_at: str | None = None
    #: How long the server keeps the task after its creation (None: unlimited or not said).
    ttl_ms: int | None = None
    #: The polling interval the server suggests.
    poll_interval_ms: int | None = None
    #: 2026-07-28: the final result (``completed``), the JSON-RPC error (``failed``), the
    #: input the server waits for (``input_required``).
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    input_requests: dict[str, Any] | None = None
    meta: dict[str, Any] | None = None

    @property
    def terminal(self) -> bool:
        """True once the task is ``completed``, ``failed`` or ``cancelled`` (it stays so)."""
        return self.status in TERMINAL_TASK_STATUSES

    @classmethod
    def from_wire(cls, raw: Any) -> TaskState:
        """The state a ``Task`` object of either era describes; raises
        ``msgspec.ValidationError`` for one without a string ``taskId`` and ``status``."""
        if not isinstance(raw, dict):
            raise msgspec.ValidationError(f"expected a task object, got {raw!r}")
        task_id, status = raw.get("taskId"), raw.get("status")
        if not isinstance(task_id, str) or not task_id or not isinstance(status, str):
            raise msgspec.ValidationError(f"a task needs a taskId and a status: {raw!r}")
        ttl = raw["ttlMs"] if "ttlMs" in raw else raw.get("ttl")
        poll = raw["pollIntervalMs"] if "pollIntervalMs" in raw else raw.get("pollInterval")
        return cls(
            task_id=task_id,
            status=status,
            status_message=_str(raw.get("statusMessage")),
            created_at=_str(raw.get("createdAt")),
            last_updated_at=_str(raw.get("lastUpdatedAt")),
            ttl_ms=_int(ttl),
            poll_interval_ms=_int(poll),
            result=dict_or_none(raw.get("result")),
            error=dict_or_none(raw.get("error")),
            input_requests=dict_or_none(raw.get("inputRequests")),
            meta=dict_or_none(raw.get("_meta")),
        )
