"""Griffe extension: a ``#:`` comment above a module attribute is its docstring.

mcpkit documents its constants and type aliases with ``#:`` comments (the Sphinx form)::

    #: Largest response body read from the API (16 MiB); a larger one is an error result.
    DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024

Griffe reads only a string below an attribute, so without this the API reference leaves out
every such name that a package exports. An attribute with a docstring of its own keeps it.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import griffe

MARK = "#:"


@cache
def _lines(path: str) -> tuple[str, ...]:
    return tuple(Path(path).read_text(encoding="utf-8").splitlines())


def comment_above(lines: tuple[str, ...], lineno: int) -> str | None:
    """The ``#:`` lines right above line ``lineno`` (1-based), joined; None without any."""
    found: list[str] = []
    index = lineno - 2
    while index >= 0 and lines[index].strip().startswith(MARK):
        found.append(lines[index].strip()[len(MARK) :].strip())
        index -= 1
    return " ".join(reversed(found)) or None


class CommentDocstrings(griffe.Extension):
    """Give attributes without a docstring the ``#:`` comment above them."""

    def on_attribute_instance(self, *, attr: griffe.Attribute, **kwargs: Any) -> None:
        if attr.docstring is not None or attr.lineno is None:
            return
        filepath = attr.filepath
        if isinstance(filepath, list) or not str(filepath).endswith(".py"):
            return
        text = comment_above(_lines(str(filepath)), attr.lineno)
        if text is not None:
            attr.docstring = griffe.Docstring(text, lineno=attr.lineno, parent=attr)
