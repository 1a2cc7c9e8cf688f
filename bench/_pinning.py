"""CPU pinning for benchmarks: the load generator and the server on separate cores."""

from __future__ import annotations

import os
import shutil


def pinned(command: list[str], cpu: int) -> list[str]:
    """``command`` run on one CPU when the machine has a spare one and taskset exists."""
    if (os.cpu_count() or 1) >= 2 and shutil.which("taskset"):
        return ["taskset", "-c", str(cpu), *command]
    return command


def pin_self(cpu: int) -> None:
    if (os.cpu_count() or 1) >= 2 and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {cpu})
