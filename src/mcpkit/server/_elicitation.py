"""Form-mode elicitation schemas: from a type or a dict to the restricted JSON schema the
spec allows (a flat object of primitive properties), and the answer back to the type."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, is_typeddict

import msgspec

from mcpkit.protocol._versions import V2025_11_25
from mcpkit.server._eras.mrtr import InvalidClientResultError, UnsupportedRequestError
from mcpkit.server._schema.engines import _fix_enum_order

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


#: The one property a type that is no object (``str``, ``int``, ``Literal[...]``, an Enum)
#: is asked for under: the form needs an object (FastMCP's choice, so its tools work as is).
VALUE = "value"


def _schema_of_type(tp: Any) -> dict[str, Any]:
    schema: dict[str, Any]
    if _is_pydantic_model(tp):
        schema = tp.model_json_schema()
    else:
        schema = msgspec.json.schema(tp)
        ref = schema.get("$ref")
        if ref:
            schema = schema["$defs"][ref.rsplit("/", 1)[-1]]
        _fix_enum_order(schema, (tp,))
    schema.pop("title", None)
    if "properties" not in schema:  # a str, an int, a Literal, an Enum: one "value"
        schema.pop("$defs", None)
        schema = {"type": "object", "properties": {VALUE: schema}, "required": [VALUE]}
    for prop in schema["properties"].values():
        if isinstance(prop, dict):
            prop.pop("title", None)
            enum = prop.get("enum")
            if "type" not in prop and enum and all(isinstance(v, str) for v in enum):
                prop["type"] = "string"  # the spec's EnumSchema has it
    return schema


def _wraps(tp: Any) -> bool:
    """Whether the type is asked for as the form's one ``value`` (not an object type)."""
    if _is_pydantic_model(tp) or dataclasses.is_dataclass(tp):
        return False
    if isinstance(tp, type) and issubclass(tp, (msgspec.Struct, dict)):
        return False
    return not is_typeddict(tp)


def build_elicitation_schema(schema: Any) -> dict[str, Any]:
    """The ``requestedSchema`` for a dict or a type; refuses nested objects (spec: flat only).
    A type that is no object (``str``, ``bool``, ``Literal["low", "high"]``, an Enum) is
    asked for as the one property ``value``, and its answer unwrapped (``structure_content``)."""
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
        if _wraps(schema):
            if not isinstance(content, dict) or VALUE not in content:
                raise ValueError(f"no {VALUE!r} in the content")
            return msgspec.convert(content[VALUE], schema, strict=False)
        if _is_pydantic_model(schema):
            return schema.model_validate(content)
        if dataclasses.is_dataclass(schema) or isinstance(schema, type):
            return msgspec.convert(content, schema, strict=False)
    except (msgspec.ValidationError, ValueError, TypeError) as exc:
        raise InvalidClientResultError(
            "elicitation/create", f"the content does not match the requested schema: {exc}"
        ) from None
    return None
