"""``Mcp-Param-*`` headers reach the tool in ``_meta["x-mcp-headers"]`` (SEP-2243, 2026-07-28
Streamable HTTP), against a real mcpkit server on 127.0.0.1: from raw HTTP requests, and
from ``McpClient``, which mirrors the tools' ``x-mcp-header`` arguments into those headers.

Keys are the lower-cased names after ``Mcp-Param-``, values decoded from their Base64
sentinel; headers no annotation names are handed over too; a body that brings its own
``x-mcp-headers`` has it replaced (or dropped), so the tool only sees what came in headers.
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

import httpx
import msgspec

from mcpkit import McpClient, McpServerApp, McpToolContext, mcp_server, mcp_tool
from mcpkit.client import HttpClientTransportOptions
from mcpkit.protocol._headers import PARAM_HEADERS_META_KEY, param_headers
from mcpkit.protocol._modern import CLIENT_CAPABILITIES_KEY, PROTOCOL_VERSION_KEY
from mcpkit.transports.http._asgi import KNOWN_HEADER_NAMES
from tests.http_server import serving

MODERN = "2026-07-28"
TEST_TIMEOUT = 20.0


@mcp_server(name="param-meta")
class ParamMeta:
    @mcp_tool(description="Answers what its _meta says came in Mcp-Param-* headers")
    def routed(
        self,
        region: Annotated[str, msgspec.Meta(extra_json_schema={"x-mcp-header": "Region"})],
        ctx: McpToolContext,
        priority: Annotated[int, msgspec.Meta(extra_json_schema={"x-mcp-header": "Priority"})] = 0,
    ) -> dict[str, Any]:
        return {"seen": ctx.meta.get(PARAM_HEADERS_META_KEY), "region": region}


def call(arguments: dict[str, Any], meta: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "routed",
            "arguments": arguments,
            "_meta": {
                PROTOCOL_VERSION_KEY: MODERN,
                CLIENT_CAPABILITIES_KEY: {},
                **(meta or {}),
            },
        },
    }


async def post(url: str, body: dict[str, Any], headers: dict[str, str]) -> httpx.Response:
    async with httpx.AsyncClient(timeout=5) as http:
        return await http.post(
            url,
            json=body,
            headers={
                "MCP-Protocol-Version": MODERN,
                "Mcp-Method": "tools/call",
                "Mcp-Name": "routed",
                "Accept": "application/json, text/event-stream",
                **headers,
            },
        )


def seen_of(response: httpx.Response) -> Any:
    assert response.status_code == 200, response.text
    text = response.text
    if response.headers["content-type"].startswith("text/event-stream"):
        text = next(line[5:] for line in text.splitlines() if line.startswith("data:"))
    return msgspec.json.decode(text)["result"]["structuredContent"]


def test_param_headers_are_keyed_lower_case_and_decoded() -> None:
    assert param_headers(
        {
            "mcp-param-region": " eu-west-1 ",
            "mcp-param-city": "=?base64?WsO8cmljaA==?=",
            "mcp-param-broken": "=?base64?***?=",
            "mcp-param-": "no name",
            "mcp-method": "tools/call",
        }
    ) == {"region": "eu-west-1", "city": "Zürich", "broken": "=?base64?***?="}


def test_no_header_name_kept_once_is_a_param_header() -> None:
    # A request whose names are all among these skips the search for Mcp-Param-* headers.
    assert KNOWN_HEADER_NAMES
    assert not [name for name in KNOWN_HEADER_NAMES if name.startswith("mcp-param-")]


async def test_raw_mcp_param_headers_reach_the_tool_in_meta() -> None:
    async with serving(McpServerApp(ParamMeta)) as (url, _):
        async with asyncio.timeout(TEST_TIMEOUT):
            response = await post(
                url,
                call({"region": "Zürich", "priority": 7}),
                {
                    "Mcp-Param-Region": "=?base64?WsO8cmljaA==?=",
                    "Mcp-Param-Priority": "7",
                    "Mcp-Param-Tenant": "acme",  # no annotation names it: handed over too
                },
            )
            assert seen_of(response) == {
                "seen": {"region": "Zürich", "priority": "7", "tenant": "acme"},
                "region": "Zürich",
            }
            # a body claiming headers it did not send: replaced by the real ones
            response = await post(
                url,
                call({"region": "eu"}, {PARAM_HEADERS_META_KEY: {"region": "spoofed"}}),
                {"Mcp-Param-Region": "eu"},
            )
            assert seen_of(response)["seen"] == {"region": "eu"}
            # the annotated headers are still checked against the body first
            response = await post(url, call({"region": "eu"}), {"Mcp-Param-Region": "us"})
            assert response.status_code == 400
            assert "does not match" in response.json()["error"]["message"]


async def test_a_body_x_mcp_headers_without_headers_is_dropped() -> None:
    @mcp_server(name="plain")
    class Plain:
        @mcp_tool(description="Answers its _meta's x-mcp-headers")
        def plain(self, ctx: McpToolContext) -> dict[str, Any]:
            return {"seen": ctx.meta.get(PARAM_HEADERS_META_KEY, "absent")}

    async with serving(McpServerApp(Plain)) as (url, _):
        async with asyncio.timeout(TEST_TIMEOUT):
            body = call({}, {PARAM_HEADERS_META_KEY: {"region": "spoofed"}})
            body["params"]["name"] = "plain"
            response = await post(url, body, {"Mcp-Name": "plain"})
            assert seen_of(response) == {"seen": "absent"}
            response = await post(url, body, {"Mcp-Name": "plain", "Mcp-Param-Trace": "t-1"})
            assert seen_of(response) == {"seen": {"trace": "t-1"}}


async def test_mcpkit_client_mirrors_arguments_the_tool_sees_in_meta() -> None:
    async with serving(McpServerApp(ParamMeta)) as (url, _):
        async with (
            asyncio.timeout(TEST_TIMEOUT),
            McpClient.http(HttpClientTransportOptions(endpoint=url)) as client,
        ):
            result = await client.call_tool("routed", {"region": "eu-west-1", "priority": 7})
            assert result.structured_content == {
                "seen": {"region": "eu-west-1", "priority": "7"},
                "region": "eu-west-1",
            }
            # non-ASCII travels as the Base64 sentinel and arrives decoded; a value the
            # caller put in _meta under that key does not survive
            result = await client.call_tool(
                "routed", {"region": "Zürich "}, meta={PARAM_HEADERS_META_KEY: {"x": "y"}}
            )
            assert result.structured_content["seen"] == {"region": "Zürich "}
