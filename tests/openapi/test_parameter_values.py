"""Parameter values are serialized by their schema and style, never reshaping the request:
a value of a kind its schema does not declare (an object for a string, an array for a
number), an object key its schema does not list, a nested value, an empty path value or
one that makes a ``.``/``..`` segment is an ``isError`` result naming the parameter, and
nothing is sent. The API is a real server on a socket that answers with the raw path and
query string it got; the refusals are also checked against a mock transport."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from mcpkit import McpClient, McpServerApp
from tests.conftest import connected
from tests.http_server import serve_asgi

STRING = {"type": "string"}
STRINGS = {"type": "array", "items": STRING}
OK = {"200": {"description": "ok"}}


def query(name: str, schema: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"name": name, "in": "query", "schema": schema, **extra}


def path(name: str, schema: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"name": name, "in": "path", "required": True, "schema": schema, **extra}


DOCUMENT: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {"title": "Echo", "version": "1"},
    "paths": {
        "/{tenant}/users/{id}": {
            "get": {
                "operationId": "user",
                "parameters": [
                    path("tenant", STRING),
                    path("id", STRING),
                    query("q", {"type": ["string", "null"]}),
                    query("limit", {"type": "integer"}),
                    query("order", {"enum": ["asc", "desc"]}),
                    # as FastAPI writes an optional list
                    query("tags", {"anyOf": [STRINGS, {"type": "null"}]}),
                    query("ids", STRINGS, explode=False),
                    query("pipes", STRINGS, style="pipeDelimited", explode=False),
                    query("spaced", STRINGS, style="spaceDelimited", explode=False),
                    query("filter", {"$ref": "#/components/schemas/Filter"}, style="deepObject"),
                    query("sort", {"$ref": "#/components/schemas/Sort"}),
                    query("labels", {"type": "object", "additionalProperties": STRING}),
                    query("range", {"$ref": "#/components/schemas/Sort"}, explode=False),
                    query("bars", {"$ref": "#/components/schemas/Sort"}, style="pipeDelimited"),
                    {
                        "name": "where",
                        "in": "query",
                        "content": {"application/json": {"schema": {"type": "object"}}},
                    },
                    {"name": "X-Trace", "in": "header", "schema": STRING},
                    {"name": "session", "in": "cookie", "schema": STRING},
                ],
                "responses": OK,
            }
        },
        "/files/{name}/{label}/{matrix}": {
            "get": {
                "operationId": "file",
                "parameters": [
                    path("name", STRING),
                    path("label", STRINGS, style="label"),
                    path("matrix", STRINGS, style="matrix", explode=True),
                ],
                "responses": OK,
            }
        },
        "/things/{id}": {
            "get": {
                "operationId": "thing",
                "parameters": [path("id", STRING), query("id", STRING)],
                "responses": OK,
            }
        },
    },
    "components": {
        "schemas": {
            "Filter": {
                "type": "object",
                "properties": {"kind": STRING, "age": {"type": "integer"}},
                "additionalProperties": False,
            },
            "Sort": {
                "type": "object",
                "properties": {"field": STRING, "desc": {"type": "boolean"}},
            },
        }
    },
}

#: Values that name all the required path parameters.
USER = {"tenant": "acme", "id": "5"}


class Echo:
    """An ASGI API that answers every request with its raw path and query string, and
    keeps them."""

    def __init__(self) -> None:
        self.seen: list[dict[str, str]] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        assert scope["type"] == "http"
        seen = {
            "path": scope["raw_path"].decode(),
            "query": scope["query_string"].decode(),
            "cookie": dict(scope["headers"]).get(b"cookie", b"").decode(),
        }
        self.seen.append(seen)
        headers = [(b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": json.dumps(seen).encode()})


@contextlib.asynccontextmanager
async def bridged_echo() -> AsyncIterator[tuple[McpClient, Echo]]:
    """The echo API on uvicorn under ``/api``, bridged, and a client of the bridge."""
    echo = Echo()
    async with (
        asyncio.timeout(30),
        serve_asgi(echo) as api_url,
        httpx.AsyncClient(base_url=api_url + "/api", timeout=10) as http,
    ):
        app = McpServerApp.from_openapi(DOCUMENT, client=http)
        async with connected(app) as client:
            yield client, echo


async def test_an_object_for_a_string_query_parameter_adds_no_parameter():
    async with bridged_echo() as (client, echo):
        spread = await client.call_tool("user", {**USER, "q": {"admin": "true"}})
        plain = await client.call_tool("user", {**USER, "q": "admin=true&x"})
    assert spread.is_error
    assert spread.content[0].text == (
        "query parameter 'q' takes a string, number or boolean, not an object"
    )
    # only the string went out, as one value of ``q``
    assert echo.seen == [{"path": "/api/acme/users/5", "query": "q=admin%3Dtrue%26x", "cookie": ""}]
    assert plain.structured_content == echo.seen[0]


async def test_values_are_serialized_by_their_style_over_the_wire():
    arguments = {
        **USER,
        "limit": 3,
        "order": "asc",
        "tags": ["a", "b"],
        "ids": [1, 2],
        "pipes": ["x", "y"],
        "spaced": ["x", "y"],
        "filter": {"kind": "cat", "age": 3},
        "sort": {"field": "name", "desc": True},
        "labels": {"team": "blue"},
        "range": {"field": "age"},
        "bars": {"field": "age", "desc": False},
        "where": {"nested": {"deep": [1, 2]}},  # ``content``: JSON text, nesting is fine
        "session": "s;1",
    }
    async with bridged_echo() as (client, echo):
        result = await client.call_tool("user", arguments)
        lone = await client.call_tool("user", {**USER, "tags": "solo"})  # a one-item array
    assert not result.is_error and not lone.is_error
    first, second = echo.seen
    assert first["query"].split("&") == [
        "limit=3",
        "order=asc",
        "tags=a",
        "tags=b",
        "ids=1%2C2",
        "pipes=x%7Cy",
        "spaced=x+y",
        "filter%5Bkind%5D=cat",
        "filter%5Bage%5D=3",
        "field=name",  # form + explode: an object's declared keys, as keys of their own
        "desc=true",
        "team=blue",  # additionalProperties: any key
        "range=field%2Cage",
        "bars=field%7Cage%7Cdesc%7Cfalse",
        "where=%7B%22nested%22%3A%7B%22deep%22%3A%5B1%2C2%5D%7D%7D",
    ]
    assert first["cookie"] == "session=s%3B1"
    assert second["query"] == "tags=solo"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"q": ["a"]}, "query parameter 'q' takes a string, number or boolean, not an array"),
        (
            {"limit": {"$gt": 1}},
            "query parameter 'limit' takes a string, number or boolean, not an object",
        ),
        (
            {"order": ["asc"]},
            "query parameter 'order' takes a string, number or boolean, not an array",
        ),
        ({"tags": {"a": "b"}}, "query parameter 'tags' takes an array, not an object"),
        (
            {"tags": [["a"], "b"]},
            "query parameter 'tags' takes a string, number or boolean inside its array, not an array",
        ),
        (
            {"ids": [{"id": 1}]},
            "query parameter 'ids' takes a string, number or boolean inside its array, not an object",
        ),
        (
            {"filter": "kind=cat"},
            "query parameter 'filter' takes an object, not a string, number or boolean",
        ),
        (
            {"filter": {"kind": "cat", "admin": "true"}},
            "query parameter 'filter' has no property 'admin' (its properties: age, kind)",
        ),
        # form + explode spreads keys: only the declared ones
        (
            {"sort": {"field": "name", "api_key": "stolen"}},
            "query parameter 'sort' has no property 'api_key' (its properties: desc, field)",
        ),
        (
            {"sort": {"field": {"nested": "x"}}},
            "query parameter 'sort' takes a string, number or boolean inside its object, not an object",
        ),
        (
            {"where": "text"},
            "query parameter 'where' takes an object, not a string, number or boolean",
        ),
        (
            {"X-Trace": ["a", "b"]},
            "header parameter 'X-Trace' takes a string, number or boolean, not an array",
        ),
        (
            {"session": {"a": "b"}},
            "cookie parameter 'session' takes a string, number or boolean, not an object",
        ),
        (
            {"tenant": {"a": "b"}},
            "path parameter 'tenant' takes a string, number or boolean, not an object",
        ),
    ],
    ids=lambda value: next(iter(value)) if isinstance(value, dict) else None,
)
async def test_a_value_its_schema_does_not_declare_is_refused(arguments, message):
    sent: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(200, json={})

    transport = httpx.MockTransport(answer)
    async with httpx.AsyncClient(transport=transport, base_url="http://api.test") as http:
        app = McpServerApp.from_openapi(DOCUMENT, client=http)
        async with asyncio.timeout(10), connected(app) as client:
            result = await client.call_tool("user", {**USER, **arguments})
    assert result.is_error and result.content[0].text == message
    assert sent == []


async def test_a_clashing_parameter_is_named_with_its_argument():
    async with bridged_echo() as (client, echo):
        result = await client.call_tool("thing", {"id__path": "1", "id__query": ["x"]})
    assert result.is_error and result.content[0].text == (
        "query parameter 'id' (argument 'id__query') takes a string, number or boolean, "
        "not an array"
    )
    assert echo.seen == []


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"tenant": ""}, "path parameter 'tenant' cannot be empty"),
        ({"tenant": "  "}, "path parameter 'tenant' cannot be empty"),
        ({"id": ""}, "path parameter 'id' cannot be empty"),
        ({"tenant": "."}, "path parameter 'tenant' cannot make the path segment '.'"),
        ({"tenant": ".."}, "path parameter 'tenant' cannot make the path segment '..'"),
    ],
)
async def test_a_path_value_never_removes_a_segment(arguments, message):
    """``tenant=""`` sent ``GET /api/5``: ``//users/5`` is a host and a path to httpx."""
    async with bridged_echo() as (client, echo):
        result = await client.call_tool("user", {**USER, **arguments})
    assert result.is_error and result.content[0].text == message
    assert echo.seen == []


