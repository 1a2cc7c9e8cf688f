"""A file's bytes as resource contents: ``text`` or a base64 ``blob``, chosen by the MIME
type (from the caller or the file name) and, when that says nothing, by the bytes.

A file is read once, into one buffer sized from its length (no chunks joined: one copy, not
two), and a blob's base64 is made once, the buffer emptied before that becomes text: a read
holds at most ~2.7 times the file's size. How many files are read at once is the app's bound
(``max_concurrent_file_reads``)."""

from __future__ import annotations

import binascii
import io
import mimetypes
import os
from types import MappingProxyType
from typing import Any

from mcpkit._exceptions import InternalError

#: The largest file read as a resource; a larger one is refused (-32603), never truncated.
DEFAULT_MAX_FILE_BYTES = 10 * 1024 * 1024
#: Files one app's file resources read at once (each holds up to ~2.7 times its file's size
#: while read and encoded); further reads wait for one to finish.
DEFAULT_MAX_CONCURRENT_FILE_READS = 4
#: How much of a file of unknown type is looked at to tell text from binary.
SNIFF_BYTES = 8192
#: Bytes base64-encoded at a time (a multiple of 3: the slices' encodings join up).
_BASE64_SLICE = 3 * 64 * 1024

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


#: The common media and text types by suffix, the same on every machine: ``mimetypes``
#: reads the system's tables too, which disagree (``.wav``: ``audio/x-wav`` or
#: ``audio/wav``; ``.md`` missing).
_MEDIA_TYPES = MappingProxyType(
    {
        "png": "image/png",
        "jpg": "image/jpeg",
        "jpeg": "image/jpeg",
        "gif": "image/gif",
        "webp": "image/webp",
        "svg": "image/svg+xml",
        "wav": "audio/wav",
        "mp3": "audio/mpeg",
        "ogg": "audio/ogg",
        "flac": "audio/flac",
        "m4a": "audio/mp4",
        "aac": "audio/aac",
        "pdf": "application/pdf",
        "json": "application/json",
        "csv": "text/csv",
        "txt": "text/plain",
        "md": "text/markdown",
        "markdown": "text/markdown",
        "html": "text/html",
    }
)


def guess_mime_type(name: str) -> str | None:
    """The MIME type a file name suggests (``notes.md`` → ``text/markdown``), or None."""
    suffix = name.rpartition(".")[2].lower() if "." in name else ""
    known = _MEDIA_TYPES.get(suffix)
    if known is not None:
        return known
    guessed, _ = mimetypes.guess_type(name, strict=False)
    return guessed


def is_text_type(mime_type: str) -> bool:
    """Whether ``mime_type`` names text (``text/*``, JSON, XML, YAML, scripts)."""
    base = mime_type.split(";", 1)[0].strip().lower()
    return (
        base.startswith("text/") or base in _TEXT_APPLICATION_TYPES or base.endswith(_TEXT_SUFFIXES)
    )


def read_limited(fd: int, max_bytes: int, uri: str) -> bytearray:
    """Every byte of the open file ``fd`` (closed here), read into one buffer, or
    ``InternalError`` when there are more than ``max_bytes`` (checked before reading, and
    again while reading: it may grow)."""
    try:
        size = os.fstat(fd).st_size
        if size > max_bytes:
            raise _too_large(uri, size, max_bytes)
        data = bytearray(size + 1)  # a byte to spare: a file that grew since fstat shows
        total = 0
        with io.FileIO(fd, "r", closefd=False) as file:
            while True:
                if total == len(data):  # full: the file grew
                    if total > max_bytes:
                        raise _too_large(uri, total, max_bytes)
                    data.extend(bytes(min(total, max_bytes + 1 - total)))
                with memoryview(data) as view, view[total:] as rest:
                    count = file.readinto(rest)
                if not count:
                    break
                total += count
        if total > max_bytes:
            raise _too_large(uri, total, max_bytes)
        del data[total:]  # the spare byte (or what a file that shrank left unfilled)
        return data
    finally:
        os.close(fd)


def _too_large(uri: str, size: int, max_bytes: int) -> InternalError:
    return InternalError(
        f"{uri} is larger than the {max_bytes} bytes a file resource may be (max_bytes)",
        {"uri": uri, "size": size, "maxBytes": max_bytes},
    )


def file_contents(
    data: bytes | bytearray, mime_type: str | None, encoding: str, *, consume: bool = False
) -> dict[str, Any]:
    """``{"text": ...}`` or ``{"blob": ...}`` with its ``mimeType``: text when the type is
    textual (or unknown and the bytes decode, with no NUL), a blob otherwise. ``consume``:
    ``data`` is a buffer read for this answer, emptied once its base64 is made."""
    if mime_type is not None and not is_text_type(mime_type):
        return _blob(data, mime_type, consume)
    if mime_type is None and b"\x00" in data[:SNIFF_BYTES]:
        return _blob(data, _OCTETS, consume)
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError:  # labelled text, but not in that encoding: keep every byte
        return _blob(data, mime_type or _OCTETS, consume)
    return {"text": text, "mimeType": mime_type or "text/plain"}


def read_contents(
    fd: int, max_bytes: int, uri: str, mime_type: str | None, encoding: str
) -> dict[str, Any]:
    """The contents of the open file ``fd`` (closed here), as ``file_contents`` makes them;
    ``InternalError`` past ``max_bytes``."""
    return file_contents(read_limited(fd, max_bytes, uri), mime_type, encoding, consume=True)


def _blob(data: bytes | bytearray, mime_type: str, consume: bool) -> dict[str, Any]:
    # Encoded a slice at a time into one buffer of the exact size: encoding it whole makes
    # a scratch copy of about twice the input on the way.
    encoded = bytearray(4 * ((len(data) + 2) // 3))
    with memoryview(data) as view:
        for start in range(0, len(data), _BASE64_SLICE):
            with view[start : start + _BASE64_SLICE] as piece:
                at = start // 3 * 4
                encoded[at : at + 4 * ((len(piece) + 2) // 3)] = binascii.b2a_base64(
                    piece, newline=False
                )
    if consume and isinstance(data, bytearray):
        data.clear()  # freed before the base64 becomes text: two copies held, not three
    return {"blob": encoded.decode("ascii"), "mimeType": mime_type}


_OCTETS = "application/octet-stream"
