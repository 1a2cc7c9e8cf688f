"""Picking a version of a tool from the client: mcpkit servers keep several versions of
one tool, list the one they serve with every version in its ``_meta``, and run the one a
call names in its ``_meta``. ``call_tool(..., version=...)`` names it;
``tool_versions(tool)`` reads what ``list_tools()`` showed."""

from __future__ import annotations

from typing import Any

from mcpkit.protocol import types as t
from mcpkit.protocol._tool_version_keys import VERSION_META_KEY, VERSIONS_META_KEY


def tool_versions(tool: t.Tool) -> tuple[str, ...]:
    """The versions the server offers of ``tool`` (a ``list_tools()`` entry), lowest
    first; empty for a tool with one version or a server that does not name them. The one
    served under the name is ``tool.meta["mcpkit/version"]``."""
    listed = (tool.meta or {}).get(VERSIONS_META_KEY)
    if not isinstance(listed, list):
        return ()
    return tuple(version for version in listed if isinstance(version, str))


def with_version(meta: dict[str, Any] | None, version: str | None) -> dict[str, Any] | None:
    """A call's ``_meta`` naming ``version`` of the tool (``meta`` itself without one)."""
    if version is None:
        return meta
    if not isinstance(version, str):
        raise TypeError(f"version must be a string, such as '1.2', not {version!r}")
    if not version:
        raise ValueError("version must not be empty: leave it out for the version served")
    named = (meta or {}).get(VERSION_META_KEY, version)
    if named != version:
        raise ValueError(
            f"version={version!r} and meta[{VERSION_META_KEY!r}]={named!r} differ: give one"
        )
    return {**(meta or {}), VERSION_META_KEY: version}


__all__ = ["tool_versions", "with_version"]
