"""What one operation becomes on the MCP side: one input schema for all of its parameters
and its request body, which argument goes where in the HTTP request, and the output schema
of its successful JSON responses.

Argument names. A parameter is the argument of its own name; a JSON request body whose
schema is an object with ``properties`` gives one argument per property; any other body
(an array, a string, a ``oneOf``...) is the single argument ``body``. When a name is used
twice (a body property and a parameter, or two parameters in different locations, such as
``id`` in the path and ``id`` in the query), the body property keeps the plain name and each
parameter that shares it becomes ``<name>__<location>``: ``id__path``, ``id__query``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from mcpkit._exceptions import MCPError
from mcpkit.openapi._document import OpenApiDocument
from mcpkit.openapi._operations import OpenApiOperation, OpenApiParameter
from mcpkit.openapi._schemas import (
    DEFAULT_MAX_SCHEMA_NODES,
    SchemaConverter,
    SchemaTooDeep,
    is_object_schema,
)
from mcpkit.openapi._values import ValueShape, value_shape
from mcpkit.protocol._wrapped_results import wrapper_schema

#: The argument that carries a request body that is not an object with properties.
BODY_ARGUMENT = "body"

BodyEncoding = Literal["json", "form", "text"]


class UnsupportedOperation(MCPError, ValueError):
    """An operation the bridge cannot call (say, one whose body is only multipart)."""


@dataclass(frozen=True, slots=True)
class ArgumentBinding:
    """Where one tool argument goes in the HTTP request."""

    argument: str
    #: ``path``, ``query``, ``header``, ``cookie``: the parameter ``parameter``;
    #: ``body``: the whole body; ``body_property``: the body's property ``name``.
    location: Literal["path", "query", "header", "cookie", "body", "body_property"]
    name: str
    parameter: OpenApiParameter | None = None
    #: What values the parameter's schema declares (``None`` for the body).
    shape: ValueShape | None = None


@dataclass(frozen=True, slots=True)
class OperationPlan:
    """An operation's MCP schemas and how its arguments become a request."""

    operation: OpenApiOperation
    input_schema: dict[str, Any]
    arguments: tuple[ArgumentBinding, ...]
    required: tuple[str, ...]
    body_encoding: BodyEncoding | None = None
    body_media_type: str | None = None
    body_required: bool = False
    #: ``None`` unless every 2xx response is JSON with a schema.
    output_schema: dict[str, Any] | None = None
    #: The output schema wraps a non-object value as ``{"result": value}``.
    wraps_output: bool = False
    #: The media type of the first 2xx response (a resource's ``mimeType``).
    response_media_type: str | None = None


def _base_media_type(media_type: str) -> str:
    return media_type.split(";", 1)[0].strip().lower()


def is_json_media_type(media_type: str) -> bool:
    """``application/json``, ``application/<x>+json`` (and ``*/*``, which JSON serves)."""
    base = _base_media_type(media_type)
    return base in ("application/json", "*/*", "application/*") or base.endswith("+json")


def _pick_body(content: Mapping[str, Any]) -> tuple[BodyEncoding, str, Any]:
    """(encoding, media type, schema) of the request body form the bridge sends."""
    for media_type, media in content.items():
        if is_json_media_type(str(media_type)):
            return "json", "application/json", _schema_of(media)
    for media_type, media in content.items():
        if _base_media_type(str(media_type)) == "application/x-www-form-urlencoded":
            return "form", str(media_type), _schema_of(media)
    for media_type, media in content.items():
        if _base_media_type(str(media_type)).startswith("text/"):
            return "text", str(media_type), {"type": "string", **_described(media)}
    raise UnsupportedOperation(
        f"request body media types {sorted(map(str, content))} are not supported "
        "(JSON, form-urlencoded and text are)"
    )


def _schema_of(media: Any) -> Any:
    if isinstance(media, Mapping) and "schema" in media:
        return media["schema"]
    return {}


def _described(media: Any) -> dict[str, Any]:
    schema = _schema_of(media)
    if isinstance(schema, Mapping) and isinstance(schema.get("description"), str):
        return {"description": schema["description"]}
    return {}


def _is_property_body(schema: Any) -> bool:
    return (
        isinstance(schema, dict)
        and schema.get("type") == "object"
        and isinstance(schema.get("properties"), dict)
        and not any(key in schema for key in ("allOf", "anyOf", "oneOf", "$ref"))
    )


def _parameter_schema(converter: SchemaConverter, parameter: OpenApiParameter) -> Any:
    schema = converter.convert(parameter.schema)
    if isinstance(schema, dict):
        if parameter.description and "description" not in schema:
            schema = {**schema, "description": parameter.description}
        if parameter.deprecated:
            schema = {**schema, "deprecated": True}
    return schema


def plan_operation(
    document: OpenApiDocument,
    operation: OpenApiOperation,
    *,
    max_schema_nodes: int = DEFAULT_MAX_SCHEMA_NODES,
) -> OperationPlan:
    """The plan of ``operation``; ``UnsupportedOperation`` when it cannot be called.
    ``max_schema_nodes`` bounds its input schema and its output schema (each):
    ``SchemaConverter``."""
    try:
        return _plan(document, operation, max_schema_nodes)
    except SchemaTooDeep as exc:
        raise UnsupportedOperation(str(exc)) from None


