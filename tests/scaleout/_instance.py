"""``mcpkit run APP -t http --redis-url URL`` as a real process on a loopback port the system
gives it on the first start, which a restart keeps (the load balancer's configuration names
it)."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.environment import child_environment
from tests.ports import Announced, launch

ROOT = Path(__file__).resolve().parents[2]
#: The state of an established connection in /proc/net/tcp.
ESTABLISHED = "01"


def environment() -> dict[str, str]:
    """This environment without MCPKIT_* settings, which would change what is served."""
    return child_environment(PYTHONPATH=str(ROOT / "src"))


class Instance:
    """One mcpkit instance; ``start`` again after ``kill`` serves on the same port."""

    def __init__(self, app: Path, redis_url: str) -> None:
        self.port = 0
        self.command = [sys.executable, "-m", "mcpkit", "run", str(app), "-t", "http"]
        self.command += ["--redis-url", redis_url, "--json"]
        self.served: Announced | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    @property
    def pid(self) -> int:
        assert self.served is not None
        return self.served.process.pid

    def start(self) -> Instance:
        command = [*self.command, "--port", str(self.port)]
        self.served = launch(command, stream="both", cwd=ROOT, env=environment())
        self.port = self.served.port
        return self

    def open_connections(self) -> int:
        """How many TCP connections to this instance are established now (Linux)."""
        local = f"0100007F:{self.port:04X}"  # 127.0.0.1:port, as /proc/net/tcp spells it
        rows = (line.split() for line in Path("/proc/net/tcp").read_text().splitlines()[1:])
        return sum(row[1] == local and row[3] == ESTABLISHED for row in rows)

    def kill(self) -> None:
        """SIGKILL: no shutdown of any kind, as when a machine dies."""
        if self.served is not None:
            self.served.process.kill()
            self.served.stop()

    def stop(self) -> None:
        """SIGTERM (then SIGKILL, should that take too long)."""
        if self.served is not None:
            self.served.stop()
