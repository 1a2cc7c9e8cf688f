"""Putting an OpenAPI document's operations on an ``McpServerApp``: ``register_openapi``
(onto an app you have), and what ``McpServerApp.from_openapi`` / ``from_asgi`` call."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypedDict, TypeVar, Unpack

import httpx

from mcpkit._exceptions import InternalError, InvalidParamsError
from mcpkit.openapi._asgi import AsgiApp, InProcessApp, fetch_document
from mcpkit.openapi._document import OpenApiDocument, OpenApiSource, load_document
from mcpkit.openapi._operations import OpenApiOperation, read_operations
from mcpkit.openapi._plans import OperationPlan, UnsupportedOperation, plan_operation
from mcpkit.openapi._requests import build_request
from mcpkit.openapi._responses import (
    DEFAULT_MAX_RESPONSE_BYTES,
    network_error_result,
    resource_value,
    send,
    tool_result,
)
from mcpkit.openapi._routes import (
    RouteMap,
    choose_route,
    default_prefix,
    resource_uri,
    route_name,
    template_uri,
    unique,
)
from mcpkit.openapi._schemas import DEFAULT_MAX_SCHEMA_NODES
from mcpkit.server._context import McpToolContext
from mcpkit.server._results import error_result

if TYPE_CHECKING:
    from mcpkit.server._app import McpServerApp

logger = logging.getLogger("mcpkit.openapi")

AppT = TypeVar("AppT", bound="McpServerApp")

#: Tool annotations by HTTP method (RFC 9110: GET, HEAD and OPTIONS are safe; PUT and
#: DELETE idempotent).
METHOD_ANNOTATIONS: dict[str, dict[str, Any]] = {
    "GET": {"readOnlyHint": True},
    "HEAD": {"readOnlyHint": True},
    "OPTIONS": {"readOnlyHint": True},
    "PUT": {"idempotentHint": True},
    "DELETE": {"destructiveHint": True, "idempotentHint": True},
}


class OpenApiOptions(TypedDict, total=False):
    """Options of the OpenAPI bridge, the same for ``register_openapi``,
    ``McpServerApp.from_openapi`` and ``McpServerApp.from_asgi``.

    * ``route_maps``: the rules deciding what each operation becomes (``RouteMap``); none:
      every operation is a tool.
    * ``names``: MCP names by ``operationId`` (or ``"GET /pets/{petId}"``); they win over
      the route maps' ``name``.
    * ``forward_headers``: names of headers of the incoming MCP HTTP request to send on to
      the API (``["authorization"]``); case-insensitive; ignored on stdio.
    * ``resource_prefix``: what resource URIs start with (default ``openapi://<app name>``).
    * ``max_response_bytes``: the largest API response body read
      (``DEFAULT_MAX_RESPONSE_BYTES``, 16 MiB).
    * ``max_schema_nodes``: the schema objects a tool's input schema (and its output
      schema) holds before further ``$ref``s are shared through ``$defs`` instead of
      inlined (``DEFAULT_MAX_SCHEMA_NODES``, 2000).
    """

    route_maps: Sequence[RouteMap]
    names: Mapping[str, str]
    forward_headers: Iterable[str]
    resource_prefix: str
    max_response_bytes: int
    max_schema_nodes: int


@dataclass(frozen=True, slots=True)
class BridgedRoute:
    """What one operation became: its kind, its MCP name, and for a resource its URI (for
    a template, the URI template)."""

    operation: OpenApiOperation
    kind: Literal["tool", "resource", "resource_template"]
    name: str
    uri: str | None = None


class OperationCaller:
    """Makes the HTTP requests of one operation, for its tool or resource."""

    def __init__(
        self,
        client: httpx.AsyncClient,
        plan: OperationPlan,
        *,
        base_url: str | None,
        forward_headers: frozenset[str],
        max_response_bytes: int,
    ) -> None:
        self.client = client
        self.plan = plan
        self.base_url = base_url
        self.forward_headers = forward_headers
        self.max_response_bytes = max_response_bytes

    def _headers(self, ctx: McpToolContext | None) -> list[tuple[str, str]]:
        """The forwarded headers of the MCP request ``ctx`` serves (none off HTTP)."""
        incoming = ctx.headers if ctx is not None else None
        if not incoming or not self.forward_headers:
            return []
        lowered = {name.lower(): value for name, value in incoming.items()}
        return [(name, lowered[name]) for name in sorted(self.forward_headers) if name in lowered]

    def request(self, arguments: Mapping[str, Any], ctx: McpToolContext | None) -> httpx.Request:
        """The request for ``arguments``; ``InvalidParamsError`` when one is missing."""
        return build_request(
            self.client,
            self.plan,
            arguments,
            base_url=self.base_url,
            headers=self._headers(ctx),
        )

    async def call_tool(
        self, arguments: Mapping[str, Any], ctx: McpToolContext | None
    ) -> dict[str, Any]:
        """The ``CallToolResult`` of calling the operation with ``arguments``."""
        try:
            request = self.request(arguments, ctx)
        except InvalidParamsError as exc:
            # As for any tool: arguments its input schema refuses are the tool's error, which
            # the model reads and can correct (tools, "Error Handling").
            return error_result(exc.message)
        try:
            api = await send(self.client, request, self.max_response_bytes)
        except httpx.HTTPError as exc:
            return network_error_result(request, exc)
        return tool_result(self.plan, api)

    async def read_resource(
        self, uri: str, arguments: Mapping[str, Any], ctx: McpToolContext | None
    ) -> dict[str, Any]:
        """The contents of resource ``uri`` (text or blob, with its mime type)."""
        request = self.request(arguments, ctx)
        try:
            api = await send(self.client, request, self.max_response_bytes)
        except httpx.HTTPError as exc:
            raise InternalError(
                f"{request.method} {request.url.path} failed: {type(exc).__name__}: {exc}"
            ) from None
        return resource_value(uri, api)


def _description(operation: OpenApiOperation) -> str | None:
    return operation.description or operation.summary


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


def _base_url(
    client: httpx.AsyncClient, document: OpenApiDocument, given: str | None
) -> str | None:
    """What request paths are put after: ``given``; else nothing (the client's
    ``base_url`` applies); else the document's first absolute ``servers`` URL."""
    if given:
        return given
    if str(client.base_url):
        return None
    server = document.server_url()
    if server and server.startswith(("http://", "https://")):
        return server
    raise ValueError(
        "no base URL for the API: give the httpx client a base_url, pass base_url=..., "
        "or list an absolute URL in the document's servers"
    )


def _first_rule_excludes(operation: OpenApiOperation, route_maps: Sequence[RouteMap]) -> bool:
    rule = next((rule for rule in route_maps if rule.matches(operation)), None)
    return rule is not None and rule.kind == "exclude"


def register_openapi(
    app: McpServerApp,
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
    api_base = _base_url(client, document, base_url)
    tool_names = {entry.name for entry in app.catalog.list_tools()}
    resource_names: set[str] = set()
    routes: list[BridgedRoute] = []
    for operation in read_operations(document):
        try:
            plan = plan_operation(document, operation, max_schema_nodes=max_nodes)
        except UnsupportedOperation as exc:
            if not _first_rule_excludes(operation, route_maps):
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
                description=_description(operation),
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
            description=_description(operation),
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
