"""The two schema engines behind ``inspect_callable``: msgspec (default) and pydantic
(when an annotation needs it), plus the JSON Schema clean-ups and error translation they share."""

from __future__ import annotations

import copy
import enum
import functools
import inspect
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Annotated, Any, Literal, get_args, get_origin

import msgspec

from mcpkit._exceptions import InvalidParamsError
from mcpkit._extras import require
from mcpkit.server._schema.type_hints import (
    _annotation_description,
    _callable_name,
    _class_hints,
    _is_record,
    _Param,
    _struct_name,
    _to_msgspec_type,
)

_EMPTY = inspect.Parameter.empty
_NONE_TYPE = type(None)


# --------------------------------------------------------------------------- errors


_MSGSPEC_PATH = re.compile(r"^(?P<detail>.*?) - at `\$(?P<path>.*)`$", re.S)
_MISSING = "missing required field"
#: A property an input schema given as it is does not allow (``additionalProperties: false``).
_UNKNOWN = "unknown field"
_MSGSPEC_MISSING = re.compile(r"^Object missing required field `(?P<field>.+)`$")


def _msgspec_error(exc: msgspec.ValidationError) -> InvalidParamsError:
    return _invalid_params(_msgspec_details(exc))


def _msgspec_details(exc: msgspec.ValidationError) -> list[tuple[str, str]]:
    """``[(path, detail)]`` of msgspec's one error (it stops at the first)."""
    text = str(exc)
    match = _MSGSPEC_PATH.match(text)
    detail, path = (match["detail"], match["path"].lstrip(".")) if match else (text, "")
    missing = _MSGSPEC_MISSING.match(detail)
    if missing:
        return [(f"{path}.{missing['field']}" if path else missing["field"], _MISSING)]
    return [(path, detail)]


#: Most argument errors one message spells out (all are in its data).
MAX_LISTED_ARGUMENT_ERRORS = 10


def _invalid_params(errors: list[tuple[str, str]]) -> InvalidParamsError:
    errors = sorted(errors, key=lambda error: error[1] != _MISSING)  # the missing ones first
    message = "; ".join(
        _argument_error(path, detail) for path, detail in errors[:MAX_LISTED_ARGUMENT_ERRORS]
    )
    if len(errors) > MAX_LISTED_ARGUMENT_ERRORS:
        message += f" (and {len(errors) - MAX_LISTED_ARGUMENT_ERRORS} more)"
    data = {"errors": [{"path": p, "message": m} for p, m in errors]}
    return InvalidParamsError(message, data)


def _argument_error(path: str, detail: str) -> str:
    if not path:
        return f"Invalid arguments: {detail}"
    if "." not in path and "[" not in path:
        if detail == _MISSING:
            return f"Missing required argument '{path}'"
        if detail == _UNKNOWN:
            return f"Unknown argument '{path}'"
    return f"Invalid argument '{path}': {detail}"


def _pydantic_error(exc: Any, aliases: Mapping[str, str]) -> InvalidParamsError:
    errors: list[tuple[str, str]] = []
    for error in exc.errors(include_url=False):
        path = ""
        for part in error.get("loc", ()):
            if isinstance(part, int):
                path += f"[{part}]"
            else:
                part = aliases.get(part, part) if not path else part
                path = f"{path}.{part}" if path else str(part)
        errors.append((path, _MISSING if error.get("type") == "missing" else error["msg"]))
    return _invalid_params(errors or [("", str(exc))])


# --------------------------------------------------------------------------- schema helpers


def _walk_refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            else:
                yield from _walk_refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _walk_refs(item)