def _plan(
    document: OpenApiDocument, operation: OpenApiOperation, max_schema_nodes: int
) -> OperationPlan:
    if not operation.path.startswith("/"):
        # Put after a base URL without a path, the path's first value would extend the
        # host or the port: an argument would choose where the request goes.
        raise UnsupportedOperation(
            f"its path {operation.path!r} does not begin with '/' (OpenAPI requires it)"
        )
    converter = SchemaConverter(document, "request", max_schema_nodes=max_schema_nodes)
    properties: dict[str, Any] = {}
    required: list[str] = []
    bindings: list[ArgumentBinding] = []

    body_encoding: BodyEncoding | None = None
    body_media_type: str | None = None
    body_required = False
    body_names: list[str] = []
    body_schema: Any = None
    body = operation.request_body
    content = body.get("content") if body is not None else None
    if body is not None and isinstance(content, Mapping) and content:
        body_encoding, body_media_type, raw_schema = _pick_body(content)
        body_required = body.get("required") is True
        body_schema = converter.convert(raw_schema)
        if isinstance(body_schema, dict) and not body_schema.get("description"):
            if isinstance(body.get("description"), str):
                body_schema = {**body_schema, "description": body["description"]}
        if _is_property_body(body_schema) and body_encoding != "text":
            body_names = list(body_schema["properties"])
        else:
            body_names = [BODY_ARGUMENT]

    counts = Counter(parameter.name for parameter in operation.parameters)
    taken = set(body_names)
    for parameter in operation.parameters:
        argument = parameter.name
        if argument in body_names or counts[argument] > 1:
            argument = f"{parameter.name}__{parameter.location}"
        while argument in taken:
            argument += "_"
        taken.add(argument)
        schema = properties[argument] = _parameter_schema(converter, parameter)
        if parameter.required:
            required.append(argument)
        shape = value_shape(schema, converter.defs)
        bindings.append(
            ArgumentBinding(argument, parameter.location, parameter.name, parameter, shape)
        )

    if body_names == [BODY_ARGUMENT]:
        properties[BODY_ARGUMENT] = body_schema
        if body_required:
            required.append(BODY_ARGUMENT)
        bindings.append(ArgumentBinding(BODY_ARGUMENT, "body", BODY_ARGUMENT))
    elif body_names:
        body_required_names = body_schema.get("required") if body_required else None
        for name in body_names:
            properties[name] = body_schema["properties"][name]
            if isinstance(body_required_names, list) and name in body_required_names:
                required.append(name)
            bindings.append(ArgumentBinding(name, "body_property", name))

    input_schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        input_schema["required"] = required
    output_schema, wraps, media_type = _output(document, operation, max_schema_nodes)
    return OperationPlan(
        operation=operation,
        input_schema=converter.finish(input_schema),
        arguments=tuple(bindings),
        required=tuple(required),
        body_encoding=body_encoding,
        body_media_type=body_media_type,
        body_required=body_required,
        output_schema=output_schema,
        wraps_output=wraps,
        response_media_type=media_type,
    )


def _success_codes(responses: Mapping[str, Any]) -> list[str]:
    """The 2xx keys of a responses object, exact codes before ``2XX``."""
    codes = [str(code) for code in responses if str(code).startswith("2")]
    return sorted(codes, key=lambda code: (not code.isdigit(), code))


def _output(
    document: OpenApiDocument, operation: OpenApiOperation, max_schema_nodes: int
) -> tuple[dict[str, Any] | None, bool, str | None]:
    """(output schema, wraps, first media type) of the successful responses."""
    converter = SchemaConverter(document, "response", max_schema_nodes=max_schema_nodes)
    schemas: list[Any] = []
    first_media_type: str | None = None
    usable = True
    for code in _success_codes(operation.responses):
        response = document.deref(operation.responses[code])
        content = response.get("content") if isinstance(response, Mapping) else None
        if not isinstance(content, Mapping) or not content:
            usable = False  # an empty success (204): no structured content to promise
            continue
        if first_media_type is None:
            first_media_type = _base_media_type(str(next(iter(content))))
        json_media = next(
            (media for media_type, media in content.items() if is_json_media_type(str(media_type))),
            None,
        )
        if json_media is None:
            usable = False
            continue
        schema = converter.convert(_schema_of(json_media))
        if schema in ({}, True):
            usable = False  # "any JSON": nothing worth promising
            continue
        if schema not in schemas:
            schemas.append(schema)
    if not usable or not schemas:
        return None, False, first_media_type
    if all(is_object_schema(schema) for schema in schemas):
        output = schemas[0] if len(schemas) == 1 else {"type": "object", "anyOf": schemas}
        return converter.finish(output), False, first_media_type
    value = schemas[0] if len(schemas) == 1 else {"anyOf": schemas}
    return converter.finish(wrapper_schema(value)), True, first_media_type
