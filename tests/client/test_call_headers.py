"""Headers for one call: ``call_tool(..., headers=...)``, ``read_resource`` and
``get_prompt`` send them on that call's request alone, over Streamable HTTP in both eras
and over legacy SSE, to a real server on 127.0.0.1 whose tool reads them with ``Header``;
the next call does not carry them; names the transport sets are refused."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Annotated

import pytest

from mcpkit import Header, McpClient, McpServerApp
from mcpkit.client import HttpClientTransportOptions, HttpTransportMode
from tests.http_server import serving

pytestmark = pytest.mark.timeout(60)


def build() -> McpServerApp:
    app = McpServerApp("headers")

    @app.tool()
    def tenant(tenant: Annotated[str, Header("x-tenant")] = "none") -> str:
        return tenant

    @app.resource("tenant://current")
    def current(tenant: Annotated[str, Header("x-tenant")] = "none") -> str:
        return tenant

    @app.prompt()
    def greet(tenant: Annotated[str, Header("x-tenant")] = "none") -> str:
        return f"Hello, {tenant}"

    return app


CASES = [
    ("streamable", "legacy", "2025-11-25"),
    ("streamable", "modern", "2026-07-28"),
    ("legacy-sse", "legacy", "2025-11-25"),
]


@contextlib.asynccontextmanager
async def client_of(url: str, transport: str, mode: str, version: str) -> AsyncIterator[McpClient]:
    options = HttpClientTransportOptions(
        endpoint=f"{url}/sse" if transport == "legacy-sse" else url,
        transport_mode=(
            HttpTransportMode.SSE
            if transport == "legacy-sse"
            else HttpTransportMode.STREAMABLE_HTTP
        ),
        additional_headers={"x-tenant": "static"},
    )
    async with McpClient.http(options, protocol_mode=mode, protocol_version=version) as client:
        yield client


@pytest.mark.parametrize(
    ("transport", "mode", "version"), CASES, ids=[c[0] + "-" + c[2] for c in CASES]
)
async def test_a_calls_headers_go_with_it_alone(transport: str, mode: str, version: str) -> None:
    async with serving(build()) as (url, _), client_of(url, transport, mode, version) as client:
        called = await client.call_tool("tenant", {}, headers={"X-Tenant": "acme"})
        assert called.content[0].text == "acme"  # type: ignore[union-attr]  # the call's wins
        plain = await client.call_tool("tenant", {})
        assert plain.content[0].text == "static"  # type: ignore[union-attr]
        read = await client.read_resource("tenant://current", headers={"x-tenant": "globex"})
        assert read.contents[0].text == "globex"  # type: ignore[union-attr]
        prompt = await client.get_prompt("greet", headers={"x-tenant": "initech"})
        assert prompt.messages[0].content.text == "Hello, initech"  # type: ignore[union-attr]


async def test_headers_the_transport_sets_are_refused() -> None:
    async with (
        serving(build()) as (url, _),
        client_of(url, "streamable", "legacy", "2025-11-25") as client,
    ):
        for name in ("Mcp-Session-Id", "content-type", "MCP-Protocol-Version"):
            with pytest.raises(ValueError, match="the transport sets it"):
                await client.call_tool("tenant", {}, headers={name: "x"})
        assert (await client.call_tool("tenant", {})).content[0].text == "static"  # type: ignore[union-attr]