def _hoist_root(schema: dict[str, Any]) -> dict[str, Any]:
    """Replace a top-level ``{"$ref": "#/$defs/X"}`` with X itself.

    The definition stays in ``$defs`` only when something still refers to it (recursion).
    """
    ref = schema.get("$ref")
    defs = dict(schema.get("$defs") or {})
    if not isinstance(ref, str) or not ref.startswith("#/$defs/"):
        return schema
    name = ref[len("#/$defs/") :].replace("~1", "/").replace("~0", "~")
    root = defs.get(name)
    if root is None:
        return schema
    if ref not in set(_walk_refs(defs)):
        del defs[name]
    hoisted = {k: v for k, v in schema.items() if k not in ("$ref", "$defs")}
    hoisted.update(copy.deepcopy(root))
    if defs:
        hoisted["$defs"] = defs
    return hoisted


def _auto_title(name: str) -> str:
    return name.title().replace("_", " ").strip()


def _strip_auto_titles(node: Any) -> None:
    """Drop the ``title`` pydantic derives from each property name."""
    if isinstance(node, dict):
        properties = node.get("properties")
        if isinstance(properties, dict):
            for name, prop in properties.items():
                if isinstance(prop, dict) and prop.get("title") == _auto_title(name):
                    del prop["title"]
        for value in node.values():
            _strip_auto_titles(value)
    elif isinstance(node, list):
        for item in node:
            _strip_auto_titles(item)


def _declared_enums(tp: Any, out: dict[frozenset[bytes], list[Any]], seen: set[int]) -> None:
    """Record each Literal/Enum in ``tp`` by its value set, in declaration order."""
    origin = get_origin(tp)
    if origin is Literal:
        _record_enum([v.value if isinstance(v, enum.Enum) else v for v in get_args(tp)], out)
    elif origin is not None:
        for arg in get_args(tp)[: 1 if origin is Annotated else None]:
            if arg is not Ellipsis:
                _declared_enums(arg, out, seen)
    elif isinstance(tp, type) and issubclass(tp, enum.Enum):
        _record_enum([member.value for member in tp], out)
    elif _is_record(tp) and id(tp) not in seen:
        seen.add(id(tp))
        for hint in _class_hints(tp).values():
            _declared_enums(hint, out, seen)


def _enum_key(values: list[Any]) -> frozenset[bytes]:
    return frozenset(msgspec.json.encode(value) for value in values)


def _record_enum(values: list[Any], out: dict[frozenset[bytes], list[Any]]) -> None:
    try:
        out.setdefault(_enum_key(values), _to_json(values))
    except Exception:  # enum values that are not JSON: nothing to reorder
        pass


def _restore_enum_order(node: Any, declared: Mapping[frozenset[bytes], list[Any]]) -> None:
    """msgspec sorts ``enum`` values; put them back in the order the code declares them."""
    if isinstance(node, dict):
        values = node.get("enum")
        if isinstance(values, list) and declared:
            try:
                order = declared.get(_enum_key(values))
            except Exception:
                order = None
            if order is not None and len(order) == len(values):
                node["enum"] = list(order)
        for value in node.values():
            _restore_enum_order(value, declared)
    elif isinstance(node, list):
        for item in node:
            _restore_enum_order(item, declared)


def _fix_enum_order(schema: dict[str, Any], annotations: Iterable[Any]) -> None:
    declared: dict[frozenset[bytes], list[Any]] = {}
    seen: set[int] = set()
    for annotation in annotations:
        _declared_enums(annotation, declared, seen)
    _restore_enum_order(schema, declared)


