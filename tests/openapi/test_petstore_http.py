"""End to end over real sockets: the FastAPI petstore served by uvicorn, bridged with
``McpServerApp.from_openapi`` over a real httpx client, the bridge served over Streamable
HTTP and driven by mcpkit's ``McpClient`` and by the official ``mcp`` client."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import mcp_types
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from mcpkit import HttpClientTransportOptions, McpClient, McpServerApp
from mcpkit.openapi import GET_AS_RESOURCES
from mcpkit.server.transforms import ArgTransform, transform_tool
from tests.http_server import serve_asgi, serving
from tests.openapi.petstore import make_petstore

TIMEOUT = 30


@contextlib.asynccontextmanager
async def bridged_petstore(**options: Any) -> AsyncIterator[tuple[str, McpServerApp]]:
    """The petstore on uvicorn, bridged, the bridge on uvicorn: yields (MCP endpoint, app)."""
    async with serve_asgi(make_petstore(), lifespan="on") as api_url:
        # the document as JSON text, fetched over the wire like any client would
        async with httpx.AsyncClient(base_url=api_url, timeout=10) as http:
            document = (await http.get("/openapi.json")).text
            app = McpServerApp.from_openapi(document, client=http, **options)
            async with serving(app) as (endpoint, _):
                yield endpoint, app


def client_for(endpoint: str, **headers: str) -> McpClient:
    return McpClient.http(HttpClientTransportOptions(endpoint=endpoint, additional_headers=headers))


async def test_mcpkit_client_calls_the_petstore_through_the_bridge():
    async with asyncio.timeout(TIMEOUT), bridged_petstore() as (endpoint, _):
        async with client_for(endpoint) as client:
            tools = {tool.name: tool for tool in await client.list_tools()}
            assert set(tools) >= {"list_pets", "get_pet", "create_pet", "delete_pet", "who_am_i"}
            assert tools["get_pet"].input_schema == {
                "type": "object",
                "properties": {"pet_id": {"type": "integer", "title": "Pet Id"}},
                "required": ["pet_id"],
            }
            assert tools["get_pet"].output_schema["required"] == ["name", "id"]

            listed = await client.call_tool("list_pets", {"limit": 5, "tags": ["dog", "fish"]})
            assert not listed.is_error
            assert [pet["name"] for pet in listed.structured_content["result"]] == ["Rex", "Nemo"]
            assert json.loads(listed.content[0].text) == listed.structured_content["result"]

            created = await client.call_tool("create_pet", {"name": "Bo", "tag": "dog"})
            assert created.structured_content == {"id": 4, "name": "Bo", "tag": "dog"}
            fetched = await client.call_tool("get_pet", {"pet_id": 4})
            assert fetched.structured_content == created.structured_content

            deleted = await client.call_tool("delete_pet", {"pet_id": 4})
            assert not deleted.is_error and deleted.content[0].text == "HTTP 204 No Content"
            assert deleted.structured_content is None

            header = await client.call_tool("who_am_i", {"x-request-id": "req-7"})
            assert header.structured_content == {"request_id": "req-7", "authorization": None}


async def test_api_errors_are_error_results_with_status_and_body():
    async with asyncio.timeout(TIMEOUT), bridged_petstore() as (endpoint, _):
        async with client_for(endpoint) as client:
            gone = await client.call_tool("get_pet", {"pet_id": 4})
            assert gone.is_error
            assert gone.structured_content == {"status": 404, "body": {"detail": "no pet 4"}}
            assert (
                gone.content[0].text == 'HTTP 404 Not Found from GET /pets/4: {"detail":"no pet 4"}'
            )

            broken = await client.call_tool("boom", {})
            assert broken.is_error
            assert broken.structured_content == {
                "status": 500,
                "body": {"detail": "the server broke"},
            }

            invalid = await client.call_tool("get_pet", {"pet_id": "not a number"})
            assert invalid.is_error and invalid.structured_content["status"] == 422

            # a missing required argument is the tool's error, as for every tool
            missing = await client.call_tool("who_am_i", {})
            assert missing.is_error and "missing required argument" in missing.content[0].text


async def test_network_errors_are_error_results():
    async with asyncio.timeout(TIMEOUT), serve_asgi(make_petstore()) as api_url:
        async with httpx.AsyncClient(base_url=api_url) as fetcher:
            document = (await fetcher.get("/openapi.json")).json()
    # the API has stopped: its port refuses connections
    async with httpx.AsyncClient(base_url=api_url, timeout=5) as http:
        app = McpServerApp.from_openapi(document, client=http)
        async with serving(app) as (endpoint, _), client_for(endpoint) as client:
            refused = await client.call_tool("list_pets", {})
    assert refused.is_error
    assert refused.content[0].text.startswith("GET /pets failed: ConnectError")


async def test_forward_headers_passes_the_mcp_requests_authorization_on():
    async with (
        asyncio.timeout(TIMEOUT),
        bridged_petstore(forward_headers=["Authorization"]) as (endpoint, _),
    ):
        async with client_for(endpoint, Authorization="Bearer user-token") as client:
            who = await client.call_tool("who_am_i", {"x-request-id": "r1"})
    assert who.structured_content == {"request_id": "r1", "authorization": "Bearer user-token"}


async def test_resources_and_templates_over_streamable_http():
    async with (
        asyncio.timeout(TIMEOUT),
        bridged_petstore(route_maps=GET_AS_RESOURCES) as (endpoint, _),
    ):
        async with client_for(endpoint) as client:
            templates = [t.uri_template for t in await client.list_resource_templates()]
            assert templates == ["openapi://petstore/pets/{pet_id}"]
            pet = await client.read_resource("openapi://petstore/pets/3")
            assert json.loads(pet.contents[0].text)["name"] == "Nemo"


@pytest.mark.interop
@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
async def test_the_official_mcp_client_calls_the_bridge_and_validates_its_output():
    async with asyncio.timeout(TIMEOUT), bridged_petstore() as (endpoint, _):
        async with streamable_http_client(endpoint) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=10) as session:
                await session.initialize()
                tools = {tool.name: tool for tool in (await session.list_tools()).tools}
                assert tools["get_pet"].output_schema is not None
                # the official client checks structuredContent against the output schema
                pet = await session.call_tool("get_pet", {"pet_id": 1})
                assert not pet.is_error
                assert pet.structured_content == {"id": 1, "name": "Rex", "tag": "dog"}
                listed = await session.call_tool("list_pets", {"tags": ["cat"]})
                assert listed.structured_content == {
                    "result": [{"id": 2, "name": "Tom", "tag": "cat"}]
                }
                created = await session.call_tool("create_pet", {"name": "Kit"})
                assert created.structured_content == {"id": 4, "name": "Kit", "tag": None}
                missing = await session.call_tool("get_pet", {"pet_id": 42})
                assert missing.is_error
                assert isinstance(missing.content[0], mcp_types.TextContent)
                assert "HTTP 404 Not Found" in missing.content[0].text


async def test_an_openapi_tool_transformed_like_any_other():
    """transform_tool on a bridged operation: renamed, its argument renamed and another
    fixed and hidden; the HTTP request still gets what the operation names."""
    async with asyncio.timeout(TIMEOUT), bridged_petstore() as (endpoint, app):
        transform_tool(
            app,
            "list_pets",
            name="dogs",
            description="The dogs of the store.",
            arguments={
                "tags": ArgTransform(hide=True, default=["dog"]),
                "limit": ArgTransform(name="at_most"),
            },
        )
        async with client_for(endpoint) as client:
            tools = {tool.name: tool for tool in await client.list_tools()}
            assert (
                "list_pets" not in tools and tools["dogs"].description == "The dogs of the store."
            )
            assert set(tools["dogs"].input_schema["properties"]) == {"at_most"}
            dogs = await client.call_tool("dogs", {"at_most": 5})
            assert not dogs.is_error
            assert [pet["name"] for pet in dogs.structured_content["result"]] == ["Rex"]
