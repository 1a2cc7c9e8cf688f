"""Per-component authorization: which tools, resources, templates and prompts a caller may
see and use, decided from the identity on the call's binding (``binding.auth``) by each
entry's ``auth`` requirement (``mcpkit.auth.AuthRequirement``, given as ``auth=`` to its
decorator).

A caller the requirement refuses finds the component absent: the lists leave it out and a
call, read or get of it is answered exactly as for a name no one registered. The set is
worked out per request, from that request's identity; a catalog with no requirement in a
list (``McpCatalogManager.restricts``) is listed as before, unfiltered and cached.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from mcpkit.server._session_view import SessionView, view_of

if TYPE_CHECKING:
    from mcpkit.auth._types import AuthInfo, AuthRequirement
    from mcpkit.server._engine.binding import TransportBinding
    from mcpkit.server._entries import ResourceTemplateEntry

logger = logging.getLogger("mcpkit.server")

E = TypeVar("E")

#: What a list result whose content depends on the caller says of caching (2026-07-28:
#: reused only within the same authorization context).
PRIVATE = "private"


class Catalog(Protocol):
    """What is read here of the catalog (``McpCatalogManager``, which uses this module)."""

    def set_aside(self, kind: str) -> dict[str, Any]: ...

    def restricts(self, kind: str) -> bool: ...
    def get_prompt(self, name: str) -> Any: ...
    def get_resource(self, uri: str) -> Any: ...
    def list_resource_templates(self) -> list[ResourceTemplateEntry]: ...
    def match_template(self, uri: str) -> tuple[ResourceTemplateEntry, dict[str, Any]] | None: ...


class ListedCatalog(Catalog, Protocol):
    """The catalog with its lists, for ``lists_that_differ``."""

    def list_tools(self) -> list[Any]: ...
    def list_resources(self) -> list[Any]: ...
    def list_prompts(self) -> list[Any]: ...


def permits(requirement: AuthRequirement, auth: AuthInfo | None) -> bool:
    """Whether ``auth`` satisfies ``requirement``; one that raises refuses (and is logged):
    a broken check hides the component rather than showing it."""
    try:
        return requirement(auth)
    except Exception:
        logger.warning(
            "the auth requirement %s raised; its component is hidden from this caller",
            requirement,
            exc_info=True,
        )
        return False


def usable(entry: E | None, auth: AuthInfo | None) -> E | None:
    """``entry`` when the caller may use it, else None: what a lookup of an unknown name
    gives, so the refusal that follows is the unknown name's."""
    if entry is None:
        return None
    requirement = entry.auth  # type: ignore[attr-defined]  # every catalog entry has it
    if requirement is None or permits(requirement, auth):
        return entry
    return None


def step_up_needed(entry: Any, auth: AuthInfo | None) -> tuple[str, ...] | None:
    """The scopes a signed-in caller is asked to step up to before using ``entry`` (one
    whose requirement is ``require_scopes(..., step_up=True)`` and not met); None when it
    may use it, or when it is simply hidden from the caller."""
    requirement = entry.auth
    if requirement is None or not requirement.step_up or auth is None:
        return None
    return None if permits(requirement, auth) else requirement.step_up


def visible(entries: Iterable[E], auth: AuthInfo | None) -> list[E]:
    """The ``entries`` the caller may see, in their order: those it may use, and those it
    is asked to step up for."""
    return [
        entry
        for entry in entries
        if usable(entry, auth) is not None or step_up_needed(entry, auth) is not None
    ]


def refuse_step_up(kind: str, name: str, entry: Any, auth: AuthInfo | None) -> None:
    """Raise ``InsufficientScopeError`` when the caller must step up to use ``entry``."""
    needed = step_up_needed(entry, auth)
    if needed is not None:
        from mcpkit._exceptions import InsufficientScopeError

        raise InsufficientScopeError(kind, name, needed)


def listed(
    catalog: Catalog, kind: str, entries: list[E], binding: TransportBinding
) -> tuple[list[E], bool]:
    """``entries`` of the list ``kind`` as the caller on ``binding`` sees them (its
    session's view, then its identity), and whether that list depends on the caller (then
    a 2026-07-28 result is ``cacheScope: private``)."""
    view = view_of(binding)
    if view is not None:
        entries = shown(catalog, kind, entries, view)
    if not catalog.restricts(kind):
        return entries, view is not None
    return visible(entries, binding.auth), True


