"""``mcpkit run APP -t http --redis-url URL`` as a real process on a loopback port of its
own, which a restart keeps (the load balancer's configuration names it)."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
from pathlib import Path
from typing import IO

from tests.http_server import free_port

ROOT = Path(__file__).resolve().parents[2]
#: Seconds an instance gets to print its banner, and to stop.
STARTUP = 30.0
#: The state of an established connection in /proc/net/tcp.
ESTABLISHED = "01"


def environment() -> dict[str, str]:
    """This environment without MCPKIT_* settings, which would change what is served."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCPKIT_")}
    env["PYTHONPATH"] = str(ROOT / "src")
    return env


def read_banner(process: subprocess.Popen[bytes], timeout: float) -> dict[str, str]:
    """The JSON line ``--json`` prints on stdout once the port accepts connections."""
    stdout: IO[bytes] = process.stdout  # type: ignore[assignment]
    ready, _, _ = select.select([stdout], [], [], timeout)
    line = stdout.readline() if ready else b""
    if not line:
        raise RuntimeError(f"no banner within {timeout} s (exit status {process.poll()})")
    banner: dict[str, str] = json.loads(line)
    return banner


class Instance:
    """One mcpkit instance; ``start`` again after ``kill`` runs the same command."""

    def __init__(self, app: Path, redis_url: str, log: Path) -> None:
        self.port = free_port()
        self.log = log
        self.command = [sys.executable, "-m", "mcpkit", "run", str(app), "-t", "http"]
        self.command += ["--port", str(self.port), "--redis-url", redis_url, "--json"]
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def start(self) -> Instance:
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                self.command, cwd=ROOT, env=environment(), stdout=subprocess.PIPE, stderr=log
            )
        try:
            banner = read_banner(self.process, STARTUP)
        except RuntimeError as exc:
            self.kill()
            raise RuntimeError(f"{exc}; its log:\n{self.log.read_text()[-3000:]}") from None
        assert banner["url"] == self.url, banner
        return self

    def open_connections(self) -> int:
        """How many TCP connections to this instance are established now (Linux)."""
        local = f"0100007F:{self.port:04X}"  # 127.0.0.1:port, as /proc/net/tcp spells it
        rows = (line.split() for line in Path("/proc/net/tcp").read_text().splitlines()[1:])
        return sum(row[1] == local and row[3] == ESTABLISHED for row in rows)

    def kill(self) -> None:
        """SIGKILL: no shutdown of any kind, as when a machine dies."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
        self._reap()

    def stop(self) -> None:
        """SIGTERM (then SIGKILL, should that take too long)."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(STARTUP)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self._reap()

    def _reap(self) -> None:
        if self.process is not None:
            self.process.wait(STARTUP)
            if self.process.stdout is not None:
                self.process.stdout.close()
