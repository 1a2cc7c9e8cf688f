"""Route maps over the petstore (in-process): everything a tool by default; GET as
resources and resource templates; exclusion by tag, method and path; renaming; rules an
operation cannot take fall through; and the rules' own validation."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from mcpkit import McpCallError, McpServerApp, RouteMap, mcp_tool
from mcpkit.openapi import GET_AS_RESOURCES, BridgedRoute, OpenApiOperation, register_openapi
from tests.conftest import connected
from tests.openapi.petstore import make_petstore

ALL_TOOLS = {
    "list_pets",
    "create_pet",
    "get_pet",
    "delete_pet",
    "who_am_i",
    "greeting",
    "boom",
    "admin_stats",
}


def bridged(**options: Any) -> McpServerApp:
    return McpServerApp.from_asgi(make_petstore(), **options)


def tool_names(app: McpServerApp) -> set[str]:
    return {tool["name"] for tool in app.catalog.tool_wire_list()}


def test_by_default_every_operation_is_a_tool():
    app = bridged()
    assert tool_names(app) == ALL_TOOLS
    assert app.catalog.list_resources() == [] and app.catalog.list_resource_templates() == []
    assert app.name == "Petstore" and app.version == "1.2.3"


async def test_get_as_resources_makes_resources_and_templates():
    app = bridged(route_maps=GET_AS_RESOURCES)
    # a GET that needs a header stays a tool, as do the other methods
    assert tool_names(app) == {"create_pet", "delete_pet", "who_am_i"}
    async with asyncio.timeout(10), connected(app) as client:
        resources = {r.uri: r for r in await client.list_resources()}
        assert set(resources) == {
            "openapi://petstore/pets",
            "openapi://petstore/greeting",
            "openapi://petstore/boom",
            "openapi://petstore/admin/stats",
        }
        pets = resources["openapi://petstore/pets"]
        assert (pets.name, pets.title, pets.mime_type) == (
            "list_pets",
            "List pets",
            "application/json",
        )
        (template,) = await client.list_resource_templates()
        assert (template.uri_template, template.name) == (
            "openapi://petstore/pets/{pet_id}",
            "get_pet",
        )

        listed = await client.read_resource("openapi://petstore/pets")
        (contents,) = listed.contents
        assert contents.mime_type == "application/json"
        assert [pet["name"] for pet in json.loads(contents.text)] == ["Rex", "Tom", "Nemo"]
        one = await client.read_resource("openapi://petstore/pets/2")
        assert json.loads(one.contents[0].text) == {"id": 2, "name": "Tom", "tag": "cat"}

        with pytest.raises(McpCallError) as missing:
            await client.read_resource("openapi://petstore/pets/99")
        assert missing.value.code == -32002  # a 404 is "resource not found"
        with pytest.raises(McpCallError) as broken:
            await client.read_resource("openapi://petstore/boom")
        assert broken.value.code == -32603
        assert broken.value.data == {"status": 500, "body": {"detail": "the server broke"}}


async def test_a_template_rule_puts_query_parameters_in_the_template():
    rules = [RouteMap("resource_template", methods="GET", pattern=r"^/pets$")]
    app = bridged(route_maps=rules, resource_prefix="zoo://pets-api/")
    (template,) = app.catalog.list_resource_templates()
    assert template.uri_template == "zoo://pets-api/pets{?limit,tags*}"
    async with asyncio.timeout(10), connected(app) as client:
        read = await client.read_resource("zoo://pets-api/pets?tags=cat&tags=fish&limit=1")
        assert [pet["name"] for pet in json.loads(read.contents[0].text)] == ["Tom"]
        everything = await client.read_resource("zoo://pets-api/pets")
        assert len(json.loads(everything.contents[0].text)) == 3


def test_exclude_by_tag_method_and_path_the_first_matching_rule_wins():
    app = bridged(
        route_maps=[
            RouteMap("tool", methods="DELETE", pattern="^/pets/"),  # kept: it comes first
            RouteMap("exclude", tags={"admin"}),
            RouteMap("exclude", methods=["delete", "POST"]),
            RouteMap("exclude", pattern=r"^/(boom|greeting)$"),
        ]
    )
    assert tool_names(app) == {"list_pets", "get_pet", "delete_pet", "who_am_i"}


def test_renaming_by_rule_by_function_and_by_operation_id():
    def shout(operation: OpenApiOperation) -> str | None:
        return operation.operation_id.upper() if operation.operation_id == "boom" else None

    app = McpServerApp.from_asgi(
        make_petstore(),
        route_maps=[
            RouteMap("tool", methods="GET", pattern=r"^/pets/\{pet_id\}$", name="fetch pet"),
            RouteMap("exclude", tags=["admin"], name="never used"),
            RouteMap("tool", methods="GET", name=shout),
        ],
        names={"list_pets": "all_pets", "POST /pets": "adopt"},
    )
    assert tool_names(app) == {
        "all_pets",  # names= wins over every rule
        "adopt",  # names= by "METHOD /path"
        "fetch_pet",  # the rule's name, sanitized
        "delete_pet",
        "who_am_i",  # shout() gave None: the operationId stays
        "greeting",
        "BOOM",
    }


def test_a_rule_the_operation_cannot_take_falls_through():
    app = bridged(
        route_maps=[
            RouteMap("resource", pattern="^/pets"),  # GET /pets/{pet_id} has a path variable
            RouteMap("resource", pattern="^/whoami$"),  # needs a header
        ]
    )
    assert [r.uri for r in app.catalog.list_resources()] == ["openapi://petstore/pets"]
    assert tool_names(app) == ALL_TOOLS - {"list_pets"}


async def test_register_openapi_adds_to_an_app_and_reports_what_it_made():
    @mcp_tool
    def list_pets() -> str:
        return "mine"

    app = McpServerApp(list_pets, name="mixed")
    petstore = make_petstore()
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=petstore), base_url="http://app"
    ) as http:
        routes = register_openapi(
            app,
            petstore.openapi(),
            client=http,
            route_maps=[
                RouteMap("resource_template", methods="GET", pattern=r"\{"),
                RouteMap("exclude", methods="GET", pattern="^/(?!pets)"),
            ],
        )
        assert [(r.kind, r.name, r.uri) for r in routes] == [
            ("tool", "list_pets_2", None),  # the function's list_pets is kept
            ("tool", "create_pet", None),
            ("resource_template", "get_pet", "openapi://mixed/pets/{pet_id}"),
            ("tool", "delete_pet", None),
        ]
        assert all(isinstance(route, BridgedRoute) for route in routes)
        assert routes[2].operation.path == "/pets/{pet_id}"
        async with asyncio.timeout(10), connected(app) as client:
            mine = await client.call_tool("list_pets", {})
            theirs = await client.call_tool("list_pets_2", {"limit": 1})
    assert mine.content[0].text == "mine"
    assert theirs.structured_content == {"result": [{"id": 1, "name": "Rex", "tag": "dog"}]}


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: RouteMap("resource", methods=["GET", "POST"]), "GET operations only"),
        (lambda: RouteMap("resource_template", methods="put"), "GET operations only"),
        (lambda: RouteMap("prompt"), "kind must be one of"),
    ],
)
def test_route_maps_refuse_what_cannot_work(make, message):
    with pytest.raises(ValueError, match=message):
        make()
