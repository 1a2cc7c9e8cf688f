"""``McpServerApp.from_asgi``: the petstore called in-process (no sockets), its document
from ``app.openapi()`` or fetched from a path, its lifespan run inside the MCP app's (state
included), default headers; and a plain Starlette app that serves its own document."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from mcpkit import McpServerApp
from tests.conftest import connected
from tests.openapi.petstore import make_petstore


async def call(app: McpServerApp, name: str, arguments: dict[str, Any]) -> Any:
    async with asyncio.timeout(10), connected(app) as client:
        return await client.call_tool(name, arguments)


async def test_the_petstore_in_process_with_its_lifespan():
    petstore = make_petstore()
    app = McpServerApp.from_asgi(petstore)
    assert app.needs_startup  # the petstore's lifespan runs with the MCP app's
    assert petstore.state.events == []
    async with asyncio.timeout(10), connected(app) as client:  # starts and stops the app
        assert petstore.state.events == ["startup"]
        greeting = await client.call_tool("greeting", {})
        assert greeting.structured_content == {"greeting": "hello from the lifespan"}
        created = await client.call_tool("create_pet", {"name": "Bo"})
        assert created.structured_content == {"id": 4, "name": "Bo", "tag": None}
        gone = await client.call_tool("get_pet", {"pet_id": 99})
        assert gone.is_error and gone.structured_content["status"] == 404
    assert petstore.state.events == ["startup", "shutdown"]


async def test_without_run_lifespan_the_app_starts_nothing():
    petstore = make_petstore()
    app = McpServerApp.from_asgi(petstore, run_lifespan=False)
    assert not app.needs_startup
    greeting = await call(app, "greeting", {})
    assert greeting.structured_content == {"greeting": "no lifespan"}
    assert petstore.state.events == []


async def test_the_document_can_be_fetched_from_a_path_and_headers_go_along():
    app = McpServerApp.from_asgi(
        make_petstore(),
        openapi_path="/openapi.json",
        headers={"Authorization": "Bearer in-process"},
        name="pets",
        run_lifespan=False,
    )
    assert app.name == "pets"
    who = await call(app, "who_am_i", {"x-request-id": "r"})
    assert who.structured_content == {"request_id": "r", "authorization": "Bearer in-process"}


def starlette_app() -> Starlette:
    document = {
        "openapi": "3.1.0",
        "info": {"title": "Echo", "version": "1"},
        "paths": {
            "/echo/{word}": {
                "get": {
                    "operationId": "echo",
                    "parameters": [
                        {
                            "name": "word",
                            "in": "path",
                            "required": True,
                            "schema": {"type": "string"},
                        },
                        {"name": "times", "in": "query", "schema": {"type": "integer"}},
                    ],
                    "responses": {
                        "200": {
                            "description": "the word, repeated",
                            "content": {
                                "application/json": {
                                    "schema": {
                                        "type": "object",
                                        "properties": {"echo": {"type": "string"}},
                                        "required": ["echo"],
                                    }
                                }
                            },
                        }
                    },
                }
            }
        },
    }

    async def spec(request: Request) -> JSONResponse:
        return JSONResponse(document)

    async def echo(request: Request) -> JSONResponse:
        times = int(request.query_params.get("times", "1"))
        return JSONResponse({"echo": " ".join([request.path_params["word"]] * times)})

    return Starlette(routes=[Route("/spec.json", spec), Route("/echo/{word}", echo)])


async def test_a_starlette_app_serving_its_own_document():
    app = McpServerApp.from_asgi(starlette_app(), openapi_path="/spec.json")
    assert app.name == "Echo"
    echoed = await call(app, "echo", {"word": "hi there", "times": 2})
    assert echoed.structured_content == {"echo": "hi there hi there"}


def test_a_document_path_that_is_not_there_is_an_http_error():
    with pytest.raises(httpx.HTTPStatusError):
        McpServerApp.from_asgi(starlette_app(), openapi_path="/missing.json")


async def test_an_app_without_lifespan_support_runs_without_one():
    inner = starlette_app()

    async def no_lifespan(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            raise RuntimeError("lifespan not supported")
        await inner(scope, receive, send)

    app = McpServerApp.from_asgi(no_lifespan, openapi_path="/spec.json")
    echoed = await call(app, "echo", {"word": "ok"})
    assert echoed.structured_content == {"echo": "ok"}


async def test_a_failed_startup_is_an_error():
    inner = starlette_app()

    async def failing(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await receive()
            await send({"type": "lifespan.startup.failed", "message": "no database"})
            return
        await inner(scope, receive, send)

    app = McpServerApp.from_asgi(failing, openapi_path="/spec.json")
    with pytest.raises(RuntimeError, match="the ASGI app failed to start: no database"):
        await app.start()
