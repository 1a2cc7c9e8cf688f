"""MCP Apps: the ``io.modelcontextprotocol/ui`` extension, a tool with an interactive UI.

A tool names a ``ui://`` resource in its ``_meta.ui.resourceUri``; the resource is an HTML
document served as ``text/html;profile=mcp-app``, which a host that supports the extension
renders in a sandboxed iframe (its ``_meta.ui`` says which origins the page may reach, the
browser permissions it asks for, its origin, its border). ``app_ui`` (or ``ui_resource`` on a
class) serves such a page, a tool's ``ui=`` option names it, and ``host_supports_ui(ctx)``
tells a tool whether the client it answers can show one. An app that serves a page announces
the extension in its capabilities (``capabilities.extensions``) by itself.

The key names are the ones the extension's package (``@modelcontextprotocol/ext-apps``)
defines: ``RESOURCE_MIME_TYPE``, ``RESOURCE_URI_META_KEY``, ``EXTENSION_ID``.
"""

from mcpkit.server._ui_meta import (
    EXTENSION_ID,
    RESOURCE_MIME_TYPE,
    RESOURCE_URI_META_KEY,
    VISIBILITIES,
    tool_ui,
)
from mcpkit.server.apps._pages import (
    Csp,
    Permissions,
    app_ui,
    host_supports_ui,
    ui_capability,
    ui_resource,
)

__all__ = [
    "EXTENSION_ID",
    "RESOURCE_MIME_TYPE",
    "RESOURCE_URI_META_KEY",
    "VISIBILITIES",
    "Csp",
    "Permissions",
    "app_ui",
    "host_supports_ui",
    "tool_ui",
    "ui_capability",
    "ui_resource",
]
