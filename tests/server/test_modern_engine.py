"""The 2026-07-28 era on the engine, over the in-memory transport: per-request _meta,
resultType and caching fields, method set, MRTR rounds, signed state, trace context."""

from __future__ import annotations

import asyncio
import json

import pytest

from mcpkit import McpServerApp, McpToolContext, mcp_resource, mcp_server, mcp_tool
from tests.in_memory import InMemoryPeer
from tests.wire import check

V = "2026-07-28"


def meta(caps: dict | None = None, **extra: object) -> dict:
    base = {
        "io.modelcontextprotocol/protocolVersion": V,
        "io.modelcontextprotocol/clientCapabilities": caps
        if caps is not None
        else {"elicitation": {}},
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
    }
    base.update(extra)
    return base


@mcp_server(name="modern", version="9.9")
class Modern:
    @mcp_tool()
    async def ask(self, ctx: McpToolContext) -> str:
        answer = await ctx.elicit(
            "Name?", {"type": "object", "properties": {"name": {"type": "string"}}}, key="who"
        )
        return f"hi {(answer.content or {}).get('name')}"

    @mcp_tool()
    async def two_rounds(self, ctx: McpToolContext) -> str:
        ctx.request_state = ctx.request_state or {"started": True}
        a = await ctx.elicit(
            "A?", {"type": "object", "properties": {"a": {"type": "string"}}}, key="a"
        )
        b = await ctx.elicit(
            "B?", {"type": "object", "properties": {"b": {"type": "string"}}}, key="b"
        )
        return f"{a.content['a']}{b.content['b']} {ctx.request_state}"

    @mcp_tool()
    async def trace(self, ctx: McpToolContext) -> str:
        await ctx.info("logged")
        return ctx.traceparent or "none"

    @mcp_resource("m://r")
    def r(self) -> str:
        return "r"


class Peer(InMemoryPeer):
    """Sends one request at a time and collects what comes before its answer."""

    def __init__(self, app: McpServerApp) -> None:
        super().__init__(app)
        self.ids = 0

    async def call(self, method: str, params: dict) -> tuple[dict, list[dict]]:
        self.ids += 1
        await self.client.send(
            json.dumps(
                {"jsonrpc": "2.0", "id": self.ids, "method": method, "params": params}
            ).encode()
        )
        notes = []
        async with asyncio.timeout(5):
            while True:
                message = json.loads(await self.client.receive())
                if message.get("id") == self.ids:
                    return message, notes
                notes.append(message)


@pytest.fixture
async def peer():
    async with Peer(McpServerApp(Modern)) as p:
        yield p


async def test_modern_request_needs_no_handshake_and_result_is_dressed(peer):
    reply, _ = await peer.call("tools/list", {"_meta": meta()})
    result = reply["result"]
    assert (
        result["resultType"] == "complete"
        and result["ttlMs"] > 0
        and result["cacheScope"] == "public"
    )
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"] == {
        "name": "modern",
        "version": "9.9",
    }
    check(V, "ListToolsResult", result)


async def test_discover_lists_versions_and_capabilities(peer):
    reply, _ = await peer.call("server/discover", {"_meta": meta()})
    assert "2026-07-28" in reply["result"]["supportedVersions"]
    check(V, "DiscoverResult", reply["result"])


@pytest.mark.parametrize(
    "method", ["initialize", "ping", "logging/setLevel", "resources/subscribe"]
)
async def test_handshake_only_methods_are_not_found(peer, method):
    reply, _ = await peer.call(method, {"_meta": meta()})
    assert reply["error"]["code"] == -32601


async def test_bad_meta_is_refused(peer):
    reply, _ = await peer.call(
        "tools/list", {"_meta": {"io.modelcontextprotocol/protocolVersion": V}}
    )
    assert reply["error"]["code"] == -32602
    reply, _ = await peer.call(
        "tools/list", {"_meta": meta() | {"io.modelcontextprotocol/protocolVersion": "2099-01-01"}}
    )
    assert reply["error"]["code"] == -32022 and "2026-07-28" in reply["error"]["data"]["supported"]


async def test_resource_not_found_is_invalid_params(peer):
    reply, _ = await peer.call("resources/read", {"uri": "m://nope", "_meta": meta()})
    assert reply["error"]["code"] == -32602 and reply["error"]["data"]["uri"] == "m://nope"


