"""``McpClient`` in the 2026-07-28 era, against mcpkit's own server (``examples/everything.py``
and small apps) in memory, over Streamable HTTP and over stdio, and against scripted peers
for what a well-behaved server never does.

* ``server/discover`` instead of ``initialize``; ``_meta`` on every request (checked against
  the 2026-07-28 schema in both directions in memory).
* Multi round-trip requests answered by the sampling / elicitation / roots handlers.
* SEP-2243 headers over HTTP (seen by the server through ``ctx.headers``), tools with invalid
  ``x-mcp-header`` annotations left out, a header mismatch refreshed and retried once.
* ``subscriptions/listen``; ``protocol_mode="auto"`` over stdio and AUTO_DETECT over HTTP
  against modern, handshake-only and legacy HTTP+SSE servers.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Annotated, Any

import msgspec
import pytest

import mcpkit
from mcpkit import (
    McpCallError,
    McpClient,
    McpServerApp,
    McpToolContext,
    StdioClientTransportOptions,
    mcp_server,
    mcp_tool,
)
from mcpkit.cli._loader import load_app
from mcpkit.client import (
    ClientSession,
    EndpointMemory,
    HttpClientTransportOptions,
    HttpRequestHeaderContext,
    HttpTransportMode,
    InputRequestError,
    ProtocolEraError,
    StreamableHttpClientTransport,
)
from mcpkit.client._http_factory import AutoDetectHttpTransport
from mcpkit.protocol import Era
from mcpkit.transports.http import StreamableHttpServerOptions, create_asgi_app
from tests.http_server import serve_asgi, serving
from tests.in_memory import serving_in_memory
from tests.raw_asgi import NoDiscover, read_body, send_json, send_response
from tests.wire import ModernWire

ROOT = Path(__file__).resolve().parents[2]
EVERYTHING = ROOT / "examples" / "everything.py"
MODERN = "2026-07-28"
TEST_TIMEOUT = 20.0
WAIT = 5.0

PV = "io.modelcontextprotocol/protocolVersion"
CAPS = "io.modelcontextprotocol/clientCapabilities"
INFO = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL = "io.modelcontextprotocol/logLevel"
SUB_ID = "io.modelcontextprotocol/subscriptionId"

ROOTS = [{"uri": "file:///home/ada/project", "name": "project"}]


# =========================================================================================
# handlers, apps, wire checks
# =========================================================================================


class Handlers:
    """The client's sampling / elicitation / roots handlers, recording what they were asked."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, dict[str, Any]]] = []

    async def elicit(self, params: dict[str, Any]) -> dict[str, Any]:
        self.asked.append(("elicitation/create", params))
        return {
            "action": "accept",
            "content": {"name": "Ada", "ok": True, "color": "teal", "context": "tests"},
        }

    async def sample(self, params: dict[str, Any]) -> dict[str, Any]:
        self.asked.append(("sampling/createMessage", params))
        return {
            "role": "assistant",
            "content": {"type": "text", "text": "Paris"},
            "model": "m",
            "stopReason": "endTurn",
        }

    async def roots(self) -> list[dict[str, Any]]:
        self.asked.append(("roots/list", {}))
        return ROOTS

    def kwargs(self) -> dict[str, Any]:
        return {
            "elicitation_handler": self.elicit,
            "sampling_handler": self.sample,
            "roots": self.roots,
        }


def everything() -> McpServerApp:
    return load_app(str(EVERYTHING))


@mcp_server(name="header-probe")
class HeaderProbe:
    @mcp_tool(description="Returns the MCP headers of its own request")
    def echo_headers(
        self,
        region: Annotated[str, msgspec.Meta(extra_json_schema={"x-mcp-header": "Region"})],
        ctx: McpToolContext,
        priority: Annotated[int, msgspec.Meta(extra_json_schema={"x-mcp-header": "Priority"})] = 0,
        verbose: Annotated[
            bool, msgspec.Meta(extra_json_schema={"x-mcp-header": "Verbose"})
        ] = False,
        query: str = "",
    ) -> dict[str, Any]:
        headers = ctx.headers or {}
        return {
            k: v for k, v in headers.items() if k.startswith("mcp-") or k == "mcp-protocol-version"
        }

    @mcp_tool(description="Adds a tool, so tools/list changes")
    def add_tool(self, ctx: McpToolContext) -> str:
        return "ok"


def text_of(result: Any) -> str:
    return result.content[0].text


async def next_notifications(stream: AsyncIterator[Any], count: int) -> list[Any]:
    """The next ``count`` notifications of a listen stream, in the order they came; fails
    the test when they take longer than ``WAIT``."""
    notes: list[Any] = []
    async with asyncio.timeout(WAIT):
        async for note in stream:
            notes.append(note)
            if len(notes) == count:
                break
    return notes


@contextlib.asynccontextmanager
async def in_memory(
    app: McpServerApp, **kwargs: Any
) -> AsyncIterator[tuple[McpClient, ModernWire]]:
    """A modern client wired in memory to ``app``, every message schema-checked."""
    kwargs.setdefault("protocol_mode", "modern")
    async with serving_in_memory(app) as client_end:
        wire = ModernWire(client_end)
        client = McpClient(wire, **kwargs)
        try:
            async with asyncio.timeout(TEST_TIMEOUT):
                await client.connect()
                yield client, wire
        finally:
            await client.aclose()


