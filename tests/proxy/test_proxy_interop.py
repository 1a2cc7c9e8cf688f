"""``McpProxy`` with backends as they are found: one that offers only tools (as the reference
server-filesystem and server-memory do), one that asks for roots, one that never answers
``initialize``, a stateless front, two backends whose names collide, and more front
sessions than the proxy may start backends for."""

from __future__ import annotations

import asyncio
import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from mcpkit import McpCallError
from mcpkit.client import McpClient, StdioClientTransportOptions
from mcpkit.proxy import BackendUnavailableError, McpProxy, proxy_servers
from tests.http_server import serving
from tests.proxy._running import ROOT
from tests.proxy.test_proxy import official, sample, text_of
from tests.waiting import wait_until

pytestmark = [
    pytest.mark.interop,
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

TOOLS_ONLY = str(Path(__file__).with_name("tools_only_backend.py"))


def tools_only(*tools: str) -> StdioClientTransportOptions:
    return StdioClientTransportOptions(command=sys.executable, arguments=[TOOLS_ONLY, *tools])


async def front_roots() -> list[dict[str, Any]]:
    return [{"uri": "file:///front", "name": "front"}]


async def test_a_backend_offering_only_tools_is_served():
    """The proxy listed prompts and resources too: the backend's -32601 (an McpCallError,
    which the refresh did not catch) stopped it with "startup failed: Method not found"."""
    proxy = McpProxy(tools_only())
    async with asyncio.timeout(30), serving(proxy.app) as (url, _):
        async with McpClient.http(url, protocol_mode="legacy") as client:
            assert [tool.name for tool in await client.list_tools()] == ["roots_seen"]
            assert await client.list_prompts() == []
            seen = json.loads(text_of(await client.call_tool("roots_seen", {})))
            assert seen["roots"] == "not asked"


async def test_mcpkit_proxy_starts_in_front_of_a_backend_offering_only_tools():
    """``mcpkit proxy`` exited at once: "startup failed: Method not found"."""
    backend = shlex.join([sys.executable, TOOLS_ONLY])
    options = StdioClientTransportOptions(
        command=sys.executable,
        arguments=["-m", "mcpkit", "proxy", "--transport", "stdio", backend],
        working_directory=str(ROOT),
    )
    async with asyncio.timeout(30), McpClient.stdio(options, protocol_mode="legacy") as client:
        assert client.server_info is not None
        assert client.server_info.server_info.name == "tools-only"
        assert not (await client.call_tool("roots_seen", {})).is_error


async def test_roots_are_declared_only_where_a_front_client_can_answer_them():
    """The shared connection declared ``roots``, then refused the backend's ``roots/list``
    with -32600. Now: it declares no roots (only what a backend asks within a call, which
    no handshake-era call there can need); a front session's own connection declares the
    front client's, and its ``roots/list`` is answered by that client."""
    proxy = McpProxy(tools_only())
    async with asyncio.timeout(30), serving(proxy.app) as (url, _):
        shared = await proxy.pool.shared.client()
        seen = json.loads(text_of(await shared.call_tool("roots_seen", {})))
        assert "roots" not in seen["capabilities"] and seen["roots"] == "not asked"
        async with McpClient.http(url, protocol_mode="legacy", roots=front_roots) as client:
            seen = json.loads(text_of(await client.call_tool("roots_seen", {})))
            assert "roots" in seen["capabilities"]
            assert seen["roots"] == {"roots": [{"uri": "file:///front", "name": "front"}]}


async def test_a_stateless_front_is_told_the_server_cannot_send_it_requests():
    """A handshake-era client that declared sampling was told "Client does not support
    sampling" (-32021): untrue; the server is stateless, it has no channel to ask on."""
    proxy = McpProxy(official(), backend_protocol_mode="legacy")
    async with asyncio.timeout(30), serving(proxy.app, stateless=True) as (url, _):
        async with McpClient.http(url, protocol_mode="legacy", sampling_handler=sample) as client:
            with pytest.raises(McpCallError) as refused:
                await client.call_tool("ask_model", {"question": "2+2?"})
    assert "stateless" in refused.value.message
    assert "does not support" not in refused.value.message
    assert refused.value.code == -32603


async def test_a_backend_that_never_answers_initialize_fails_the_start_in_time():
    silent = [sys.executable, "-c", "import sys; sys.stdin.read()"]
    proxy = McpProxy(silent, name="silent", backend_connect_timeout=0.5)
    async with asyncio.timeout(10):
        with pytest.raises(BackendUnavailableError) as caught:
            await proxy.app.start()
    assert "did not answer initialize within 0.5 s" in caught.value.message
    assert "(silent: " in caught.value.message
    assert not proxy.app.started


async def test_two_backends_whose_names_collide_are_refused_at_start(tmp_path):
    """Server "a" tool "b_c" and server "a_b" tool "c" are both "a_b_c": the second
    silently shadowed the first."""
    config = tmp_path / "servers.json"
    servers = {
        "a": {"command": sys.executable, "args": [TOOLS_ONLY, "b_c", "x"]},
        "a_b": {"command": sys.executable, "args": [TOOLS_ONLY, "c"]},
    }
    config.write_text(json.dumps({"mcpServers": servers}))
    app = proxy_servers(config)
    async with asyncio.timeout(30):
        with pytest.raises(ValueError) as caught:
            await app.start()
    assert str(caught.value) == (
        "tool 'a_b_c' is both 'b_c' of server 'a' and 'c' of server 'a_b': "
        "rename one of the servers in the config"
    )
    assert not app.started


async def test_front_sessions_past_the_backend_bound_get_a_clear_error(tmp_path):
    """Each front session started a backend process, and the oldest one was closed to
    make room, even with a call running on it."""
    marker = tmp_path / "cancelled"
    proxy = McpProxy(
        official({"CANCEL_MARKER": str(marker)}),
        backend_protocol_mode="legacy",
        max_backend_sessions=1,
    )
    async with asyncio.timeout(30), serving(proxy.app) as (url, _):
        async with McpClient.http(url, protocol_mode="legacy") as first:
            running = asyncio.ensure_future(first.call_tool("wait_forever", {}))
            await wait_until(Path(f"{marker}.started").exists, "the first call", 15)
            async with McpClient.http(url, protocol_mode="legacy") as second:
                with pytest.raises(McpCallError) as refused:
                    await second.call_tool("echo", {"text": "hi"})
            assert refused.value.code == -32603
            assert "max_backend_sessions=1" in refused.value.message
            assert not running.done()
            running.cancel()


async def test_a_backend_without_resource_subscriptions_is_not_sent_one(caplog):
    """A front ``resources/subscribe`` went to the backend whatever it declared: -32601,
    and a warning with a traceback."""
    proxy = McpProxy(tools_only())
    async with asyncio.timeout(30), serving(proxy.app) as (url, _):
        async with McpClient.http(url, protocol_mode="legacy") as client:
            await client.call_tool("roots_seen", {})  # the session's backend connection
            with caplog.at_level("DEBUG", logger="mcpkit.proxy"):
                await client.subscribe_resource("file:///watched")
                await wait_until(
                    lambda: "resources/subscribe not sent" in caplog.text, "the subscription"
                )
    assert "failed" not in caplog.text
