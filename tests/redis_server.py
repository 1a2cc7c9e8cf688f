"""A real ``redis-server`` for the tests (Debian's package; ``./dev test`` installs it): on a
loopback port of its own, no persistence unless asked, stopped and started again at will,
killed at the end. Tests that need it skip when the binary is missing."""

from __future__ import annotations

import re
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import pytest

from tests.ports import Announced, launch, on_a_free_port

REDIS_SERVER = shutil.which("redis-server")
#: What redis-server writes once it accepts connections (its port bound).
READY = re.compile(r"Ready to accept connections")
needs_redis = pytest.mark.skipif(
    REDIS_SERVER is None, reason="redis-server is not installed (apt-get install redis-server)"
)


class RedisServer:
    """One redis-server process. ``stop(save=True)`` snapshots to its directory first, so
    ``start()`` brings the data back (a Redis restart with persistence) on the same port."""

    def __init__(self) -> None:
        self.port = 0  # chosen on the first start, kept across restarts
        self.dir = Path(tempfile.mkdtemp(prefix="mcpkit-redis-"))
        self.served: Announced | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        if self.port:
            self.served = self._launch(self.port)
        else:
            # redis-server cannot be told port 0: one chosen, another should it be taken
            self.served = on_a_free_port(self._launch)
            self.port = self.served.port
        return self

    def _launch(self, port: int) -> Announced:
        assert REDIS_SERVER is not None
        command = [REDIS_SERVER, "--port", str(port), "--bind", "127.0.0.1", "--save", ""]
        command += ["--appendonly", "no", "--dir", str(self.dir), "--dbfilename", "dump.rdb"]
        command += ["--protected-mode", "no"]
        served = launch(command, banner=READY, stream="both")
        served.url = f"redis://127.0.0.1:{port}/0"
        return served

    def stop(self, *, save: bool = False) -> None:
        if self.served is None:
            return
        if save:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=2) as sock:
                    sock.sendall(b"SHUTDOWN SAVE\r\n")
                    sock.recv(64)
            except OSError:
                pass
            try:
                self.served.process.wait(5)
            except subprocess.TimeoutExpired:
                pass
        if self.served.process.poll() is None:
            self.served.process.kill()
        self.served.stop()
        self.served = None

    def flush(self) -> None:
        with socket.create_connection(("127.0.0.1", self.port), timeout=2) as sock:
            sock.sendall(b"FLUSHALL\r\n")
            sock.recv(64)

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)
