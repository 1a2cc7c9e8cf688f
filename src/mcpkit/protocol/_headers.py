"""SEP-2243 request headers (2026-07-28 Streamable HTTP), sans-I/O: the ``Mcp-Method`` /
``Mcp-Name`` / ``Mcp-Param-*`` values a request must carry, their Base64 sentinel
encoding, the ``x-mcp-header`` schema annotations, the header-versus-body check, and the
``Mcp-Param-*`` values a server hands the request in ``_meta["x-mcp-headers"]``."""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

# Patterns end in \Z, not $: "$" also matches before a final newline ("a\n" is not safe).
_SENTINEL = re.compile(r"=\?base64\?(.*)\?=\Z", re.DOTALL)
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+\Z")  # RFC 9110 5.6.2: 1*tchar
# Sent as is: visible ASCII and inner spaces (no tab: the SEP counts it a control character).
_PLAIN = re.compile(r"(?:[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?)?\Z")
# What a received value may hold (RFC 9110 field-value, the SEP refusing obs-text).
_RECEIVABLE = re.compile(r"[\t\x20-\x7e]*\Z")
# The decimal forms an integer header may take: "42", "+42", "042", "42.0", "4.2e1".
_NUMBER = re.compile(r"[+-]?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]{1,4})?\Z")
_MAX_SAFE_INTEGER = 2**53 - 1
_PARAM_PREFIX = "mcp-param-"

#: The ``_meta`` key under which a server hands a request its ``Mcp-Param-*`` header values.
PARAM_HEADERS_META_KEY = "x-mcp-headers"

#: Methods whose ``Mcp-Name`` header mirrors a body field.
NAME_FIELDS = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    "tasks/get": "taskId",
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
}


def encode_value(value: str) -> str:
    """A header-safe form of ``value`` (SEP-2243 "Value Encoding"): as is when it is visible
    ASCII with at most inner spaces (the empty string included), else the Base64 sentinel:
    for non-ASCII, control characters (tab among them), leading or trailing whitespace, and
    plain values that look like the sentinel (start with ``=?base64?``, end with ``?=``)."""
    if _PLAIN.match(value) and not (value.startswith("=?base64?") and value.endswith("?=")):
        return value
    return "=?base64?" + base64.b64encode(value.encode()).decode() + "?="


def decode_value(value: str) -> str:
    """The value a header carries (sentinel decoded, surrounding whitespace dropped).
    Raises ``ValueError`` for a malformed Base64 sentinel."""
    value = value.strip(" \t")
    match = _SENTINEL.match(value)
    if match is None:
        return value
    try:
        return base64.b64decode(match.group(1), validate=True).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise ValueError("malformed Base64 header value") from None


