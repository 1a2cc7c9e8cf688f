"""``McpClient`` is made of helpers, not mixins: its attributes live in the helper that owns
them and still read and write as the client's own, in both eras; and the public API is the
one users import (engine internals in ``mcpkit.server``, not at the top level; examples and
benchmarks on public names only; ``from mcpkit import McpClient`` without the engine or an
HTTP client)."""

from __future__ import annotations

import ast
import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import mcpkit
from mcpkit import McpCallError, McpClient, McpServerApp, McpToolContext, mcp_server, mcp_tool
from mcpkit.client import ListenStream
from mcpkit.client._subscriptions import NotificationListeners
from mcpkit.protocol import Era, ErrorCode
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
MODERN = "2026-07-28"
TEST_TIMEOUT = 20


@mcp_server()
class Asker:
    @mcp_tool()
    async def roots(self, ctx: McpToolContext) -> str:
        return ",".join(root["uri"] for root in await ctx.list_roots())

    @mcp_tool()
    async def ask_model(self, ctx: McpToolContext) -> str:
        result = await ctx.sample("why?", max_tokens=10)
        return str(result["content"]["text"])

    @mcp_tool()
    async def chatty(self, ctx: McpToolContext) -> str:
        await ctx.log("debug", "fine detail")
        await ctx.log("error", "bad news")
        return "done"


def test_the_client_is_one_class_of_helpers_not_mixins() -> None:
    assert McpClient.__mro__ == (McpClient, object)
    client = McpClient.in_memory(McpServerApp(Asker()))
    helpers = {type(value).__name__ for value in vars(client).values()}
    assert {
        "ClientState",
        "ServerMessageHandler",
        "RequestChannel",
        "EraNegotiator",
        "ToolHeaderMirror",
        "TaskClient",
        "TaskWatchers",
        "NotificationListeners",
        "ClientSession",
    } <= helpers
    # One definition of sending and of serving: on the helper whose job it is.
    for name in ("_rpc", "_serve", "_server_request", "_meta_for", "_settle_era"):
        assert not hasattr(client, name), name


@pytest.mark.parametrize("version", ["2025-11-25", MODERN])
async def test_handlers_set_after_construction_are_the_ones_declared_and_used(
    version: str,
) -> None:
    client = McpClient.in_memory(McpServerApp(Asker()), protocol_version=version)
    assert client.capabilities() == {}
    client.roots = [{"uri": "file:///work", "name": "work"}]

    async def sampling(params: dict[str, Any]) -> dict[str, Any]:
        return {"role": "assistant", "content": {"type": "text", "text": "because"}, "model": "m"}

    client.sampling_handler = sampling
    assert set(client.capabilities()) == {"roots", "sampling"}
    async with asyncio.timeout(TEST_TIMEOUT), client:
        assert client.era is (Era.MODERN if version == MODERN else Era.HANDSHAKE)
        roots = await client.call_tool("roots")
        assert roots.content[0].text == "file:///work"
        answer = await client.call_tool("ask_model")
        assert answer.content[0].text == "because"
        client.sampling_handler = None
        if version == MODERN:
            # Each request declares the capabilities afresh: the server sees none for sampling.
            with pytest.raises(McpCallError) as missing:
                await client.call_tool("ask_model")
            assert missing.value.code == ErrorCode.MISSING_REQUIRED_CAPABILITY
        else:
            # Declared at initialize, so the server asks; the client now refuses.
            refused = await client.call_tool("ask_model")
            assert refused.is_error
            assert "does not support sampling" in refused.content[0].text


