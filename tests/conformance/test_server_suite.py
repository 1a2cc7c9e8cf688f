"""The official MCP conformance suite (0.1.16) against ``mcpkit run examples/everything.py
--transport http``: every server scenario, pending ones included."""

from __future__ import annotations

import pytest

from tests.conformance._suite import run_suite, running_server

pytestmark = pytest.mark.interop

EXPECTED_SCENARIOS = 32
#: Server scenarios of 0.2.0-alpha.12 tagged 2026-07-28.
EXPECTED_2026_SCENARIOS = 40
ALPHA_2026_ARGS = ["--suite", "all", "--spec-version", "2026-07-28"]


def test_server_passes_every_conformance_scenario():
    with running_server() as url:
        results, output = run_suite("0.1.16", ["server", "--url", url, "--suite", "all"])
    assert len(results) == EXPECTED_SCENARIOS, output[-3000:]
    failed = {name: counts for name, counts in results.items() if counts[1]}
    assert not failed, f"failed scenarios: {failed}\n{output[-5000:]}"


def test_server_passes_every_2026_scenario_of_the_alpha_suite():
    """0.2.0-alpha.12: every server scenario tagged 2026-07-28, pending ones included."""
    with running_server() as url:
        results, output = run_suite(
            "0.2.0-alpha.12",
            ["server", "--url", url, *ALPHA_2026_ARGS],
        )
    assert len(results) == EXPECTED_2026_SCENARIOS, output[-3000:]
    failed = {name: counts for name, counts in results.items() if counts[1]}
    assert not failed, f"failed scenarios: {failed}\n{output[-5000:]}"
