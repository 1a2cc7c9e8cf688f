"""What ``McpClient.call_tool`` gives back: the ``CallToolResult``, and as ``data`` its
structured content as Python values. A result that is not an object travels as
``{"result": value}``, the tool's output schema saying so (one required property,
``result``: how mcpkit, FastMCP and the official SDK send it); ``data`` is then the value
itself, once the client has seen that schema in ``tools/list``. ``output_type=`` on the
call converts it (a dataclass, ``msgspec.Struct``, ``TypedDict``, pydantic model, or any
type msgspec reads), as the peers hydrate results."""

from __future__ import annotations

from typing import Any

import msgspec

from mcpkit.client._results import convert
from mcpkit.protocol import types as t

#: Tools whose output schema a client remembers (for ``data``); past it, it starts over.
MAX_OUTPUT_SCHEMAS = 1024


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


class OutputSchemas:
    """Which tools of one client wrap their results, as ``tools/list`` said (bounded by
    ``limit`` tools)."""

    def __init__(self, limit: int = MAX_OUTPUT_SCHEMAS) -> None:
        self.limit = limit
        self._wrapping: dict[str, bool] = {}

    def learn(self, tools: list[t.Tool]) -> None:
        """Remember what each listed tool's output schema says."""
        if len(self._wrapping) + len(tools) > self.limit:
            self._wrapping.clear()
        for tool in tools[: self.limit]:
            self._wrapping[tool.name] = wraps_result(tool.output_schema)

    def result(self, name: str, raw: Any, output_type: Any = None) -> ToolResult:
        """The result of a call of ``name``, its ``data`` made."""
        result = convert(raw, ToolResult)
        value = result.structured_content
        if value is None or result.is_error:
            return result
        if self._wrapping.get(name) and isinstance(value, dict) and "result" in value:
            value = value["result"]
        if output_type is not None:
            value = _as_type(value, output_type)
        result._data = value  # type: ignore[attr-defined]  # dict=True: not a wire field
        return result


def _as_type(value: Any, output_type: Any) -> Any:
    validate = getattr(output_type, "model_validate", None)
    if validate is not None:  # a pydantic model
        return validate(value)
    try:
        return msgspec.convert(value, output_type, strict=False)
    except msgspec.ValidationError as exc:
        raise ValueError(f"the tool's result is not a {output_type!r}: {exc}") from None


__all__ = ["MAX_OUTPUT_SCHEMAS", "OutputSchemas", "ToolResult", "wraps_result"]
