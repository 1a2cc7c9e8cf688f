"""From a Python callable to what an MCP tool or prompt needs.

This module owns the translation of a function signature into:

* the tool's ``inputSchema`` (a self-contained JSON Schema object, draft 2020-12),
* its ``outputSchema`` and how a return value becomes ``structuredContent``,
* argument validation on each call (JSON arguments -> keyword arguments),
* the description and per-parameter help text taken from the docstring.

Two validation engines sit behind one interface. msgspec is the default: the parameters
become a ``msgspec.defstruct`` type, validated with ``msgspec.convert``. pydantic is used
only when an annotation needs it (a ``BaseModel``, a ``pydantic.Field``, constraints
msgspec cannot express); it is imported lazily and is an optional extra.

Both engines follow JSON semantics and do not coerce: ``"5"`` is not an ``int``, but an
``int`` is a valid ``float`` and an ISO string is a valid ``datetime``.
"""

from __future__ import annotations

import copy
import dataclasses
import enum
import functools
import inspect
import re
import sys
import types
import typing
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import msgspec

from mcpkit._exceptions import InvalidParamsError

__all__ = ["CallableSignature", "inspect_callable", "parse_docstring"]

_EMPTY = inspect.Parameter.empty
_NONE_TYPE = type(None)


# --------------------------------------------------------------------------- result type