def _enc_hook(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    if callable(dump):  # pydantic models nested in msgspec-known containers
        return dump(mode="json", by_alias=True)
    raise NotImplementedError(f"cannot convert {type(value).__name__} to JSON")


def _to_json(value: Any) -> Any:
    """``value`` as plain JSON types (lists, not tuples; str keys), exactly as sent."""
    # an encode/decode round trip is two C calls, cheaper than walking the value in Python
    return msgspec.json.decode(msgspec.json.encode(value, enc_hook=_enc_hook))


def _json_default(value: Any) -> tuple[bool, Any]:
    try:
        return True, _to_json(value)
    except Exception:
        return False, None


def _finish_input_schema(
    raw: dict[str, Any],
    params: list[_Param],
    param_descriptions: Mapping[str, str],
) -> dict[str, Any]:
    schema = _hoist_root(raw)
    _strip_auto_titles(schema)
    _fix_enum_order(schema, (p.annotation for p in params))
    properties: dict[str, Any] = schema.get("properties") or {}
    for param in params:
        prop = properties.get(param.name)
        if prop is None:
            continue
        if param.default is not _EMPTY and "default" not in prop:
            ok, value = _json_default(param.default)
            if ok:
                prop["default"] = value
        description = _annotation_description(param.annotation) or param_descriptions.get(
            param.name
        )
        if description and "description" not in prop:
            prop["description"] = description
    result: dict[str, Any] = {"type": "object", "properties": properties}
    if schema.get("required"):
        result["required"] = list(schema["required"])
    for key, value in schema.items():
        if key not in ("type", "properties", "required", "title", "description", "$defs"):
            result[key] = value
    if schema.get("$defs"):
        result["$defs"] = schema["$defs"]
    return result


# --------------------------------------------------------------------------- msgspec engine


def _msgspec_field_default(default: Any) -> Any:
    if isinstance(default, (list, dict, set, bytearray)):
        # msgspec refuses shared mutable defaults; hand each call its own copy
        return msgspec.field(default_factory=functools.partial(copy.deepcopy, default))
    return default


def _msgspec_engine(
    fn: Any, params: list[_Param]
) -> tuple[dict[str, Any], Callable[[Any], dict[str, Any]]]:
    name = _struct_name(fn)
    types_ = [_to_msgspec_type(p.annotation) for p in params]
    call_fields = [
        (p.name, tp) if p.default is _EMPTY else (p.name, tp, _msgspec_field_default(p.default))
        for p, tp in zip(params, types_)
    ]
    # The schema twin uses UNSET defaults: msgspec then marks the field optional without
    # trying to JSON-encode the real default (which may not be JSON-able).
    schema_fields = [
        (p.name, tp) if p.default is _EMPTY else (p.name, tp, msgspec.UNSET)
        for p, tp in zip(params, types_)
    ]
    options: dict[str, Any] = {"kw_only": True, "forbid_unknown_fields": False, "module": __name__}
    try:
        struct = msgspec.defstruct(name, call_fields, **options)
        raw = msgspec.json.schema(msgspec.defstruct(name, schema_fields, **options))
    except (TypeError, ValueError) as exc:
        raise _unsupported_type(fn, params, types_, exc) from exc

    convert = msgspec.convert
    asdict = msgspec.structs.asdict
    validation_error = msgspec.ValidationError

    checks = [(p.name, tp, p.default is _EMPTY) for p, tp in zip(params, types_)]

    def validate(arguments: Any) -> dict[str, Any]:
        try:
            return asdict(convert(arguments, struct))
        except validation_error as exc:
            raise _msgspec_errors(exc, arguments, checks) from None

    return raw, validate


def _msgspec_errors(
    exc: msgspec.ValidationError, arguments: Any, checks: list[tuple[str, Any, bool]]
) -> InvalidParamsError:
    """Every argument that is wrong, not only the first msgspec met: the model reads them
    (an ``isError`` result) and can fix them all in one go. The failure path alone pays."""
    if not isinstance(arguments, dict):
        return _msgspec_error(exc)
    errors: list[tuple[str, str]] = []
    for name, tp, required in checks:
        if name not in arguments:
            if required:
                errors.append((name, _MISSING))
            continue
        try:
            msgspec.convert(arguments[name], tp)
        except msgspec.ValidationError as one:
            [(inner, detail)] = _msgspec_details(one)
            joint = "" if not inner or inner.startswith("[") else "."
            errors.append((f"{name}{joint}{inner}", detail))
    if not errors:  # what the struct refused, no field alone does
        return _msgspec_error(exc)
    return _invalid_params(errors)


#: What a parameter's type may be, said when one is not.
_DESCRIBABLE = (
    "use str, int, float, bool, None, a list, dict or tuple of those, a Literal or Enum, a"
    " dataclass, a TypedDict, a msgspec Struct or a pydantic model"
)


def _unsupported_type(
    fn: Any, params: list[_Param], types_: list[Any], exc: Exception
) -> TypeError:
    """A parameter type no JSON Schema describes, named with its parameter when one alone
    is at fault (msgspec's own message names neither)."""
    for param, tp in zip(params, types_):
        try:
            msgspec.json.schema(tp)
        except (TypeError, ValueError):
            shown = getattr(param.annotation, "__name__", None) or repr(param.annotation)
            return TypeError(
                f"{_callable_name(fn)}: parameter {param.name!r} is a {shown}, which no JSON"
                f" Schema describes, so clients could not send it; {_DESCRIBABLE}"
            )
    return TypeError(f"{_callable_name(fn)}: unsupported parameter type ({exc}); {_DESCRIBABLE}")


# --------------------------------------------------------------------------- pydantic engine


def _import_pydantic() -> Any:
    return require(
        "pydantic",
        "pydantic",
        "this signature (a BaseModel, pydantic.Field or a constraint msgspec cannot express)",
    )


def schema_generator() -> type:
    """pydantic's JSON Schema generator, quiet about a default no JSON holds (one it leaves
    out of the schema, as mcpkit means it to): no warning for it, and the process's warning
    filters are never touched to hide one (that would reset what its host has shown once).
    Only called with pydantic there."""
    from pydantic.json_schema import GenerateJsonSchema

    class QuietDefaults(GenerateJsonSchema):
        ignored_warning_kinds = {"skipped-choice", "non-serializable-default"}

    return QuietDefaults


def _pydantic_available() -> bool:
    try:
        _import_pydantic()
    except ImportError:
        return False
    return True


def _pydantic_engine(
    fn: Any, params: list[_Param]
) -> tuple[dict[str, Any], Callable[[Any], dict[str, Any]]]:
    pydantic = _import_pydantic()
    reserved = set(dir(pydantic.BaseModel))
    definitions: dict[str, Any] = {}
    names: list[tuple[str, str]] = []  # (field name on the model, parameter name)
    for index, param in enumerate(params):
        annotation = param.annotation
        field_name = param.name
        if param.name.startswith("_") or param.name in reserved:
            # pydantic treats these as private/shadowing; validate under an alias instead
            field_name = f"mcpkit_arg_{index}"
            annotation = Annotated[annotation, pydantic.Field(alias=param.name)]
        default = ... if param.default is _EMPTY else param.default
        definitions[field_name] = (annotation, default)
        names.append((field_name, param.name))
    config = pydantic.ConfigDict(extra="ignore", protected_namespaces=())
    try:
        model = pydantic.create_model(_struct_name(fn), __config__=config, **definitions)
        raw = model.model_json_schema(schema_generator=schema_generator())
    except Exception as exc:
        raise TypeError(f"{_callable_name(fn)}: unsupported parameter type: {exc}") from exc

    aliases = {field_name: param_name for field_name, param_name in names}
    validator = model.__pydantic_validator__
    validation_error = pydantic.ValidationError
    encode = msgspec.json.encode

    def validate(arguments: Any) -> dict[str, Any]:
        try:
            # JSON-mode strict validation: JSON types only, no "5" -> 5 coercion
            payload = encode(arguments, enc_hook=_enc_hook)
        except Exception as exc:
            raise InvalidParamsError(f"Invalid arguments: {exc}") from None
        try:
            instance = validator.validate_json(payload, strict=True)
        except validation_error as exc:
            raise _pydantic_error(exc, aliases) from None
        return {param_name: getattr(instance, field_name) for field_name, param_name in names}

    return raw, validate