class Scripted:
    """A peer that answers each request with ``answer(message)`` (a ``result`` or ``error``
    member), for what a well-behaved server never does."""

    def __init__(self, answer: Callable[[dict[str, Any]], dict[str, Any] | None]) -> None:
        self.answer = answer
        self.requests: list[dict[str, Any]] = []
        self._queue: asyncio.Queue[bytes | None] = asyncio.Queue()

    async def send(self, frame: bytes) -> None:
        message = json.loads(frame)
        if "id" in message and "method" in message:
            self.requests.append(message)
            reply = self.answer(message)
            if reply is not None:
                await self._queue.put(
                    json.dumps({"jsonrpc": "2.0", "id": message["id"], **reply}).encode()
                )

    async def receive(self) -> bytes | None:
        return await self._queue.get()

    async def aclose(self) -> None:
        await self._queue.put(None)

    def methods(self) -> list[str]:
        return [m["method"] for m in self.requests]


def discover_result(versions: list[str] | None = None) -> dict[str, Any]:
    return {
        "result": {
            "resultType": "complete",
            "supportedVersions": versions or [MODERN],
            "capabilities": {"tools": {}},
            "ttlMs": 0,
            "cacheScope": "private",
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "scripted", "version": "1"}},
        }
    }


# =========================================================================================
# in memory: discover, _meta, multi round-trip requests
# =========================================================================================


async def test_discover_instead_of_initialize() -> None:
    async with in_memory(everything()) as (client, wire):
        assert client.era is Era.MODERN
        assert client.protocol_version == MODERN
        assert client.discovery is not None and MODERN in client.discovery.supported_versions
        assert (
            client.discovery.server_info is not None
            and client.discovery.server_info.name == "mcpkit-everything"
        )
        info = client.server_info
        assert info is not None and info.protocol_version == MODERN
        assert info.server_info.name == "mcpkit-everything" and info.capabilities.tools is not None
        tools = {tool.name for tool in await client.list_tools()}
        assert {"test_simple_text", "test_input_required_result_elicitation"} <= tools
        assert (
            text_of(await client.call_tool("test_simple_text"))
            == "This is a simple text response for testing."
        )
        await client.ping()  # no ping in 2026-07-28: a server/discover round trip
    methods = [m["method"] for m in wire.requests()]
    assert "initialize" not in methods and methods[0] == "server/discover"
    assert not [m for m in wire.sent if "id" not in m]  # no notifications/initialized
    for request in wire.requests():
        meta = request["params"]["_meta"]
        assert meta[PV] == MODERN
        assert meta[INFO] == {"name": "mcpkit-client", "version": mcpkit.__version__}
        assert meta[CAPS] == {}
        assert LOG_LEVEL not in meta


async def test_capabilities_follow_the_handlers() -> None:
    handlers = Handlers()
    async with in_memory(everything(), **handlers.kwargs()) as (client, wire):
        await client.list_tools()
    assert wire.requests("tools/list")[0]["params"]["_meta"][CAPS] == {
        "sampling": {},
        "elicitation": {"form": {}, "url": {}},
        "roots": {},
    }


MRTR_CASES = {
    "test_input_required_result_elicitation": ("Hello, Ada!", ["elicitation/create"]),
    "test_input_required_result_sampling": ("The model said: Paris", ["sampling/createMessage"]),
    "test_input_required_result_list_roots": ("Roots: file:///home/ada/project", ["roots/list"]),
    "test_input_required_result_request_state": (
        "state-ok: confirmed=True",
        ["elicitation/create"],
    ),
    "test_input_required_result_multi_round": ("name=Ada color=teal", ["elicitation/create"] * 2),
    "test_input_required_result_multiple_inputs": (
        "name=Ada greeting=Paris roots=1",
        ["elicitation/create", "sampling/createMessage", "roots/list"],
    ),
}


@pytest.mark.parametrize("tool", list(MRTR_CASES))
async def test_multi_round_trip_requests_are_answered_by_the_handlers(tool: str) -> None:
    expected, asked = MRTR_CASES[tool]
    handlers = Handlers()
    async with in_memory(everything(), **handlers.kwargs()) as (client, wire):
        result = await client.call_tool(tool)
        assert text_of(result) == expected
    assert sorted(method for method, _ in handlers.asked) == sorted(asked)
    calls = wire.requests("tools/call")
    assert len(calls) == (3 if tool.endswith("multi_round") else 2)
    assert len({call["id"] for call in calls}) == len(calls)  # each retry is a new request
    assert "inputResponses" not in calls[0]["params"] and "requestState" not in calls[0]["params"]
    replies = {m["id"]: m["result"] for m in wire.received if "result" in m}
    for earlier, retry in zip(calls, calls[1:]):
        answered = replies[earlier["id"]]
        assert answered["resultType"] == "input_required"
        assert set(retry["params"]["inputResponses"]) == set(answered["inputRequests"])
        assert retry["params"]["requestState"] == answered["requestState"]  # echoed exactly
        assert (
            retry["params"]["name"] == tool
            and retry["params"]["arguments"] == earlier["params"]["arguments"]
        )