@dataclass(frozen=True, slots=True)
class CallableSignature:
    """What an MCP tool or prompt needs to know about a Python callable.

    ``input_schema`` is always ``{"type": "object", "properties": {...}}`` with
    ``"required"`` when some parameter has no default, and ``"$defs"`` when nested types
    need them (every ``$ref`` points into that top-level ``$defs``).
    ``output_schema`` is ``None`` when the callable has no structured output;
    ``wraps_output`` says a primitive/list result is sent as ``{"result": value}``.
    """

    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    wraps_output: bool
    description: str | None
    param_descriptions: dict[str, str]
    injected: dict[str, type]
    _validator: Callable[[Any], dict[str, Any]] = field(repr=False, compare=False)
    _serializer: Callable[[Any], Any] = field(repr=False, compare=False)

    def validate(self, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        """Check call arguments against the signature; return the keyword arguments.

        ``None`` means no arguments. Unknown arguments are ignored; injected parameters are
        not part of the result. Raises ``InvalidParamsError`` (-32602) naming the argument.
        """
        return self._validator({} if arguments is None else arguments)

    def structure_output(self, value: Any) -> Any:
        """Turn a return value into JSON-able builtins for ``structuredContent``.

        Wrapped as ``{"result": value}`` when ``wraps_output``; returned unchanged when
        there is no output schema.
        """
        return self._serializer(value)


# --------------------------------------------------------------------------- docstrings

_PARAM_SECTIONS = frozenset(
    {
        "args",
        "arguments",
        "parameters",
        "params",
        "keyword args",
        "keyword arguments",
        "other parameters",
    }
)
_OTHER_SECTIONS = frozenset(
    {
        "returns",
        "return",
        "raises",
        "raise",
        "yields",
        "yield",
        "examples",
        "example",
        "note",
        "notes",
        "attributes",
        "see also",
        "warning",
        "warnings",
        "todo",
        "references",
    }
)
_GOOGLE_HEADER = re.compile(r"^([A-Za-z][A-Za-z ]*?)\s*:\s*$")
_NUMPY_RULE = re.compile(r"^\s*-{3,}\s*$")
_REST_FIELD = re.compile(
    r"^:(?:param|parameter|arg|argument|key|keyword|type|returns?|rtype|raises?|except|"
    r"exception|yields?|ytype|var|ivar|cvar|vartype|meta)\b[^:]*:"
)
_REST_PARAM = re.compile(
    r"^:(?:param|parameter|arg|argument|key|keyword)\s+(?:[^:]*\s)?\*{0,2}(\w+)\s*:\s*(.*)$"
)
_GOOGLE_ENTRY = re.compile(r"^\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_NUMPY_ENTRY = re.compile(r"^(\*{0,2}\w+(?:\s*,\s*\*{0,2}\w+)*)\s*(?::.*)?$")


def parse_docstring(doc: str | None) -> tuple[str | None, dict[str, str]]:
    """Split a docstring into its description and per-parameter help.

    The description is everything before the first section (``Args:``, ``Returns:``, a
    numpy ``Parameters``/``----------`` header, or a reST ``:param x:`` field), dedented
    and stripped; ``None`` when empty. Parameters come from Google style
    (``name: text`` / ``name (type): text``), numpy style and reST ``:param name: text``;
    continuation lines are joined with single spaces.
    """
    if not doc or not doc.strip():
        return None, {}
    lines = inspect.cleandoc(doc).splitlines()
    sections = list(_find_sections(lines))
    first = sections[0][0] if sections else len(lines)
    description = "\n".join(lines[:first]).strip() or None

    params: dict[str, list[str]] = {}
    for index, (start, body_start, kind) in enumerate(sections):
        end = sections[index + 1][0] if index + 1 < len(sections) else len(lines)
        body = lines[body_start:end]
        if kind == "google":
            _parse_google_params(body, params)
        elif kind == "numpy":
            _parse_numpy_params(body, params)
        elif kind == "rest":
            _parse_rest_param(body, params)
    joined = {name: " ".join(parts).strip() for name, parts in params.items()}
    return description, {name: text for name, text in joined.items() if text}


def _find_sections(lines: list[str]) -> Iterator[tuple[int, int, str]]:
    """Yield ``(header_line, body_start, kind)``; kind is google/numpy/rest/other."""
    for i, line in enumerate(lines):
        if not line or line[0].isspace():
            continue  # section headers sit at the docstring's own indent
        stripped = line.strip()
        header = _GOOGLE_HEADER.match(stripped)
        if header and header.group(1).lower() in _PARAM_SECTIONS | _OTHER_SECTIONS:
            params = header.group(1).lower() in _PARAM_SECTIONS
            yield i, i + 1, "google" if params else "other"
        elif (
            stripped.lower() in _PARAM_SECTIONS | _OTHER_SECTIONS
            and i + 1 < len(lines)
            and _NUMPY_RULE.match(lines[i + 1])
        ):
            yield i, i + 2, "numpy" if stripped.lower() in _PARAM_SECTIONS else "other"
        elif _REST_FIELD.match(stripped):
            yield i, i, "rest"


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _parse_google_params(body: list[str], out: dict[str, list[str]]) -> None:
    base: int | None = None
    current: str | None = None
    for line in body:
        if not line.strip():
            continue
        indent = _indent(line)
        if base is None:
            base = indent
        entry = _GOOGLE_ENTRY.match(line.strip()) if indent <= base else None
        if entry:
            current = entry.group(1)
            out[current] = [entry.group(2)]
        elif current is not None:
            out[current].append(line.strip())


def _parse_numpy_params(body: list[str], out: dict[str, list[str]]) -> None:
    base: int | None = None
    current: list[str] = []
    for line in body:
        if not line.strip():
            continue
        indent = _indent(line)
        if base is None:
            base = indent
        entry = _NUMPY_ENTRY.match(line.strip()) if indent <= base else None
        if entry:
            names = [n.strip().lstrip("*") for n in entry.group(1).split(",")]
            current = names
            for name in names:
                out[name] = []
        else:
            for name in current:
                out[name].append(line.strip())


def _parse_rest_param(body: list[str], out: dict[str, list[str]]) -> None:
    match = _REST_PARAM.match(body[0].strip()) if body else None
    if match:
        out[match.group(1)] = [match.group(2), *(line.strip() for line in body[1:])]


# --------------------------------------------------------------------------- type helpers


def _strip_annotated(tp: Any) -> Any:
    while get_origin(tp) is Annotated:
        tp = get_args(tp)[0]
    return tp


def _is_union(tp: Any) -> bool:
    return get_origin(tp) in (Union, types.UnionType)


def _admits_none(tp: Any) -> bool:
    tp = _strip_annotated(tp)
    if tp is Any or tp is None or tp is _NONE_TYPE:
        return True
    return _is_union(tp) and any(_admits_none(arg) for arg in get_args(tp))


def _is_typeddict(tp: Any) -> bool:
    # typing.is_typeddict misses typing_extensions.TypedDict on 3.11
    return isinstance(tp, type) and issubclass(tp, dict) and hasattr(tp, "__required_keys__")


def _is_pydantic_type(tp: Any) -> bool:
    # attribute checks, so pydantic need not be imported to answer "no"
    return isinstance(tp, type) and (
        hasattr(tp, "__pydantic_validator__") or hasattr(tp, "__get_pydantic_core_schema__")
    )


def _is_record(tp: Any) -> bool:
    """A type that validates to/from a JSON object with named fields."""
    return isinstance(tp, type) and (
        dataclasses.is_dataclass(tp)
        or _is_typeddict(tp)
        or issubclass(tp, msgspec.Struct)
        or _is_pydantic_type(tp)
    )


def _class_hints(cls: type) -> dict[str, Any]:
    try:
        return typing.get_type_hints(cls, include_extras=True)
    except Exception:  # unresolvable forward refs: the engine will report them
        return {}


def _module_root(obj: Any) -> str:
    return (getattr(type(obj), "__module__", "") or "").partition(".")[0]


def _constraint_kwargs(meta: Any) -> dict[str, Any] | None:
    """msgspec.Meta kwargs for an annotated_types constraint, or None if not expressible."""
    at = sys.modules.get("annotated_types")
    if at is None or _module_root(meta) != "annotated_types":
        return None
    if isinstance(meta, at.GroupedMetadata):  # Interval, Len: a bundle of simple ones
        merged: dict[str, Any] = {}
        for part in meta:
            kwargs = _constraint_kwargs(part)
            if kwargs is None:
                return None
            merged.update(kwargs)
        return merged
    # each simple constraint's attribute has the same name as the msgspec.Meta keyword
    simple = {
        at.Gt: "gt",
        at.Ge: "ge",
        at.Lt: "lt",
        at.Le: "le",
        at.MultipleOf: "multiple_of",
        at.MinLen: "min_length",
        at.MaxLen: "max_length",
    }
    key = simple.get(type(meta))
    return None if key is None else {key: getattr(meta, key)}


def _is_doc_metadata(meta: Any) -> bool:
    # Annotated[x, "text"], annotated_types.doc("text"), typing_extensions.Doc("text")
    return isinstance(meta, str) or (
        type(meta).__name__ in ("DocInfo", "Doc")
        and isinstance(getattr(meta, "documentation", None), str)
    )


def _annotation_description(tp: Any) -> str | None:
    """A description attached to a parameter's own ``Annotated`` metadata, if any."""
    while get_origin(tp) is Annotated:
        base, *metadata = get_args(tp)
        for meta in metadata:
            if isinstance(meta, str):
                return meta
            if _is_doc_metadata(meta):
                return meta.documentation
        tp = base
    return None


def _needs_pydantic(tp: Any, *, nested: bool = False, seen: set[int] | None = None) -> bool:
    """True if ``tp`` uses anything only pydantic can validate or describe.

    ``nested`` marks fields of a dataclass/TypedDict/Struct, where msgspec would silently
    ignore annotated_types constraints (at the top level they are translated instead).
    """
    seen = set() if seen is None else seen
    origin = get_origin(tp)
    if origin is Annotated:
        base, *metadata = get_args(tp)
        for meta in metadata:
            root = _module_root(meta)
            if root in ("pydantic", "pydantic_core"):
                return True
            if hasattr(meta, "__get_pydantic_core_schema__"):
                return True
            if root == "annotated_types" and (nested or _constraint_kwargs(meta) is None):
                if not _is_doc_metadata(meta):
                    return True
        return _needs_pydantic(base, nested=nested, seen=seen)
    if origin is Literal:
        return False
    if origin is not None:
        return any(
            _needs_pydantic(arg, nested=nested, seen=seen)
            for arg in get_args(tp)
            if arg is not Ellipsis
        )
    if _is_pydantic_type(tp):
        return True
    if _is_record(tp) and id(tp) not in seen:
        seen.add(id(tp))
        return any(
            _needs_pydantic(hint, nested=True, seen=seen) for hint in _class_hints(tp).values()
        )
    return False


def _to_msgspec_type(tp: Any) -> Any:
    """Rewrite annotated_types constraints (and doc strings) into ``msgspec.Meta``."""
    origin = get_origin(tp)
    if origin is Annotated:
        base, *metadata = get_args(tp)
        kept: list[Any] = []
        constraints: dict[str, Any] = {}
        for meta in metadata:
            kwargs = _constraint_kwargs(meta)
            if kwargs is not None:
                constraints.update(kwargs)
            elif not _is_doc_metadata(meta):  # docs are applied to the schema afterwards
                kept.append(meta)
        if constraints:
            kept.append(msgspec.Meta(**constraints))
        base = _to_msgspec_type(base)
        return Annotated[(base, *kept)] if kept else base
    args = get_args(tp)
    if origin is None or origin is Literal or not args:
        return tp
    new_args = tuple(arg if arg is Ellipsis else _to_msgspec_type(arg) for arg in args)
    if all(a is b for a, b in zip(new_args, args)):
        return tp
    if origin in (Union, types.UnionType):
        return Union[new_args]
    return origin[new_args]


# --------------------------------------------------------------------------- parameters


@dataclass(slots=True)
class _Param:
    name: str
    annotation: Any  # resolved annotation; Any when missing or unresolvable
    default: Any  # inspect.Parameter.empty when required


def _hint_target(fn: Callable[..., Any]) -> Any:
    """The object whose annotations describe ``fn``'s parameters."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    if not (inspect.isfunction(fn) or inspect.ismethod(fn)) and callable(fn):
        call = getattr(type(fn), "__call__", None)
        if call is not None and (inspect.isfunction(call) or inspect.ismethod(call)):
            fn = call
    return inspect.unwrap(fn) if callable(fn) else fn


def _resolve_hints(fn: Callable[..., Any]) -> dict[str, Any]:
    target = _hint_target(fn)
    try:
        return typing.get_type_hints(target, include_extras=True)
    except Exception:
        pass
    # One bad forward reference must not lose every other annotation.
    hints: dict[str, Any] = {}
    namespace = dict(getattr(target, "__globals__", {}))
    for name, raw in getattr(target, "__annotations__", {}).items():
        if not isinstance(raw, str):
            hints[name] = raw
            continue
        try:
            hints[name] = eval(raw, namespace)  # noqa: S307 - the function's own annotation
        except Exception:
            hints[name] = raw  # left as a string: matched against injectable names below
    return hints


def _injected_type(hint: Any, injectable: tuple[type, ...]) -> type | None:
    if not injectable:
        return None
    if isinstance(hint, str):  # unresolved (e.g. imported under TYPE_CHECKING)
        words = set(re.findall(r"[A-Za-z_][\w]*", hint))
        return next((kind for kind in injectable if kind.__name__ in words), None)
    tp = _strip_annotated(hint)
    if _is_union(tp):
        members = [arg for arg in get_args(tp) if arg is not _NONE_TYPE]
        if len(members) != 1:
            return None
        tp = _strip_annotated(members[0])
    tp = get_origin(tp) or tp  # Context[Session, ...] -> Context
    if isinstance(tp, type) and issubclass(tp, injectable):
        return tp
    return None


def _collect_params(
    fn: Callable[..., Any],
    signature: inspect.Signature,
    hints: Mapping[str, Any],
    injectable: tuple[type, ...],
    skip_params: int,
) -> tuple[list[_Param], dict[str, type]]:
    params: list[_Param] = []
    injected: dict[str, type] = {}
    to_skip = skip_params
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    for parameter in signature.parameters.values():
        if to_skip and parameter.kind in positional:
            to_skip -= 1
            continue
        if parameter.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            continue
        hint = hints.get(parameter.name, parameter.annotation)
        kind = _injected_type(hint, injectable)
        if kind is not None:
            injected[parameter.name] = kind
            continue
        if parameter.kind is inspect.Parameter.POSITIONAL_ONLY:
            raise TypeError(
                f"{_callable_name(fn)}: positional-only parameter {parameter.name!r} "
                "cannot be bound from tool arguments"
            )
        if hint is _EMPTY or hint is object or isinstance(hint, str):
            hint = Any  # no (usable) annotation: any JSON value
        if parameter.default is None and not _admits_none(hint):
            hint = Union[hint, None]  # `x: int = None` means "optional int"
        params.append(_Param(parameter.name, hint, parameter.default))
    return params, injected


def _callable_name(fn: Any) -> str:
    target = _hint_target(fn)
    return getattr(target, "__qualname__", None) or getattr(target, "__name__", None) or repr(fn)


def _struct_name(fn: Any) -> str:
    base = re.sub(r"\W", "_", getattr(_hint_target(fn), "__name__", "") or "tool")
    return f"{base}_arguments"


# --------------------------------------------------------------------------- errors


_MSGSPEC_PATH = re.compile(r"^(?P<detail>.*?) - at `\$(?P<path>.*)`$", re.S)
_MSGSPEC_MISSING = re.compile(r"^Object missing required field `(?P<field>.+)`$")


def _msgspec_error(exc: msgspec.ValidationError) -> InvalidParamsError:
    text = str(exc)
    match = _MSGSPEC_PATH.match(text)
    detail, path = (match["detail"], match["path"].lstrip(".")) if match else (text, "")
    missing = _MSGSPEC_MISSING.match(detail)
    if missing:
        full = f"{path}.{missing['field']}" if path else missing["field"]
        return _invalid_params([(full, "missing required field")], True)
    return _invalid_params([(path, detail)], False)


def _invalid_params(errors: list[tuple[str, str]], missing_first: bool) -> InvalidParamsError:
    path, detail = errors[0]
    if not path:
        message = f"Invalid arguments: {detail}"
    elif missing_first and "." not in path and "[" not in path:
        message = f"Missing required argument '{path}'"
    else:
        message = f"Invalid argument '{path}': {detail}"
    if len(errors) > 1:
        message += f" (and {len(errors) - 1} more error{'s' if len(errors) > 2 else ''})"
    data = {"errors": [{"path": p, "message": m} for p, m in errors]}
    return InvalidParamsError(message, data)


def _pydantic_error(exc: Any, aliases: Mapping[str, str]) -> InvalidParamsError:
    errors: list[tuple[str, str]] = []
    missing_first = False
    for index, error in enumerate(exc.errors(include_url=False)):
        path = ""
        for part in error.get("loc", ()):
            if isinstance(part, int):
                path += f"[{part}]"
            else:
                part = aliases.get(part, part) if not path else part
                path = f"{path}.{part}" if path else str(part)
        if index == 0:
            missing_first = error.get("type") == "missing"
        missing = error.get("type") == "missing"
        errors.append((path, "missing required field" if missing else error["msg"]))
    return _invalid_params(errors or [("", str(exc))], missing_first)


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
    options = {"kw_only": True, "forbid_unknown_fields": False, "module": __name__}
    try:
        struct = msgspec.defstruct(name, call_fields, **options)
        raw = msgspec.json.schema(msgspec.defstruct(name, schema_fields, **options))
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{_callable_name(fn)}: unsupported parameter type: {exc}") from exc

    convert = msgspec.convert
    asdict = msgspec.structs.asdict
    validation_error = msgspec.ValidationError

    def validate(arguments: Any) -> dict[str, Any]:
        try:
            return asdict(convert(arguments, struct))
        except validation_error as exc:
            raise _msgspec_error(exc) from None

    return raw, validate


# --------------------------------------------------------------------------- pydantic engine


def _import_pydantic() -> Any:
    try:
        import pydantic
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "this signature needs pydantic (a BaseModel, pydantic.Field or a constraint "
            "msgspec cannot express); install the extra: pip install 'mcpkit[pydantic]'"
        ) from exc
    return pydantic


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
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # non-JSON-able defaults are just left out
            raw = model.model_json_schema()
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


# --------------------------------------------------------------------------- output


def _is_content_type(tp: Any) -> bool:
    tp = _strip_annotated(tp)
    if isinstance(tp, type):
        return tp.__name__.endswith("Content") or tp.__name__ == "CallToolResult"
    if _is_union(tp):
        return all(_is_content_type(arg) or arg is _NONE_TYPE for arg in get_args(tp))
    return False


def _is_unstructured(tp: Any) -> bool:
    """True for return types that are sent as plain content, with no outputSchema."""
    tp = _strip_annotated(tp)
    if tp is _EMPTY or tp is None or tp is _NONE_TYPE or tp is Any or tp is str:
        return True
    if isinstance(tp, str):  # an unresolvable string annotation
        return True
    if _is_content_type(tp):
        return True
    origin, args = get_origin(tp), get_args(tp)
    if tp in (dict, list) or (origin in (dict, list) and not args):
        return True
    if _is_union(tp):
        return all(_is_unstructured(arg) for arg in args)
    if origin in (list, tuple, set, frozenset, Sequence, Iterable):
        items = [arg for arg in args if arg is not Ellipsis]
        return bool(items) and all(_is_content_type(arg) or arg is str for arg in items) and any(
            _is_content_type(arg) for arg in items
        )
    return False


def _is_object_type(tp: Any) -> bool:
    tp = _strip_annotated(tp)
    if _is_record(tp):
        return True
    origin = get_origin(tp)
    if origin is None or not get_args(tp):
        return False
    return isinstance(origin, type) and issubclass(origin, Mapping)


def _identity(value: Any) -> Any:
    return value


def _output_plan(
    tp: Any,
) -> tuple[dict[str, Any] | None, bool, Callable[[Any], Any]]:
    """(output_schema, wraps_output, serializer) for a return annotation."""
    if _is_unstructured(tp):
        return None, False, _identity
    wraps = not _is_object_type(tp)
    try:
        raw, dump = _pydantic_output(tp) if _needs_pydantic(tp) else _msgspec_output(tp)
    except Exception:
        try:  # a type msgspec lacks may still suit pydantic
            raw, dump = _pydantic_output(tp)
        except Exception:
            # A return type we cannot describe still works as unstructured content.
            return None, False, _identity
    _fix_enum_order(raw, (tp,))

    if not wraps:
        schema = _hoist_root(raw)
        _strip_auto_titles(schema)
        return schema, False, dump

    defs = raw.pop("$defs", None)
    _strip_auto_titles(raw)
    schema = {"type": "object", "properties": {"result": raw}, "required": ["result"]}
    if defs:
        _strip_auto_titles(defs)
        schema["$defs"] = defs

    def dump_wrapped(value: Any) -> Any:
        return {"result": dump(value)}

    return schema, True, dump_wrapped


def _msgspec_output(tp: Any) -> tuple[dict[str, Any], Callable[[Any], Any]]:
    return msgspec.json.schema(_to_msgspec_type(tp)), _to_json


def _pydantic_output(tp: Any) -> tuple[dict[str, Any], Callable[[Any], Any]]:
    pydantic = _import_pydantic()
    adapter = pydantic.TypeAdapter(tp)
    raw = adapter.json_schema(mode="serialization")

    def dump(value: Any) -> Any:
        return adapter.dump_python(value, mode="json", by_alias=True, warnings=False)

    return raw, dump


# --------------------------------------------------------------------------- entry point


def inspect_callable(
    fn: Callable[..., Any],
    *,
    injectable: tuple[type, ...] = (),
    skip_params: int = 0,
) -> CallableSignature:
    """Describe ``fn`` for MCP: input/output schemas, validation, docs, injected params.

    ``injectable`` lists types (e.g. a request context) whose parameters the server fills
    itself: they are left out of the schema and reported in ``injected``.
    ``skip_params`` drops that many leading positional parameters (1 for an unbound
    method's ``self``). ``*args``/``**kwargs`` are ignored. Raises ``TypeError`` for a
    parameter type neither engine can handle, ``ImportError`` if pydantic is needed but
    not installed.
    """
    signature = inspect.signature(fn)
    hints = _resolve_hints(fn)
    params, injected = _collect_params(fn, signature, hints, tuple(injectable), skip_params)
    # __doc__ rather than inspect.getdoc: no docstrings inherited from base classes
    doc = getattr(_hint_target(fn), "__doc__", None)
    if doc is None and not isinstance(fn, functools.partial) and not inspect.isroutine(fn):
        doc = type(fn).__doc__  # a callable object documented on its class
    description, param_descriptions = parse_docstring(doc)

    uses_pydantic = any(
        _needs_pydantic(p.annotation) or _module_root(p.default) == "pydantic" for p in params
    )
    if uses_pydantic:
        raw, validator = _pydantic_engine(fn, params)
    else:
        try:
            raw, validator = _msgspec_engine(fn, params)
        except TypeError as msgspec_error:
            # A type msgspec lacks (pathlib.Path, ipaddress, ...) may still suit pydantic.
            if not _pydantic_available():
                raise
            try:
                raw, validator = _pydantic_engine(fn, params)
            except TypeError:
                raise msgspec_error from None
    input_schema = _finish_input_schema(raw, params, param_descriptions)

    return_hint = hints.get("return", signature.return_annotation)
    output_schema, wraps_output, serializer = _output_plan(return_hint)

    return CallableSignature(
        input_schema=input_schema,
        output_schema=output_schema,
        wraps_output=wraps_output,
        description=description,
        param_descriptions=param_descriptions,
        injected=injected,
        _validator=validator,
        _serializer=serializer,
    )
