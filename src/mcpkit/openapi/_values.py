"""Which JSON values a parameter takes, read from its schema, and the check every argument
passes before it is serialized into the request.

A ``style`` serializes a primitive (a string, number or boolean), an array of primitives or
an object of primitive properties, and what it does depends on the kind of the value: an
object given to a ``form``-exploded query parameter becomes query keys of its own. So the
kind of a value must be one its parameter's schema declares, or an argument meant as a
string could add parameters to the request (``q={"admin": "true"}`` as ``?admin=true``):

* an object only where the schema declares an object, and only with the keys it lists in
  ``properties`` (others where ``additionalProperties`` is ``true`` or a schema, or where
  the schema lists no ``properties`` at all: a free-form map);
* an array only where the schema declares an array; a lone primitive there is a one-item
  array (what a resource template's variable gives);
* a primitive where the schema declares a primitive type or no type at all;
* inside an array or an object, primitives only (``null`` is an empty value): the styles
  say nothing of nested values. A parameter described by ``content`` is sent as JSON text,
  so there nesting is fine.

Only the kind is checked: a string for an ``integer`` is the API's to refuse (its 422).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcpkit._exceptions import InvalidParamsError

OBJECT, ARRAY, PRIMITIVE, NULL = "object", "array", "primitive", "null"

_PRIMITIVES = frozenset({PRIMITIVE})
_PRIMITIVE_TYPES = frozenset({"string", "number", "integer", "boolean"})
# ``#/$defs/A`` -> ``#/$defs/B`` -> ...: more hops than this is a loop.
_MAX_HOPS = 32
_DEFS_PREFIX = "#/$defs/"


@dataclass(frozen=True, slots=True)
class ValueShape:
    """What values one parameter's schema declares."""

    #: ``"object"``, ``"array"``, ``"primitive"``: the kinds of value the schema declares.
    kinds: frozenset[str] = _PRIMITIVES
    #: The keys an object may have (its schema's ``properties``)...
    properties: frozenset[str] = frozenset()
    #: ...and whether it may have others.
    other_keys: bool = False


def value_kind(value: Any) -> str:
    """``"object"``, ``"array"``, ``"null"`` or ``"primitive"``."""
    if isinstance(value, Mapping):
        return OBJECT
    if isinstance(value, (list, tuple)):
        return ARRAY
    return NULL if value is None else PRIMITIVE


# reading schemas --------------------------------------------------------------------------


def _target(schema: Mapping[str, Any], defs: Mapping[str, Any]) -> Any:
    """What a converted schema's ``$ref`` (always ``#/$defs/<Name>``) points at, or None."""
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith(_DEFS_PREFIX):
        return defs.get(ref[len(_DEFS_PREFIX) :])
    return None


def _subschemas(schema: Mapping[str, Any], key: str) -> list[Any]:
    branches = schema.get(key)
    return list(branches) if isinstance(branches, list) else []


def _type_kinds(schema: Mapping[str, Any]) -> frozenset[str] | None:
    """The kinds of the schema's own ``type``, ``const``/``enum`` or kind-only keywords."""
    declared = schema.get("type")
    names = [declared] if isinstance(declared, str) else declared
    if isinstance(names, list):
        return frozenset(
            PRIMITIVE if name in _PRIMITIVE_TYPES else name
            for name in names
            if name in _PRIMITIVE_TYPES or name in (OBJECT, ARRAY)
        )
    if "const" in schema:
        return frozenset({value_kind(schema["const"])}) - {NULL}
    if isinstance(schema.get("enum"), list):
        return frozenset(map(value_kind, schema["enum"])) - {NULL}
    kinds = set()
    if any(key in schema for key in ("properties", "additionalProperties", "patternProperties")):
        kinds.add(OBJECT)
    if any(key in schema for key in ("items", "prefixItems")):
        kinds.add(ARRAY)
    return frozenset(kinds) or None


