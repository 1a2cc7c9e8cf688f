"""What ``McpClient.call_tool`` gives back: the ``CallToolResult``, and as ``data`` its
structured content as Python values. A result that is not an object travels as
``{"result": value}``, the tool's output schema saying so (one required property,
``result``: how mcpkit, FastMCP and the official SDK send it); ``data`` is then the value
itself, once the client has seen that schema in ``tools/list``.

Once it has, ``data`` is also of the tool's output type: the client makes that type from
the output schema (``_schema_types``: objects become frozen ``msgspec.Struct`` classes),
once per tool, and converts what conforms; what does not, or a schema it cannot make a
type of, leaves ``data`` the plain value (said in a debug log), never an error.
``output_type=`` on the call converts to a type of the caller's instead (a dataclass,
``msgspec.Struct``, ``TypedDict``, pydantic model, or any type msgspec reads), as the peers
hydrate results."""

from __future__ import annotations

import logging
from typing import Any

import msgspec

from mcpkit.client._results import convert
from mcpkit.client._schema_types import UnsupportedSchema, class_name, hydrate, schema_type
from mcpkit.protocol import types as t

logger = logging.getLogger("mcpkit.client")

#: Tools whose output schema (and the type made of it) a client remembers; past it, it
#: starts over.
MAX_OUTPUT_SCHEMAS = 1024

#: What a tool's entry holds before its type is made, and once no type could be.
_NOT_MADE = object()
_NO_TYPE = object()


class ToolResult(t.CallToolResult, dict=True):
    """A ``CallToolResult`` with ``data``: the structured content as Python values (None for
    a result without any, or a failure). ``data`` is no field of the wire: encoding the
    result leaves it out."""

    @property
    def data(self) -> Any:
        """The structured content, unwrapped and converted (see the module)."""
        return self.__dict__.get("_data")


def wraps_result(schema: Any) -> bool:
    """Whether an output schema is the ``{"result": value}`` wrapper of a result that is not
    an object."""
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return False
    properties = schema.get("properties")
    return (
        isinstance(properties, dict)
        and list(properties) == ["result"]
        and schema.get("required") == ["result"]
    )


class _ToolOutput:
    """One tool's output: whether it is wrapped, the schema of ``data``, its type once made."""

    __slots__ = ("made", "schema", "wrapped")

    def __init__(self, schema: Any) -> None:
        self.wrapped = wraps_result(schema)
        self.schema = _unwrapped(schema) if self.wrapped else schema
        self.made: Any = _NOT_MADE


class OutputSchemas:
    """What ``tools/list`` said of one client's tools' output, and the types made of it
    (bounded by ``limit`` tools)."""

    def __init__(self, limit: int = MAX_OUTPUT_SCHEMAS) -> None:
        self.limit = limit
        self._tools: dict[str, _ToolOutput] = {}

    def learn(self, tools: list[t.Tool]) -> None:
        """Remember what each listed tool's output schema says (a type already made is
        kept while the schema stays the same)."""
        if len(self._tools) + len(tools) > self.limit:
            self._tools.clear()
        for tool in tools[: self.limit]:
            known = self._tools.get(tool.name)
            output = _ToolOutput(tool.output_schema)
            if known is None or (known.schema, known.wrapped) != (output.schema, output.wrapped):
                self._tools[tool.name] = output

    def result(self, name: str, raw: Any, output_type: Any = None) -> ToolResult:
        """The result of a call of ``name``, its ``data`` made."""
        result = convert(raw, ToolResult)
        value = result.structured_content
        if value is None or result.is_error:
            return result
        output = self._tools.get(name)
        if output is not None and output.wrapped and isinstance(value, dict) and "result" in value:
            value = value["result"]
        if output_type is not None:
            value = _as_type(value, output_type)
        elif output is not None and output.schema is not None:
            value = _hydrated(name, output, value)
        result._data = value  # type: ignore[attr-defined]  # dict=True: not a wire field
        return result


def _hydrated(name: str, output: _ToolOutput, value: Any) -> Any:
    """``value`` as the type made of the tool's schema, or as it is when that cannot be."""
    if output.made is _NOT_MADE:
        try:
            output.made = schema_type(output.schema, class_name(f"{name} output"))
        except UnsupportedSchema as exc:
            logger.debug("tool %s: no type made of its output schema (%s)", name, exc)
            output.made = _NO_TYPE
    if output.made is _NO_TYPE:
        return value
    try:
        return hydrate(value, output.made)
    except msgspec.ValidationError as exc:
        logger.debug("tool %s: its result does not conform to its output schema (%s)", name, exc)
        return value


def _unwrapped(schema: dict[str, Any]) -> Any:
    """The schema of the wrapped value, with the definitions its references point to."""
    inner = schema["properties"]["result"]
    carried = {key: schema[key] for key in ("$defs", "definitions") if key in schema}
    if not carried or not isinstance(inner, dict):
        return inner
    return {**carried, **inner}


def _as_type(value: Any, output_type: Any) -> Any:
    validate = getattr(output_type, "model_validate", None)
    if validate is not None:  # a pydantic model
        return validate(value)
    try:
        return msgspec.convert(value, output_type, strict=False)
    except msgspec.ValidationError as exc:
        raise ValueError(f"the tool's result is not a {output_type!r}: {exc}") from None


__all__ = ["MAX_OUTPUT_SCHEMAS", "OutputSchemas", "ToolResult", "wraps_result"]
