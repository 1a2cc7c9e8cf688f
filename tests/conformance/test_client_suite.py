"""The official MCP conformance suite's client scenarios against
``examples/conformance_client.py`` (``McpClient.http`` in AUTO_DETECT / ``protocol_mode="auto"``):
every non-auth client scenario of 0.1.16 and of 0.2.0-alpha.12, each at its default spec
version, and the ones that span both eras at 2026-07-28 as well."""

from __future__ import annotations

import pytest

from tests.conformance._suite import (
    client_scenario_cases,
    list_scenarios,
    run_client_scenario,
    suite_command_or_skip,
)

pytestmark = pytest.mark.interop

#: Every non-auth client scenario, per suite version.
SCENARIOS = {
    "0.1.16": ["initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry"],
    "0.2.0-alpha.12": [
        "initialize",
        "tools_call",
        "elicitation-sep1034-client-defaults",
        "sse-retry",
        "request-metadata",
        "sep-2322-client-request-state",
        "http-standard-headers",
        "http-custom-headers",
        "http-invalid-tool-headers",
        "json-schema-ref-no-deref",
        "json-schema-2020-12-preservation",
        # extension scenarios (SEP-2640 skills): nothing to check for a client without it
        "sep-2640-client-no-prefetch",
        "sep-2640-client-verify-digest",
        "sep-2640-client-verify-size",
        "sep-2640-client-verify-frontmatter",
    ],
}
#: Scenarios of both eras, run again against the suite's 2026-07-28 (stateless) server.
BOTH_ERAS = ["tools_call", "json-schema-2020-12-preservation"]

CASES = client_scenario_cases(SCENARIOS, BOTH_ERAS)


@pytest.mark.parametrize("version", list(SCENARIOS))
def test_the_scenario_list_is_complete(version: str) -> None:
    suite_command_or_skip(version)
    listed = [name for name in list_scenarios(version, "client") if not name.startswith("auth/")]
    assert sorted(listed) == sorted(SCENARIOS[version])


@pytest.mark.parametrize(("version", "scenario", "spec_version"), CASES)
def test_client_scenario(version: str, scenario: str, spec_version: str | None) -> None:
    returncode, output = run_client_scenario(version, scenario, spec_version)
    assert returncode == 0, output[-4000:]
    assert "OVERALL: PASSED" in output and " 0 failed" in output, output[-4000:]