def _kinds(schema: Any, defs: Mapping[str, Any], hops: int = 0) -> frozenset[str] | None:
    """The kinds ``schema`` declares; None when it declares none (``{}``, ``true``)."""
    if schema is False:
        return frozenset()
    if not isinstance(schema, Mapping) or hops > _MAX_HOPS:
        return None
    found = [_type_kinds(schema)]
    if "$ref" in schema:
        found.append(_kinds(_target(schema, defs), defs, hops + 1))
    found.extend(_kinds(branch, defs, hops + 1) for branch in _subschemas(schema, "allOf"))
    for key in ("anyOf", "oneOf"):
        branches = [_kinds(branch, defs, hops + 1) for branch in _subschemas(schema, key)]
        if branches:  # a branch that declares nothing takes primitives, as a lone schema
            found.append(frozenset().union(*(_PRIMITIVES if k is None else k for k in branches)))
    declared = [kinds for kinds in found if kinds is not None]
    return frozenset.intersection(*declared) if declared else None


def _keys(schema: Any, defs: Mapping[str, Any], hops: int = 0) -> tuple[set[str], bool, bool]:
    """(keys listed in ``properties``, other keys allowed, other keys refused) over the
    schema and its ``$ref``, ``allOf``, ``anyOf`` and ``oneOf`` sub-schemas."""
    names: set[str] = set()
    if not isinstance(schema, Mapping) or hops > _MAX_HOPS:
        return names, False, False
    properties = schema.get("properties")
    if isinstance(properties, Mapping):
        names.update(map(str, properties))
    additional = schema.get("additionalProperties")
    opened = "patternProperties" in schema or (additional is not None and additional is not False)
    closed = additional is False
    subs = [_target(schema, defs)] if "$ref" in schema else []
    for key in ("allOf", "anyOf", "oneOf"):
        subs.extend(_subschemas(schema, key))
    for sub in subs:
        sub_names, sub_opened, sub_closed = _keys(sub, defs, hops + 1)
        names |= sub_names
        opened, closed = opened or sub_opened, closed or sub_closed
    return names, opened, closed


def value_shape(schema: Any, defs: Mapping[str, Any]) -> ValueShape:
    """The shape of a converted parameter schema (``defs``: the tool schema's ``$defs``)."""
    kinds = _kinds(schema, defs)
    names, opened, closed = _keys(schema, defs)
    return ValueShape(
        kinds=_PRIMITIVES if kinds is None else kinds,
        properties=frozenset(names),
        other_keys=opened or (not names and not closed),
    )


# checking values --------------------------------------------------------------------------


def _a(kind: str) -> str:
    if kind == PRIMITIVE:
        return "a string, number or boolean"
    return "null" if kind == NULL else f"an {kind}"


def _expected(kinds: frozenset[str]) -> str:
    ordered = [kind for kind in (PRIMITIVE, ARRAY, OBJECT) if kind in kinds]
    return ", or ".join(map(_a, ordered)) if ordered else "no value"


def parameter_label(location: str, name: str, argument: str) -> str:
    """``query parameter 'q'``, with the argument when it has another name."""
    label = f"{location} parameter {name!r}"
    return label if argument == name else f"{label} (argument {argument!r})"


def _refuse(label: str, problem: str, argument: str) -> InvalidParamsError:
    return InvalidParamsError(f"{label} {problem}", {"argument": argument})


def _accepts(shape: ValueShape, kind: str) -> bool:
    # a lone primitive for an array is a one-item array: serialized as that would be
    return kind in shape.kinds or (kind == PRIMITIVE and ARRAY in shape.kinds)


def check_value(
    shape: ValueShape, value: Any, *, label: str, argument: str, nested: bool = False
) -> None:
    """Raise ``InvalidParamsError`` (naming the parameter by ``label``) unless ``value`` is
    one ``shape`` declares. ``nested``: arrays and objects may hold any JSON (a parameter
    sent as JSON text); otherwise only primitives."""
    kind = value_kind(value)
    if not _accepts(shape, kind):
        raise _refuse(label, f"takes {_expected(shape.kinds)}, not {_a(kind)}", argument)
    if kind == OBJECT:
        undeclared = [str(key) for key in value if str(key) not in shape.properties]
        if undeclared and not shape.other_keys:
            listed = ", ".join(sorted(shape.properties)) or "none"
            problem = f"has no property {undeclared[0]!r} (its properties: {listed})"
            raise _refuse(label, problem, argument)
    if nested:
        return
    members = value.values() if kind == OBJECT else value if kind == ARRAY else ()
    for member in members:
        if value_kind(member) in (ARRAY, OBJECT):
            problem = f"takes {_a(PRIMITIVE)} inside its {kind}, not {_a(value_kind(member))}"
            raise _refuse(label, problem, argument)