async def test_mrtr_round_trip_with_state_and_tampering(peer):
    first, _ = await peer.call(
        "tools/call", {"name": "two_rounds", "arguments": {}, "_meta": meta()}
    )
    r1 = first["result"]
    assert r1["resultType"] == "input_required" and list(r1["inputRequests"]) == ["a"]
    check(V, "InputRequiredResult", r1)
    second, _ = await peer.call(
        "tools/call",
        {
            "name": "two_rounds",
            "arguments": {},
            "_meta": meta(),
            "inputResponses": {"a": {"action": "accept", "content": {"a": "x"}}},
            "requestState": r1["requestState"],
        },
    )
    r2 = second["result"]
    assert list(r2["inputRequests"]) == ["b"] and r2["requestState"] != r1["requestState"]
    third, _ = await peer.call(
        "tools/call",
        {
            "name": "two_rounds",
            "arguments": {},
            "_meta": meta(),
            "inputResponses": {"b": {"action": "accept", "content": {"b": "y"}}},
            "requestState": r2["requestState"],
        },
    )
    assert third["result"]["content"][0]["text"] == "xy {'started': True}"
    tampered, _ = await peer.call(
        "tools/call",
        {
            "name": "two_rounds",
            "arguments": {},
            "_meta": meta(),
            "inputResponses": {},
            "requestState": r2["requestState"][:-2] + "AA",
        },
    )
    assert tampered["error"]["code"] == -32602


async def test_missing_capability_is_32021(peer):
    reply, _ = await peer.call(
        "tools/call", {"name": "ask", "arguments": {}, "_meta": meta(caps={})}
    )
    assert reply["error"]["code"] == -32021
    assert reply["error"]["data"]["requiredCapabilities"] == {"elicitation": {}}


async def test_logging_only_with_a_log_level_and_trace_context_reaches_the_tool(peer):
    reply, notes = await peer.call(
        "tools/call", {"name": "trace", "arguments": {}, "_meta": meta()}
    )
    assert reply["result"]["content"][0]["text"] == "none" and notes == []
    tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    reply, notes = await peer.call(
        "tools/call",
        {
            "name": "trace",
            "arguments": {},
            "_meta": meta(**{"io.modelcontextprotocol/logLevel": "info", "traceparent": tp}),
        },
    )
    assert reply["result"]["content"][0]["text"] == tp
    assert [n["method"] for n in notes] == ["notifications/message"]


def test_meta_sessions_give_each_request_its_own_values():
    """The sessions an endpoint makes from ``_meta`` (``MetaSessions``): made once per
    (version, level), but each request's under its own key with its own capabilities and
    info; a bad ``_meta`` still gets its error; what is kept stays within its bound."""
    from mcpkit._exceptions import InvalidParamsError
    from mcpkit.server._engine.session import McpSession
    from mcpkit.server._eras.modern import MAX_META_SESSIONS, MetaSessions, meta_session

    sessions = MetaSessions()
    first_meta, second_meta = meta({"a": {}}), meta({"b": {}})
    first = sessions.session(first_meta, "m1")
    second = sessions.session(second_meta, "m2")
    third = sessions.session(meta({"b": {}}, **{"io.modelcontextprotocol/logLevel": "info"}), "m3")
    for made, key, caps, level in (
        (first, "m1", {"a": {}}, None),
        (second, "m2", {"b": {}}, None),
        (third, "m3", {"b": {}}, "info"),
    ):
        assert type(made) is McpSession
        assert (made.key, made.client_capabilities, made.log_level) == (key, caps, level)
        assert made.protocol_version == V and made.modern and made.initialize_seen
    assert second.client_capabilities is second_meta["io.modelcontextprotocol/clientCapabilities"]
    assert second.client_info is second_meta["io.modelcontextprotocol/clientInfo"]
    # Field by field what meta_session makes of the same _meta.
    fresh = meta_session(second_meta, "m2")
    assert {f: getattr(second, f) for f in McpSession.__struct_fields__} == {
        f: getattr(fresh, f) for f in McpSession.__struct_fields__
    }
    for bad in (
        None,
        meta({"a": {}}, **{"io.modelcontextprotocol/logLevel": "loud"}),
        meta({"a": {}}, **{"io.modelcontextprotocol/logLevel": {"x": 1}}),
        {**meta(), "io.modelcontextprotocol/clientCapabilities": []},
        {**meta(), "io.modelcontextprotocol/clientInfo": "t"},
        {**meta(), "io.modelcontextprotocol/protocolVersion": "2099-01-01"},
    ):
        assert isinstance(sessions.session(bad, "m4"), type(meta_session(bad, "m4")))
        assert not isinstance(sessions.session(bad, "m4"), McpSession)
    assert isinstance(sessions.session(None, "m5"), InvalidParamsError)
    assert len(sessions._made) <= MAX_META_SESSIONS
