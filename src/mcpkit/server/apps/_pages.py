"""MCP Apps pages: a ``ui://`` resource served as ``text/html;profile=mcp-app`` with its
``_meta.ui`` (``app_ui``, ``ui_resource``), and what the client declared of the extension."""

from __future__ import annotations

import functools
import inspect
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from mcpkit.server._decorators import mcp_resource
from mcpkit.server._ui_meta import (
    EXTENSION_ID,
    RESOURCE_MIME_TYPE,
    check_ui_uri,
)

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True, slots=True)
class Csp:
    """The origins a page may reach (``_meta.ui.csp``); a host builds the iframe's Content
    Security Policy from them, and nothing is reachable that is not listed.

    ``connect_domains``: fetch, XHR, WebSocket (``connect-src``); ``resource_domains``:
    scripts, styles, images, fonts, media; ``frame_domains``: nested iframes;
    ``base_uri_domains``: the document's base URI."""

    connect_domains: tuple[str, ...] = ()
    resource_domains: tuple[str, ...] = ()
    frame_domains: tuple[str, ...] = ()
    base_uri_domains: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for field_name in (
            "connect_domains",
            "resource_domains",
            "frame_domains",
            "base_uri_domains",
        ):
            value = getattr(self, field_name)
            if isinstance(value, str) or not all(isinstance(item, str) for item in value):
                raise TypeError(f"Csp({field_name}=...) takes a list of origins, not {value!r}")
            object.__setattr__(self, field_name, tuple(value))

    def to_meta(self) -> dict[str, list[str]]:
        """The wire form: only the lists given, in the extension's camelCase."""
        wire = {
            "connectDomains": self.connect_domains,
            "resourceDomains": self.resource_domains,
            "frameDomains": self.frame_domains,
            "baseUriDomains": self.base_uri_domains,
        }
        return {key: list(value) for key, value in wire.items() if value}


@dataclass(frozen=True, slots=True)
class Permissions:
    """The browser permissions a page asks for (``_meta.ui.permissions``). A host may grant
    them (the iframe's ``allow``), or not: the page should detect what it got."""

    camera: bool = False
    microphone: bool = False
    geolocation: bool = False
    clipboard_write: bool = False

    def to_meta(self) -> dict[str, dict[str, Any]]:
        wire = {
            "camera": self.camera,
            "microphone": self.microphone,
            "geolocation": self.geolocation,
            "clipboardWrite": self.clipboard_write,
        }
        return {key: {} for key, wanted in wire.items() if wanted}


def page_meta(
    *,
    csp: Csp | None = None,
    permissions: Permissions | None = None,
    domain: str | None = None,
    prefers_border: bool | None = None,
) -> dict[str, Any]:
    """A page's ``_meta.ui``: what is given of its CSP origins, permissions, dedicated origin
    (``domain``, in the form the host documents) and border preference."""
    ui: dict[str, Any] = {}
    if csp is not None:
        if not isinstance(csp, Csp):
            raise TypeError(f"csp= takes a Csp(...), not {csp!r}")
        ui["csp"] = csp.to_meta()
    if permissions is not None:
        if not isinstance(permissions, Permissions):
            raise TypeError(f"permissions= takes a Permissions(...), not {permissions!r}")
        ui["permissions"] = permissions.to_meta()
    if domain is not None:
        if not isinstance(domain, str) or not domain:
            raise TypeError(
                f"domain= is the origin the host gives the page, a string; not {domain!r}"
            )
        ui["domain"] = domain
    if prefers_border is not None:
        if not isinstance(prefers_border, bool):
            raise TypeError(f"prefers_border= is True or False, not {prefers_border!r}")
        ui["prefersBorder"] = prefers_border
    return ui


def _with_page_meta(fn: Callable[..., Any], ui: dict[str, Any]) -> Callable[..., Any]:
    """``fn`` whose HTML comes back as a content item carrying the page's ``_meta.ui`` too
    (hosts read the item's before the listing's). Its signature is ``fn``'s."""

    def item(value: Any) -> Any:
        if isinstance(value, str) and ui:
            return {"text": value, "_meta": {"ui": dict(ui)}}
        return value

    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def read_async(*args: Any, **kwargs: Any) -> Any:
            return item(await fn(*args, **kwargs))

        return read_async

    @functools.wraps(fn)
    def read(*args: Any, **kwargs: Any) -> Any:
        return item(fn(*args, **kwargs))

    return read


