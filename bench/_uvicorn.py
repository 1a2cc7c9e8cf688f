"""The uvicorn command line the HTTP benches start their servers with: one worker (unless
told), apps from ``servers/``, no access log, lifespan on."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

SERVERS_DIR = Path(__file__).resolve().parent / "servers"


def uvicorn_command(
    python: Path | str, target: str, port: int, flags: list[str], workers: int = 1
) -> list[str]:
    """``python -m uvicorn`` serving ``target`` (``module:app`` in ``servers/``) on ``port``
    with ``workers`` processes."""
    return [
        str(python),
        "-m",
        "uvicorn",
        "--app-dir",
        str(SERVERS_DIR),
        target,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--workers",
        str(workers),
        "--log-level",
        "warning",
        "--no-access-log",
        "--lifespan",
        "on",
        *flags,
    ]


def stop_server(proc: subprocess.Popen) -> None:
    """SIGTERM, then SIGKILL after 10 s: a server that will not stop does not hang the bench."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
