"""Tool transformation: a tool served under another name, with another description, its
arguments renamed, described anew, given defaults or hidden behind a fixed value, and its
call wrapped; for any tool of the app's catalog, its own, a mounted app's, a proxied
server's or an OpenAPI operation's alike.

``transform_tool(app, "search", name="find", arguments={"q": ArgTransform(name="query")})``
keeps the rule in the catalog: the tool registered under that name now and whenever it is
registered again (a mount or a proxy refreshing its tools) is served transformed. The
original's checks still run on what the client sent, mapped back to its arguments."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mcpkit.protocol._headers import header_annotations


class _Unset:
    """No default given (``ArgTransform(default=...)``)."""


_UNSET: Any = _Unset


@dataclass(frozen=True, slots=True)
class ArgTransform:
    """What becomes of one argument: ``name`` (the client's name for it), ``description``,
    ``default`` (the value when the client leaves it out; the argument becomes optional),
    ``hide`` (not in the schema at all: the original always gets ``default``, which a
    hidden argument needs)."""

    name: str | None = None
    description: str | None = None
    default: Any = _UNSET
    hide: bool = False

    def __post_init__(self) -> None:
        if self.hide and self.default is _UNSET:
            raise ValueError("a hidden argument needs the default the tool gets instead")


@dataclass(frozen=True, slots=True)
class ToolTransform:
    """A tool's transformation (see ``transform_tool``)."""

    name: str | None = None
    description: str | None = None
    title: str | None = None
    arguments: Mapping[str, ArgTransform] = field(default_factory=dict)
    #: An interceptor run around the original call (``async (context, call_next)``).
    wrap: Any = None


def transformed(entry: Any, transform: ToolTransform) -> Any:
    """``entry`` (a ``ToolEntry``) as ``transform`` has it: a new entry, the original left
    as it was."""
    schema = copy.deepcopy(entry.input_schema)
    properties: dict[str, Any] = schema.setdefault("properties", {})
    required: list[str] = list(schema.get("required", ()))
    unknown = [arg for arg in transform.arguments if arg not in properties]
    if unknown:
        raise ValueError(f"tool {entry.name!r} has no argument {', '.join(map(repr, unknown))}")
    fixed: dict[str, Any] = {}
    renamed: dict[str, str] = {}  # the client's name -> the original's
    for original, change in transform.arguments.items():
        described = properties.pop(original)
        if original in required:
            required.remove(original)
        if change.hide:
            fixed[original] = change.default
            continue
        if change.description is not None:
            described = {**described, "description": change.description}
        shown = change.name or original
        if shown in properties:
            raise ValueError(f"tool {entry.name!r} already has an argument {shown!r}")
        if change.default is not _UNSET:
            described = {**described, "default": change.default}
            fixed.setdefault(original, change.default)
        elif original in entry.input_schema.get("required", ()):
            required.append(shown)
        properties[shown] = described
        renamed[shown] = original
    schema["required"] = required
    if not required:
        del schema["required"]
    defaults = {k: v for k, v in fixed.items() if k not in _hidden(transform)}
    hidden = {k: v for k, v in fixed.items() if k in _hidden(transform)}

    def arguments_map(given: dict[str, Any]) -> dict[str, Any]:
        mapped = {renamed.get(key, key): value for key, value in given.items()}
        for key in hidden:  # never the client's to set
            mapped.pop(key, None)
        return {**defaults, **mapped, **hidden}

    pipeline = entry.pipeline
    if transform.wrap is not None:
        pipeline = dataclasses.replace(
            pipeline, interceptors=(transform.wrap, *pipeline.interceptors)
        )
    previous = entry.arguments_map
    return dataclasses.replace(
        entry,
        name=transform.name or entry.name,
        description=transform.description
        if transform.description is not None
        else entry.description,
        title=transform.title if transform.title is not None else entry.title,
        input_schema=schema,
        header_params=header_annotations(schema),
        arguments_map=(lambda given: previous(arguments_map(given))) if previous else arguments_map,
        pipeline=pipeline,
        original=entry.original or entry,
        _wire=None,
    )


def _hidden(transform: ToolTransform) -> set[str]:
    return {name for name, change in transform.arguments.items() if change.hide}


__all__ = ["ArgTransform", "ToolTransform", "transformed"]
