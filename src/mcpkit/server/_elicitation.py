"""Form-mode elicitation schemas: from a type or a dict to the restricted JSON schema the
spec allows (a flat object of primitive properties), and the answer back to the type."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import msgspec

from mcpkit.protocol._versions import V2025_11_25
from mcpkit.server._mrtr import InvalidClientResultError, UnsupportedRequestError

_PRIMITIVES = frozenset({"string", "number", "integer", "boolean", "array"})


@dataclass(frozen=True, slots=True)
class ElicitResult:
    """The user's answer: ``action`` is ``accept``, ``decline`` or ``cancel``; ``content`` the
    submitted values (as the requested type when one was given); ``data`` the raw dict."""

    action: str
    content: Any = None
    data: dict[str, Any] | None = None

    @property
    def accepted(self) -> bool:
        """Whether the user accepted (and ``content`` holds the answer)."""
        return self.action == "accept"

    @classmethod
    def from_wire(cls, raw: dict[str, Any], structured: Any) -> ElicitResult:
        """The result of an ``elicitation/create`` answer, ``structured`` being its content as
        the requested type."""
        content = raw.get("content")
        return cls(
            raw.get("action", "cancel"),
            structured if structured is not None else content,
            content,
        )


def _is_pydantic_model(tp: Any) -> bool:
    return (
        isinstance(tp, type) and hasattr(tp, "model_json_schema") and hasattr(tp, "model_validate")
    )


def _schema_of_type(tp: type) -> dict[str, Any]:
    schema: dict[str, Any]
    if _is_pydantic_model(tp):
        schema = tp.model_json_schema()  # type: ignore[attr-defined]  # a pydantic model
    else:
        schema = msgspec.json.schema(tp)
        ref = schema.get("$ref")
        if ref:
            schema = schema["$defs"][ref.rsplit("/", 1)[-1]]
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None) if isinstance(prop, dict) else None
    return schema


def build_elicitation_schema(schema: Any) -> dict[str, Any]:
    """The ``requestedSchema`` for a dict or a type; refuses nested objects (spec: flat only)."""
    result = dict(schema) if isinstance(schema, dict) else _schema_of_type(schema)
    result.setdefault("type", "object")
    for name, prop in result.get("properties", {}).items():
        kind = prop.get("type") if isinstance(prop, dict) else None
        if (
            kind not in _PRIMITIVES
            and "enum" not in prop
            and "oneOf" not in prop
            and "anyOf" not in prop
        ):
            raise ValueError(f"elicitation property {name!r} must be a primitive, not {kind!r}")
    return result


def schema_for_version(schema: dict[str, Any], version: str | None) -> dict[str, Any]:
    """``requestedSchema`` in the form the session's protocol version has (docs/eras.md).

    2025-11-25 (SEP-1330) added titled enums (``oneOf``/``anyOf`` of ``const`` + ``title``)
    and multi-select enums (``type: array``). Before it (2025-06-18, the only earlier version
    with elicitation) a titled single-select becomes ``enum`` + ``enumNames``; a
    multi-select has no form, so the request is refused before anything is sent
    (``UnsupportedRequestError``, -32021 unless the call catches it). Keywords that version
    does not define (``default`` outside booleans) are left: JSON Schema ignores unknown
    keywords. ``schema`` is not changed.
    """
    if version is None or version >= V2025_11_25:
        return schema
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return schema
    changed: dict[str, Any] = {}
    for name, prop in properties.items():
        if not isinstance(prop, dict):
            continue
        if prop.get("type") == "array":
            raise _no_form(name, "a multi-select enum", version)
        options = prop.get("oneOf", prop.get("anyOf"))
        if options is None or "enum" in prop:
            continue
        titled = _titled_options(options)
        if titled is None:
            raise _no_form(name, "a oneOf/anyOf schema", version)
        legacy = {key: value for key, value in prop.items() if key not in ("oneOf", "anyOf")}
        legacy["type"] = "string"
        legacy["enum"] = [value for value, _ in titled]
        legacy["enumNames"] = [title for _, title in titled]
        changed[name] = legacy
    if not changed:
        return schema
    return {**schema, "properties": {**properties, **changed}}


def _titled_options(options: Any) -> list[tuple[str, str]] | None:
    """``[(value, title)]`` of a titled enum's options; None when they are not ``const``s."""
    if not isinstance(options, list) or not options:
        return None
    titled = []
    for option in options:
        if not isinstance(option, dict) or not isinstance(option.get("const"), str):
            return None
        title = option.get("title")
        titled.append((option["const"], title if isinstance(title, str) else option["const"]))
    return titled


def _no_form(name: str, what: str, version: str) -> UnsupportedRequestError:
    return UnsupportedRequestError(
        "elicitation",
        f"Elicitation property {name!r} is {what}, which protocol {version} has no form for "
        f"(it came with {V2025_11_25})",
    )


def structure_content(schema: Any, raw: dict[str, Any]) -> Any:
    """The accepted content converted to ``schema`` when it is a type; else None. Content
    the type refuses is the client's fault (it must match the requested schema):
    ``InvalidClientResultError``."""
    content = raw.get("content")
    if raw.get("action") != "accept" or content is None or isinstance(schema, dict):
        return None
    try:
        if _is_pydantic_model(schema):
            return schema.model_validate(content)
        if dataclasses.is_dataclass(schema) or isinstance(schema, type):
            return msgspec.convert(content, schema, strict=False)
    except (msgspec.ValidationError, ValueError, TypeError) as exc:
        raise InvalidClientResultError(
            "elicitation/create", f"the content does not match the requested schema: {exc}"
        ) from None
    return None