def shown(catalog: Catalog, kind: str, entries: list[E], view: SessionView) -> list[E]:
    """``entries`` of the list ``kind`` as a session's ``view`` shows them: those it does
    not hide, and those set aside that it shows."""
    aside = catalog.set_aside(kind).items()
    return [e for e in entries if view.shows(e, _key(kind, e))] + [
        e for key, e in aside if view.shows(e, key)
    ]


def _key(kind: str, entry: Any) -> str:
    """The key of ``entry`` in the list ``kind`` (a name, a URI, a URI template)."""
    if kind == "resources":
        return str(entry.uri)
    return str(entry.uri_template if kind == "resourceTemplates" else entry.name)


def in_view(catalog: Catalog, kind: str, key: Any, entry: Any, binding: TransportBinding) -> Any:
    """``entry`` (the catalog's at ``key``, maybe None) as the session on ``binding`` sees
    it: hidden by its view, or one set aside that its view shows; None when it sees none."""
    view = view_of(binding)
    if view is None or not isinstance(key, str):
        return entry
    if entry is None:
        entry = catalog.set_aside(kind).get(key)
    return entry if entry is not None and view.shows(entry, key) else None


def mark_private(result: dict[str, Any], binding: TransportBinding) -> None:
    """A 2026-07-28 list that differs by caller may be cached only for this caller."""
    if binding.modern:
        result["cacheScope"] = PRIVATE


def match_template(
    catalog: Catalog, uri: str, auth: AuthInfo | None, view: SessionView | None = None
) -> tuple[ResourceTemplateEntry, dict[str, Any]] | None:
    """The first template the caller may read that matches ``uri``, with its variables'
    values (``McpCatalogManager.match_template`` over the visible templates alone; those
    its session's ``view`` shows, when it has one)."""
    if not catalog.restricts("resourceTemplates") and view is None:
        return catalog.match_template(uri)
    templates: Any = catalog.list_resource_templates()
    if view is not None:
        templates = shown(catalog, "resourceTemplates", templates, view)
    for entry in visible(templates, auth):
        values = entry.template.match(uri)
        if values is not None:
            return entry, values
    return None


def lists_that_differ(
    catalog: ListedCatalog, before: AuthInfo | None, after: AuthInfo | None
) -> list[str]:
    """The ``list_changed`` notifications a session owes its client when its caller was
    ``before`` and is now ``after``: one per list (resources and templates share theirs)
    whose visible entries differ. Lists without requirements are never compared."""
    methods: list[str] = []
    for kind, entries, method in (
        ("tools", catalog.list_tools, "notifications/tools/list_changed"),
        ("resources", catalog.list_resources, "notifications/resources/list_changed"),
        (
            "resourceTemplates",
            catalog.list_resource_templates,
            "notifications/resources/list_changed",
        ),
        ("prompts", catalog.list_prompts, "notifications/prompts/list_changed"),
    ):
        if method in methods or not catalog.restricts(kind):
            continue
        listed_entries = entries()
        if visible(listed_entries, before) != visible(listed_entries, after):
            methods.append(method)
    return methods


def completes_hidden(
    catalog: Catalog, ref_type: str, target: str, binding: TransportBinding
) -> bool:
    """Whether ``completion/complete`` names a prompt, resource or template the caller on
    ``binding`` may not see (set aside by the app, hidden by its session's view, refused to
    its identity): answered as for one that does not exist (no values). One no one
    registered is not hidden: its completion answers."""
    kinds = ("prompts",) if ref_type == "ref/prompt" else ("resources", "resourceTemplates")
    for kind in kinds:
        served = _served(catalog, kind, target)
        if served is None and target not in catalog.set_aside(kind):
            continue
        seen = in_view(catalog, kind, target, served, binding)
        return seen is None or usable(seen, binding.auth) is None
    return False


def _served(catalog: Catalog, kind: str, key: str) -> Any:
    if kind == "prompts":
        return catalog.get_prompt(key)
    if kind == "resources":
        return catalog.get_resource(key)
    return next((t for t in catalog.list_resource_templates() if t.uri_template == key), None)


__all__ = [
    "PRIVATE",
    "Catalog",
    "ListedCatalog",
    "completes_hidden",
    "in_view",
    "listed",
    "lists_that_differ",
    "mark_private",
    "match_template",
    "permits",
    "refuse_step_up",
    "shown",
    "step_up_needed",
    "usable",
    "visible",
]
