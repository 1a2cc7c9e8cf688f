"""The official conformance suites (0.1.16, and 0.2.0-alpha.12 at 2026-07-28) against
``mcpkit proxy`` (Streamable HTTP front) in front of ``examples/everything.py`` over stdio:
the same totals as the direct server."""

from __future__ import annotations

import pytest

from tests.conformance._suite import run_suite, suite_command_or_skip
from tests.conformance.test_server_suite import (
    ALPHA_2026_ARGS,
    EXPECTED_2026_SCENARIOS,
    EXPECTED_SCENARIOS,
)
from tests.proxy._running import EVERYTHING, running_proxy

pytestmark = pytest.mark.interop


@pytest.mark.parametrize(
    ("version", "arguments", "expected"),
    [
        ("0.1.16", ["--suite", "all"], EXPECTED_SCENARIOS),
        ("0.2.0-alpha.12", ALPHA_2026_ARGS, EXPECTED_2026_SCENARIOS),
    ],
    ids=["0.1.16", "0.2.0-alpha.12@2026-07-28"],
)
def test_the_proxy_passes_every_conformance_scenario(
    version: str, arguments: list[str], expected: int
) -> None:
    suite_command_or_skip(version)
    with running_proxy(*EVERYTHING) as url:
        results, output = run_suite(version, ["server", "--url", url, *arguments])
    assert len(results) == expected, output[-3000:]
    failed = {name: counts for name, counts in results.items() if counts[1]}
    assert not failed, f"failed scenarios: {failed}\n{output[-5000:]}"
