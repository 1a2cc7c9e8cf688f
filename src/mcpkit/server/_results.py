"""Turns what user functions return into MCP result shapes (tool results, resource
contents, prompt messages)."""

from __future__ import annotations

import base64
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import quote

import msgspec

from mcpkit.protocol._jsonrpc import encode_json
from mcpkit.server._eras.downgrade import CONTENT_TYPES
from mcpkit.server._files.contents import file_contents, guess_mime_type

Source = bytes | str | os.PathLike[str]


def _read_media(
    kind: str,
    data: Source | None,
    mime_type: str | None,
    path: str | os.PathLike[str] | None,
    format: str | None,
) -> tuple[bytes, str | None]:
    """The bytes and MIME type of a media helper: ``data`` given, or read from ``path`` (a
    string or path first is one, as FastMCP reads ``Image("chart.png")``); the type from
    ``mime_type``, else ``format`` (``"jpeg"``), else the file's name."""
    if isinstance(data, (str, os.PathLike)):
        if path is not None:
            raise TypeError(f"{kind}() got a path twice, first and as path=")
        data, path = None, data
    if (data is None) == (path is None):
        raise TypeError(f"{kind}() takes the content's bytes or path=, one of them")
    if path is not None:
        data = Path(path).read_bytes()
        if mime_type is None and format is None:
            mime_type = guess_mime_type(os.fspath(path))
    if mime_type is None and format is not None:
        if "/" in format:
            mime_type = format
        else:  # "jpg" → image/jpeg, "mp3" → audio/mpeg
            mime_type = guess_mime_type(f"file.{format}")
            if mime_type is None and kind != "File":
                mime_type = f"{kind.lower()}/{format.lower()}"
    return bytes(data), mime_type  # type: ignore[arg-type]  # bytes by now


@dataclass(frozen=True, slots=True, init=False)
class _Media:
    """Base64 content of one kind (``Image``, ``Audio``): bytes, or read from ``path``."""

    data: bytes
    mime_type: str
    #: The block's ``type``, and the MIME type when neither it nor a format is known.
    _kind: ClassVar[str] = ""
    _default_mime_type: ClassVar[str] = ""

    def __init__(
        self,
        data: Source | None = None,
        mime_type: str | None = None,
        *,
        path: str | os.PathLike[str] | None = None,
        format: str | None = None,
    ) -> None:
        data, mime_type = _read_media(type(self).__name__, data, mime_type, path, format)
        object.__setattr__(self, "data", data)
        object.__setattr__(self, "mime_type", mime_type or self._default_mime_type)

    def to_content(self) -> dict[str, Any]:
        """The MCP content block (``image`` / ``audio``)."""
        return {
            "type": self._kind,
            "data": base64.b64encode(self.data).decode(),
            "mimeType": self.mime_type,
        }


@dataclass(frozen=True, slots=True, init=False)
class Image(_Media):
    """Image content: ``Image(png_bytes)``, ``Image(data, "image/jpeg")``,
    ``Image(path="chart.png")`` (the type from the name) or ``Image(data=..., format="jpeg")``
    (base64-encoded on the wire)."""

    _kind: ClassVar[str] = "image"
    _default_mime_type: ClassVar[str] = "image/png"


@dataclass(frozen=True, slots=True, init=False)
class Audio(_Media):
    """Audio content, as ``Image`` takes it (``Audio(path="note.wav")``, ``format="mp3"``;
    base64-encoded on the wire)."""

    _kind: ClassVar[str] = "audio"
    _default_mime_type: ClassVar[str] = "audio/wav"


@dataclass(frozen=True, slots=True, init=False)
class File:
    """A file returned as an embedded resource (``type: resource``): ``File(path="report.pdf")``
    or ``File(data, "text/csv", name="rows.csv")``. Text (``text/*``, JSON, XML, YAML...) is
    sent as ``text``, anything else as a base64 ``blob``; the URI is ``file:///`` + ``name``
    (default: the file's name)."""

    data: bytes
    mime_type: str | None
    name: str

    def __init__(
        self,
        data: Source | None = None,
        mime_type: str | None = None,
        *,
        path: str | os.PathLike[str] | None = None,
        format: str | None = None,
        name: str | None = None,
    ) -> None:
        source = data if isinstance(data, (str, os.PathLike)) else path
        data, mime_type = _read_media("File", data, mime_type, path, format)
        if name is None:
            name = Path(source).name if source is not None else "file"
        if format is not None and "/" not in format and "." not in name:
            name = f"{name}.{format}"
        object.__setattr__(self, "data", data)
        object.__setattr__(self, "mime_type", mime_type or guess_mime_type(name))
        object.__setattr__(self, "name", name)

    def to_content(self) -> dict[str, Any]:
        """The MCP ``resource`` content block embedding the file."""
        contents = file_contents(self.data, self.mime_type, "utf-8")
        uri = "file:///" + quote(self.name.lstrip("/"))
        return {"type": "resource", "resource": {"uri": uri, **contents}}


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
        raise TypeError(
            "return Image(...), Audio(...) or File(...) for binary content, not raw bytes"
        )
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
        # {"role": "assistant", "content": "text"}: the content as a text block
        content: Any = data.get("content")
        if isinstance(content, str):
            return {**data, "content": {"type": "text", "text": content}}
        if hasattr(content, "to_content"):
            return {**data, "content": content.to_content()}
        return data
    if isinstance(data, dict) and is_content_block(data):
        return {"role": "user", "content": data}
    return {"role": "user", "content": {"type": "text", "text": encode_json(data).decode()}}
