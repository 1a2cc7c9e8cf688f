"""What an OpenAPI operation becomes and how it is called, apart from any app: the
options of the bridge, the record of each bridged operation, the caller that makes an
operation's HTTP requests, and the base URL those go to. ``mcpkit.server._openapi`` puts
them on an ``McpServerApp``."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypedDict

import httpx

from mcpkit._exceptions import InternalError, InvalidParamsError
from mcpkit.openapi._document import OpenApiDocument
from mcpkit.openapi._operations import OpenApiOperation
from mcpkit.openapi._plans import OperationPlan
from mcpkit.openapi._requests import build_request
from mcpkit.openapi._responses import network_error_result, resource_value, send, tool_result
from mcpkit.openapi._routes import RouteMap


class CallHeaders(Protocol):
    """What a call is served with (a tool's context): the MCP request's headers, None off
    HTTP."""

    @property
    def headers(self) -> Mapping[str, str] | None: ...


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

    def _headers(self, ctx: CallHeaders | None) -> list[tuple[str, str]]:
        """The forwarded headers of the MCP request ``ctx`` serves (none off HTTP)."""
        incoming = ctx.headers if ctx is not None else None
        if not incoming or not self.forward_headers:
            return []
        lowered = {name.lower(): value for name, value in incoming.items()}
        return [(name, lowered[name]) for name in sorted(self.forward_headers) if name in lowered]

    def request(self, arguments: Mapping[str, Any], ctx: CallHeaders | None) -> httpx.Request:
        """The request for ``arguments``; ``InvalidParamsError`` when one is missing."""
        return build_request(
            self.client,
            self.plan,
            arguments,
            base_url=self.base_url,
            headers=self._headers(ctx),
        )

    async def call_tool(
        self, arguments: Mapping[str, Any], ctx: CallHeaders | None
    ) -> dict[str, Any]:
        """The ``CallToolResult`` of calling the operation with ``arguments``."""
        try:
            request = self.request(arguments, ctx)
        except InvalidParamsError as exc:
            # As for any tool: arguments its input schema refuses are the tool's error, which
            # the model reads and can correct (tools, "Error Handling").
            return {"content": [{"type": "text", "text": exc.message}], "isError": True}
        try:
            api = await send(self.client, request, self.max_response_bytes)
        except httpx.HTTPError as exc:
            return network_error_result(request, exc)
        return tool_result(self.plan, api)

    async def read_resource(
        self, uri: str, arguments: Mapping[str, Any], ctx: CallHeaders | None
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


def operation_description(operation: OpenApiOperation) -> str | None:
    return operation.description or operation.summary


def api_base_url(
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


def first_rule_excludes(operation: OpenApiOperation, route_maps: Sequence[RouteMap]) -> bool:
    rule = next((rule for rule in route_maps if rule.matches(operation)), None)
    return rule is not None and rule.kind == "exclude"


__all__ = [
    "METHOD_ANNOTATIONS",
    "BridgedRoute",
    "CallHeaders",
    "OpenApiOptions",
    "OperationCaller",
    "api_base_url",
    "first_rule_excludes",
    "operation_description",
]