def _page_options(
    uri: str, ui: dict[str, Any], meta: Mapping[str, Any] | None, options: dict[str, Any]
) -> dict[str, Any]:
    """``mcp_resource``'s options for a page: its type, and its ``_meta.ui`` on its listing."""
    check_ui_uri(uri)
    if "{" in uri:
        raise ValueError(f"a UI page has one fixed URI, not a template: {uri!r}")
    if "mime_type" in options:
        raise TypeError(f"a UI page is served as {RESOURCE_MIME_TYPE!r}; it takes no mime_type=")
    merged = dict(meta or {})
    if "ui" in merged:
        raise ValueError(
            "give a UI page csp=/permissions=/domain=/prefers_border=, not meta={'ui': ...}"
        )
    if ui:
        merged["ui"] = ui
    return {**options, "mime_type": RESOURCE_MIME_TYPE, "meta": merged or None}


def ui_resource(
    uri: str,
    *,
    csp: Csp | None = None,
    permissions: Permissions | None = None,
    domain: str | None = None,
    prefers_border: bool | None = None,
    meta: Mapping[str, Any] | None = None,
    **options: Any,
) -> Callable[[F], F]:
    """Mark a method (of an ``@mcp_server`` class) as a UI page: ``mcp_resource`` served as
    ``text/html;profile=mcp-app`` with the page's ``_meta.ui`` on its listing and on what it
    returns (its HTML, a string). ``options`` are ``mcp_resource``'s others (``name``,
    ``title``, ``description``, ``auth``, ``tags``, ...)."""
    ui = page_meta(csp=csp, permissions=permissions, domain=domain, prefers_border=prefers_border)
    marker = mcp_resource(uri, **_page_options(uri, ui, meta, options))

    def mark(fn: F) -> F:
        return marker(_with_page_meta(fn, ui))  # type: ignore[return-value]

    return mark


def _reader(html: str | os.PathLike[str] | Callable[..., Any]) -> Callable[..., Any]:
    """A resource function for ``html``: the text itself, a file read at each read (an edit
    shows at the next), or the callable that makes it."""
    if isinstance(html, str):
        text = html

        def static_page() -> str:
            return text

        return static_page
    if isinstance(html, os.PathLike):
        path = Path(html)
        if not path.is_file():
            raise FileNotFoundError(f"app_ui(html=...): no file at {str(path)!r}")

        def file_page() -> str:
            return path.read_text(encoding="utf-8")

        return file_page
    if callable(html):
        return html
    raise TypeError(
        f"html= is the page's HTML (a string), a file's path or a function returning it, not {html!r}"
    )


def app_ui(
    app: Any,
    uri: str,
    html: str | os.PathLike[str] | Callable[..., Any] | None = None,
    *,
    csp: Csp | None = None,
    permissions: Permissions | None = None,
    domain: str | None = None,
    prefers_border: bool | None = None,
    meta: Mapping[str, Any] | None = None,
    **options: Any,
) -> Any:
    """Serve a UI page on ``app`` at ``uri`` (``ui://...``): ``html`` is its HTML, a file's path
    (read at each read) or a function returning it; without ``html``, a decorator for that
    function (``@app_ui(app, "ui://widget")``). Registered live, as ``app.resource`` does;
    the page's ``_meta.ui`` is built from ``csp``, ``permissions``, ``domain`` and
    ``prefers_border``; ``options`` are ``app.resource``'s others (``name``, ``title``,
    ``description``, ``auth``, ...). Returns the function (decorator form) or None."""
    if not callable(getattr(app, "resource", None)):
        raise TypeError(f"app_ui() serves the page on an McpServerApp, not {app!r}")
    ui = page_meta(csp=csp, permissions=permissions, domain=domain, prefers_border=prefers_border)
    resource = app.resource(uri, **_page_options(uri, ui, meta, options))

    def register(fn: Any) -> Any:
        resource(_with_page_meta(fn, ui))
        return fn

    if html is None:
        return register
    register(_reader(html))
    return None


def ui_capability(ctx: Any) -> dict[str, Any] | None:
    """What the client declared of the extension (``capabilities.extensions[EXTENSION_ID]``,
    e.g. ``{"mimeTypes": [...]}``), or None when it declared nothing. ``ctx`` is the tool's
    ``McpToolContext`` (2026-07-28: this request's declaration; before: the handshake's)."""
    extensions = ctx.client_capabilities.get("extensions")
    declared = extensions.get(EXTENSION_ID) if isinstance(extensions, Mapping) else None
    return dict(declared) if isinstance(declared, Mapping) else None


def host_supports_ui(ctx: Any) -> bool:
    """Whether the client can show a UI page: it declared the extension with
    ``text/html;profile=mcp-app`` among its ``mimeTypes``. A tool with a UI still returns
    text a client without one can use; this tells it when the text is all that is seen."""
    declared = ui_capability(ctx)
    mime_types = declared.get("mimeTypes") if declared else None
    return isinstance(mime_types, list) and RESOURCE_MIME_TYPE in mime_types