def scalar_text(value: Any) -> str | None:
    """The header text of a primitive body value (None when it can't be a header)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return value
    return None


def _same(header_text: str, body_value: Any) -> bool:
    if isinstance(body_value, bool):
        return header_text == ("true" if body_value else "false")
    if isinstance(body_value, int):
        # Numerically, as the spec advises: "+7", "07" and "7.0" are 7. Decimal, not int():
        # int() also takes "4_2", " 42" and other scripts' digits, and refuses "42.0".
        return _NUMBER.match(header_text) is not None and Decimal(header_text) == body_value
    same: bool = header_text == body_value
    return same


def header_annotations(schema: Any) -> list[tuple[str, tuple[str, ...]]]:
    """``(header name, property path)`` for each ``x-mcp-header`` in an input schema.

    Raises ``ValueError`` naming the rule an annotation breaks (non-token name, duplicate,
    non-primitive type, or a place not reachable through ``properties`` alone).
    """
    found: list[tuple[str, tuple[str, ...]]] = []
    _collect(schema, (), True, found)
    seen: set[str] = set()
    for name, _path in found:
        if name.lower() in seen:
            raise ValueError(f"x-mcp-header {name!r} is used twice")
        seen.add(name.lower())
    return found


def _collect(
    node: Any, path: tuple[str, ...], reachable: bool, found: list[tuple[str, tuple[str, ...]]]
) -> None:
    if isinstance(node, list):
        for item in node:
            _collect(item, path, False, found)
        return
    if not isinstance(node, dict):
        return
    if "x-mcp-header" in node:
        name = node["x-mcp-header"]
        if not reachable or not path:
            raise ValueError(
                f"x-mcp-header at {'/'.join(path) or 'the root'} is not reachable through properties"
            )
        if not isinstance(name, str) or not _TOKEN.match(name):
            raise ValueError(f"x-mcp-header {name!r} is not an HTTP token")
        if node.get("type") not in ("string", "integer", "boolean"):
            raise ValueError(f"x-mcp-header {name!r} must annotate a string, integer or boolean")
        found.append((name, path))
    for key, child in node.items():
        if key == "properties" and isinstance(child, dict):
            for prop, sub in child.items():
                _collect(sub, path + (prop,), reachable, found)
        elif key != "x-mcp-header":
            _collect(child, path + (f"<{key}>",), False, found)


def value_at(arguments: Any, path: tuple[str, ...]) -> Any:
    for step in path:
        if not isinstance(arguments, dict) or step not in arguments:
            return None
        arguments = arguments[step]
    return arguments


def check_request_headers(
    method: str,
    params: Mapping[str, Any] | None,
    headers: Mapping[str, str],
    annotations: Sequence[tuple[str, tuple[str, ...]]] = (),
) -> str | None:
    """Why the headers disagree with the body (None when they agree). ``headers`` has
    lower-case names."""
    params = params or {}
    sent_method = headers.get("mcp-method")
    if sent_method is None:
        return "Mcp-Method header is required"
    if sent_method != method and sent_method.strip(" \t") != method:
        return f"Mcp-Method header {sent_method.strip()!r} does not match body method {method!r}"
    field = NAME_FIELDS.get(method)
    if field is not None:
        problem = _check_one("Mcp-Name", headers.get("mcp-name"), params.get(field))
        if problem:
            return problem
    if not annotations:
        return None
    arguments = params.get("arguments")
    for name, path in annotations:
        body = value_at(arguments, path)
        problem = _check_one(
            f"Mcp-Param-{name}", headers.get(f"mcp-param-{name.lower()}"), body, optional=True
        )
        if problem:
            return problem
    return None


def _check_one(label: str, raw: str | None, body: Any, optional: bool = False) -> str | None:
    # The usual case: sent verbatim. isascii() is O(1) in CPython; the HTTP parser has already
    # refused CR, LF, NUL and other controls but the tab, so ASCII is all left to check.
    if raw is not None and raw == body and raw.isascii():
        return None
    if raw is None:
        if body is None and optional:
            return None
        return f"{label} header is required"
    if body is None:
        return f"{label} header is present but the body has no value for it"
    if not _RECEIVABLE.match(raw):
        return f"{label} header holds characters a header value may not"
    try:
        text = decode_value(raw)
    except ValueError:
        return f"{label} header has a malformed Base64 value"
    if not _same(text, body):
        return f"{label} header value {text!r} does not match body value {body!r}"
    return None


def request_headers(
    method: str,
    params: Mapping[str, Any] | None,
    annotations: list[tuple[str, tuple[str, ...]]] = (),  # type: ignore[assignment]
) -> dict[str, str]:
    """The SEP-2243 headers a client sends for a request (``Mcp-Method``, ``Mcp-Name``,
    ``Mcp-Param-*``)."""
    params = params or {}
    out = {"Mcp-Method": method}
    field = NAME_FIELDS.get(method)
    if field is not None and isinstance(params.get(field), str):
        out["Mcp-Name"] = encode_value(params[field])
    arguments = params.get("arguments")
    for name, path in annotations:
        text = scalar_text(value_at(arguments, path))
        if text is not None:
            out[f"Mcp-Param-{name}"] = encode_value(text)
    return out


def param_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """The ``Mcp-Param-*`` values of a request (``headers`` has lower-case names), keyed by
    the lower-cased name after ``Mcp-Param-`` (``Mcp-Param-Region`` -> ``"region"``), each
    with its Base64 sentinel decoded (a malformed sentinel is kept as sent: only annotated
    headers are checked against the body, and those are refused before this runs)."""
    found: dict[str, str] = {}
    if _PARAM_PREFIX not in " ".join(headers):  # most requests have none: one C-speed test
        return found
    for name, value in headers.items():
        if len(name) > len(_PARAM_PREFIX) and name.startswith(_PARAM_PREFIX):
            try:
                found[name[len(_PARAM_PREFIX) :]] = decode_value(value)
            except ValueError:
                found[name[len(_PARAM_PREFIX) :]] = value.strip(" \t")
    return found


def safe_integer(value: Any) -> bool:
    return (
        isinstance(value, int) and not isinstance(value, bool) and abs(value) <= _MAX_SAFE_INTEGER
    )
