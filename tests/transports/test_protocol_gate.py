"""mcpkit's HTTP protocol serves only under the uvicorn releases it is tested with
(``TESTED_UVICORN``); under any other, uvicorn's own protocol serves and one warning says
why."""

from __future__ import annotations

import logging

import pytest
import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from mcpkit.transports.http import uvicorn_http_protocol
from mcpkit.transports.http._server.protocol import (
    TESTED_UVICORN,
    default_http_protocol,
    protocol_refusal,
)

LOWEST, BEYOND = TESTED_UVICORN


def release(major: int, minor: int, patch: int = 0) -> str:
    return f"{major}.{minor}.{patch}"


@pytest.mark.parametrize("version", [release(*LOWEST), release(*LOWEST, 7)])
def test_a_tested_release_is_served(version):
    assert protocol_refusal(version) is None


@pytest.mark.parametrize(
    "version",
    ["0.30.0", release(LOWEST[0], LOWEST[1] - 1, 9), release(*BEYOND), "1.0.0", "0.56.0rc1", "dev"],
)
def test_any_other_release_is_refused_with_a_reason(version):
    reason = protocol_refusal(version)
    assert reason is not None
    assert f"uvicorn {version} is not a release" in reason and "uvicorn's own protocol" in reason


def test_outside_the_range_uvicorns_own_protocol_serves_and_a_warning_says_why(monkeypatch, caplog):
    monkeypatch.setattr(uvicorn, "__version__", "0.30.0")
    with caplog.at_level(logging.WARNING, logger="mcpkit.http"):
        assert uvicorn_http_protocol() == {"http": "httptools"}
        assert default_http_protocol() is HttpToolsProtocol
    said = [r.getMessage() for r in caplog.records if r.name == "mcpkit.http"]
    assert len(said) == 2 and all("uvicorn 0.30.0 is not a release" in line for line in said)


def test_inside_the_range_the_protocol_is_mcpkits(monkeypatch, caplog):
    monkeypatch.setattr(uvicorn, "__version__", release(*LOWEST, 1))
    with caplog.at_level(logging.WARNING, logger="mcpkit.http"):
        protocol = uvicorn_http_protocol()["http"]
    assert issubclass(protocol, HttpToolsProtocol) and protocol is not HttpToolsProtocol
    assert not [r for r in caplog.records if r.name == "mcpkit.http"]