async def test_a_prompt_asking_for_input() -> None:
    handlers = Handlers()
    async with in_memory(everything(), **handlers.kwargs()) as (client, _):
        prompt = await client.get_prompt("test_input_required_result_prompt")
    assert prompt.messages[0].content.text == "Context: tests"  # type: ignore[union-attr]


async def test_only_declared_capabilities_are_asked_for() -> None:
    handlers = Handlers()
    async with in_memory(everything(), elicitation_handler=handlers.elicit) as (client, _):
        result = await client.call_tool("test_input_required_result_capabilities")
    assert text_of(result) == "answered: user_name"
    assert [method for method, _ in handlers.asked] == ["elicitation/create"]


def input_required(
    requests: dict[str, Any] | None = None, state: str | None = None
) -> dict[str, Any]:
    result: dict[str, Any] = {"resultType": "input_required"}
    if requests is not None:
        result["inputRequests"] = requests
    if state is not None:
        result["requestState"] = state
    return {"result": result}


ELICIT = {
    "method": "elicitation/create",
    "params": {"message": "Name?", "requestedSchema": {"type": "object", "properties": {}}},
}
SAMPLE = {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 5}}


def scripted_client(
    answer: Callable[[dict[str, Any]], dict[str, Any] | None], **kwargs: Any
) -> tuple[McpClient, Scripted]:
    """A client (not connected yet) for a ``Scripted`` peer."""
    peer = Scripted(answer)
    kwargs.setdefault("protocol_mode", "modern")
    return McpClient(peer, **kwargs), peer


async def test_an_input_request_the_client_never_declared_is_a_clear_error() -> None:
    def answer(message: dict[str, Any]) -> dict[str, Any]:
        if message["method"] == "server/discover":
            return discover_result()
        return input_required({"llm": SAMPLE})

    handlers = Handlers()
    client, peer = scripted_client(answer, elicitation_handler=handlers.elicit)
    async with client:
        with pytest.raises(InputRequestError, match="sampling") as caught:
            await client.call_tool("greedy")
    assert caught.value.method == "sampling/createMessage" and caught.value.key == "llm"
    assert peer.methods() == ["server/discover", "tools/call"]  # nothing answered, no retry


async def test_rounds_are_bounded() -> None:
    def answer(message: dict[str, Any]) -> dict[str, Any]:
        if message["method"] == "server/discover":
            return discover_result()
        return input_required({"again": ELICIT}, state="s")

    handlers = Handlers()
    client, peer = scripted_client(answer, elicitation_handler=handlers.elicit, max_input_rounds=3)
    async with client:
        with pytest.raises(InputRequestError, match="3 rounds"):
            await client.call_tool("insatiable")
    assert peer.methods().count("tools/call") == 4  # the call and three retries
    assert len(handlers.asked) == 3


async def test_request_state_omitted_when_absent_and_result_type_defaults_to_complete() -> None:
    def answer(message: dict[str, Any]) -> dict[str, Any]:
        params = message.get("params") or {}
        if message["method"] == "server/discover":
            return discover_result()
        if message["method"] == "tools/call" and "inputResponses" not in params:
            return input_required({"confirm": ELICIT})  # no requestState
        return {"result": {"content": [{"type": "text", "text": "done"}]}}  # no resultType

    handlers = Handlers()
    client, peer = scripted_client(answer, elicitation_handler=handlers.elicit)
    async with client:
        assert text_of(await client.call_tool("stateless")) == "done"  # a retry, then complete
        assert text_of(await client.call_tool("other")) == "done"  # input_required again...
    assert peer.methods() == [
        "server/discover",
        "tools/call",
        "tools/call",
        "tools/call",
        "tools/call",
    ]
    retry = peer.requests[2]["params"]
    assert retry["inputResponses"]["confirm"]["action"] == "accept"
    assert "requestState" not in retry
    # another call carries nothing from the first one's rounds
    other = peer.requests[3]["params"]
    assert (
        other["name"] == "other" and "inputResponses" not in other and "requestState" not in other
    )


async def test_unsupported_version_is_retried_with_a_supported_one() -> None:
    rejected: list[str] = []

    def answer(message: dict[str, Any]) -> dict[str, Any]:
        version = message["params"]["_meta"][PV]
        if not rejected:
            rejected.append(version)
            return {
                "error": {
                    "code": -32022,
                    "message": "Unsupported protocol version",
                    "data": {"supported": [MODERN], "requested": version},
                }
            }
        if message["method"] == "server/discover":
            return discover_result()
        return {
            "result": {"resultType": "complete", "tools": [], "ttlMs": 0, "cacheScope": "private"}
        }

    client, peer = scripted_client(answer)
    async with client:
        assert await client.list_tools() == []
    assert peer.methods() == ["server/discover", "server/discover", "tools/list"]
    assert [r["params"]["_meta"][PV] for r in peer.requests] == [MODERN] * 3


