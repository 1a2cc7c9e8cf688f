"""A Python type made from a tool's output schema, for ``result.data``: objects become
frozen ``msgspec.Struct`` classes (attribute access, equality, a readable repr), so
``result.data.city`` works without the caller declaring a class.

The JSON Schema read is the subset tool output schemas use: ``type`` (one or a list),
``properties`` / ``required`` / ``default``, ``additionalProperties``, ``items``, ``enum``,
``const``, ``anyOf`` / ``oneOf`` (``Optional`` among them), a one-member ``allOf``, ``$ref``
to ``#/$defs/...`` or ``#/definitions/...``, and the string formats msgspec reads
(``date-time``, ``date``, ``time``, ``uuid``). Anything else (a recursive ``$ref``, a
union msgspec cannot tell apart, a keyword that changes what values mean) is refused with
``UnsupportedSchema``: the caller then keeps the plain value. A value is converted only
when it conforms in full; an object with a key its schema does not name stays plain too,
so hydrating never drops what the server sent."""

from __future__ import annotations

import datetime
import keyword
import re
import uuid
from collections.abc import Mapping
from functools import partial
from types import MappingProxyType
from typing import Any, Literal, Union

import msgspec

#: How deep a schema may nest (objects, arrays, unions, references) before it is refused.
MAX_SCHEMA_DEPTH = 32

_SCALARS: Mapping[str, Any] = MappingProxyType(
    {
        "string": str,
        "integer": int,
        "number": float,
        "boolean": bool,
        "null": type(None),
    }
)
_FORMATS: Mapping[str, Any] = MappingProxyType(
    {
        "date-time": datetime.datetime,
        "date": datetime.date,
        "time": datetime.time,
        "uuid": uuid.UUID,
    }
)
#: Keywords that change which values are valid in ways a Python type does not keep: a
#: schema with one of them is not hydrated (its values would be checked only in part).
_UNHANDLED = frozenset(
    {"not", "if", "then", "else", "prefixItems", "patternProperties", "dependentSchemas"}
)
_NOT_NAME = re.compile(r"\W|^(?=\d)")


class UnsupportedSchema(ValueError):
    """An output schema ``schema_type`` does not turn into a type."""


def schema_type(schema: Any, name: str) -> Any:
    """The type of values ``schema`` describes (``Any`` for a schema allowing anything);
    ``name`` names the class of the top object when the schema has no ``title``."""
    builder = _Builder(schema if isinstance(schema, dict) else {})
    made = builder.build(schema, name, 0)
    try:
        msgspec.json.Decoder(made)  # msgspec checks here what it can convert to
    except TypeError as exc:
        raise UnsupportedSchema(str(exc)) from None
    return made


def hydrate(value: Any, made: Any) -> Any:
    """``value`` as ``made`` (from ``schema_type``); ``msgspec.ValidationError`` when it
    does not conform."""
    if made is Any:
        return value
    return msgspec.convert(value, made, strict=True)


