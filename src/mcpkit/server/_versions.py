"""Several versions of one tool: each registered with ``version=``, all kept; the highest
is served under the name (and ``_meta["mcpkit/versions"]`` lists them all), unless a rule
pins another (``catalog.use_tool_version(name, version)``), and a call may ask for a
version of its own in its ``_meta`` (``VERSION_META_KEY``)."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from typing import Any

from mcpkit.protocol._tool_version_keys import VERSION_META_KEY, VERSIONS_META_KEY

#: Versions kept of one tool; past it, registering another is refused.
MAX_TOOL_VERSIONS = 32

_PART = re.compile(r"\d+|[A-Za-z]+")


def version_key(version: str) -> tuple[tuple[int, Any], ...]:
    """How versions order: their numbers as numbers (``1.10`` after ``1.9``), and a word
    part (a pre-release) before the release it leads to (``1.10rc1`` before ``1.10``,
    ``2.0rc1`` before ``2.0.1``): numbers rank 2, the end 1, words 0."""
    parts = [(2, int(part)) if part.isdigit() else (0, part) for part in _PART.findall(version)]
    return (*parts, (1, ""))


@dataclasses.dataclass(frozen=True, slots=True)
class VersionSpec:
    """Which versions ``app.enable``/``app.disable`` act on: ``eq`` exactly, or those at or
    above ``gte`` and below ``lt`` (ordered as ``version_key`` orders them); an unversioned
    component matches none."""

    eq: str | None = None
    gte: str | None = None
    lt: str | None = None

    def matches(self, version: str | None) -> bool:
        """Whether ``version`` is one of those this spec names (never None: unversioned)."""
        if version is None:
            return False
        if self.eq is not None and version != self.eq:
            return False
        key = version_key(version)
        if self.gte is not None and key < version_key(self.gte):
            return False
        return self.lt is None or key < version_key(self.lt)


#: What ``app.enable``/``app.disable`` take as ``version``: a version, a spec, or none.
VersionPick = str | VersionSpec | None


def version_spec(version: VersionPick) -> VersionSpec | None:
    """``version`` as ``app.enable``/``app.disable`` take it: a string is that version."""
    if version is None or isinstance(version, VersionSpec):
        return version
    if not isinstance(version, str):
        raise TypeError(f"version must be a string or a VersionSpec, not {version!r}")
    return VersionSpec(eq=version)


class ToolVersions:
    """The versions of each versioned tool, and the version pinned for some. ``usable``
    says whether a version may be served and called (not set aside by ``app.disable``)."""

    __slots__ = ("by_name", "pinned", "usable")

    def __init__(self, usable: Callable[[Any], bool] = bool) -> None:
        self.by_name: dict[str, dict[str, Any]] = {}
        self.pinned: dict[str, str] = {}
        self.usable = usable

    def add(self, entry: Any) -> Any:
        """Keep ``entry`` among its name's versions; the one to serve now."""
        versions = self.by_name.setdefault(entry.name, {})
        if entry.version not in versions and len(versions) >= MAX_TOOL_VERSIONS:
            raise ValueError(f"tool {entry.name!r} has {MAX_TOOL_VERSIONS} versions already")
        versions[entry.version] = entry
        return self.served(entry.name)

    def served(self, name: str) -> Any:
        """The version served under ``name`` (pinned, else the highest usable one; the
        highest of all when none is, which the catalog then sets aside), dressed with the
        list of versions in its ``_meta``."""
        versions = self.by_name[name]
        chosen = self.pinned.get(name)
        if chosen not in versions:
            ready = [version for version, entry in versions.items() if self.usable(entry)]
            chosen = max(ready or versions, key=version_key)
        entry = versions[chosen]
        known = sorted(versions, key=version_key)
        meta = {**(entry.meta or {}), VERSION_META_KEY: chosen, VERSIONS_META_KEY: known}
        return dataclasses.replace(entry, meta=meta, _wire=None)

    def pick(self, name: str, version: Any) -> Any:
        """The entry of ``version`` of ``name``, None when there is none or it is set
        aside."""
        versions = self.by_name.get(name)
        if versions is None or not isinstance(version, str):
            return None
        entry = versions.get(version)
        return entry if entry is not None and self.usable(entry) else None

    def forget(self, name: str) -> None:
        self.by_name.pop(name, None)
        self.pinned.pop(name, None)


def version_asked(catalog: Any, name: Any, meta: Any) -> Any:
    """The version of tool ``name`` a call's ``_meta`` asks for, None when it asks none;
    ``InvalidParamsError`` for one not registered."""
    asked = meta.get(VERSION_META_KEY) if isinstance(meta, dict) else None
    if asked is None:
        return None
    picked = catalog.tool_versions.pick(name, asked)
    if picked is None:
        from mcpkit._exceptions import InvalidParamsError

        raise InvalidParamsError(f"Unknown version {asked!r} of tool {name}", {"name": name})
    return picked


__all__ = [
    "MAX_TOOL_VERSIONS",
    "VERSIONS_META_KEY",
    "VERSION_META_KEY",
    "ToolVersions",
    "VersionPick",
    "VersionSpec",
    "version_asked",
    "version_key",
    "version_spec",
]