async def test_auto_probe_takes_a_handshake_version_the_server_names() -> None:
    def answer(message: dict[str, Any]) -> dict[str, Any]:
        if message["method"] == "server/discover":
            return {
                "error": {
                    "code": -32022,
                    "message": "Unsupported",
                    "data": {"supported": ["2025-06-18"], "requested": MODERN},
                }
            }
        if message["method"] == "initialize":
            return {
                "result": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "serverInfo": {"name": "old", "version": "1"},
                }
            }
        return {"result": {}}

    client, peer = scripted_client(answer, protocol_mode="auto")
    async with client:
        assert client.era is Era.HANDSHAKE and client.protocol_version == "2025-06-18"
    assert peer.requests[1]["params"]["protocolVersion"] == "2025-06-18"


async def test_modern_mode_refuses_a_server_without_a_modern_version() -> None:
    def answer(message: dict[str, Any]) -> dict[str, Any]:
        return discover_result(["2025-11-25"])

    peer = Scripted(answer)
    client = McpClient(peer, protocol_mode="modern")
    with pytest.raises(ProtocolEraError, match="no modern one"):
        async with client:
            pass


async def test_log_level_rides_in_meta() -> None:
    logs: list[dict[str, Any]] = []
    async with in_memory(everything(), logging_handler=logs.append) as (client, wire):
        assert text_of(await client.call_tool("test_logging_tool")) == "logged"
        await asyncio.sleep(0.05)
        assert logs == []  # no level asked: no notifications/message
        await client.set_logging_level("info")  # no logging/setLevel in 2026-07-28
        assert text_of(await client.call_tool("test_logging_tool")) == "logged"
        async with asyncio.timeout(WAIT):
            while not logs:
                await asyncio.sleep(0.01)
    assert logs[0]["data"] == "test_logging_tool ran"
    assert "logging/setLevel" not in [m["method"] for m in wire.requests()]
    assert wire.requests("tools/call")[-1]["params"]["_meta"][LOG_LEVEL] == "info"


async def test_handshake_era_operations_are_refused_clearly() -> None:
    async with in_memory(everything()) as (client, _):
        with pytest.raises(ProtocolEraError, match="listen"):
            await client.subscribe_resource("test://watched-resource")
        await client.send_roots_list_changed()  # nothing to send in this era


async def test_listen_in_memory() -> None:
    async with in_memory(everything()) as (client, wire):
        async with client.listen(
            tools_list_changed=True, resource_subscriptions=["test://watched-resource"]
        ) as stream:
            assert stream.acknowledged == {
                "toolsListChanged": True,
                "resourceSubscriptions": ["test://watched-resource"],
            }
            await client.call_tool("update_watched_resource")
            await client.call_tool("test_trigger_tool_change")
            seen = await next_notifications(stream, 2)
        assert {n.method for n in seen} == {
            "notifications/resources/updated",
            "notifications/tools/list_changed",
        }
        assert next(n for n in seen if n.uri).uri == "test://watched-resource"
        assert all(n.params["_meta"][SUB_ID] == stream.subscription_id for n in seen)
        assert not stream.closed_gracefully
    listen = wire.requests("subscriptions/listen")[0]
    assert listen["id"] == stream.subscription_id
    assert listen["params"]["notifications"] == {
        "toolsListChanged": True,
        "resourceSubscriptions": ["test://watched-resource"],
    }
    cancelled = [m for m in wire.sent if m.get("method") == "notifications/cancelled"]
    assert cancelled and cancelled[0]["params"]["requestId"] == stream.subscription_id


async def test_listen_in_the_handshake_era() -> None:
    async with (
        serving_in_memory(everything()) as client_end,
        asyncio.timeout(TEST_TIMEOUT),
        McpClient(client_end) as client,
    ):
        assert client.era is Era.HANDSHAKE
        async with client.listen(resource_subscriptions=["test://watched-resource"]) as stream:
            assert stream.acknowledged == {"resourceSubscriptions": ["test://watched-resource"]}
            await client.call_tool("update_watched_resource")
            note = await anext(stream)
            assert (
                note.method == "notifications/resources/updated"
                and note.uri == "test://watched-resource"
            )


# =========================================================================================
# Streamable HTTP against mcpkit's server
# =========================================================================================