class _Builder:
    """One schema's build: its ``$defs`` resolved once each, recursion refused."""

    def __init__(self, root: dict[str, Any]) -> None:
        self.root = root
        self.made: dict[str, Any] = {}
        self.resolving: set[str] = set()

    def build(self, schema: Any, name: str, depth: int) -> Any:
        if depth > MAX_SCHEMA_DEPTH:
            raise UnsupportedSchema(f"nested deeper than {MAX_SCHEMA_DEPTH}")
        if schema is True or schema == {}:
            return Any
        if not isinstance(schema, dict):
            raise UnsupportedSchema(f"not a schema: {schema!r}")
        unhandled = _UNHANDLED.intersection(schema)
        if unhandled:
            raise UnsupportedSchema(f"uses {', '.join(sorted(unhandled))}")
        if "$ref" in schema:
            return self.reference(schema["$ref"], depth)
        if "const" in schema:
            return _literal([schema["const"]])
        if "enum" in schema:
            return _literal(schema["enum"])
        for union in ("anyOf", "oneOf"):
            if union in schema:
                return self.union(schema[union], name, depth)
        if "allOf" in schema:
            members = schema["allOf"]
            if isinstance(members, list) and len(members) == 1:
                return self.build(members[0], name, depth + 1)
            raise UnsupportedSchema("allOf of several schemas")
        kind = schema.get("type")
        if kind is None:
            kind = "object" if "properties" in schema else None
        if kind is None:
            return Any
        if isinstance(kind, list):
            members = [{**schema, "type": one} for one in kind]
            return self.union(members, name, depth)
        return self.one_type(kind, schema, name, depth)

    def one_type(self, kind: Any, schema: dict[str, Any], name: str, depth: int) -> Any:
        if kind == "object":
            return self.object(schema, name, depth)
        if kind == "array":
            items = schema.get("items", True)
            return list[self.build(items, f"{name}Item", depth + 1)]  # type: ignore[misc]
        if kind == "string" and schema.get("format") in _FORMATS:
            return _FORMATS[schema["format"]]
        if isinstance(kind, str) and kind in _SCALARS:
            return _SCALARS[kind]
        raise UnsupportedSchema(f"unknown type {kind!r}")

    def union(self, members: Any, name: str, depth: int) -> Any:
        if not isinstance(members, list) or not members:
            raise UnsupportedSchema("a union without members")
        types = [self.build(member, name, depth + 1) for member in members]
        if Any in types:
            return Any
        return Union[tuple(types)]  # noqa: UP007  # made at run time from a list

    def reference(self, ref: Any, depth: int) -> Any:
        if ref in self.made:
            return self.made[ref]
        if not isinstance(ref, str) or ref in self.resolving:
            raise UnsupportedSchema(f"a recursive or unreadable $ref: {ref!r}")
        match = re.fullmatch(r"#/(\$defs|definitions)/([^/]+)", ref)
        target = self.root.get(match.group(1), {}).get(match.group(2)) if match else None
        if target is None:
            raise UnsupportedSchema(f"a $ref this schema does not define: {ref!r}")
        self.resolving.add(ref)
        made = self.build(target, match.group(2), depth + 1)  # type: ignore[union-attr]
        self.resolving.discard(ref)
        self.made[ref] = made
        return made

    def object(self, schema: dict[str, Any], name: str, depth: int) -> Any:
        properties = schema.get("properties")
        extra = schema.get("additionalProperties", True)
        if not properties:
            if extra is False:
                return dict[str, Any]  # only {} is valid; no keys to type
            return dict[str, self.build(extra, f"{name}Value", depth + 1)]  # type: ignore[misc]
        if not isinstance(properties, dict):
            raise UnsupportedSchema("properties is not an object")
        required = schema.get("required") or []
        fields: list[tuple[str, Any, Any]] = []
        renamed: dict[str, str] = {}
        for key, member in properties.items():
            attribute = _attribute(key)
            if attribute in renamed:
                raise UnsupportedSchema(f"two properties are both {attribute!r} in Python")
            renamed[attribute] = key
            made = self.build(member, class_name(key, name), depth + 1)
            if key in required:
                fields.append((attribute, made, msgspec.NODEFAULT))
            elif isinstance(member, dict) and "default" in member:
                fields.append((attribute, made, _default(member["default"], made)))
            else:
                fields.append((attribute, Union[made, None], None))  # noqa: UP007
        title = schema.get("title")
        return msgspec.defstruct(
            class_name(title, "") if isinstance(title, str) and title else name,
            [(attribute, made, default) for attribute, made, default in fields],
            kw_only=True,
            frozen=True,
            forbid_unknown_fields=True,  # a key it does not name: stays plain, not dropped
            rename=renamed,
            module=__name__,
        )


def _literal(values: Any) -> Any:
    if not isinstance(values, list) or not values:
        raise UnsupportedSchema("an enum without values")
    if not all(value is None or isinstance(value, (str, int)) for value in values):
        raise UnsupportedSchema("an enum of values other than strings, integers, booleans")
    return Literal[tuple(values)]


def _default(value: Any, made: Any) -> Any:
    if value is None or isinstance(value, (str, int, float)):
        return value
    return msgspec.field(default_factory=partial(msgspec.convert, value, made, strict=True))


def _attribute(key: str) -> str:
    attribute = _NOT_NAME.sub("_", key) or "_"
    return f"{attribute}_" if keyword.iskeyword(attribute) else attribute


def class_name(key: str, parent: str = "") -> str:
    """A class name made of ``key``'s words (``parent`` before them)."""
    words = [word for word in re.split(r"[^0-9A-Za-z]+", key) if word]
    name = parent + "".join(word[:1].upper() + word[1:] for word in words)
    return name if name.isidentifier() else f"_{name}"


__all__ = ["MAX_SCHEMA_DEPTH", "UnsupportedSchema", "class_name", "hydrate", "schema_type"]
