"""Tool arguments into HTTP requests (path escaping, query styles, headers, cookies, JSON /
form / text bodies, the base URL) and HTTP responses into tool results (JSON, text, images,
bytes, errors, network failures, the size bound). The API here is an
``httpx.MockTransport`` that records each request."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from mcpkit import McpServerApp
from tests.conftest import connected

Handler = Callable[[httpx.Request], httpx.Response]


def param(name: str, where: str, schema: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"name": name, "in": where, "schema": schema, **extra}


ARRAY = {"type": "array", "items": {"type": "string"}}
OBJECT = {"type": "object", "additionalProperties": {"type": "string"}}
OK = {"200": {"description": "ok"}}


def spec(**paths: Any) -> dict[str, Any]:
    return {
        "openapi": "3.1.0",
        "info": {"title": "Styles", "version": "1"},
        "servers": [{"url": "https://styles.test/api"}],
        "paths": paths,
    }


STYLES = spec(
    **{
        "/files/{path}/{label}/{matrix}": {
            "get": {
                "operationId": "styles",
                "parameters": [
                    param("path", "path", {"type": "string"}, required=True),
                    param("label", "path", ARRAY, required=True, style="label"),
                    param("matrix", "path", ARRAY, required=True, style="matrix", explode=True),
                    param("tags", "query", ARRAY),
                    param("ids", "query", ARRAY, explode=False),
                    param("pipes", "query", ARRAY, style="pipeDelimited", explode=False),
                    param("filter", "query", OBJECT, style="deepObject", explode=True),
                    param("spread", "query", OBJECT),
                    param("flag", "query", {"type": "boolean"}),
                    param("skipped", "query", {"type": "string"}),
                    {
                        "name": "where",
                        "in": "query",
                        "content": {"application/json": {"schema": OBJECT}},
                    },
                    param("X-Trace", "header", ARRAY),
                    param("session", "cookie", {"type": "string"}),
                    param("theme", "cookie", {"type": "string"}),
                ],
                "responses": OK,
            }
        },
        "/forms": {
            "post": {
                "operationId": "form",
                "requestBody": {
                    "content": {
                        "application/x-www-form-urlencoded": {
                            "schema": {
                                "type": "object",
                                "properties": {"a": {"type": "string"}, "b": ARRAY},
                            }
                        }
                    }
                },
                "responses": OK,
            }
        },
        "/notes": {
            "put": {
                "operationId": "note",
                "requestBody": {
                    "required": True,
                    "content": {"text/markdown": {"schema": {"type": "string"}}},
                },
                "responses": OK,
            }
        },
        "/uploads": {
            "post": {
                "operationId": "upload",
                "requestBody": {"content": {"multipart/form-data": {"schema": OBJECT}}},
                "responses": OK,
            }
        },
        "/anything": {"get": {"operationId": "anything", "responses": OK}},
    }
)


class Recorder:
    """A mock API: answers with ``reply`` and keeps every request."""

    def __init__(self, reply: Handler | None = None) -> None:
        self.requests: list[httpx.Request] = []
        self.reply = reply or (lambda request: httpx.Response(200, json={"ok": True}))

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return self.reply(request)

    def client(self, **kwargs: Any) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=httpx.MockTransport(self), **kwargs)


async def call(app: McpServerApp, name: str, arguments: dict[str, Any]) -> Any:
    async with asyncio.timeout(10), connected(app) as client:
        return await client.call_tool(name, arguments)


async def test_parameters_are_serialized_by_style_and_escaped():
    api = Recorder()
    async with api.client() as http:
        app = McpServerApp.from_openapi(STYLES, client=http)
        result = await call(
            app,
            "styles",
            {
                "path": "a/b c?",
                "label": ["x", "y"],
                "matrix": ["1", "2"],
                "tags": ["red", "blue"],
                "ids": [1, 2, 3],
                "pipes": ["p", "q"],
                "filter": {"kind": "cat", "age": "3"},
                "spread": {"sort": "name"},
                "flag": True,
                "skipped": None,
                "where": {"k": "v"},
                "X-Trace": ["t1", "t2"],
                "session": "s 1",
                "theme": "dark",
            },
        )
    assert not result.is_error and result.structured_content == {"ok": True}
    (request,) = api.requests
    assert request.method == "GET"
    # the document's server URL is the base (no base_url on the client)
    assert request.url.raw_path.decode().split("?")[0] == (
        "/api/files/a%2Fb%20c%3F/.x,y/;matrix=1;matrix=2"
    )
    assert request.url.host == "styles.test"
    assert list(request.url.params.multi_items()) == [
        ("tags", "red"),
        ("tags", "blue"),
        ("ids", "1,2,3"),
        ("pipes", "p|q"),
        ("filter[kind]", "cat"),
        ("filter[age]", "3"),
        ("sort", "name"),
        ("flag", "true"),
        ("where", '{"k":"v"}'),
    ]
    assert request.headers["x-trace"] == "t1,t2"
    assert request.headers["cookie"] == "session=s%201; theme=dark"


async def test_a_dot_dot_path_value_cannot_climb_to_another_endpoint():
    """A segment ``..`` (or ``%2E%2E``, to a server that decodes first) is refused; inside
    a longer segment, a ``..`` item is sent as ``%2E%2E``."""
    api = Recorder()
    async with api.client(base_url="http://h.test") as http:
        app = McpServerApp.from_openapi(STYLES, client=http)
        refused = await call(app, "styles", {"path": "..", "label": ["x"], "matrix": ["m"]})
        await call(app, "styles", {"path": "p", "label": [".."], "matrix": [".."]})
    assert refused.is_error
    assert refused.content[0].text == "path parameter 'path' cannot make the path segment '..'"
    (request,) = api.requests
    assert request.url.raw_path == b"/files/p/.%2E%2E/;matrix=%2E%2E"


async def test_form_and_text_bodies_and_an_unsupported_one_is_left_out(caplog):
    api = Recorder()
    async with api.client(base_url="http://other.test/v2") as http:
        app = McpServerApp.from_openapi(STYLES, client=http)
        assert "upload" not in {tool["name"] for tool in app.catalog.tool_wire_list()}
        assert "POST /uploads left out" in caplog.text and "multipart/form-data" in caplog.text
        await call(app, "form", {"a": "1", "b": ["x", "y"]})
        await call(app, "note", {"body": "# Title"})
    form, note = api.requests
    assert str(form.url) == "http://other.test/v2/forms"  # the client's base URL wins
    assert form.headers["content-type"] == "application/x-www-form-urlencoded"
    assert form.content == b"a=1&b=x&b=y"
    assert note.method == "PUT" and note.content == b"# Title"
    assert note.headers["content-type"] == "text/markdown"


async def test_client_default_headers_go_along_and_header_parameters_override_them():
    api = Recorder()
    headers = {"Authorization": "Bearer api-key", "X-Trace": "default"}
    async with api.client(base_url="http://h.test", headers=headers) as http:
        app = McpServerApp.from_openapi(STYLES, client=http)
        await call(app, "anything", {})
        await call(
            app, "styles", {"path": "p", "label": ["l"], "matrix": ["m"], "X-Trace": ["mine"]}
        )
    plain, styled = api.requests
    assert plain.headers["authorization"] == "Bearer api-key"
    assert styled.headers["authorization"] == "Bearer api-key"
    assert styled.headers["x-trace"] == "mine"


async def test_a_missing_required_argument_is_the_tools_error_and_nothing_is_sent():
    """As for every tool (tools, "Error Handling"): an isError result the model reads."""
    api = Recorder()
    async with api.client(base_url="http://h.test") as http:
        app = McpServerApp.from_openapi(STYLES, client=http)
        result = await call(app, "styles", {"path": "p", "label": None})
    assert result.is_error
    assert result.content[0].text == "missing required arguments: label, matrix"
    assert api.requests == []


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        (
            httpx.Response(200, json=[1, 2]),
            {"content": [{"type": "text", "text": "[1,2]"}]},  # no output schema: text only
        ),
        (
            httpx.Response(200, text="plain words"),
            {"content": [{"type": "text", "text": "plain words"}]},
        ),
        (
            httpx.Response(200, content=b"\x89PNG", headers={"content-type": "image/png"}),
            {"content": [{"type": "image", "data": "iVBORw==", "mimeType": "image/png"}]},
        ),
        (
            httpx.Response(200, content=b"\x00\x01", headers={"content-type": "application/zip"}),
            {
                "content": [
                    {
                        "type": "resource",
                        "resource": {
                            "uri": "http://h.test/anything",
                            "blob": "AAE=",
                            "mimeType": "application/zip",
                        },
                    }
                ]
            },
        ),
        (httpx.Response(204), {"content": [{"type": "text", "text": "HTTP 204 No Content"}]}),
        (
            httpx.Response(409, text="taken"),
            {
                "content": [
                    {"type": "text", "text": "HTTP 409 Conflict from GET /anything: taken"}
                ],
                "structuredContent": {"status": 409, "body": "taken"},
                "isError": True,
            },
        ),
    ],
    ids=["json-array", "text", "image", "bytes", "no-content", "error-text"],
)
async def test_responses_become_results(response, expected):
    api = Recorder(lambda request: response)
    async with api.client(base_url="http://h.test") as http:
        app = McpServerApp.from_openapi(STYLES, client=http)
        async with connected(app) as client:
            raw = await client.request("tools/call", {"name": "anything", "arguments": {}})
    assert raw == expected


async def test_network_failures_and_oversized_responses_are_error_results():
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    async with Recorder(refuse).client(base_url="http://h.test") as http:
        app = McpServerApp.from_openapi(STYLES, client=http)
        refused = await call(app, "anything", {})
    assert refused.is_error
    assert refused.content[0].text == "GET /anything failed: ConnectError: connection refused"

    big = Recorder(lambda request: httpx.Response(200, content=b"x" * 2048))
    async with big.client(base_url="http://h.test") as http:
        app = McpServerApp.from_openapi(STYLES, client=http, max_response_bytes=1024)
        too_big = await call(app, "anything", {})
    assert too_big.is_error
    assert "larger than 1024 bytes" in too_big.content[0].text


def test_without_any_base_url_the_bridge_refuses():
    document = {**STYLES, "servers": [{"url": "/relative"}]}
    with pytest.raises(ValueError, match="no base URL for the API"):
        McpServerApp.from_openapi(document, client=httpx.AsyncClient())
    app = McpServerApp.from_openapi(
        json.dumps(document), client=httpx.AsyncClient(), base_url="http://given.test"
    )
    assert app.name == "Styles" and app.version == "1"
