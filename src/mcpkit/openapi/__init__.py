"""The OpenAPI bridge: the operations of an HTTP API as MCP tools, resources and resource
templates.

``McpServerApp.from_openapi(spec, client=httpx.AsyncClient(base_url=...))`` serves an
OpenAPI 3.0 or 3.1 document's operations; ``McpServerApp.from_asgi(fastapi_app)`` does the
same for an ASGI app, in-process; ``register_openapi(app, spec, client=...)`` adds them to
an app you already have. ``RouteMap`` rules choose what each operation becomes. See
docs/openapi.md.
"""

from __future__ import annotations

from mcpkit.openapi._asgi import AsgiApp
from mcpkit.openapi._bridge import METHOD_ANNOTATIONS, BridgedRoute, OpenApiOptions
from mcpkit.openapi._document import OpenApiDocument, OpenApiSource, load_document
from mcpkit.openapi._factory import app_from_asgi, app_from_openapi, register_openapi
from mcpkit.openapi._operations import OpenApiOperation, OpenApiParameter, read_operations
from mcpkit.openapi._plans import BODY_ARGUMENT, OperationPlan, UnsupportedOperation, plan_operation
from mcpkit.openapi._responses import DEFAULT_MAX_RESPONSE_BYTES
from mcpkit.openapi._routes import GET_AS_RESOURCES, RouteKind, RouteMap
from mcpkit.openapi._schemas import (
    DEFAULT_MAX_SCHEMA_NODES,
    MAX_INLINE_DEPTH,
    MAX_SCHEMA_DEPTH,
    SchemaConverter,
)

__all__ = [
    "BODY_ARGUMENT",
    "DEFAULT_MAX_RESPONSE_BYTES",
    "DEFAULT_MAX_SCHEMA_NODES",
    "GET_AS_RESOURCES",
    "MAX_INLINE_DEPTH",
    "MAX_SCHEMA_DEPTH",
    "METHOD_ANNOTATIONS",
    "AsgiApp",
    "BridgedRoute",
    "OpenApiDocument",
    "OpenApiOperation",
    "OpenApiOptions",
    "OpenApiParameter",
    "OpenApiSource",
    "OperationPlan",
    "RouteKind",
    "RouteMap",
    "SchemaConverter",
    "UnsupportedOperation",
    "app_from_asgi",
    "app_from_openapi",
    "load_document",
    "plan_operation",
    "read_operations",
    "register_openapi",
]