class SeenRequests:
    """Every HTTP request the client sends (through ``apply_per_request_headers``)."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, str]]] = []

    def __call__(self, context: HttpRequestHeaderContext, headers: dict[str, str]) -> None:
        self.requests.append((context.method, {k.lower(): v for k, v in headers.items()}))

    def posts(self, mcp_method: str | None = None) -> list[dict[str, str]]:
        return [
            h
            for m, h in self.requests
            if m == "POST" and (mcp_method is None or h.get("mcp-method") == mcp_method)
        ]


def http_options(
    url: str, seen: SeenRequests | None = None, **kw: Any
) -> HttpClientTransportOptions:
    return HttpClientTransportOptions(endpoint=url, apply_per_request_headers=seen, **kw)


async def test_http_sends_sep_2243_headers_and_no_session() -> None:
    seen = SeenRequests()
    async with serving(McpServerApp(HeaderProbe)) as (url, _):
        async with asyncio.timeout(TEST_TIMEOUT), McpClient.http(http_options(url, seen)) as client:
            assert client.era is Era.MODERN
            assert isinstance(client.session.stream, AutoDetectHttpTransport)
            # not listed yet: the client lists the tools once to learn the annotations
            result = await client.call_tool(
                "echo_headers", {"region": "eu-west-1", "priority": 7, "query": "q"}
            )
            echoed = result.structured_content
            assert echoed["mcp-param-region"] == "eu-west-1"
            assert echoed["mcp-param-priority"] == "7"
            assert "mcp-param-verbose" not in echoed  # not in the arguments: omitted
            assert echoed["mcp-method"] == "tools/call" and echoed["mcp-name"] == "echo_headers"
            assert echoed["mcp-protocol-version"] == MODERN
            result = await client.call_tool("echo_headers", {"region": "Zürich ", "verbose": True})
            assert result.structured_content["mcp-param-region"] == "=?base64?WsO8cmljaCA=?="
            assert result.structured_content["mcp-param-verbose"] == "true"
    assert [h["mcp-method"] for h in seen.posts()] == [
        "server/discover",
        "tools/list",
        "tools/call",
        "tools/call",
    ]
    assert {m for m, _ in seen.requests} == {"POST"}  # no GET listen stream, no DELETE
    for headers in seen.posts():
        assert headers["mcp-protocol-version"] == MODERN
        assert "mcp-session-id" not in headers


async def test_http_mcp_name_uses_the_base64_sentinel_when_needed() -> None:
    seen = SeenRequests()
    async with serving(everything()) as (url, _):
        async with asyncio.timeout(TEST_TIMEOUT), McpClient.http(http_options(url, seen)) as client:
            read = await client.read_resource("test://template/café/data")
            assert json.loads(read.contents[0].text)["id"] == "café"  # type: ignore[union-attr]
    reads = seen.posts("resources/read")
    assert reads[0]["mcp-name"] == "=?base64?dGVzdDovL3RlbXBsYXRlL2NhZsOpL2RhdGE=?="


async def test_http_multi_round_trip_requests_and_listen() -> None:
    handlers = Handlers()
    async with serving(everything()) as (url, _):
        async with (
            asyncio.timeout(TEST_TIMEOUT),
            McpClient.http(url, **handlers.kwargs()) as client,
        ):
            result = await client.call_tool("test_input_required_result_multiple_inputs")
            assert text_of(result) == "name=Ada greeting=Paris roots=1"
            async with client.listen(tools_list_changed=True) as stream:
                assert stream.acknowledged == {"toolsListChanged": True}
                await client.call_tool("test_trigger_tool_change")
                async with asyncio.timeout(WAIT):
                    note = await anext(stream)
                assert note.method == "notifications/tools/list_changed"
                assert note.params["_meta"][SUB_ID] == stream.subscription_id
            # the listen stream was closed, not cancelled by a notification POST
            transport = client.session.stream.transport  # type: ignore[attr-defined]
            assert isinstance(transport, StreamableHttpClientTransport) and transport.modern
            assert (
                text_of(await client.call_tool("test_simple_text"))
                == "This is a simple text response for testing."
            )


class RawMcp:
    """A raw ASGI 2026-07-28 endpoint answering with ``answer(message, headers)``
    -> (status, body), for tool definitions mcpkit's server refuses to serve."""

    def __init__(
        self, answer: Callable[[dict[str, Any], dict[str, str]], tuple[int, dict[str, Any]]]
    ) -> None:
        self.answer = answer
        self.seen: list[tuple[dict[str, Any], dict[str, str]]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        assert scope["type"] == "http"
        body = await read_body(receive)
        if scope["method"] != "POST":
            await send_response(send, 405, headers=[(b"allow", b"POST")])
            return
        headers = {k.decode().lower(): v.decode("latin-1") for k, v in scope["headers"]}
        request = json.loads(body)
        self.seen.append((request, headers))
        status, reply = self.answer(request, headers)
        await send_json(send, status, {"jsonrpc": "2.0", "id": request.get("id"), **reply})


def listed(tools: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "result": {"resultType": "complete", "tools": tools, "ttlMs": 0, "cacheScope": "private"}
    }


def called(text: str) -> dict[str, Any]:
    return {"result": {"resultType": "complete", "content": [{"type": "text", "text": text}]}}


def tool(name: str, properties: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "inputSchema": {"type": "object", "properties": properties}}


INVALID_TOOLS = [
    tool("empty_name", {"v": {"type": "string", "x-mcp-header": ""}}),
    tool("on_a_number", {"v": {"type": "number", "x-mcp-header": "Score"}}),
    tool("on_an_object", {"v": {"type": "object", "x-mcp-header": "Data"}}),
    tool(
        "twice",
        {
            "a": {"type": "string", "x-mcp-header": "Region"},
            "b": {"type": "string", "x-mcp-header": "region"},
        },
    ),
    tool("with_a_space", {"v": {"type": "string", "x-mcp-header": "My Region"}}),
    tool("non_ascii", {"v": {"type": "string", "x-mcp-header": "Région"}}),
    tool("in_items", {"v": {"type": "array", "items": {"type": "string", "x-mcp-header": "Item"}}}),
]


async def test_http_tools_with_invalid_header_annotations_are_left_out(
    caplog: pytest.LogCaptureFixture,
) -> None:
    valid = tool(
        "valid_tool",
        {"region": {"type": "string", "x-mcp-header": "Region"}, "n": {"type": "number"}},
    )

    def answer(request: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
        if request["method"] == "server/discover":
            return 200, discover_result()
        if request["method"] == "tools/list":
            return 200, listed([valid, *INVALID_TOOLS])
        return 200, called(headers.get("mcp-param-region", "(none)"))

    raw = RawMcp(answer)
    caplog.set_level(logging.WARNING, logger="mcpkit.client")
    async with serve_asgi(raw) as base:
        async with asyncio.timeout(TEST_TIMEOUT), McpClient.http(base + "/mcp") as client:
            assert [t.name for t in await client.list_tools()] == ["valid_tool"]
            assert (
                text_of(await client.call_tool("valid_tool", {"region": "us-west1", "n": 1.5}))
                == "us-west1"
            )
    warned = " ".join(r.getMessage() for r in caplog.records)
    for bad in INVALID_TOOLS:
        assert repr(bad["name"]) in warned
    call = next(r for r, _ in raw.seen if r["method"] == "tools/call")
    assert call["params"]["arguments"] == {"region": "us-west1", "n": 1.5}


async def test_http_header_mismatch_refreshes_the_tools_and_retries_once() -> None:
    state = {"annotated": False}

    def answer(request: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
        method = request["method"]
        if method == "server/discover":
            return 200, discover_result()
        if method == "tools/list":
            schema = (
                {"type": "string", "x-mcp-header": "Region"}
                if state["annotated"]
                else {"type": "string"}
            )
            return 200, listed([tool("route", {"region": schema})])
        if "mcp-param-region" not in headers:
            state["annotated"] = True  # the tool changed under the client
            return 400, {
                "error": {
                    "code": -32020,
                    "message": "Header mismatch: Mcp-Param-Region header is required",
                }
            }
        return 200, called("routed via " + headers["mcp-param-region"])

    raw = RawMcp(answer)
    async with serve_asgi(raw) as base:
        async with asyncio.timeout(TEST_TIMEOUT), McpClient.http(base + "/mcp") as client:
            await client.list_tools()
            assert (
                text_of(await client.call_tool("route", {"region": "ap-south-1"}))
                == "routed via ap-south-1"
            )
    assert [r["method"] for r, _ in raw.seen] == [
        "server/discover",
        "tools/list",
        "tools/call",
        "tools/list",
        "tools/call",
    ]
    first, retry = (r for r, _ in raw.seen if r["method"] == "tools/call")
    assert first["id"] != retry["id"]


async def test_http_header_mismatch_is_retried_only_once() -> None:
    def answer(request: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
        if request["method"] == "server/discover":
            return 200, discover_result()
        if request["method"] == "tools/list":
            return 200, listed([tool("route", {"region": {"type": "string"}})])
        return 400, {"error": {"code": -32020, "message": "Header mismatch: always"}}

    raw = RawMcp(answer)
    async with serve_asgi(raw) as base:
        async with asyncio.timeout(TEST_TIMEOUT), McpClient.http(base + "/mcp") as client:
            with pytest.raises(McpCallError) as caught:
                await client.call_tool("route", {"region": "x"})
    assert caught.value.code == -32020
    assert [r["method"] for r, _ in raw.seen].count("tools/call") == 2


async def test_http_a_broken_response_stream_is_sent_again() -> None:
    calls: list[Any] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        request = json.loads(await read_body(receive))
        if request["method"] in ("server/discover", "tools/list"):
            reply = (
                discover_result()
                if request["method"] == "server/discover"
                else listed([tool("flaky", {})])
            )
            await send_json(send, 200, {"jsonrpc": "2.0", "id": request["id"], **reply})
            return
        calls.append(request["id"])
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"text/event-stream")],
            }
        )
        if len(calls) == 1:  # a progress note, then the stream ends: the response is lost
            note = {
                "jsonrpc": "2.0",
                "method": "notifications/message",
                "params": {"level": "info", "data": "x"},
            }
            await send(
                {"type": "http.response.body", "body": f"data: {json.dumps(note)}\n\n".encode()}
            )
            return
        payload = {"jsonrpc": "2.0", "id": request["id"], **called("second time lucky")}
        await send(
            {"type": "http.response.body", "body": f"data: {json.dumps(payload)}\n\n".encode()}
        )

    async with serve_asgi(app) as base:
        async with asyncio.timeout(TEST_TIMEOUT), McpClient.http(base + "/mcp") as client:
            assert text_of(await client.call_tool("flaky")) == "second time lucky"
    assert len(calls) == 2 and calls[0] != calls[1]