async def test_styled_path_values_that_make_a_dot_segment_are_refused():
    async with bridged_echo() as (client, echo):
        empty_label = await client.call_tool("file", {"name": "n", "label": [], "matrix": ["m"]})
        dot_label = await client.call_tool("file", {"name": "n", "label": ["."], "matrix": ["m"]})
        blank_list = await client.call_tool("file", {"name": "n", "label": ["l"], "matrix": []})
    assert [r.content[0].text for r in (empty_label, dot_label, blank_list)] == [
        "path parameter 'label' cannot be empty",
        "path parameter 'label' cannot make the path segment '..'",
        "path parameter 'matrix' cannot be empty",
    ]
    assert echo.seen == []


async def test_path_values_are_percent_encoded_into_their_own_segment():
    async with bridged_echo() as (client, echo):
        for tenant in ("a/b", "../admin", "x?y=1", "#top", "%2E%2E", "a b", "..."):
            result = await client.call_tool("user", {**USER, "tenant": tenant})
            assert not result.is_error, result.content[0].text
        await client.call_tool("file", {"name": "n", "label": ["..", "x"], "matrix": [".."]})
    assert [seen["path"] for seen in echo.seen] == [
        "/api/a%2Fb/users/5",
        "/api/..%2Fadmin/users/5",
        "/api/x%3Fy%3D1/users/5",
        "/api/%23top/users/5",
        "/api/%252E%252E/users/5",
        "/api/a%20b/users/5",
        "/api/.../users/5",
        "/api/files/n/.%2E%2E,x/;matrix=%2E%2E",
    ]
    assert all(seen["query"] == "" for seen in echo.seen)


