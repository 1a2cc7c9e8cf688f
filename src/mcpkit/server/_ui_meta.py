"""A tool's ``_meta.ui`` (MCP Apps): the page it opens and who may call it, as its ``ui=``
option gives them, with the names the extension's package defines."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

#: The extension's identifier: the key under ``capabilities.extensions`` on both sides.
EXTENSION_ID = "io.modelcontextprotocol/ui"
#: The MIME type of a page a host renders as an app.
RESOURCE_MIME_TYPE = "text/html;profile=mcp-app"
#: The flat ``_meta`` key older hosts read a tool's UI from (the extension still writes it
#: beside ``_meta.ui.resourceUri``, and hosts are told to read both).
RESOURCE_URI_META_KEY = "ui/resourceUri"
#: Who may call a tool that has a UI: the model (it is listed for it), the app (its page
#: calls it). Both when not said.
VISIBILITIES = ("model", "app")
#: The scheme of a UI resource's URI.
UI_SCHEME = "ui://"


def opens_ui(kind: str, entry: Any) -> bool:
    """Whether a catalog entry of the list ``kind`` is a UI page (a resource of the
    extension's type) or a tool that names one: an app serving either announces the
    extension."""
    if kind == "resources":
        return bool(entry.mime_type == RESOURCE_MIME_TYPE)
    return kind == "tools" and isinstance((entry.meta or {}).get("ui"), Mapping)


def check_ui_uri(uri: Any) -> str:
    """``uri`` when it is a ``ui://`` URI; a ``ValueError`` (``TypeError`` for a non-string)
    otherwise: hosts render only pages of that scheme."""
    if not isinstance(uri, str):
        raise TypeError(f"a UI resource's URI is a string such as 'ui://widget', not {uri!r}")
    if not uri.startswith(UI_SCHEME) or len(uri) == len(UI_SCHEME):
        raise ValueError(
            f"a UI resource's URI starts with {UI_SCHEME!r}, such as 'ui://widget'; got {uri!r}"
        )
    return uri


def tool_ui(
    resource_uri: str | None = None, *, visibility: Iterable[str] | None = None
) -> dict[str, Any]:
    """A tool's ``_meta.ui``, for its ``ui=`` option: the page it opens (``resource_uri``), and
    who may call it (``visibility``: ``["model"]``, ``["app"]`` for a tool only the page calls,
    or both, the default when not said)."""
    ui: dict[str, Any] = {}
    if resource_uri is not None:
        ui["resourceUri"] = check_ui_uri(resource_uri)
    if visibility is not None:
        if isinstance(visibility, str):
            raise TypeError(f"visibility is a list such as ['app'], not the string {visibility!r}")
        seen = list(visibility)
        wrong = [item for item in seen if item not in VISIBILITIES]
        if wrong or not seen:
            raise ValueError(f"visibility lists one or both of {list(VISIBILITIES)}, not {seen!r}")
        ui["visibility"] = seen
    if not ui:
        raise ValueError("tool_ui() needs a resource_uri, a visibility, or both")
    return ui


def tool_meta(ui: str | Mapping[str, Any], meta: Mapping[str, Any] | None) -> dict[str, Any]:
    """The ``_meta`` of a tool whose ``ui=`` option is ``ui`` (a ``ui://`` URI, or what
    ``tool_ui`` made), merged into the ``meta`` it was also given."""
    if isinstance(ui, str):
        wire = tool_ui(ui)
    elif isinstance(ui, Mapping):
        wire = tool_ui(ui.get("resourceUri"), visibility=ui.get("visibility"))
        extra = set(ui) - {"resourceUri", "visibility"}
        if extra:
            raise ValueError(
                f"a tool's ui= has resourceUri and visibility (see tool_ui()); not {sorted(extra)} "
                "(csp, permissions and the rest belong to the page: app_ui())"
            )
    else:
        raise TypeError(f"ui= takes a 'ui://...' URI or tool_ui(...), not {ui!r}")
    merged = dict(meta or {})
    if "ui" in merged:
        raise ValueError("give a tool ui= or meta={'ui': ...}, not both")
    merged["ui"] = wire
    if "resourceUri" in wire:
        merged[RESOURCE_URI_META_KEY] = wire["resourceUri"]
    return merged
