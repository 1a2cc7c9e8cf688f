"""The wrk command line the HTTP benches run (one thread, a Lua scenario from ``lua/``,
pinned to a CPU) and the ``BENCH_RESULT`` line those scenarios print."""

from __future__ import annotations

import json
import re
from pathlib import Path

from _pinning import pinned

LUA_DIR = Path(__file__).resolve().parent / "lua"
_RESULT = re.compile(r"^BENCH_RESULT (\{.*\})$", re.MULTILINE)


def wrk_command(
    wrk: str,
    url: str,
    script: str,
    seconds: float,
    connections: int,
    cpu: int,
    script_args: tuple[str, ...] = (),
) -> list[str]:
    """wrk loading ``url`` with ``lua/<script>`` over ``connections`` for ``seconds``; the
    script's ``init`` gets the connection count, then ``script_args``."""
    return pinned(
        [
            wrk,
            "-t1",
            f"-c{connections}",
            f"-d{max(1, round(seconds))}s",
            "--timeout",
            "10s",
            "-s",
            str(LUA_DIR / script),
            url,
            "--",
            str(connections),
            *script_args,
        ],
        cpu,
    )


def bench_result(output: str) -> dict | None:
    """The scenario's ``BENCH_RESULT`` (None when wrk printed none)."""
    match = _RESULT.search(output)
    return json.loads(match.group(1)) if match else None
