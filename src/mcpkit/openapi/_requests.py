"""From tool arguments to the HTTP request of an operation.

Each value is first checked against its parameter's schema (``_values``: its kind, an
object's keys), then serialized as OpenAPI's ``style``/``explode`` say (defaults:
``simple`` in the path and headers, ``form`` with ``explode`` in the query and cookies):

* path: ``simple`` (``1,2,3``), ``label`` (``.1.2.3``), ``matrix`` (``;id=1,2,3``); each
  value is percent-encoded, ``/``, ``?`` and ``#`` included, so a value never adds a path
  segment; an empty (or blank) value, and one that makes its segment ``.`` or ``..``, is
  refused, so none removes one either;
* query: ``form`` (``tags=a&tags=b``, or ``tags=a,b`` without explode; an object with
  explode spreads its declared keys, the only style that makes keys of its own),
  ``spaceDelimited`` and ``pipeDelimited`` (``a%20b``, ``a|b``), ``deepObject``
  (``filter[kind]=cat``);
* headers: ``simple``, printable ASCII only (no CR or LF to start another header);
  cookies: ``form``, in one ``Cookie`` header;
* a parameter described by ``content`` (a media type) is sent as JSON text.

Booleans are ``true``/``false``; ``None`` leaves a parameter out.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import quote, unquote

import httpx

from mcpkit._exceptions import InvalidParamsError
from mcpkit.openapi._operations import OpenApiParameter
from mcpkit.openapi._plans import ArgumentBinding, OperationPlan
from mcpkit.openapi._values import check_value, parameter_label

_PATH_VARIABLE = re.compile(r"\{([^{}]+)\}")
# What servers drop (an empty segment, ".") or read as a step up (".."): RFC 3986, 5.2.4.
_DOT_SEGMENTS = ("", ".", "..")
# What a header value holds (RFC 9110, 5.5, without obsolete text): never CR or LF.
_HEADER_TEXT = re.compile(r"[\t\x20-\x7e]*")


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


def _items(value: Any, explode: bool) -> list[str]:
    """The pieces of a ``simple``-style value (before joining with ``,``)."""
    if isinstance(value, Mapping):
        if explode:
            return [f"{key}={_scalar(item)}" for key, item in value.items()]
        return [piece for key, item in value.items() for piece in (str(key), _scalar(item))]
    if isinstance(value, (list, tuple)):
        return [_scalar(item) for item in value]
    return [_scalar(value)]


def _quoted(value: Any) -> str:
    return _segment(quote(_scalar(value), safe=""))


def _segment(text: str) -> str:
    """``.`` and ``..`` spelled ``%2E``: as they are, a URL normalizer removes them with
    the segment before, so a value would reach another endpoint."""
    return text.replace(".", "%2E") if text in (".", "..") else text


def path_value(parameter: OpenApiParameter, value: Any) -> str:
    """The text that replaces ``{name}`` in the path (percent-encoded)."""
    if parameter.media_type is not None:
        return quote(json.dumps(value, separators=(",", ":")), safe="")
    if isinstance(value, Mapping) and parameter.explode:
        pieces = [f"{_quoted(key)}={_quoted(item)}" for key, item in value.items()]
    else:
        pieces = [_segment(quote(piece, safe="")) for piece in _items(value, parameter.explode)]
    if parameter.style == "label":
        return "." + (".".join(pieces) if parameter.explode else ",".join(pieces))
    if parameter.style == "matrix":
        name = quote(parameter.name, safe="")
        if isinstance(value, (list, tuple)) and parameter.explode:
            return "".join(f";{name}={piece}" for piece in pieces)
        if isinstance(value, Mapping) and parameter.explode:
            return "".join(f";{piece}" for piece in pieces)
        return f";{name}=" + ",".join(pieces)
    return ",".join(pieces)


def _separator(style: str) -> str:
    if style == "spaceDelimited":
        return " "
    return "|" if style == "pipeDelimited" else ","


def query_pairs(parameter: OpenApiParameter, value: Any) -> list[tuple[str, str]]:
    """The ``(name, value)`` pairs of one query parameter (its value already checked)."""
    name = parameter.name
    if parameter.media_type is not None:
        return [(name, json.dumps(value, separators=(",", ":")))]
    style = parameter.style
    if isinstance(value, Mapping):
        if style == "deepObject":
            return [(f"{name}[{key}]", _scalar(item)) for key, item in value.items()]
        if style == "form" and parameter.explode:
            return [(str(key), _scalar(item)) for key, item in value.items()]
        return [(name, _separator(style).join(_items(value, False)))]
    if isinstance(value, (list, tuple)):
        items = [_scalar(item) for item in value]
        if parameter.explode:
            return [(name, item) for item in items]
        return [(name, _separator(style).join(items))]
    return [(name, _scalar(value))]


def header_value(parameter: OpenApiParameter, value: Any) -> str:
    """A header parameter's value (``simple`` style)."""
    if parameter.media_type is not None:
        return json.dumps(value, separators=(",", ":"))
    return ",".join(_items(value, parameter.explode))


def cookie_pairs(parameter: OpenApiParameter, value: Any) -> list[str]:
    """``name=value`` pieces of one cookie parameter (``form`` style)."""
    if parameter.media_type is not None:
        return [f"{parameter.name}={quote(json.dumps(value, separators=(',', ':')))}"]
    if isinstance(value, (list, tuple)) and parameter.explode:
        return [f"{parameter.name}={quote(_scalar(item))}" for item in value]
    return [f"{parameter.name}={quote(','.join(_items(value, False)))}"]


def _blank(value: Any) -> bool:
    """``""`` (or only whitespace), ``[]``, ``{}``: no path segment's worth of value."""
    if isinstance(value, str):
        return not value.strip()
    return isinstance(value, (list, tuple, Mapping)) and not value


