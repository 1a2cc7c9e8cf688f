"""The ``_meta`` keys mcpkit names tool versions by, shared by the server that serves
several versions of one tool and the client that picks one."""

from __future__ import annotations

#: The ``_meta`` key a tool call names a version by; and the one a listed tool's
#: versions are in.
VERSION_META_KEY = "mcpkit/version"
VERSIONS_META_KEY = "mcpkit/versions"

__all__ = ["VERSIONS_META_KEY", "VERSION_META_KEY"]
