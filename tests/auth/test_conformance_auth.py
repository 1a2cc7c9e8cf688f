"""The official MCP conformance suite's ``auth/*`` client scenarios against
``examples/conformance_client.py`` (``OAuthClientProvider`` installed on the HTTP transport):
every one of 0.1.16 and of 0.2.0-alpha.12 at its default spec version, and those that are
on the 2026-07-28 timeline at 2026-07-28 as well."""

from __future__ import annotations

import pytest

from tests.conformance._suite import (
    client_scenario_cases,
    list_scenarios,
    run_client_scenario,
    suite_command_or_skip,
)

pytestmark = pytest.mark.interop

#: The scenarios both suite versions have, in the order both list them first.
IN_BOTH = [
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/basic-cimd",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-step-up",
    "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/pre-registration",
    "auth/2025-03-26-oauth-metadata-backcompat",
    "auth/2025-03-26-oauth-endpoint-fallback",
    "auth/resource-mismatch",
    "auth/offline-access-scope",
    "auth/offline-access-not-supported",
]
SCENARIOS = {
    "0.1.16": [
        *IN_BOTH,
        "auth/client-credentials-jwt",
        "auth/client-credentials-basic",
        "auth/cross-app-access-complete-flow",
    ],
    "0.2.0-alpha.12": [
        *IN_BOTH,
        "auth/authorization-server-migration",
        "auth/iss-supported",
        "auth/iss-not-advertised",
        "auth/iss-supported-missing",
        "auth/iss-wrong-issuer",
        "auth/iss-unexpected",
        "auth/iss-normalized",
        "auth/metadata-issuer-mismatch",
        "auth/client-credentials-jwt",
        "auth/client-credentials-basic",
        "auth/enterprise-managed-authorization",
        "auth/dpop",
        "auth/dpop-nonce",
        "auth/wif-jwt-bearer",
    ],
}
#: Not on the 2026-07-28 timeline (removed before it, or extensions).
NOT_2026 = {
    "auth/2025-03-26-oauth-metadata-backcompat",
    "auth/2025-03-26-oauth-endpoint-fallback",
    "auth/client-credentials-jwt",
    "auth/client-credentials-basic",
    "auth/enterprise-managed-authorization",
    "auth/dpop",
    "auth/dpop-nonce",
    "auth/wif-jwt-bearer",
}

CASES = client_scenario_cases(
    SCENARIOS, [name for name in SCENARIOS["0.2.0-alpha.12"] if name not in NOT_2026]
)


@pytest.mark.parametrize("version", list(SCENARIOS))
def test_the_auth_scenario_list_is_complete(version: str) -> None:
    suite_command_or_skip(version)
    listed = [name for name in list_scenarios(version, "client") if name.startswith("auth/")]
    assert sorted(listed) == sorted(SCENARIOS[version])


@pytest.mark.timeout(150)
@pytest.mark.parametrize(("version", "scenario", "spec_version"), CASES)
def test_auth_scenario(version: str, scenario: str, spec_version: str | None) -> None:
    returncode, output = run_client_scenario(version, scenario, spec_version)
    assert returncode == 0, output[-4000:]
    assert "OVERALL: PASSED" in output and " 0 failed" in output and " 0 warnings" in output, (
        output[-4000:]
    )
