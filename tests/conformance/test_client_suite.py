"""The official MCP conformance suite's client scenarios against
``examples/conformance_client.py`` (``McpClient.http`` in AUTO_DETECT / ``protocol_mode="auto"``):
every non-auth client scenario of 0.1.16 and of 0.2.0-alpha.12, each at its default spec
version, and the ones that span both eras at 2026-07-28 as well."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conformance._suite import ROOT, list_scenarios, node_env, suite_command, suite_dir

pytestmark = pytest.mark.interop

EXAMPLE = ROOT / "examples" / "conformance_client.py"

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

CASES = [
    pytest.param(version, scenario, None, id=f"{version}-{scenario}")
    for version, names in SCENARIOS.items()
    for scenario in names
] + [
    pytest.param("0.2.0-alpha.12", scenario, "2026-07-28", id=f"0.2.0-alpha.12-{scenario}@2026-07-28")
    for scenario in BOTH_ERAS
]


def _command(version: str) -> list[str]:
    try:
        return suite_command(version)
    except FileNotFoundError as exc:
        pytest.skip(str(exc))


@pytest.mark.parametrize("version", list(SCENARIOS))
def test_the_scenario_list_is_complete(version: str) -> None:
    _command(version)
    listed = [name for name in list_scenarios(version, "client") if not name.startswith("auth/")]
    assert sorted(listed) == sorted(SCENARIOS[version])


@pytest.mark.parametrize(("version", "scenario", "spec_version"), CASES)
def test_client_scenario(version: str, scenario: str, spec_version: str | None) -> None:
    command = _command(version)
    args = ["client", "--command", f"{sys.executable} {EXAMPLE}", "--scenario", scenario]
    if spec_version is not None:
        args += ["--spec-version", spec_version]
    result = subprocess.run(
        command + args,
        env=node_env(version),
        cwd=suite_dir(version),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-4000:]
    assert "OVERALL: PASSED" in output and " 0 failed" in output, output[-4000:]
