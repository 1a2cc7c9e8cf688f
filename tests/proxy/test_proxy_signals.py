"""``mcpkit proxy`` told to stop while its backend has not answered ``initialize``: it
stopped only when ``backend_connect_timeout`` ended (SIGTERM and SIGINT waited for the
start-up), and the backend process outlives nothing it should not."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.waiting import wait_until

pytestmark = pytest.mark.interop

#: A backend that never answers: it writes its pid, then reads stdin until it ends.
SILENT_BACKEND = (
    "import os, sys; open(sys.argv[1], 'w').write(str(os.getpid())); sys.stdin.buffer.read()"
)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def start_proxy(transport: str, pid_file: Path) -> subprocess.Popen[bytes]:
    front = ["--transport", "http", "--port", "0"] if transport == "http" else []
    backend = [sys.executable, "-c", SILENT_BACKEND, str(pid_file)]
    return subprocess.Popen(
        [sys.executable, "-m", "mcpkit", "proxy", *front, "--", *backend],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
async def test_a_signal_stops_a_start_up_waiting_on_a_silent_backend(tmp_path, transport, signum):
    pid_file = tmp_path / "backend.pid"
    proxy = start_proxy(transport, pid_file)
    try:
        await wait_until(lambda: pid_file.exists() and pid_file.read_text() != "", "backend", 15)
        backend = int(pid_file.read_text())
        proxy.send_signal(signum)
        # The default backend_connect_timeout is 30 s: well before it, and the backend gone.
        returncode = await asyncio.to_thread(proxy.wait, 10)
        assert returncode == 0, proxy.stderr.read() if proxy.stderr else ""
        await wait_until(lambda: not alive(backend), "the backend to end", 10)
    finally:
        if proxy.poll() is None:
            proxy.kill()
        proxy.wait()


async def test_a_killed_proxy_leaves_no_backend_behind(tmp_path):
    """SIGKILL leaves the proxy no say: the backend's stdin ends, and with it the backend
    (which, given no MCPKIT_* settings of the proxy's, never took over its port)."""
    pid_file = tmp_path / "backend.pid"
    proxy = start_proxy("http", pid_file)
    try:
        await wait_until(lambda: pid_file.exists() and pid_file.read_text() != "", "backend", 15)
        backend = int(pid_file.read_text())
        proxy.kill()
        proxy.wait(10)
        await wait_until(lambda: not alive(backend), "the backend to end", 10)
    finally:
        if proxy.poll() is None:
            proxy.kill()
        proxy.wait()
