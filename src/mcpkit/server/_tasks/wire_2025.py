"""What the 2025-11-25 tasks utility (the handshake era's experimental ``tasks``) puts on
the wire, and whose its tasks are: the ``Task`` shape, the capability, the ``tasks/result``
payload, the owner of a task and the ``tasks/list`` cursor.

Holds no state and does no I/O; the requests are ``requests_2025.py``'s.
"""

from __future__ import annotations

import base64
import binascii
import math
from typing import Any

import msgspec

from mcpkit._exceptions import InvalidParamsError, ProtocolError
from mcpkit.protocol._versions import V2025_11_25
from mcpkit.server._engine.binding import TransportBinding
from mcpkit.server._tasks.wire import Principal, task_wire
from mcpkit.stores._tasks import ListPosition, TaskRecord

#: The handshake versions that have tasks.
TASK_VERSIONS = frozenset({V2025_11_25})
#: The ``_meta`` key tying a message to its task.
RELATED_TASK_KEY = "io.modelcontextprotocol/related-task"
#: What the ``tasks`` capability declares: list, cancel and task-augmented ``tools/call``.
TASKS_CAPABILITY: dict[str, Any] = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
#: The mode ``TaskManager.mode_for`` gives a 2025-11-25 task-augmented call.
HANDSHAKE_MODE = "handshake-task"
#: Tasks one ``tasks/list`` page holds.
DEFAULT_TASK_LIST_PAGE_SIZE = 50
#: The shortest ``ttl`` a client may ask for (ms): a shorter one could expire before its
#: ``CreateTaskResult`` is read.
MIN_TASK_TTL_MS = 1_000
#: The longest ``statusMessage`` made from a failed tool's text.
MAX_STATUS_MESSAGE_CHARS = 500
#: The ``statusMessage`` of a task waiting for ``tasks/result`` to carry its input request.
INPUT_REQUIRED_MESSAGE = "Waiting for input: call tasks/result to receive the request"


def is_handshake_record(record: TaskRecord) -> bool:
    """Whether the task was made by a 2025-11-25 task-augmented call (else: SEP-2663)."""
    return record.protocol_version in TASK_VERSIONS


def has_tasks(binding: TransportBinding) -> bool:
    """Whether this handshake-era request's session speaks a version with tasks."""
    session = binding.session
    return not binding.modern and session is not None and session.protocol_version in TASK_VERSIONS


def related(task_id: str) -> dict[str, Any]:
    """The ``io.modelcontextprotocol/related-task`` value of a task."""
    return {"taskId": task_id}


def with_related_meta(params: dict[str, Any] | None, task_id: str) -> dict[str, Any]:
    """``params`` with ``_meta`` naming the task (the caller's ``params`` is not changed)."""
    params = dict(params or {})
    meta = params.get("_meta")
    params["_meta"] = {
        **(meta if isinstance(meta, dict) else {}),
        RELATED_TASK_KEY: related(task_id),
    }
    return params


def owner_of(principal: Principal, binding: TransportBinding) -> str | None:
    """Whose a 2025-11-25 task is: the authenticated client (the spec binds tasks to the
    authorization context), else the session; None for an anonymous request without a
    session (stateless HTTP), whose tasks only their unguessable id protects."""
    identity = principal(binding)
    if identity is not None:
        return f"auth:{identity}"
    session = binding.session
    if session is not None and not session.ephemeral:
        return f"session:{session.key}"
    return None


def _finite(number: float) -> bool:
    """Whether ``number`` is a finite float, or an integer one could hold."""
    try:
        return math.isfinite(number)
    except OverflowError:  # an integer of hundreds of digits
        return False


def requested_ttl(params: dict[str, Any], longest: int | None) -> int | None:
    """The ``ttl`` the task gets: the one asked for in ``params.task``, within
    [``MIN_TASK_TTL_MS``, ``longest``]; ``longest`` when none is asked for (None: no limit)."""
    task = params.get("task")
    if not isinstance(task, dict):
        raise InvalidParamsError('"task" must be an object', {"param": "task"})
    asked = task.get("ttl")
    if asked is None:
        return longest
    if (
        isinstance(asked, bool)
        or not isinstance(asked, int | float)
        or not _finite(asked)
        or asked < 0
    ):
        raise InvalidParamsError('"task.ttl" must be a number of milliseconds', {"param": "task"})
    ttl = max(int(asked), MIN_TASK_TTL_MS)
    return ttl if longest is None else min(ttl, longest)


def task_2025(record: TaskRecord) -> dict[str, Any]:
    """The 2025-11-25 ``Task`` of a record (``ttl`` is null when unlimited)."""
    return task_wire(record, ttl_key="ttl", poll_key="pollInterval")


def failure_message(result: dict[str, Any]) -> str:
    """The ``statusMessage`` of a task whose tool returned ``isError``: its first text."""
    for block in result.get("content") or ():
        if isinstance(block, dict) and isinstance(block.get("text"), str):
            text = block["text"]
            if len(text) > MAX_STATUS_MESSAGE_CHARS:
                text = text[: MAX_STATUS_MESSAGE_CHARS - 1] + "…"
            return f"Tool execution failed: {text}"
    return "Tool execution failed"


def task_payload(record: TaskRecord) -> dict[str, Any]:
    """What ``tasks/result`` answers for a task in a final status: what the call would have
    answered (its ``CallToolResult``, ``isError`` included, or its JSON-RPC error, raised),
    with ``_meta`` naming the task. A cancelled task has no result: -32602."""
    if record.status == "cancelled":
        raise InvalidParamsError(
            f"Task {record.task_id} was cancelled: it has no result",
            {"taskId": record.task_id, "status": record.status},
        )
    if record.error is not None:
        error = record.error
        code = error.get("code")
        raise ProtocolError(
            str(error.get("message") or "The task failed"),
            error.get("data"),
            code=code if isinstance(code, int) else -32603,
        )
    result = dict(record.result or {"content": []})
    meta = result.get("_meta")
    result["_meta"] = {
        **(meta if isinstance(meta, dict) else {}),
        RELATED_TASK_KEY: related(record.task_id),
    }
    return result


def encode_list_cursor(position: ListPosition) -> str:
    """The opaque ``nextCursor`` of a ``tasks/list`` page ending at ``position``."""
    return base64.urlsafe_b64encode(msgspec.json.encode(list(position))).decode()


def decode_list_cursor(cursor: Any) -> ListPosition | None:
    """The position a ``tasks/list`` cursor stands for; one we did not issue is -32602."""
    if cursor is None:
        return None
    try:
        created, task_id = msgspec.json.decode(base64.urlsafe_b64decode(str(cursor).encode()))
    except (ValueError, TypeError, binascii.Error, msgspec.DecodeError):
        raise InvalidParamsError("Invalid cursor", {"cursor": cursor}) from None
    if (
        isinstance(created, bool)
        or not isinstance(created, int | float)
        or not isinstance(task_id, str)
    ):
        raise InvalidParamsError("Invalid cursor", {"cursor": cursor})
    try:
        return (float(created), task_id)
    except OverflowError:  # an integer no time can be
        raise InvalidParamsError("Invalid cursor", {"cursor": cursor}) from None