# =========================================================================================
# AUTO_DETECT over HTTP
# =========================================================================================


async def test_auto_detect_finds_a_modern_server() -> None:
    async with serving(everything()) as (url, _):
        async with asyncio.timeout(TEST_TIMEOUT), McpClient.http(url) as client:
            transport = client.session.stream
            assert isinstance(transport, AutoDetectHttpTransport)
            assert transport.mode is HttpTransportMode.STREAMABLE_HTTP
            assert client.era is Era.MODERN
            assert (
                text_of(await client.call_tool("test_simple_text"))
                == "This is a simple text response for testing."
            )
    memory, key = transport.endpoint_memory, transport.memory_key
    assert memory.detected_mode(key) is HttpTransportMode.STREAMABLE_HTTP
    assert memory.detected_era(key) == (Era.MODERN, MODERN)


async def test_auto_detect_falls_back_to_initialize_and_remembers() -> None:
    app = everything()
    await app.start()
    opts = StreamableHttpServerOptions(port=0)
    wrapped = NoDiscover(create_asgi_app(app, opts))
    try:
        async with serve_asgi(wrapped) as base:
            url = base + "/mcp"
            memory = EndpointMemory()  # shared: the second client skips the probe
            opts = HttpClientTransportOptions(endpoint=url, endpoint_memory=memory)
            async with asyncio.timeout(TEST_TIMEOUT), McpClient.http(opts) as client:
                assert client.era is Era.HANDSHAKE and client.protocol_version == "2025-11-25"
                transport = client.session.stream.transport  # type: ignore[attr-defined]
                assert isinstance(transport, StreamableHttpClientTransport)
                assert transport.session_id  # the handshake era's session
                assert (
                    text_of(await client.call_tool("test_simple_text"))
                    == "This is a simple text response for testing."
                )
            assert wrapped.discover_posts == 1
            assert wrapped.methods[:3] == [
                "server/discover",
                "initialize",
                "notifications/initialized",
            ]
            assert memory.detected_era(EndpointMemory.key(opts)) == (Era.HANDSHAKE, "2025-11-25")
            async with asyncio.timeout(TEST_TIMEOUT), McpClient.http(opts) as client:
                assert client.era is Era.HANDSHAKE
            assert wrapped.discover_posts == 1  # the remembered era: no second probe
    finally:
        await app.stop()


