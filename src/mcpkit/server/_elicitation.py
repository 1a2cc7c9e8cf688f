"""Form-mode elicitation schemas: from a type or a dict to the restricted JSON schema the
spec allows (a flat object of primitive properties), and the answer back to the type."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import msgspec

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
        return self.action == "accept"

    @classmethod
    def from_wire(cls, raw: dict[str, Any], structured: Any) -> ElicitResult:
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


def structure_content(schema: Any, raw: dict[str, Any]) -> Any:
    """The accepted content converted to ``schema`` when it is a type; else None."""
    content = raw.get("content")
    if raw.get("action") != "accept" or content is None or isinstance(schema, dict):
        return None
    if _is_pydantic_model(schema):
        return schema.model_validate(content)
    if dataclasses.is_dataclass(schema) or isinstance(schema, type):
        return msgspec.convert(content, schema, strict=False)
    return None
