"""Putting an OpenAPI document's operations on an app: ``register_openapi`` (onto an app
you have), and what ``McpServerApp.from_openapi`` / ``from_asgi`` call. What an operation
becomes and how it is called is ``_bridge``'s."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Mapping
from typing import Any, Protocol, TypeVar, Unpack

import httpx

from mcpkit.openapi._asgi import AsgiApp, InProcessApp, fetch_document
from mcpkit.openapi._bridge import (
    METHOD_ANNOTATIONS,
    BridgedRoute,
    OpenApiOptions,
    OperationCaller,
    api_base_url,
    first_rule_excludes,
    operation_description,
)
from mcpkit.openapi._document import OpenApiDocument, OpenApiSource, load_document
from mcpkit.openapi._operations import read_operations
from mcpkit.openapi._plans import UnsupportedOperation, plan_operation
from mcpkit.openapi._responses import DEFAULT_MAX_RESPONSE_BYTES
from mcpkit.openapi._routes import (
    choose_route,
    default_prefix,
    resource_uri,
    route_name,
    template_uri,
    unique,
)
from mcpkit.openapi._schemas import DEFAULT_MAX_SCHEMA_NODES
from mcpkit.server._context import McpToolContext

logger = logging.getLogger("mcpkit.openapi")


class OpenApiTarget(Protocol):
    """What the bridge registers onto: an ``McpServerApp`` (its name, catalog, entry
    builder, resource decorator and lifespans). The app's class sits above this package
    (its ``from_openapi`` calls here), so the bridge names only what it uses."""

    name: str
    catalog: Any
    builder: Any

    def __init__(
        self,
        *,
        name: str | None = ...,
        version: str | None = ...,
        title: str | None = ...,
        instructions: str | None = ...,
    ) -> None: ...

    def resource(self, uri: str, /, **options: Any) -> Any: ...

    def lifespan(self, fn: Any) -> Any: ...


AppT = TypeVar("AppT", bound=OpenApiTarget)


def _tool_function(caller: OperationCaller, name: str) -> Any:
    async def call_operation(_mcpkit_context: McpToolContext, **arguments: Any) -> Any:
        return await caller.call_tool(arguments, _mcpkit_context)

    call_operation.__name__ = call_operation.__qualname__ = name
    return call_operation


def _resource_function(caller: OperationCaller, uri: str, name: str) -> Any:
    async def read_operation(_mcpkit_context: McpToolContext) -> Any:
        return await caller.read_resource(uri, {}, _mcpkit_context)

    read_operation.__name__ = read_operation.__qualname__ = name
    return read_operation


def _template_function(caller: OperationCaller, variables: Mapping[str, str], name: str) -> Any:
    async def read_operation(_mcpkit_context: McpToolContext, uri: str, **values: Any) -> Any:
        arguments = {variables[var]: value for var, value in values.items() if var in variables}
        return await caller.read_resource(uri, arguments, _mcpkit_context)

    read_operation.__name__ = read_operation.__qualname__ = name
    return read_operation


def register_openapi(
    app: OpenApiTarget,
    spec: OpenApiSource | OpenApiDocument,
    *,
    client: httpx.AsyncClient,
    base_url: str | None = None,
    **options: Unpack[OpenApiOptions],
) -> list[BridgedRoute]:
    """Register the operations of an OpenAPI 3.0/3.1 document on ``app`` (live: connected
    clients hear ``list_changed``), and return what each became.

    Calls go through ``client`` (its base URL, default headers, auth, timeouts apply);
    ``base_url`` replaces the client's base URL for these requests. Without either, the
    document's first absolute ``servers`` URL is used; with none of the three, a
    ``ValueError``. The ``options`` are ``OpenApiOptions``. An operation the bridge cannot
    call (a request body only in multipart, say) is left out with a logged warning.
    """
    document = load_document(spec)
    route_maps = tuple(options.get("route_maps", ()))
    names = dict(options.get("names", {}))
    forward = frozenset(name.lower() for name in options.get("forward_headers", ()))
    prefix = options.get("resource_prefix") or default_prefix(app.name)
    max_bytes = options.get("max_response_bytes", DEFAULT_MAX_RESPONSE_BYTES)
    max_nodes = options.get("max_schema_nodes", DEFAULT_MAX_SCHEMA_NODES)
    api_base = api_base_url(client, document, base_url)
    tool_names = {entry.name for entry in app.catalog.list_tools()}
    resource_names: set[str] = set()
    routes: list[BridgedRoute] = []
    for operation in read_operations(document):
        try:
            plan = plan_operation(document, operation, max_schema_nodes=max_nodes)
        except UnsupportedOperation as exc:
            if not first_rule_excludes(operation, route_maps):
                logger.warning("OpenAPI %s %s left out: %s", operation.method, operation.path, exc)
            continue
        kind, rule = choose_route(plan, route_maps)
        if kind == "exclude":
            continue
        caller = OperationCaller(
            client, plan, base_url=api_base, forward_headers=forward, max_response_bytes=max_bytes
        )
        chosen = route_name(operation, rule, names)
        if kind == "tool":
            name = unique(chosen, tool_names)
            tool = app.builder.tool(
                _tool_function(caller, name),
                name=name,
                title=operation.summary,
                description=operation_description(operation),
                input_schema=plan.input_schema,
                output_schema=plan.output_schema,
                structured_output=plan.output_schema is not None,
                annotations=METHOD_ANNOTATIONS.get(operation.method),
                # The API checks the arguments, as a proxy's backend does: a missing one is
                # the bridge's isError result (OperationCaller), the rest the API's answer.
                check_arguments=False,
            )
            app.catalog.register_tool(tool)
            routes.append(BridgedRoute(operation, "tool", name))
            continue
        name = unique(chosen, resource_names)
        if kind == "resource":
            uri = resource_uri(prefix, operation)
            fn = _resource_function(caller, uri, name)
        else:
            uri, variables = template_uri(prefix, plan)
            fn = _template_function(caller, variables, name)
        app.resource(
            uri,
            name=name,
            title=operation.summary,
            description=operation_description(operation),
            mime_type=plan.response_media_type,
        )(fn)
        routes.append(BridgedRoute(operation, kind, name, uri))
    return routes


def _info_text(document: OpenApiDocument, key: str) -> str | None:
    value = document.info.get(key)
    return value if isinstance(value, str) and value.strip() else None


def app_from_openapi(
    cls: type[AppT],
    spec: OpenApiSource | OpenApiDocument,
    *,
    client: httpx.AsyncClient,
    base_url: str | None = None,
    name: str | None = None,
    version: str | None = None,
    title: str | None = None,
    instructions: str | None = None,
    **options: Unpack[OpenApiOptions],
) -> AppT:
    """``cls(...)`` serving the operations of ``spec`` (what ``McpServerApp.from_openapi``
    does). ``name``, ``version`` and ``instructions`` default to the document's
    ``info.title``, ``info.version`` and ``info.description``."""
    document = load_document(spec)
    app = cls(
        name=name or document.title or "openapi",
        version=version or _info_text(document, "version"),
        title=title,
        instructions=instructions or _info_text(document, "description"),
    )
    register_openapi(app, document, client=client, base_url=base_url, **options)
    return app


def app_from_asgi(
    cls: type[AppT],
    asgi_app: AsgiApp,
    *,
    base_url: str = "http://app",
    openapi_path: str | None = None,
    spec: OpenApiSource | OpenApiDocument | None = None,
    run_lifespan: bool = True,
    headers: Mapping[str, str] | None = None,
    name: str | None = None,
    version: str | None = None,
    title: str | None = None,
    instructions: str | None = None,
    **options: Unpack[OpenApiOptions],
) -> AppT:
    """``cls(...)`` serving the operations of an ASGI app, called in-process (what
    ``McpServerApp.from_asgi`` does).

    The document is ``spec`` when given; else ``asgi_app.openapi()`` when the app has it
    (FastAPI) and no ``openapi_path`` is given; else the JSON at ``openapi_path``
    (``/openapi.json``), fetched from the app in-process. Requests go to ``base_url`` (only
    the app sees it) with ``headers`` as default headers. With ``run_lifespan`` the app's
    ASGI lifespan runs inside the MCP app's (its start-up before the first request, its
    state in each request's scope); pass ``False`` when the app's lifespan runs anyway,
    such as when the MCP app is mounted inside that same app.
    """
    in_process = InProcessApp(asgi_app)
    if spec is None:
        maker = getattr(asgi_app, "openapi", None)
        if openapi_path is None and callable(maker):
            spec = maker()
        else:
            spec = fetch_document(asgi_app, base_url, openapi_path or "/openapi.json")
    assert spec is not None
    client = in_process.client(base_url, dict(headers) if headers else None)
    app = app_from_openapi(
        cls,
        spec,
        client=client,
        name=name,
        version=version,
        title=title,
        instructions=instructions,
        **options,
    )
    if run_lifespan:

        async def asgi_lifespan() -> AsyncIterator[None]:
            async with in_process.lifespan():
                yield

        app.lifespan(asgi_lifespan)
    return app


__all__ = ["app_from_asgi", "app_from_openapi", "register_openapi"]