async def test_auto_detect_falls_back_to_legacy_sse() -> None:
    async with serving(everything()) as (url, _):
        sse_url = url + "/sse"  # mcpkit's legacy HTTP+SSE endpoint
        seen = SeenRequests()
        opts = http_options(sse_url, seen, endpoint_memory=EndpointMemory())
        async with (
            asyncio.timeout(TEST_TIMEOUT),
            McpClient.http(opts) as client,
        ):
            transport = client.session.stream
            assert isinstance(transport, AutoDetectHttpTransport)
            assert transport.mode is HttpTransportMode.SSE
            assert client.era is Era.HANDSHAKE
            assert (
                text_of(await client.call_tool("test_simple_text"))
                == "This is a simple text response for testing."
            )
        # the modern probe, then initialize, both refused by the SSE URL, then GET
        assert [(m, h.get("mcp-method")) for m, h in seen.requests[:3]] == [
            ("POST", "server/discover"),
            ("POST", None),
            ("GET", None),
        ]
        assert opts.endpoint_memory is not None
        key = EndpointMemory.key(opts)
        assert opts.endpoint_memory.detected_mode(key) is HttpTransportMode.SSE
        seen.requests.clear()
        async with asyncio.timeout(TEST_TIMEOUT), McpClient.http(opts) as client:
            assert client.session.stream.mode is HttpTransportMode.SSE  # type: ignore[attr-defined]
            assert client.era is Era.HANDSHAKE
        assert seen.requests[0][0] == "GET"  # the shared memory: straight to the SSE stream


async def test_streamable_http_mode_probes_too() -> None:
    """``transport_mode=STREAMABLE_HTTP`` fixes the transport, not the era: the probe runs
    on it, and a handshake-only server gets ``initialize`` on the same transport."""
    app = everything()
    await app.start()
    try:
        async with serving(everything()) as (modern_url, _):
            opts = http_options(modern_url, transport_mode=HttpTransportMode.STREAMABLE_HTTP)
            async with asyncio.timeout(TEST_TIMEOUT), McpClient.http(opts) as client:
                assert isinstance(client.session.stream, StreamableHttpClientTransport)
                assert client.era is Era.MODERN
        wrapped = NoDiscover(create_asgi_app(app, StreamableHttpServerOptions(port=0)))
        async with serve_asgi(wrapped) as base:
            opts = http_options(base + "/mcp", transport_mode=HttpTransportMode.STREAMABLE_HTTP)
            async with asyncio.timeout(TEST_TIMEOUT), McpClient.http(opts) as client:
                assert client.era is Era.HANDSHAKE
                assert (
                    text_of(await client.call_tool("test_simple_text"))
                    == "This is a simple text response for testing."
                )
            assert wrapped.methods[:2] == ["server/discover", "initialize"]
    finally:
        await app.stop()


async def test_modern_mode_against_a_handshake_only_server_fails() -> None:
    app = everything()
    await app.start()
    try:
        async with serve_asgi(
            NoDiscover(create_asgi_app(app, StreamableHttpServerOptions(port=0)))
        ) as base:
            client = McpClient.http(
                http_options(base + "/mcp", transport_mode=HttpTransportMode.STREAMABLE_HTTP),
                protocol_mode="modern",
            )
            with pytest.raises(McpCallError):
                async with asyncio.timeout(TEST_TIMEOUT), client:
                    pass
    finally:
        await app.stop()


