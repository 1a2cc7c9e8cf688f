"""How a tool result that is not a JSON object travels as structured content: as
``{"result": value}``, its output schema an object of that one required property (what
mcpkit, FastMCP and the official SDK send). FastMCP's clients unwrap it only when the schema
also carries FastMCP's mark, so mcpkit's wrapped schemas carry it too; mcpkit's client and
the official SDK's go by the shape and ignore it."""

from __future__ import annotations

from typing import Any

#: The output-schema keyword that marks a result wrapped as ``{"result": value}``.
WRAP_MARK = "x-fastmcp-wrap-result"


def wrapper_schema(value: Any) -> dict[str, Any]:
    """The output schema of a result sent as ``{"result": value}``, ``value`` its schema."""
    return {
        "type": "object",
        "properties": {"result": value},
        "required": ["result"],
        WRAP_MARK: True,
    }


__all__ = ["WRAP_MARK", "wrapper_schema"]
