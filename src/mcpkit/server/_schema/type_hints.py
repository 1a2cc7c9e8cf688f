"""Type-hint helpers shared by the schema engines: unwrapping ``Annotated``, unions and
optionals, recognising records (dataclasses, TypedDicts, Structs, pydantic models), constraint
metadata, and collecting a callable's parameters."""

from __future__ import annotations

import dataclasses
import functools
import inspect
import logging
import re
import sys
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import msgspec

from mcpkit.server._inject.markers import is_marked

logger = logging.getLogger(__name__)

_EMPTY = inspect.Parameter.empty
_NONE_TYPE = type(None)

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
                doc: str = meta.documentation
                return doc
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
        return Union[new_args]  # noqa: UP007 - built from a tuple at run time
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
        call = getattr(type(fn), "__call__", None)  # noqa: B004 - the class attribute, not callable()
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
            hints[name] = eval(raw, namespace)
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
        if is_marked(hint, parameter.default):
            continue  # Header / State / Depends: filled by the server (_inject.plan)
        kind = _injected_type(hint, injectable)
        if kind is not None:
            injected[parameter.name] = kind
            continue
        if parameter.kind is inspect.Parameter.POSITIONAL_ONLY:
            raise TypeError(
                f"{_callable_name(fn)}: positional-only parameter {parameter.name!r} "
                "cannot be bound from tool arguments"
            )
        if isinstance(hint, str):
            # Said, not refused: the function still works, but its argument goes unchecked.
            logger.warning(
                "%s: the annotation %r of parameter %r names nothing the function's module "
                "can see (defined in a function, or imported under TYPE_CHECKING?), so it "
                "takes any JSON value, unchecked",
                _callable_name(fn),
                hint,
                parameter.name,
            )
        if hint is _EMPTY or hint is object or isinstance(hint, str):
            hint = Any  # no (usable) annotation: any JSON value
        if parameter.default is None and not _admits_none(hint):
            hint = Union[hint, None]  # noqa: UP007 - `x: int = None` means "optional int"
        params.append(_Param(parameter.name, hint, parameter.default))
    return params, injected


def _callable_name(fn: Any) -> str:
    target = _hint_target(fn)
    return getattr(target, "__qualname__", None) or getattr(target, "__name__", None) or repr(fn)


def _struct_name(fn: Any) -> str:
    base = re.sub(r"\W", "_", getattr(_hint_target(fn), "__name__", "") or "tool")
    return f"{base}_arguments"