def _label(binding: ArgumentBinding) -> str:
    return parameter_label(binding.location, binding.name, binding.argument)


def check_argument(binding: ArgumentBinding, value: Any) -> None:
    """``InvalidParamsError`` naming the parameter unless ``value`` is one its schema
    declares (``_values``) and, in the path, not blank."""
    parameter = binding.parameter
    if parameter is None or binding.shape is None:
        return
    nested = parameter.media_type is not None  # sent as JSON text: any JSON inside
    check_value(
        binding.shape, value, label=_label(binding), argument=binding.argument, nested=nested
    )
    if binding.location == "path" and _blank(value):
        raise InvalidParamsError(
            f"{_label(binding)} cannot be empty", {"argument": binding.argument}
        )


def fill_path(template: str, values: Mapping[str, tuple[str, ArgumentBinding]]) -> str:
    """``template`` with each ``{name}`` replaced by its encoded value from ``values``.

    ``InvalidParamsError`` when a segment holding a value comes out empty, ``.`` or ``..``
    once decoded (``label`` style makes ``.%2E`` of ``["."]``, which is ``..`` to a server
    that decodes before it normalizes): the server would drop it, or the one before, and
    serve another endpoint.
    """
    segments = template.split("/")
    for index, segment in enumerate(segments):
        names = [name for name in _PATH_VARIABLE.findall(segment) if name in values]
        if not names:
            continue
        filled = _PATH_VARIABLE.sub(
            lambda match: values[match.group(1)][0] if match.group(1) in values else match[0],
            segment,
        )
        if unquote(filled) in _DOT_SEGMENTS:
            binding = values[names[0]][1]
            raise InvalidParamsError(
                f"{_label(binding)} cannot make the path segment {unquote(filled)!r}",
                {"argument": binding.argument},
            )
        segments[index] = filled
    return "/".join(segments)


def _header_text(binding: ArgumentBinding, text: str) -> str:
    """``text``, which a header can hold; else ``InvalidParamsError`` naming the parameter."""
    if not _HEADER_TEXT.fullmatch(text):
        raise InvalidParamsError(
            f"{_label(binding)} can hold only printable ASCII characters, spaces and tabs",
            {"argument": binding.argument},
        )
    return text


def missing_arguments(plan: OperationPlan, arguments: Mapping[str, Any]) -> list[str]:
    """The required arguments absent from ``arguments`` (``None`` counts as absent for a
    parameter, not for a body property, where it may be a legitimate JSON null)."""
    missing = []
    bindings = {binding.argument: binding for binding in plan.arguments}
    for name in plan.required:
        binding = bindings.get(name)
        absent = name not in arguments or (
            arguments[name] is None and binding is not None and binding.parameter is not None
        )
        if absent:
            missing.append(name)
    return missing


def build_request(
    client: httpx.AsyncClient,
    plan: OperationPlan,
    arguments: Mapping[str, Any],
    *,
    base_url: str | None = None,
    headers: Iterable[tuple[str, str]] = (),
) -> httpx.Request:
    """The request ``plan``'s operation makes for ``arguments``.

    ``base_url`` (when given) is put before the path; otherwise the path is relative to the
    client's ``base_url``. ``headers`` come first: header parameters override them, and
    they override the client's default headers. Raises ``InvalidParamsError`` (-32602) when
    a required argument is missing, or one is not a value its parameter can send
    (``check_argument``, ``fill_path``), naming it.
    """
    missing = missing_arguments(plan, arguments)
    if missing:
        raise InvalidParamsError(
            f"missing required argument{'s' if len(missing) > 1 else ''}: {', '.join(missing)}",
            {"missing": missing},
        )
    path_values: dict[str, tuple[str, ArgumentBinding]] = {}
    query: list[tuple[str, str | int | float | bool | None]] = []
    request_headers: dict[str, str] = dict(headers)
    cookies: list[str] = []
    body_properties: dict[str, Any] = {}
    body: Any = None
    has_body = False
    for binding in plan.arguments:
        if binding.argument not in arguments:
            continue
        value = arguments[binding.argument]
        parameter = binding.parameter
        if binding.location == "body":
            body, has_body = value, True
            continue
        if binding.location == "body_property":
            body_properties[binding.name] = value
            continue
        if value is None or parameter is None:
            continue
        check_argument(binding, value)
        if binding.location == "path":
            path_values[parameter.name] = (path_value(parameter, value), binding)
        elif binding.location == "query":
            query.extend(query_pairs(parameter, value))
        elif binding.location == "header":
            request_headers[parameter.name] = _header_text(binding, header_value(parameter, value))
        else:
            cookies.extend(cookie_pairs(parameter, value))
    if cookies:
        request_headers["Cookie"] = "; ".join(cookies)
    if body_properties or (plan.body_required and not has_body and plan.body_encoding):
        body, has_body = body_properties, True
    path = fill_path(plan.operation.path, path_values)
    url = base_url.rstrip("/") + path if base_url else path
    content: dict[str, Any] = {}
    if has_body and plan.body_encoding == "json":
        content["json"] = body
    elif has_body and plan.body_encoding == "form":
        content["data"] = {key: _form_value(item) for key, item in (body or {}).items()}
    elif has_body and plan.body_encoding == "text":
        content["content"] = _scalar(body).encode()
        request_headers.setdefault("Content-Type", plan.body_media_type or "text/plain")
    return client.build_request(
        plan.operation.method,
        url,
        params=query or None,
        headers=request_headers or None,
        **content,
    )


def _form_value(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return [_scalar(item) for item in value]
    return _scalar(value)
