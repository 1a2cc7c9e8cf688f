"""The extensions an app announces (``capabilities.extensions``), in one place: tasks in
2026-07-28 (its tasks are that extension), MCP Apps in every version once the app serves a
UI page or a tool names one (clients of the handshake era read the key too)."""

from __future__ import annotations

from typing import Any

from mcpkit.protocol._versions import MODERN_VERSIONS
from mcpkit.server._tasks.manager import TASKS_EXTENSION
from mcpkit.server._ui_meta import EXTENSION_ID, RESOURCE_MIME_TYPE


def announced_extensions(catalog: Any, version: str | None) -> dict[str, dict[str, Any]]:
    """``capabilities.extensions`` for a client of ``version`` (None: the latest): empty when
    the app announces none."""
    extensions: dict[str, dict[str, Any]] = {}
    if version in MODERN_VERSIONS:
        extensions[TASKS_EXTENSION] = {}
    if catalog.serves_ui:
        extensions[EXTENSION_ID] = {"mimeTypes": [RESOURCE_MIME_TYPE]}
    return extensions
