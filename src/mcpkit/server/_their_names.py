"""Names FastMCP and the mcp SDK have and mcpkit does not: reading one from an app raises
the ``AttributeError`` Python would, naming mcpkit's way (docs/migrating.md)."""

from __future__ import annotations

from typing import Any

_ASGI = "create_asgi_app(app) from mcpkit.transports.http is the ASGI app (docs/mounting.md)"
#: FastMCP's and the mcp SDK's names users reach for, and mcpkit's (docs/migrating.md).
_THEIR_NAMES = {
    "import_server": "app.import_app(other, prefix) copies another app's entries (not awaited)",
    "http_app": _ASGI,
    "streamable_http_app": _ASGI,
    "sse_app": _ASGI + "; legacy SSE is served beside Streamable HTTP, at /mcp/sse",
    "as_proxy": "McpProxy(backend).app from mcpkit.proxy is an app serving another server",
    "add_tool": "app.tool()(fn) registers a function as a tool (live: clients hear list_changed)",
    "remove_tool": "app.catalog.unregister_tool(name) takes a tool away (clients hear "
    "list_changed)",
}


class _TheirName:
    """A name FastMCP or the mcp SDK has and mcpkit does not: reading it raises the
    ``AttributeError`` Python would, naming mcpkit's way. Set on the class after it is made,
    so type checkers and the reference docs never see these names. (A ``__getattr__`` would
    do it too, but it makes every attribute read of the app slower: the hot path reads many.)"""

    def __init__(self, name: str, instead: str) -> None:
        self.name, self.instead = name, instead

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        kind = type(obj).__name__ if obj is not None else owner.__name__
        raise AttributeError(
            f"{kind!r} object has no attribute {self.name!r}; {self.instead}", name=self.name
        )


def add_their_names(cls: type) -> None:
    """Put the names on ``cls`` (``McpServerApp``), once, as it is made."""
    for name, instead in _THEIR_NAMES.items():
        setattr(cls, name, _TheirName(name, instead))


__all__ = ["add_their_names"]
