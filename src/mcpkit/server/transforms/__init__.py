"""Transforms of what an app serves: ``transform_tool`` (a tool renamed, described anew,
its arguments renamed, defaulted or hidden, its call wrapped). See docs/transforms.md."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcpkit.server.transforms._tool import ArgTransform, ToolTransform


def transform_tool(
    app: Any,
    tool: str,
    *,
    name: str | None = None,
    description: str | None = None,
    title: str | None = None,
    arguments: Mapping[str, ArgTransform] | None = None,
    wrap: Any = None,
) -> None:
    """Serve ``app``'s tool ``tool`` transformed, now and whenever it is registered again
    (a mounted app's or a proxy's tools are); clients hear ``list_changed``. ``wrap`` is an
    interceptor (``async (context, call_next)``) run around the original call.
    ``ValueError`` for an argument the tool does not have."""
    change = ToolTransform(name, description, title, dict(arguments or {}), wrap)
    app.catalog.transform_tool(tool, change)


__all__ = ["ArgTransform", "ToolTransform", "transform_tool"]
