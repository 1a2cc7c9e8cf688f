"""What environment a proxy's stdio backends start with: a minimal one (``PATH``, ``HOME``,
the locale, ...) plus what the config names. They inherited the proxy's whole
environment, its secrets and its ``MCPKIT_*`` settings: ``MCPKIT_TRANSPORT=http`` made an
mcpkit backend serve HTTP (on the proxy's own port) instead of answering on stdio."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator

import pytest

from mcpkit.client import McpClient, StdioClientTransportOptions
from mcpkit.proxy import McpProxy, proxy_servers
from mcpkit.proxy._environment import backend_environment
from tests.http_server import serving
from tests.ports import refused_port
from tests.proxy._running import EVERYTHING
from tests.proxy.test_proxy import text_of
from tests.proxy.test_proxy_isolation import GATED

pytestmark = [
    pytest.mark.interop,
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]


@pytest.fixture
def proxy_environment(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """What the proxy's own process holds: a secret, and settings meant for it alone (a
    port held for the test, where no backend could serve)."""
    with refused_port() as port:
        monkeypatch.setenv("MCPKIT_TEST_SECRET", "hunter2")
        monkeypatch.setenv("MCPKIT_TRANSPORT", "http")
        monkeypatch.setenv("MCPKIT_PORT", str(port))
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "not-for-backends")
        monkeypatch.setenv("LC_TIME", "C")
        yield


async def test_a_config_backend_gets_a_minimal_environment_and_its_own_env(
    proxy_environment, tmp_path
):
    config = tmp_path / "servers.json"
    servers = {
        "probe": {"command": sys.executable, "args": [GATED], "env": {"GREETING": "hi"}},
        "everything": {"command": EVERYTHING[0], "args": EVERYTHING[1:]},
    }
    config.write_text(json.dumps({"mcpServers": servers}))
    app = proxy_servers(config, backend_protocol_mode="legacy")
    async with asyncio.timeout(30), serving(app) as (url, _):
        async with McpClient.http(url) as client:
            seen = json.loads(text_of(await client.call_tool("probe_environment", {})))
            # an mcpkit backend answers on stdio, whatever MCPKIT_TRANSPORT says to the proxy
            added = await client.call_tool(
                "everything_calculate", {"a": 2, "b": 3, "operation": "add"}
            )
            assert "5" in text_of(added)
    assert seen["GREETING"] == "hi"
    assert seen["PATH"] and seen["LC_TIME"] == "C"
    assert not [name for name in seen if name.startswith("MCPKIT_")]
    assert "AWS_SECRET_ACCESS_KEY" not in seen


async def test_inheriting_the_whole_environment_is_an_explicit_choice(proxy_environment):
    options = StdioClientTransportOptions(
        command=sys.executable, arguments=[GATED], environment_variables={"GREETING": "hi"}
    )
    proxy = McpProxy(options, backend_protocol_mode="legacy", inherit_environment=True)
    async with asyncio.timeout(30), serving(proxy.app) as (url, _):
        async with McpClient.http(url) as client:
            seen = json.loads(text_of(await client.call_tool("environment", {})))
    assert seen["MCPKIT_TEST_SECRET"] == "hunter2" and seen["GREETING"] == "hi"


def test_the_minimal_environment_is_the_official_sdks_with_the_locale_and_temp_dirs(monkeypatch):
    monkeypatch.setenv("LANG", "C.UTF-8")
    monkeypatch.setenv("TMPDIR", "/tmp/x")
    monkeypatch.setenv("SHELL", "() { :; }; echo pwned")  # a bash function: never passed on
    monkeypatch.setenv("MCPKIT_TEST_SECRET", "hunter2")
    environment = backend_environment({"ROOT": "/srv"})
    assert environment["LANG"] == "C.UTF-8" and environment["TMPDIR"] == "/tmp/x"
    assert environment["ROOT"] == "/srv" and "PATH" in environment
    assert "SHELL" not in environment and "MCPKIT_TEST_SECRET" not in environment


def test_a_config_entry_inherits_the_environment_only_when_it_says_so():
    from mcpkit.proxy import load_servers_config

    backends = load_servers_config(
        {
            "mcpServers": {
                "plain": {"command": "python", "env": {"A": "1"}},
                "inheriting": {"command": "python", "inheritEnv": True},
            }
        }
    )
    plain, inheriting = backends["plain"], backends["inheriting"]
    assert isinstance(plain, StdioClientTransportOptions)
    assert isinstance(inheriting, StdioClientTransportOptions)
    assert not plain.inherit_environment_variables and plain.environment_variables == {"A": "1"}
    assert inheriting.inherit_environment_variables
    with pytest.raises(ValueError, match=r"mcpServers\.x\.inheritEnv must be true or false"):
        load_servers_config({"mcpServers": {"x": {"command": "python", "inheritEnv": "yes"}}})