@pytest.mark.parametrize("version", ["2025-11-25", MODERN])
async def test_state_written_on_the_client_is_what_requests_carry(version: str) -> None:
    seen: list[dict[str, Any]] = []
    client = McpClient.in_memory(
        McpServerApp(Asker()),
        protocol_version=version,
        log_level="error",
        logging_handler=seen.append,
    )
    async with asyncio.timeout(TEST_TIMEOUT), client:
        assert client.protocol_version == version
        assert client.server_info is not None
        assert client.server_info.protocol_version == version
        assert (client.discovery is not None) is (version == MODERN)
        await client.call_tool("chatty")
        # Notifications are handled in tasks of their own: wait for the last one sent.
        await wait_until(lambda: any(n["data"] == "bad news" for n in seen), "the error log")
        assert [note["data"] for note in seen] == ["bad news"]
        seen.clear()
        await client.set_logging_level("debug")
        assert client.log_level == "debug"
        await client.call_tool("chatty")
        await wait_until(lambda: any(n["data"] == "bad news" for n in seen), "the error log")
        assert [note["data"] for note in seen] == ["fine detail", "bad news"]


async def test_the_listeners_registry_is_bounded() -> None:
    client = McpClient.in_memory(McpServerApp(Asker()))
    listeners = NotificationListeners(max_listeners=2)
    streams = [ListenStream(client._channel, listeners, {}) for _ in range(3)]
    listeners.add(streams[0])
    listeners.add(streams[1], subscription_id=7)
    with pytest.raises(mcpkit.MCPError, match="too many listen"):
        listeners.add(streams[2])
    listeners.remove(streams[1], subscription_id=7)
    listeners.add(streams[2])
    assert len(listeners) == 2


async def test_listen_blocks_route_in_both_eras() -> None:
    app = McpServerApp(Asker())
    for version in ("2025-11-25", MODERN):
        async with (
            asyncio.timeout(TEST_TIMEOUT),
            McpClient.in_memory(app, protocol_version=version) as client,
            client.listen(tools_list_changed=True) as stream,
        ):
            assert stream.acknowledged is not None
            assert len(client._listeners) == 1
        assert len(client._listeners) == 0


#: Engine internals: reachable from ``mcpkit.server``, not from the top level.
ENGINE_INTERNALS = (
    "CURRENT_BINDING",
    "McpConnectionRegistry",
    "McpDispatcher",
    "McpRequestScope",
    "TransportBinding",
)


def test_engine_internals_left_the_top_level_for_mcpkit_server() -> None:
    import mcpkit.server

    for name in ENGINE_INTERNALS:
        assert name not in mcpkit.__all__, name
        assert name in mcpkit.server.__all__, name
        with pytest.raises(AttributeError):
            getattr(mcpkit, name)


def test_the_top_level_holds_what_programs_use() -> None:
    from mcpkit.client import ProtocolEraError
    from mcpkit.transports import serve_stdio
    from mcpkit.transports.http import serve_http

    assert mcpkit.serve_stdio is serve_stdio
    assert mcpkit.serve_http is serve_http
    assert mcpkit.ProtocolEraError is ProtocolEraError
    assert issubclass(mcpkit.SessionExpiredError, mcpkit.ConnectionClosedError)


def _private_imports(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        modules = (
            [node.module or ""]
            if isinstance(node, ast.ImportFrom)
            else [alias.name for alias in node.names]
            if isinstance(node, ast.Import)
            else []
        )
        for module in modules:
            parts = module.split(".")
            if parts[0] == "mcpkit" and any(part.startswith("_") for part in parts):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} {module}")
    return found


#: Private imports a benchmark may make, and why.
_BENCH_PRIVATE = {
    # The ceiling of `mcpkit run`: a bare ASGI app served the way the command serves, in
    # the header watch no public API offers (choosing a server's protocol is the program's).
    "bench/servers/http_bare_served.py:15 mcpkit.transports.http._server.protocol",
}


def test_examples_and_benchmarks_use_the_public_api_only() -> None:
    found = []
    for folder in ("examples", "bench"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if ".venv" not in path.parts and not path.name.startswith("."):
                found += _private_imports(path)
    assert [f for f in found if f not in _BENCH_PRIVATE] == []


def test_importing_the_client_loads_neither_the_engine_nor_an_http_client() -> None:
    code = (
        "import sys\n"
        "from mcpkit import McpClient\n"
        "heavy = ('httpx', 'uvicorn', 'websockets', 'joserfc', 'mcpkit.server', 'mcpkit.stores')\n"
        "print([name for name in heavy if name in sys.modules])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