async def test_a_path_that_does_not_begin_with_a_slash_is_left_out(caplog):
    """Put after ``http://127.0.0.1:PORT``, ``{port}/items`` with ``port="0"`` sent the
    request to port ``PORT0``: an argument chose the host and port."""
    echo = Echo()
    document = {
        "openapi": "3.1.0",
        "info": {"title": "Slashless", "version": "1"},
        "paths": {
            "{port}/items": {
                "get": {
                    "operationId": "items",
                    "parameters": [path("port", STRING)],
                    "responses": OK,
                }
            },
            "/ok": {"get": {"operationId": "ok", "responses": OK}},
        },
    }
    async with asyncio.timeout(30), serve_asgi(echo) as api_url, httpx.AsyncClient() as http:
        document["servers"] = [{"url": api_url}]
        app = McpServerApp.from_openapi(document, client=http)
        assert [tool["name"] for tool in app.catalog.tool_wire_list()] == ["ok"]
        assert "GET {port}/items left out" in caplog.text and "begin with '/'" in caplog.text
        async with connected(app) as client:
            assert not (await client.call_tool("ok", {})).is_error
    assert [seen["path"] for seen in echo.seen] == ["/ok"]


@pytest.mark.parametrize("value", ["a\r\nX-Injected: 1", "a\nb", "a\x00b", "café"])
async def test_a_header_value_a_header_cannot_hold_is_refused_naming_it(value):
    """CR, LF and other control characters failed in httpx's HTTP/1.1 writer (``GET
    /{tenant}/users/{id} failed: LocalProtocolError``) and non-ASCII text raised out of the
    tool (``'ascii' codec can't encode``), logged as a crash."""
    async with bridged_echo() as (client, echo):
        result = await client.call_tool("user", {**USER, "X-Trace": value})
    assert result.is_error
    assert result.content[0].text == (
        "header parameter 'X-Trace' can hold only printable ASCII characters, spaces and tabs"
    )
    assert echo.seen == []