async def test_legacy_mode_still_speaks_the_handshake_era_to_a_modern_server() -> None:
    async with serving(everything()) as (url, _):
        async with (
            asyncio.timeout(TEST_TIMEOUT),
            McpClient.http(url, protocol_mode="legacy") as client,
        ):
            assert client.era is Era.HANDSHAKE and client.protocol_version == "2025-11-25"
            await client.ping()


# =========================================================================================
# stdio
# =========================================================================================


def stdio_client(arguments: list[str], **kwargs: Any) -> McpClient:
    options = StdioClientTransportOptions(
        command=sys.executable, arguments=arguments, working_directory=str(ROOT)
    )
    return McpClient.stdio(options, **kwargs)


async def test_stdio_auto_finds_a_modern_server() -> None:
    handlers = Handlers()
    client = stdio_client(["-m", "mcpkit", "run", str(EVERYTHING)], **handlers.kwargs())
    async with asyncio.timeout(TEST_TIMEOUT), client:
        assert client.era is Era.MODERN and client.protocol_version == MODERN
        assert (
            client.server_info is not None
            and client.server_info.server_info.name == "mcpkit-everything"
        )
        assert (
            text_of(await client.call_tool("test_input_required_result_multi_round"))
            == "name=Ada color=teal"
        )
        async with client.listen(
            resource_subscriptions=["test://watched-resource"], prompts_list_changed=True
        ) as stream:
            await client.call_tool("update_watched_resource")
            await client.call_tool("test_trigger_prompt_change")
            notes = await next_notifications(stream, 2)
        assert {n.method for n in notes} == {
            "notifications/resources/updated",
            "notifications/prompts/list_changed",
        }
        assert all(n.params["_meta"][SUB_ID] == stream.subscription_id for n in notes)
        await client.ping()


LEGACY_STDIO_SERVER = r"""
import json, sys

SILENT = "--silent" in sys.argv
initialized = False
for line in sys.stdin:
    message = json.loads(line)
    method, request_id = message.get("method"), message.get("id")
    if request_id is None:
        initialized = initialized or method == "notifications/initialized"
        continue
    if method == "initialize":
        result = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": {"name": "legacy-stdio", "version": "1"}}
        reply = {"jsonrpc": "2.0", "id": request_id, "result": result}
    elif not initialized:
        if SILENT:
            continue
        reply = {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": "Method not found"}}
    elif method == "tools/list":
        reply = {"jsonrpc": "2.0", "id": request_id, "result": {"tools": [{"name": "hello", "inputSchema": {"type": "object"}}]}}
    elif method == "tools/call":
        reply = {"jsonrpc": "2.0", "id": request_id, "result": {"content": [{"type": "text", "text": "hello from 2025"}]}}
    else:
        reply = {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": "Method not found"}}
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
"""


@pytest.mark.parametrize("silent", [False, True], ids=["error", "no-answer"])
async def test_stdio_auto_falls_back_to_initialize(tmp_path: Path, silent: bool) -> None:
    script = tmp_path / "legacy_server.py"
    script.write_text(LEGACY_STDIO_SERVER)
    client = stdio_client([str(script), *(["--silent"] if silent else [])], probe_timeout=0.5)
    async with asyncio.timeout(TEST_TIMEOUT), client:
        assert client.era is Era.HANDSHAKE and client.protocol_version == "2025-06-18"
        assert (
            client.server_info is not None and client.server_info.server_info.name == "legacy-stdio"
        )
        assert [t.name for t in await client.list_tools()] == ["hello"]
        assert text_of(await client.call_tool("hello")) == "hello from 2025"


# =========================================================================================
# the session and the transport, directly
# =========================================================================================


async def test_a_reserved_request_id_and_no_timeout() -> None:
    peer = Scripted(lambda message: {"result": {"id": message["id"]}})
    session = ClientSession(peer, request_timeout=0.01)
    session.start()
    reserved = session.new_request_id()
    result = await session.request("x", None, request_id=reserved, timeout=float("inf"))
    assert result == {"id": reserved}
    assert await session.request("y") == {"id": reserved + 1}
    await session.aclose()


def test_modern_frames_get_modern_headers() -> None:
    transport = StreamableHttpClientTransport(HttpClientTransportOptions("http://127.0.0.1:9/mcp"))
    transport.tool_headers["t"] = [("Region", ("region",)), ("Deep", ("outer", "inner"))]
    from mcpkit.client._streamable_http import _peek

    frame = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {
                "name": "t",
                "arguments": {"region": " padded ", "outer": {"inner": 42}},
                "_meta": {PV: MODERN},
            },
        }
    ).encode()
    headers = transport._modern_headers(_peek(frame))
    assert headers == {
        "Mcp-Method": "tools/call",
        "Mcp-Name": "t",
        "Mcp-Param-Region": "=?base64?IHBhZGRlZCA=?=",
        "Mcp-Param-Deep": "42",
        "MCP-Protocol-Version": MODERN,
    }
    legacy = json.dumps(
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "t"}}
    ).encode()
    assert transport._modern_headers(_peek(legacy)) is None
