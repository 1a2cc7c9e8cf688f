"""A file's bytes as resource contents: ``text`` or a base64 ``blob``, chosen by the MIME
type (from the caller or the file name) and, when that says nothing, by the bytes."""

from __future__ import annotations

import base64
import mimetypes
import os
from typing import Any

from mcpkit._exceptions import InternalError

#: The largest file read as a resource; a larger one is refused (-32603), never truncated.
DEFAULT_MAX_FILE_BYTES = 10 * 1024 * 1024
#: How much of a file of unknown type is looked at to tell text from binary.
SNIFF_BYTES = 8192

_TEXT_APPLICATION_TYPES = frozenset(
    {
        "application/json",
        "application/ld+json",
        "application/xml",
        "application/javascript",
        "application/ecmascript",
        "application/x-sh",
        "application/x-python",
        "application/sql",
        "application/toml",
        "application/yaml",
        "application/x-yaml",
        "application/graphql",
        "application/x-ndjson",
    }
)
_TEXT_SUFFIXES = ("+json", "+xml", "+yaml")


def guess_mime_type(name: str) -> str | None:
    """The MIME type a file name suggests (``notes.md`` → ``text/markdown``), or None."""
    guessed, _ = mimetypes.guess_type(name, strict=False)
    if guessed is None and name.endswith((".md", ".markdown")):
        return "text/markdown"  # missing from some platforms' tables
    return guessed


def is_text_type(mime_type: str) -> bool:
    """Whether ``mime_type`` names text (``text/*``, JSON, XML, YAML, scripts)."""
    base = mime_type.split(";", 1)[0].strip().lower()
    return (
        base.startswith("text/") or base in _TEXT_APPLICATION_TYPES or base.endswith(_TEXT_SUFFIXES)
    )


def read_limited(fd: int, max_bytes: int, uri: str) -> bytes:
    """Every byte of the open file ``fd`` (closed here), or ``InternalError`` when there
    are more than ``max_bytes`` (checked before reading, and again while reading: it may
    grow)."""
    try:
        size = os.fstat(fd).st_size
        if size > max_bytes:
            raise _too_large(uri, size, max_bytes)
        chunks: list[bytes] = []
        total = 0
        while chunk := os.read(fd, min(1 << 20, max_bytes + 1 - total) or 1):
            chunks.append(chunk)
            total += len(chunk)
            if total > max_bytes:
                raise _too_large(uri, total, max_bytes)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _too_large(uri: str, size: int, max_bytes: int) -> InternalError:
    return InternalError(
        f"{uri} is larger than the {max_bytes} bytes a file resource may be (max_bytes)",
        {"uri": uri, "size": size, "maxBytes": max_bytes},
    )


def file_contents(data: bytes, mime_type: str | None, encoding: str) -> dict[str, Any]:
    """``{"text": ...}`` or ``{"blob": ...}`` with its ``mimeType``: text when the type is
    textual (or unknown and the bytes decode, with no NUL), a blob otherwise."""
    if mime_type is not None and not is_text_type(mime_type):
        return {"blob": base64.b64encode(data).decode("ascii"), "mimeType": mime_type}
    if mime_type is None and b"\x00" in data[:SNIFF_BYTES]:
        return {"blob": base64.b64encode(data).decode("ascii"), "mimeType": _OCTETS}
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError:  # labelled text, but not in that encoding: keep every byte
        return {"blob": base64.b64encode(data).decode("ascii"), "mimeType": mime_type or _OCTETS}
    return {"text": text, "mimeType": mime_type or "text/plain"}


_OCTETS = "application/octet-stream"
