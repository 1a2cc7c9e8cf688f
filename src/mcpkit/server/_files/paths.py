"""Paths confined to a directory: which relative paths a ``DirectoryResource`` serves, and
opening one without ever reading outside the directory.

A relative path from a URI is checked twice. Its spelling first: ``..``, ``.`` or empty
segments, an absolute path, a drive letter, a backslash or a NUL byte is refused outright
(``InvalidParamsError``). Then what it names: the real path (symlinks followed) must lie inside
the real root, be a regular file and, hidden files excluded, have no dot-file or
dot-directory on its way from the root, or the resource is not found. Opening walks the real
path one component at a time from the root with ``O_NOFOLLOW`` where the platform allows, so
a symlink swapped in between the check and the read is not followed either.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from mcpkit._exceptions import InvalidParamsError, ResourceNotFoundError

_DRIVE = re.compile(r"^[A-Za-z]:")
# Opening with a directory file descriptor is what makes the walk race-free.
_WALKS = os.open in os.supports_dir_fd and hasattr(os, "O_NOFOLLOW")
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # a FIFO swapped in must not block the open
_BINARY = getattr(os, "O_BINARY", 0)


def check_relative(relative: str, uri: str) -> tuple[str, ...]:
    """The segments of ``relative`` (a ``/``-separated path from a URI, already
    percent-decoded); ``InvalidParamsError`` when it could step outside its directory."""
    if not relative:
        raise InvalidParamsError(f"{uri}: the path inside the directory is empty", {"uri": uri})
    if "\x00" in relative or "\\" in relative:
        raise InvalidParamsError(
            f"{uri}: a path inside the directory may not contain a backslash or NUL",
            {"uri": uri},
        )
    if relative.startswith("/") or _DRIVE.match(relative) or os.path.isabs(relative):
        raise InvalidParamsError(
            f"{uri}: the path inside the directory must be relative", {"uri": uri}
        )
    segments = tuple(relative.split("/"))
    if any(segment in ("", ".", "..") for segment in segments):
        raise InvalidParamsError(
            f"{uri}: a path inside the directory may not have '..', '.' or empty segments",
            {"uri": uri},
        )
    return segments


def is_hidden(segments: tuple[str, ...]) -> bool:
    """Whether any segment is a dot-file or dot-directory (``.env``, ``.git/config``)."""
    return any(segment.startswith(".") for segment in segments)


def glob_regex(pattern: str) -> re.Pattern[str]:
    """A regex for the ``/``-separated relative paths ``pattern`` matches: ``*`` and ``?``
    stay within a segment, ``**/`` spans any number of directories, ``[...]`` a class."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:[^/]+/)*")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[" and (end := pattern.find("]", i + 2)) != -1:
            body = pattern[i + 1 : end]
            if body.startswith("!"):
                body = "^" + body[1:]
            out.append("[" + body.replace("\\", "\\\\") + "]")
            i = end + 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out))


def resolve_inside(
    root: Path, segments: tuple[str, ...], uri: str, *, include_hidden: bool = False
) -> Path:
    """The real path ``segments`` name under the real directory ``root``: inside it, a
    regular file and, unless ``include_hidden``, with no dot-file or dot-directory on its
    real path under ``root``; else ``ResourceNotFoundError`` (saying no more, so nothing
    outside leaks). The requested name is the caller's to check: this checks where it
    leads, so ``notes.txt -> .env`` is refused as ``.env`` is."""
    try:
        real = root.joinpath(*segments).resolve(strict=True)
    except (OSError, RuntimeError):  # missing, a symlink loop, a name too long
        raise ResourceNotFoundError(uri) from None
    if not real.is_relative_to(root) or real == root:
        raise ResourceNotFoundError(uri)
    if not include_hidden and is_hidden(real.relative_to(root).parts):
        raise ResourceNotFoundError(uri)
    try:
        if not stat.S_ISREG(real.stat().st_mode):
            raise ResourceNotFoundError(uri)
    except OSError:
        raise ResourceNotFoundError(uri) from None
    return real


def open_inside(root: Path, real: Path, uri: str) -> int:
    """A file descriptor for reading ``real`` (from ``resolve_inside``), opened so that no
    symlink is followed on the way; the caller closes it. ``ResourceNotFoundError`` when the
    tree changed under us and the path no longer names a regular file inside ``root``."""
    flags = os.O_RDONLY | _NONBLOCK | _BINARY
    try:
        if _WALKS:
            parts = real.relative_to(root).parts
            fd = os.open(root, os.O_RDONLY | _DIRECTORY)
            try:
                for part in parts[:-1]:
                    inner = os.open(part, os.O_RDONLY | _DIRECTORY | _NOFOLLOW, dir_fd=fd)
                    os.close(fd)
                    fd = inner
                file_fd = os.open(parts[-1], flags | _NOFOLLOW, dir_fd=fd)
            finally:
                os.close(fd)
        else:  # no dir_fd (Windows): open the checked path, then check it again below
            file_fd = os.open(real, flags)
            if not Path(os.path.realpath(real)).is_relative_to(root):
                os.close(file_fd)
                raise ResourceNotFoundError(uri)
    except OSError:
        raise ResourceNotFoundError(uri) from None
    if not stat.S_ISREG(os.fstat(file_fd).st_mode):
        os.close(file_fd)
        raise ResourceNotFoundError(uri)
    return file_fd
