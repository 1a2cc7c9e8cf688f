"""What one session shows of the app's components, besides what the app serves to all:
``ctx.enable_components(...)`` and ``ctx.disable_components(...)`` from a tool (or a
guard, an interceptor) add a rule naming components or tags, and the last rule naming a
component decides for that session; one no rule names is as the app has it (served, or
set aside by ``app.disable``). Kept on the session (handshake era: Streamable HTTP,
legacy SSE, stdio, WebSocket), so it ends with it; a 2026-07-28 request has no session to
keep it on."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcpkit.server._versions import VersionSpec

#: Rules one session may hold; past it the oldest is dropped.
MAX_VIEW_RULES = 64
#: Rules ``app.enable``/``app.disable`` keep (applied to what is registered later too).
MAX_CATALOG_RULES = 1024


class SessionView:
    """The rules of one session (or, with a larger ``limit``, of the app's catalog:
    ``app.enable``/``app.disable``), oldest first: (shown, names, tags)."""

    __slots__ = ("limit", "rules")

    def __init__(self, limit: int = MAX_VIEW_RULES) -> None:
        self.limit = limit
        self.rules: list[tuple[bool, frozenset[str], frozenset[str], VersionSpec | None]] = []

    def add(
        self,
        shown: bool,
        names: Iterable[str],
        tags: Iterable[str],
        version: VersionSpec | None = None,
    ) -> None:
        """A rule: the components named in ``names`` (a name, or a resource's URI) or
        carrying any of ``tags`` are shown (or hidden) from now on; with ``version`` (a
        ``VersionSpec``), only their versions it matches (every component's, without names
        or tags). Past ``limit`` rules the oldest is dropped."""
        if len(self.rules) >= self.limit:
            del self.rules[0]
        self.rules.append((shown, frozenset(names), frozenset(tags), version))

    def verdict(self, entry: Any, key: str) -> bool | None:
        """Whether the session sees ``entry`` (at ``key`` in its list), as the last rule
        naming it says; None when none does."""
        for shown, names, tags, version in reversed(self.rules):
            if version is not None:
                if not version.matches(getattr(entry, "version", None)):
                    continue
                if not names and not tags:
                    return shown
            if key in names or entry.name in names or not tags.isdisjoint(entry.tags):
                return shown
        return None

    def shows(self, entry: Any, key: str) -> bool:
        """Whether the session sees ``entry``: its rules, else the app's own choice."""
        verdict = self.verdict(entry, key)
        return entry.enabled if verdict is None else verdict


def view_of(binding: Any) -> SessionView | None:
    """The view of the session a call came on, None when it has none (most sessions)."""
    session = binding.session
    return None if session is None else session.visibility


__all__ = ["MAX_CATALOG_RULES", "MAX_VIEW_RULES", "SessionView", "view_of"]
