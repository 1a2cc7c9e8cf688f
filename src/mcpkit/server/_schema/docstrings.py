"""Docstrings to descriptions: the summary and per-parameter help of a callable,
from Google, reST or numpy style docstrings."""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterator

# --------------------------------------------------------------------------- docstrings

_PARAM_SECTIONS = frozenset(
    {
        "args",
        "arguments",
        "parameters",
        "params",
        "keyword args",
        "keyword arguments",
        "other parameters",
    }
)
_OTHER_SECTIONS = frozenset(
    {
        "returns",
        "return",
        "raises",
        "raise",
        "yields",
        "yield",
        "examples",
        "example",
        "note",
        "notes",
        "attributes",
        "see also",
        "warning",
        "warnings",
        "todo",
        "references",
    }
)
_GOOGLE_HEADER = re.compile(r"^([A-Za-z][A-Za-z ]*?)\s*:\s*$")
_NUMPY_RULE = re.compile(r"^\s*-{3,}\s*$")
_REST_FIELD = re.compile(
    r"^:(?:param|parameter|arg|argument|key|keyword|type|returns?|rtype|raises?|except|"
    r"exception|yields?|ytype|var|ivar|cvar|vartype|meta)\b[^:]*:"
)
_REST_PARAM = re.compile(
    r"^:(?:param|parameter|arg|argument|key|keyword)\s+(?:[^:]*\s)?\*{0,2}(\w+)\s*:\s*(.*)$"
)
_GOOGLE_ENTRY = re.compile(r"^\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_NUMPY_ENTRY = re.compile(r"^(\*{0,2}\w+(?:\s*,\s*\*{0,2}\w+)*)\s*(?::.*)?$")


def parse_docstring(doc: str | None) -> tuple[str | None, dict[str, str]]:
    """Split a docstring into its description and per-parameter help.

    The description is everything before the first section (``Args:``, ``Returns:``, a
    numpy ``Parameters``/``----------`` header, or a reST ``:param x:`` field), dedented
    and stripped; ``None`` when empty. Parameters come from Google style
    (``name: text`` / ``name (type): text``), numpy style and reST ``:param name: text``;
    continuation lines are joined with single spaces.
    """
    if not doc or not doc.strip():
        return None, {}
    lines = inspect.cleandoc(doc).splitlines()
    sections = list(_find_sections(lines))
    first = sections[0][0] if sections else len(lines)
    description = "\n".join(lines[:first]).strip() or None

    params: dict[str, list[str]] = {}
    for index, (_start, body_start, kind) in enumerate(sections):
        end = sections[index + 1][0] if index + 1 < len(sections) else len(lines)
        body = lines[body_start:end]
        if kind == "google":
            _parse_google_params(body, params)
        elif kind == "numpy":
            _parse_numpy_params(body, params)
        elif kind == "rest":
            _parse_rest_param(body, params)
    joined = {name: " ".join(parts).strip() for name, parts in params.items()}
    return description, {name: text for name, text in joined.items() if text}


def _find_sections(lines: list[str]) -> Iterator[tuple[int, int, str]]:
    """Yield ``(header_line, body_start, kind)``; kind is google/numpy/rest/other."""
    for i, line in enumerate(lines):
        if not line or line[0].isspace():
            continue  # section headers sit at the docstring's own indent
        stripped = line.strip()
        header = _GOOGLE_HEADER.match(stripped)
        if header and header.group(1).lower() in _PARAM_SECTIONS | _OTHER_SECTIONS:
            params = header.group(1).lower() in _PARAM_SECTIONS
            yield i, i + 1, "google" if params else "other"
        elif (
            stripped.lower() in _PARAM_SECTIONS | _OTHER_SECTIONS
            and i + 1 < len(lines)
            and _NUMPY_RULE.match(lines[i + 1])
        ):
            yield i, i + 2, "numpy" if stripped.lower() in _PARAM_SECTIONS else "other"
        elif _REST_FIELD.match(stripped):
            yield i, i, "rest"


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _parse_google_params(body: list[str], out: dict[str, list[str]]) -> None:
    base: int | None = None
    current: str | None = None
    for line in body:
        if not line.strip():
            continue
        indent = _indent(line)
        if base is None:
            base = indent
        entry = _GOOGLE_ENTRY.match(line.strip()) if indent <= base else None
        if entry:
            current = entry.group(1)
            out[current] = [entry.group(2)]
        elif current is not None:
            out[current].append(line.strip())


def _parse_numpy_params(body: list[str], out: dict[str, list[str]]) -> None:
    base: int | None = None
    current: list[str] = []
    for line in body:
        if not line.strip():
            continue
        indent = _indent(line)
        if base is None:
            base = indent
        entry = _NUMPY_ENTRY.match(line.strip()) if indent <= base else None
        if entry:
            names = [n.strip().lstrip("*") for n in entry.group(1).split(",")]
            current = names
            for name in names:
                out[name] = []
        else:
            for name in current:
                out[name].append(line.strip())


def _parse_rest_param(body: list[str], out: dict[str, list[str]]) -> None:
    match = _REST_PARAM.match(body[0].strip()) if body else None
    if match:
        out[match.group(1)] = [match.group(2), *(line.strip() for line in body[1:])]
