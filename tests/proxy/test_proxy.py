"""``McpProxy`` in front of real backends: the official SDK's FastMCP server over stdio and
mcpkit's everything server, driven over real HTTP by ``McpClient`` and the official client."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from mcpkit import McpCallError
from mcpkit.client import McpClient, StdioClientTransportOptions
from mcpkit.proxy import McpProxy, proxy_servers
from tests.http_server import serving
from tests.interop.test_official_sdk_http import official_http_client
from tests.interop.test_official_sdk_stdio import texts
from tests.proxy._running import EVERYTHING, ROOT
from tests.waiting import wait_until

pytestmark = [
    pytest.mark.interop,
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

BACKEND = str(Path(__file__).with_name("official_backend.py"))


def official(env: dict[str, str] | None = None) -> StdioClientTransportOptions:
    return StdioClientTransportOptions(
        command=sys.executable, arguments=[BACKEND], environment_variables=env or {}
    )


def everything() -> StdioClientTransportOptions:
    return StdioClientTransportOptions(
        command=EVERYTHING[0], arguments=EVERYTHING[1:], working_directory=str(ROOT)
    )


async def sample(params: dict[str, Any]) -> dict[str, Any]:
    text = params["messages"][0]["content"]["text"]
    return {
        "role": "assistant",
        "content": {"type": "text", "text": f"echo of {text}"},
        "model": "front-model",
        "stopReason": "endTurn",
    }


async def elicit(params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": {"name": "Ada"}}


def text_of(result: Any) -> str:
    return str(result.content[0].text)


async def test_fastmcp_backend_progress_logs_sampling_elicitation_over_http():
    proxy = McpProxy(official(), backend_protocol_mode="legacy")
    logs: list[dict[str, Any]] = []
    async with asyncio.timeout(30), serving(proxy.app) as (url, _):
        async with McpClient.http(
            url,
            protocol_mode="legacy",
            sampling_handler=sample,
            elicitation_handler=elicit,
            logging_handler=logs.append,
        ) as client:
            tools = {tool.name: tool for tool in await client.list_tools()}
            assert {"echo", "count", "ask_model", "ask_name"} <= set(tools)
            assert tools["echo"].input_schema["properties"]["text"]["type"] == "string"
            assert text_of(await client.call_tool("echo", {"text": "hi"})) == "hi"
            progress: list[tuple[float, float | None, str | None]] = []

            async def on_progress(value: float, total: float | None, message: str | None) -> None:
                progress.append((value, total, message))

            counted = await client.call_tool("count", {"steps": 3}, progress=on_progress)
            assert text_of(counted) == "counted 3"
            assert [p[0] for p in progress] == [1, 2, 3] and progress[-1][2] == "step 3"
            await wait_until(lambda: len(logs) == 3, "three log notifications")
            assert [entry["data"] for entry in logs] == ["step 1", "step 2", "step 3"]
            sampled = await client.call_tool("ask_model", {"question": "2+2?"})
            assert text_of(sampled) == "model said: echo of 2+2?"
            elicited = await client.call_tool("ask_name", {})
            assert text_of(elicited) == "hello Ada"


async def test_front_cancellation_reaches_the_backend(tmp_path):
    marker = tmp_path / "cancelled"
    proxy = McpProxy(official({"CANCEL_MARKER": str(marker)}), backend_protocol_mode="legacy")
    async with asyncio.timeout(30), serving(proxy.app) as (url, _):
        async with McpClient.http(url, protocol_mode="legacy") as client:
            call = asyncio.ensure_future(client.call_tool("wait_forever", {}))
            started = tmp_path / "cancelled.started"
            await wait_until(started.exists, "the backend tool to start")
            assert len(proxy.pool) == 1  # the front session's own backend connection
            call.cancel()
            await wait_until(marker.exists, "the backend to see notifications/cancelled")
            assert marker.read_text() == "cancelled"
            assert text_of(await client.call_tool("echo", {"text": "still here"})) == "still here"


async def test_backend_death_is_a_clear_error_then_reconnects():
    proxy = McpProxy(official(), backend_protocol_mode="legacy")
    async with asyncio.timeout(30), serving(proxy.app) as (url, _):
        async with McpClient.http(url) as client:
            assert text_of(await client.call_tool("echo", {"text": "before"})) == "before"
            with pytest.raises(McpCallError) as failure:
                await client.call_tool("die", {})
            assert failure.value.code == -32603
            assert "Backend server unavailable" in failure.value.message
            assert text_of(await client.call_tool("echo", {"text": "after"})) == "after"


async def test_official_client_over_http_in_front_of_everything():
    proxy = McpProxy(everything())
    async with asyncio.timeout(30), serving(proxy.app) as (url, _):
        async with official_http_client(url) as (session, recorder):
            progress: list[float] = []

            async def on_progress(value: float, total: float | None, message: str | None) -> None:
                progress.append(value)

            streamed = await session.call_tool(
                "test_tool_with_progress", {}, progress_callback=on_progress
            )
            assert not streamed.is_error and progress == [0, 50, 100]
            sampled = await session.call_tool("test_sampling", {"prompt": "through a proxy"})
            assert "test response" in texts(sampled)[0] and recorder.sampling_requests
            elicited = await session.call_tool("test_elicitation", {"message": "who?"})
            assert not elicited.is_error and recorder.elicitation_requests
            prompts = {prompt.name for prompt in (await session.list_prompts()).prompts}
            assert "test_simple_prompt" in prompts


async def test_modern_front_client_before_a_handshake_era_backend():
    proxy = McpProxy(official(), backend_protocol_mode="legacy")
    async with asyncio.timeout(30), serving(proxy.app) as (url, _):
        async with McpClient.http(url, protocol_version="2026-07-28", log_level="info") as client:
            assert client.protocol_version == "2026-07-28"
            assert text_of(await client.call_tool("echo", {"text": "modern"})) == "modern"
            progress: list[float] = []

            async def on_progress(value: float, total: float | None, message: str | None) -> None:
                progress.append(value)

            counted = await client.call_tool("count", {"steps": 2}, progress=on_progress)
            assert text_of(counted) == "counted 2" and progress == [1, 2]
            backend_client = await proxy.pool.shared.client()
            assert backend_client.protocol_version != "2026-07-28"
            assert "echo" in {tool.name for tool in await client.list_tools()}


async def test_modern_front_answers_input_required_rounds_for_backend_requests():
    """The backend's sampling and elicitation requests become input_required rounds on the
    2026-07-28 front; the retries carry the answers back to the same backend call."""
    proxy = McpProxy(official(), backend_protocol_mode="legacy")
    async with asyncio.timeout(30), serving(proxy.app) as (url, _):
        async with McpClient.http(
            url, protocol_version="2026-07-28", sampling_handler=sample, elicitation_handler=elicit
        ) as client:
            sampled = await client.call_tool("ask_model", {"question": "3+3?"})
            assert text_of(sampled) == "model said: echo of 3+3?"
            elicited = await client.call_tool("ask_name", {})
            assert text_of(elicited) == "hello Ada"
            assert len(proxy.parked) == 0  # nothing left waiting
            first = await client.session.request(
                "tools/call",
                {
                    "name": "ask_model",
                    "arguments": {"question": "raw"},
                    "_meta": {
                        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                        "io.modelcontextprotocol/clientCapabilities": {"sampling": {}},
                    },
                },
            )
            assert first["resultType"] == "input_required"
            [(key, asked)] = first["inputRequests"].items()
            assert asked["method"] == "sampling/createMessage"
            assert len(proxy.parked) == 1


async def test_handshake_front_client_before_a_modern_backend():
    backend = everything()

    def modern_client(**kwargs: Any) -> McpClient:
        return McpClient.stdio(backend, **{**kwargs, "protocol_mode": "modern"})

    proxy = McpProxy(modern_client)
    async with asyncio.timeout(30), serving(proxy.app) as (url, _):
        async with McpClient.http(url, protocol_mode="legacy", sampling_handler=sample) as client:
            assert client.protocol_version != "2026-07-28"
            backend_client = await proxy.pool.shared.client()
            assert backend_client.protocol_version == "2026-07-28"
            sampled = await client.call_tool("test_sampling", {"prompt": "old to new"})
            assert "echo of old to new" in text_of(sampled)


async def test_a_config_file_mounts_two_backends_under_their_names(tmp_path):
    config = tmp_path / "servers.json"
    servers = {
        name: {"command": sys.executable, "args": [BACKEND], "env": {"ECHO_PREFIX": f"{name}:"}}
        for name in ("alpha", "beta")
    }
    config.write_text(json.dumps({"mcpServers": servers}))
    app = proxy_servers(config, backend_protocol_mode="legacy")
    async with asyncio.timeout(30), serving(app) as (url, _):
        async with McpClient.http(url) as client:
            names = {tool.name for tool in await client.list_tools()}
            assert {"alpha_echo", "beta_echo"} <= names
            assert text_of(await client.call_tool("alpha_echo", {"text": "x"})) == "alpha:x"
            assert text_of(await client.call_tool("beta_echo", {"text": "y"})) == "beta:y"


def test_a_bad_config_is_a_clear_error(tmp_path):
    config = tmp_path / "servers.json"
    config.write_text(json.dumps({"mcpServers": {"x": {"args": []}}}))
    with pytest.raises(ValueError, match='needs a "command" or a "url"'):
        proxy_servers(config)


def test_a_config_as_the_ai_clients_write_it_is_read():
    """Claude Code's and VS Code's "type", FastMCP's "streamable-http" (refused, without the
    entry's name) and VS Code's "servers" object."""
    from mcpkit.proxy import HttpBackend, load_servers_config

    backends = load_servers_config(
        {
            "servers": {
                "a": {"type": "http", "url": "http://127.0.0.1:1/mcp"},
                "b": {"transport": "streamable-http", "url": "http://127.0.0.1:2/mcp"},
                "c": {"type": "sse", "url": "http://127.0.0.1:3/sse"},
                "d": {"type": "stdio", "command": "python", "args": ["d.py"]},
            }
        }
    )
    assert backends["a"] == HttpBackend("http://127.0.0.1:1/mcp", {}, "http")
    assert backends["b"] == HttpBackend("http://127.0.0.1:2/mcp", {}, "http")
    assert backends["c"] == HttpBackend("http://127.0.0.1:3/sse", {}, "sse")
    assert isinstance(backends["d"], StdioClientTransportOptions)
    with pytest.raises(ValueError, match=r"mcpServers\.x: transport 'grpc' is not one of"):
        load_servers_config({"mcpServers": {"x": {"type": "grpc", "url": "http://a"}}})


async def test_the_front_checks_the_backends_mcp_param_headers():
    """A backend tool's ``x-mcp-header`` parameters are checked on the 2026-07-28 front as the
    direct server checks them (SEP-2243): a header that disagrees with the body is refused
    400 with a header-mismatch error before the backend is called; a matching one passes."""
    import httpx

    from mcpkit.protocol import ErrorCode

    proxy = McpProxy(everything())

    def request(region_header: str) -> tuple[dict[str, str], dict[str, Any]]:
        headers = {
            "accept": "application/json, text/event-stream",
            "content-type": "application/json",
            "mcp-protocol-version": "2026-07-28",
            "mcp-method": "tools/call",
            "mcp-name": "test_custom_header",
            "mcp-param-region": region_header,
        }
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {
                "name": "test_custom_header",
                "arguments": {"region": "eu-west-1"},
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {},
                },
            },
        }
        return headers, body

    async with asyncio.timeout(30), serving(proxy.app) as (url, _):
        async with McpClient.http(url, protocol_version="2026-07-28") as client:
            tools = {tool.name: tool for tool in await client.list_tools()}
            assert "test_custom_header" in tools
        async with httpx.AsyncClient(timeout=20) as http:
            headers, body = request("us-east-1")
            refused = await http.post(url, json=body, headers=headers)
            assert refused.status_code == 400, refused.text
            assert refused.json()["error"]["code"] == ErrorCode.HEADER_MISMATCH
            headers, body = request("eu-west-1")
            served = await http.post(url, json=body, headers=headers)
            assert served.status_code == 200, served.text
            assert "region=eu-west-1" in served.text


async def roots() -> list[dict[str, Any]]:
    return [{"uri": "file:///front", "name": "front"}]


MODERN_META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}


async def test_a_modern_front_gets_a_modern_backends_input_requests_as_they_are():
    """2026-07-28 on both sides: the backend's inputRequests (its keys, three in one round)
    reach the front client unchanged, the front's answers reach the backend, and the
    backend asks only for what the front client declared."""
    proxy = McpProxy(everything())
    async with asyncio.timeout(30), serving(proxy.app) as (url, _):
        async with McpClient.http(
            url,
            protocol_version="2026-07-28",
            sampling_handler=sample,
            elicitation_handler=elicit,
            roots=roots,
        ) as client:
            first = await client.session.request(
                "tools/call",
                {
                    "name": "test_input_required_result_multiple_inputs",
                    "arguments": {},
                    "_meta": {
                        **MODERN_META,
                        "io.modelcontextprotocol/clientCapabilities": {
                            "sampling": {},
                            "elicitation": {},
                            "roots": {},
                        },
                    },
                },
            )
            assert first["resultType"] == "input_required"
            assert set(first["inputRequests"]) == {"user_name", "greeting", "client_roots"}
            answered = await client.call_tool("test_input_required_result_multiple_inputs", {})
            assert text_of(answered) == "name=Ada greeting=echo of Write a short greeting roots=1"
            sampling_only = await client.session.request(
                "tools/call",
                {
                    "name": "test_input_required_result_capabilities",
                    "arguments": {},
                    "_meta": {
                        **MODERN_META,
                        "io.modelcontextprotocol/clientCapabilities": {"sampling": {}},
                    },
                },
            )
            assert set(sampling_only["inputRequests"]) == {"capital_question"}
            assert len(proxy.parked) == 0  # relayed, nothing kept running in the proxy


async def test_a_modern_backend_asks_a_handshake_front_only_what_it_declared():
    proxy = McpProxy(everything())
    async with asyncio.timeout(30), serving(proxy.app) as (url, _):
        async with McpClient.http(url, protocol_mode="legacy", sampling_handler=sample) as client:
            answered = await client.call_tool("test_input_required_result_capabilities", {})
            assert text_of(answered) == "answered: capital_question"


async def test_a_handshake_backend_is_told_the_front_sessions_capabilities():
    """Each front session's own backend connection declares at its handshake what that
    front client declared (the shared one declares everything)."""
    proxy = McpProxy(official(), backend_protocol_mode="legacy")
    async with asyncio.timeout(30), serving(proxy.app) as (url, _):
        async with McpClient.http(url, protocol_mode="legacy", sampling_handler=sample) as client:
            assert text_of(await client.call_tool("my_capabilities", {})) == "sampling"
        async with McpClient.http(url, protocol_mode="legacy") as bare:
            assert text_of(await bare.call_tool("my_capabilities", {})) == "none"
