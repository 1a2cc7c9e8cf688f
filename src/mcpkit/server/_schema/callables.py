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

import functools
import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, get_args, get_origin

import msgspec

from mcpkit.protocol._wrapped_results import wrapper_schema
from mcpkit.server._schema.docstrings import parse_docstring
from mcpkit.server._schema.engines import (
    _enc_hook,
    _finish_input_schema,
    _fix_enum_order,
    _hoist_root,
    _import_pydantic,
    _msgspec_engine,
    _pydantic_available,
    _pydantic_engine,
    _strip_auto_titles,
    schema_generator,
)
from mcpkit.server._schema.type_hints import (
    _collect_params,
    _hint_target,
    _is_record,
    _is_union,
    _module_root,
    _needs_pydantic,
    _resolve_hints,
    _strip_annotated,
    _to_msgspec_type,
)

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
    #: The types (``int``, ``str``) whose every value fits the wrapped output schema as it
    #: is: such a result needs no structuring step (nor its check).
    plain_output: tuple[type, ...] = ()

    def validate(self, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        """Check call arguments against the signature; return the keyword arguments.

        ``None`` means no arguments. Unknown arguments are ignored; injected parameters are
        not part of the result. Raises ``InvalidParamsError`` (-32602) naming the argument.
        """
        return self._validator({} if arguments is None else arguments)

    def structure_output(self, value: Any) -> Any:
        """Turn a return value into JSON-able builtins for ``structuredContent``.

        Wrapped as ``{"result": value}`` when ``wraps_output``; returned unchanged when
        there is no output schema. Raises when the value is not one the output schema
        describes (``-> int`` returning a ``str``): the spec says structured results MUST
        conform, and a client that checks them would fail the call with a vaguer error.
        """
        return self._serializer(value)


# --------------------------------------------------------------------------- output


def _is_content_type(tp: Any) -> bool:
    tp = _strip_annotated(tp)
    if isinstance(tp, type):
        # mcpkit's Image/Audio (anything with to_content()) are content blocks, not records.
        return (
            tp.__name__.endswith("Content")
            or tp.__name__ == "CallToolResult"
            or hasattr(tp, "to_content")
        )
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
        return (
            bool(items)
            and all(_is_content_type(arg) or arg is str for arg in items)
            and any(_is_content_type(arg) for arg in items)
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
    schema = wrapper_schema(raw)
    if defs:
        _strip_auto_titles(defs)
        schema["$defs"] = defs

    def dump_wrapped(value: Any) -> Any:
        return {"result": dump(value)}

    return schema, True, dump_wrapped


def _msgspec_output(tp: Any) -> tuple[dict[str, Any], Callable[[Any], Any]]:
    target = _to_msgspec_type(tp)
    check = msgspec.json.Decoder(target).decode

    def dump(value: Any) -> Any:
        raw = msgspec.json.encode(value, enc_hook=_enc_hook)
        check(raw)  # the JSON sent must decode as the return type: it then fits the schema
        return msgspec.json.decode(raw)

    return msgspec.json.schema(target), dump


def _plain_output(tp: Any) -> tuple[type, ...]:
    """The types whose every value fits the output schema of ``tp`` (a wrapped scalar or
    union), with no constraint or ``Literal`` narrowing them: ``int`` for ``int`` and
    ``float``, ``str`` for ``str``."""
    if tp is int or tp is float:
        return (int,)
    if tp is str:
        return (str,)
    if _is_union(tp):
        found: list[type] = []
        for arg in get_args(tp):
            found += [kind for kind in _plain_output(arg) if kind not in found]
        return tuple(found)
    return ()


def _pydantic_output(tp: Any) -> tuple[dict[str, Any], Callable[[Any], Any]]:
    pydantic = _import_pydantic()
    adapter = pydantic.TypeAdapter(tp)
    raw = adapter.json_schema(mode="serialization", schema_generator=schema_generator())

    def dump(value: Any) -> Any:
        checked = adapter.validate_python(value)  # an instance passes as it is
        return adapter.dump_python(checked, mode="json", by_alias=True, warnings=False)

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
    plain_output = _plain_output(return_hint) if wraps_output else ()

    return CallableSignature(
        input_schema=input_schema,
        output_schema=output_schema,
        wraps_output=wraps_output,
        description=description,
        param_descriptions=param_descriptions,
        injected=injected,
        _validator=validator,
        _serializer=serializer,
        plain_output=plain_output,
    )
