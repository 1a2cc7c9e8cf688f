"""The operations of an OpenAPI document: one per path and HTTP method, with the path
item's shared parameters merged into the operation's own."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from mcpkit.openapi._document import OpenApiDocument

ParameterLocation = Literal["path", "query", "header", "cookie"]

#: The methods an OpenAPI path item may hold, in the order operations are listed.
HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")

_LOCATIONS: frozenset[str] = frozenset({"path", "query", "header", "cookie"})
# OpenAPI: a header parameter with one of these names SHALL be ignored (the media types and
# the security scheme say them).
_IGNORED_HEADERS = frozenset({"accept", "content-type", "authorization"})
_DEFAULT_STYLE = {"path": "simple", "header": "simple", "query": "form", "cookie": "form"}
_PATH_VARIABLE = re.compile(r"\{([^{}]+)\}")


@dataclass(frozen=True, slots=True)
class OpenApiParameter:
    """One parameter of an operation, its ``$ref`` followed and its defaults filled in."""

    name: str
    location: ParameterLocation
    required: bool = False
    #: The parameter's schema as the document has it (not converted).
    schema: Any = None
    description: str | None = None
    deprecated: bool = False
    #: ``simple``, ``form``, ``label``, ``matrix``, ``spaceDelimited``, ``pipeDelimited``
    #: or ``deepObject``; the location's default when the document gives none.
    style: str = "simple"
    explode: bool = False
    #: Set when the parameter is described by ``content`` (a media type, sent as that
    #: serialization, such as JSON text) rather than ``schema``.
    media_type: str | None = None


@dataclass(frozen=True, slots=True)
class OpenApiOperation:
    """One operation: what route maps match against and name callables receive."""

    method: str  # upper case: "GET"
    path: str  # the path template: "/pets/{petId}"
    operation_id: str | None = None
    summary: str | None = None
    description: str | None = None
    tags: tuple[str, ...] = ()
    deprecated: bool = False
    parameters: tuple[OpenApiParameter, ...] = ()
    #: The request body object, its ``$ref`` followed; ``None`` without one.
    request_body: Mapping[str, Any] | None = None
    #: The responses object, by status code (``"200"``, ``"2XX"``, ``"default"``).
    responses: Mapping[str, Any] = field(default_factory=dict)

    @property
    def path_variables(self) -> tuple[str, ...]:
        """The ``{name}`` variables of the path template, in order."""
        return tuple(_PATH_VARIABLE.findall(self.path))

    def parameters_in(self, location: ParameterLocation) -> tuple[OpenApiParameter, ...]:
        """The parameters in one location (``"path"``, ``"query"``...)."""
        return tuple(p for p in self.parameters if p.location == location)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _parameter(document: OpenApiDocument, node: Any) -> OpenApiParameter | None:
    node = document.deref(node)
    if not isinstance(node, Mapping):
        return None
    name, location = node.get("name"), node.get("in")
    if not isinstance(name, str) or location not in _LOCATIONS:
        return None
    if location == "header" and name.lower() in _IGNORED_HEADERS:
        return None
    style = node.get("style")
    if not isinstance(style, str):
        style = _DEFAULT_STYLE[location]
    explode = node.get("explode")
    schema = node.get("schema")
    media_type = None
    content = node.get("content")
    if schema is None and isinstance(content, Mapping) and content:
        media_type, media = next(iter(content.items()))
        schema = media.get("schema") if isinstance(media, Mapping) else None
    return OpenApiParameter(
        name=name,
        location=location,
        required=location == "path" or node.get("required") is True,
        schema=schema if schema is not None else {},
        description=_text(node.get("description")),
        deprecated=node.get("deprecated") is True,
        style=style,
        explode=explode if isinstance(explode, bool) else style == "form",
        media_type=str(media_type) if media_type is not None else None,
    )


def _parameters(document: OpenApiDocument, *lists: Any) -> tuple[OpenApiParameter, ...]:
    """Parameters of the path item then the operation; the operation's win, by (name, in)."""
    merged: dict[tuple[str, str], OpenApiParameter] = {}
    for items in lists:
        if not isinstance(items, list):
            continue
        for node in items:
            parameter = _parameter(document, node)
            if parameter is not None:
                merged[(parameter.name, parameter.location)] = parameter
    return tuple(merged.values())


def read_operations(document: OpenApiDocument) -> list[OpenApiOperation]:
    """Every operation of ``document``, in document order (paths, then methods as listed
    in ``HTTP_METHODS``)."""
    paths = document.raw.get("paths")
    if not isinstance(paths, Mapping):
        return []
    operations: list[OpenApiOperation] = []
    for path, raw_item in paths.items():
        item = document.deref(raw_item)
        if not isinstance(path, str) or not isinstance(item, Mapping):
            continue
        for method in HTTP_METHODS:
            node = item.get(method)
            if not isinstance(node, Mapping):
                continue
            body = document.deref(node["requestBody"]) if "requestBody" in node else None
            tags = node.get("tags")
            responses = node.get("responses")
            operations.append(
                OpenApiOperation(
                    method=method.upper(),
                    path=path,
                    operation_id=_text(node.get("operationId")),
                    summary=_text(node.get("summary")) or _text(item.get("summary")),
                    description=_text(node.get("description")) or _text(item.get("description")),
                    tags=tuple(str(tag) for tag in tags) if isinstance(tags, list) else (),
                    deprecated=node.get("deprecated") is True,
                    parameters=_parameters(
                        document, item.get("parameters"), node.get("parameters")
                    ),
                    request_body=body if isinstance(body, Mapping) else None,
                    responses=responses if isinstance(responses, Mapping) else {},
                )
            )
    return operations
