"""Who runs a task, and whether they still live: the part of the durable task stores that
lets a task outlive a crash of its process as ``failed`` rather than ``working`` for ever.

Each store object is a *runner*: a random ``runner_id`` plus the identity of its process
(``RunnerIdentity``). A task records the runner whose process runs it (``TaskRecord.runner_id``;
None when no process does, e.g. a SEP-2663 task parked for input). The runner keeps a lease
alive with a heartbeat; a runner is dead when its lease has lapsed, or sooner when its
process provably ended: same kernel boot and pid namespace, and the pid gone, a zombie, or
another process started since (Linux ``/proc``). A live process is never taken for dead
from here: its heartbeat may stall (a blocked event loop, a paused process), yet on this
machine its pid still vouches for it.

The unfinished tasks of a dead runner are failed with ``ABANDONED_MESSAGE`` (``abandon``),
so ``tasks/get`` says why and ``tasks/result`` answers with their error.
"""

from __future__ import annotations

import os
import time
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Protocol

import msgspec

from mcpkit._exceptions import InternalError
from mcpkit.stores._tasks import TaskRecord

#: Seconds between two renewals of a runner's lease (and two looks for dead runners).
DEFAULT_HEARTBEAT_INTERVAL = 10.0
#: Seconds a lease outlives a missed renewal before its runner is taken for dead.
DEFAULT_HEARTBEAT_GRACE = 20.0
#: The ``statusMessage`` (and error message) of a task whose process ended mid-run.
ABANDONED_MESSAGE = "The server process that ran this task ended before it finished"
#: Statuses of a task a runner may still be working on.
UNFINISHED_STATUSES = ("working", "input_required")

_PROC = Path("/proc")


@dataclass(frozen=True, slots=True)
class RunnerIdentity:
    """A runner and the process it lives in."""

    runner_id: str
    #: The kernel boot and pid namespace where ``pid`` names this process (Linux); None
    #: where that cannot be told, and then only the lease says whether the runner lives.
    host: str | None
    pid: int
    #: The process's start time, in clock ticks since boot: a pid reused later has another.
    started: int | None

    @classmethod
    def of_this_process(cls) -> RunnerIdentity:
        """A new runner in the calling process."""
        pid = os.getpid()
        host = _pid_namespace()
        started = _start_time(pid) if host is not None else None
        return cls(uuid.uuid4().hex, host if started is not None else None, pid, started)

    def to_json(self) -> bytes:
        return msgspec.json.encode(asdict(self))

    @classmethod
    def from_json(cls, data: bytes | str) -> RunnerIdentity:
        raw = msgspec.json.decode(data)
        return cls(raw["runner_id"], raw.get("host"), int(raw["pid"]), raw.get("started"))


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def _pid_namespace() -> str | None:
    """This kernel boot and this process's pid namespace, or None off Linux."""
    boot = _read(_PROC / "sys" / "kernel" / "random" / "boot_id")
    try:
        namespace = os.readlink(_PROC / "self" / "ns" / "pid")
    except OSError:
        return None
    return f"{boot}/{namespace}" if boot else None


def _stat(pid: int) -> list[str] | None:
    """The fields of ``/proc/PID/stat`` after the command name; None when there is no such
    process."""
    text = _read(_PROC / str(pid) / "stat")
    if text is None or ")" not in text:
        return None
    return text.rsplit(")", 1)[1].split()


def _start_time(pid: int) -> int | None:
    fields = _stat(pid)
    try:
        return int(fields[19]) if fields is not None else None
    except (IndexError, ValueError):
        return None


def process_alive(identity: RunnerIdentity, here: RunnerIdentity) -> bool | None:
    """Whether the runner's process lives, when this process can tell (same boot and pid
    namespace); None when it cannot, and the lease decides."""
    if identity.host is None or identity.host != here.host or identity.started is None:
        return None
    fields = _stat(identity.pid)
    if fields is None or fields[0] in ("Z", "X"):  # gone, or a zombie nobody reaped yet
        return False
    return _start_time(identity.pid) == identity.started


def runner_alive(
    identity: RunnerIdentity, lease_until: float, here: RunnerIdentity, now: float | None = None
) -> bool:
    """Whether a runner lives: its process's word when this process can check it, else
    whether its lease still runs at ``now``."""
    if identity.runner_id == here.runner_id:
        return True
    verdict = process_alive(identity, here)
    if verdict is not None:
        return verdict
    return lease_until >= (time.time() if now is None else now)


def abandon(record: TaskRecord, now: float | None = None) -> TaskRecord:
    """``record`` made ``failed``: its process ended before it finished (changed in place)."""
    record.status = "failed"
    record.status_message = ABANDONED_MESSAGE
    record.error = InternalError(ABANDONED_MESSAGE).to_error()
    record.result = None
    record.input_requests, record.responses, record.state = {}, {}, None
    record.runner_id = None
    record.last_updated_at = time.time() if now is None else now
    return record


class RunnerBookkeeping(Protocol):
    """The SQLite or Redis bookkeeping of runner leases, as a store holds it."""

    identity: RunnerIdentity
    interval: float
    grace: float


class LeasedRunners:
    """What a task store with runner leases tells of them (its ``_runners``)."""

    _runners: RunnerBookkeeping

    @property
    def runner_id(self) -> str:
        return self._runners.identity.runner_id

    @property
    def heartbeat_interval(self) -> float:
        """Seconds between two renewals of this store's lease (and looks for dead runners)."""
        return self._runners.interval

    @property
    def heartbeat_grace(self) -> float:
        """Seconds a lease outlives a missed renewal before its runner is taken for dead."""
        return self._runners.grace
