"""Turns what user functions return into MCP result shapes (tool results, resource
contents, prompt messages)."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

import msgspec

from mcpkit.protocol._jsonrpc import encode_json
from mcpkit.server._downgrade import CONTENT_TYPES


@dataclass(frozen=True, slots=True)
class Image:
    """Image content from raw bytes (base64-encoded on the wire)."""

    data: bytes
    mime_type: str = "image/png"

    def to_content(self) -> dict[str, Any]:
        """The MCP ``image`` content block."""
        return {
            "type": "image",
            "data": base64.b64encode(self.data).decode(),
            "mimeType": self.mime_type,
        }


@dataclass(frozen=True, slots=True)
class Audio:
    """Audio content from raw bytes (base64-encoded on the wire)."""

    data: bytes
    mime_type: str = "audio/wav"

    def to_content(self) -> dict[str, Any]:
        """The MCP ``audio`` content block."""
        return {
            "type": "audio",
            "data": base64.b64encode(self.data).decode(),
            "mimeType": self.mime_type,
        }


def _builtins(value: Any) -> Any:
    if isinstance(value, (dict, list, str, int, float, bool)) or value is None:
        return value
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json", by_alias=True, exclude_none=True)
    return msgspec.to_builtins(value)


def to_content_list(value: Any) -> list[dict[str, Any]]:
    """Content blocks for a tool's return value."""
    if value is None:
        return []
    if isinstance(value, str):
        return [{"type": "text", "text": value}]
    if hasattr(value, "to_content"):
        return [value.to_content()]
    if isinstance(value, (list, tuple)):
        blocks: list[dict[str, Any]] = []
        for item in value:
            blocks.extend(to_content_list(item) if not _is_plain(item) else [_text_json(item)])
        return blocks
    if isinstance(value, (bytes, bytearray)):
        raise TypeError("return Image(...) or Audio(...) for binary content, not raw bytes")
    data = _builtins(value)
    if isinstance(data, dict) and is_content_block(data):
        return [data]
    return [_text_json(data)]  # a dict with another "type" is data, not a content block


def is_content_block(data: dict[str, Any]) -> bool:
    """Whether a dict is a content block: its ``type`` is one MCP defines."""
    kind = data.get("type")
    return isinstance(kind, str) and kind in CONTENT_TYPES


def _is_plain(item: Any) -> bool:
    return isinstance(item, (int, float, bool)) and not isinstance(item, str)


def _text_json(value: Any) -> dict[str, Any]:
    if type(value) is int:  # a common return value, whose JSON text is its str()
        return {"type": "text", "text": str(value)}
    return {"type": "text", "text": encode_json(_builtins(value)).decode()}


def is_call_tool_result(value: Any) -> bool:
    if type(value).__name__ == "CallToolResult":
        return True
    return (
        isinstance(value, dict)
        and isinstance(value.get("content"), list)
        and (
            "isError" in value or "structuredContent" in value or set(value) <= {"content", "_meta"}
        )
    )


def tool_result(value: Any) -> dict[str, Any]:
    """A ``CallToolResult`` for a tool's return value."""
    if is_call_tool_result(value):
        return _builtins(value)  # type: ignore[no-any-return]  # a CallToolResult: a dict
    return {"content": to_content_list(value)}


def structured_tool_result(structured: Any, wrapped: bool) -> dict[str, Any]:
    """A ``CallToolResult`` carrying ``structuredContent`` and, for clients that read only
    text, the same value serialized (unwrapped when the schema wrapped it as ``result``)."""
    shown = structured["result"] if wrapped else structured
    return {"content": [_text_json(shown)], "structuredContent": structured}


def error_result(message: str) -> dict[str, Any]:
    """The ``isError`` result of a tool that raised (spec: tool errors are results)."""
    return {"content": [{"type": "text", "text": message}], "isError": True}


def exception_text(exc: BaseException) -> str:
    """What the model reads of a tool's exception: its text, with the type's name where the
    text says nothing alone (empty; a ``KeyError``, whose text is just the key's repr)."""
    text = str(exc)
    if not text:
        return type(exc).__name__
    if isinstance(exc, KeyError):
        return f"{type(exc).__name__}: {text}"
    return text


def resource_contents(value: Any, uri: str, mime_type: str | None) -> list[dict[str, Any]]:
    """``contents`` of a ``ReadResourceResult`` for a resource function's return value."""
    if isinstance(value, list):
        contents: list[dict[str, Any]] = []
        for part in value:
            contents.extend(resource_contents(part, uri, mime_type))
        return contents
    if isinstance(value, str):
        item: dict[str, Any] = {"uri": uri, "text": value}
    elif isinstance(value, (bytes, bytearray)):
        item = {"uri": uri, "blob": base64.b64encode(bytes(value)).decode()}
    else:
        data = _builtins(value)
        if isinstance(data, dict) and ("text" in data or "blob" in data):
            item = {"uri": uri, **data}
        else:
            item = {"uri": uri, "text": encode_json(data).decode()}
            mime_type = mime_type or "application/json"
    if mime_type and "mimeType" not in item:
        item["mimeType"] = mime_type
    return [item]


def prompt_messages(value: Any) -> dict[str, Any]:
    """A ``GetPromptResult`` for a prompt function's return value."""
    if isinstance(value, dict) and "messages" in value:
        return value
    items = value if isinstance(value, (list, tuple)) else [value]
    return {"messages": [_prompt_message(item) for item in items]}


def _prompt_message(item: Any) -> dict[str, Any]:
    if isinstance(item, str):
        return {"role": "user", "content": {"type": "text", "text": item}}
    if hasattr(item, "to_content"):
        return {"role": "user", "content": item.to_content()}
    data = _builtins(item)
    if isinstance(data, dict) and "role" in data:
        return data
    if isinstance(data, dict) and is_content_block(data):
        return {"role": "user", "content": data}
    return {"role": "user", "content": {"type": "text", "text": encode_json(data).decode()}}
