"""The official conformance suite (0.1.16) against ``mcpkit proxy`` (Streamable HTTP front)
in front of ``examples/everything.py`` over stdio: the same totals as the direct server."""

from __future__ import annotations

import pytest

from tests.conformance._suite import run_suite, suite_command_or_skip
from tests.conformance.test_server_suite import EXPECTED_SCENARIOS
from tests.proxy._running import EVERYTHING, running_proxy

pytestmark = pytest.mark.interop


def test_the_proxy_passes_every_conformance_scenario():
    suite_command_or_skip("0.1.16")
    with running_proxy(*EVERYTHING) as url:
        results, output = run_suite("0.1.16", ["server", "--url", url, "--suite", "all"])
    assert len(results) == EXPECTED_SCENARIOS, output[-3000:]
    failed = {name: counts for name, counts in results.items() if counts[1]}
    assert not failed, f"failed scenarios: {failed}\n{output[-5000:]}"
