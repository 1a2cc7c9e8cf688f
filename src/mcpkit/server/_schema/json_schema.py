"""Checking a tool's arguments against an input schema given as it is
(``@app.tool(input_schema={...})``): an adapter over jsonschema-rs, chosen by measurement
(bench/README.md, "JSON Schema validators"): it passes every required 2020-12 case of the
official JSON-Schema-Test-Suite, and checks valid arguments fastest.

Compiled once, at registration. ``$schema`` picks the draft, 2020-12 without one (where
``definitions`` and ``dependencies`` still work; a list ``items`` or a boolean
``exclusiveMinimum`` needs draft 7 or 4 named). ``format`` is an annotation in every draft.
Nothing is ever fetched: a reference to a document the schema does not embed is refused, as
is what the draft's metaschema refuses (``ValueError`` saying where or which). Errors become
a typed tool's message (``engines._invalid_params``): missing arguments first, "Unknown
argument", "Expected `integer`, got `string`"; the rest in jsonschema-rs's words, cut short.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import jsonschema_rs

from mcpkit.server._schema.engines import _MISSING, _UNKNOWN, _invalid_params

Kind = jsonschema_rs.ValidationErrorKind
_JSON_TYPES = {type(None): "null", bool: "boolean", int: "integer", float: "number",
               str: "string", list: "array", tuple: "array", dict: "object"}  # fmt: skip
#: A value as jsonschema-rs writes it at the start of a message.
_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str)


def arguments_validator(
    schema: Any, *, registry: jsonschema_rs.Registry | None = None
) -> Callable[[Any], dict[str, Any]]:
    """``validate(arguments)`` for a tool whose input schema is ``schema``: the arguments as
    keyword arguments (a copy), or ``InvalidParamsError`` naming every one that is wrong.
    ``ValueError`` (saying where) when ``schema`` cannot be checked against. ``registry``:
    documents the schema may refer to (the test suite's); nothing else is ever fetched."""
    validator = _compile(schema, registry)

    def validate(arguments: Any) -> dict[str, Any]:
        if validator.is_valid(arguments):  # the common case, answered without making errors
            return dict(arguments)
        raise _invalid_params([e for err in validator.iter_errors(arguments) for e in _said(err)])

    return validate


def _compile(schema: Any, registry: jsonschema_rs.Registry | None) -> Any:
    if not isinstance(schema, (dict, bool)):  # jsonschema-rs would read a str as JSON text
        raise ValueError(f"at #: a schema is an object or a boolean, not {type(schema).__name__}")
    unfetched: list[str] = []

    def refuse(uri: str) -> Any:  # what neither the schema nor the registry holds
        unfetched.append(uri)
        raise LookupError(uri)

    try:
        return jsonschema_rs.validator_for(
            schema, retriever=refuse, registry=registry, validate_formats=False
        )
    except jsonschema_rs.ValidationError as exc:
        if unfetched:
            raise ValueError(
                f"a reference to {unfetched[0]!r} points out of the schema; mcpkit fetches no "
                "other document, so put what it refers to under $defs"
            ) from None
        if isinstance(exc.kind, Kind.Referencing):
            raise ValueError(f"$ref: {exc.message}") from None
        where = "".join(f"/{part}" for part in exc.instance_path)
        said = "; ".join(detail for _, detail in _said(exc))  # the schema's errors as values
        if exc.instance_path[-1:] in (["items"], ["exclusiveMinimum"], ["exclusiveMaximum"]):
            said += " (an older draft's spelling? name the draft in $schema)"
        raise ValueError(f"at #{where}: {said}") from None


def _said(error: jsonschema_rs.ValidationError) -> list[tuple[str, str]]:
    """``(path, detail)`` of one error: a missing or unknown property at its own path."""
    parts, kind, value = error.instance_path, error.kind, error.instance
    if isinstance(kind, Kind.Required):
        return [(_path([*parts, kind.property]), _MISSING)]
    if isinstance(kind, (Kind.AdditionalProperties, Kind.UnevaluatedProperties)):
        return [(_path([*parts, name]), _UNKNOWN) for name in kind.unexpected]
    if isinstance(kind, Kind.Type):
        detail = _expected(kind.types, value)
    elif isinstance(kind, (Kind.AnyOf, Kind.OneOfNotValid)):
        detail = _none_fits(error, kind.context)
    else:  # jsonschema-rs's words; most start with the value, which can be long: cut short
        detail = error.message
        if len(detail) > 200:
            if detail.startswith(shown := _JSON.encode(value)):
                detail = _cut(shown, 40) + detail[len(shown) :]
            detail = _cut(detail, 200)
    return [(_path(parts), detail)]


def _none_fits(error: jsonschema_rs.ValidationError, options: list[list[Any]]) -> str:
    """Why no option of an ``anyOf``/``oneOf`` takes a value: the names one of which is
    missing, the types one of which is expected, or else each option's first errors."""
    singles = [option[0] for option in options if len(option) == 1]
    if len(singles) == len(options):  # said at once, before any option's errors are made
        if all(isinstance(wrong.kind, Kind.Required) for wrong in singles):
            names = dict.fromkeys(repr(_said(wrong)[0][0]) for wrong in singles)
            return f"needs {_either(list(names))}"
        at = error.instance_path
        typed = [k for e in singles if e.instance_path == at and isinstance(k := e.kind, Kind.Type)]
        if len(typed) == len(options):
            return _expected([name for kind in typed for name in kind.types], error.instance)
    # options nest as deep as the value does: a few of each, each cut short
    path = _path(error.instance_path)
    said = ([e for wrong in option[:3] for e in _said(wrong)] for option in options[:5])
    each = (", ".join(f"'{w}': {d}" if w != path else d for w, d in errs[:3]) for errs in said)
    listed = "; ".join(f"{number}: {_cut(text, 200)}" for number, text in enumerate(each, 1))
    return f"matches none of the {error.kind.name} options ({listed})"


def _expected(types: list[str], value: Any) -> str:
    names = [f"`{name}`" for name in dict.fromkeys(types)]
    return f"Expected {_either(names)}, got `{_JSON_TYPES.get(type(value), type(value).__name__)}`"


def _path(parts: list[str | int]) -> str:
    path = ""
    for part in parts:
        path = f"{path}[{part}]" if isinstance(part, int) else f"{path}.{part}" if path else part
    return path


def _cut(text: str, size: int) -> str:
    return text if len(text) <= size else text[: size - 1] + "…"


def _either(items: list[str], word: str = "or") -> str:
    return f"{', '.join(items[:-1])} {word} {items[-1]}" if len(items) > 1 else "".join(items)


__all__ = ["arguments_validator"]
