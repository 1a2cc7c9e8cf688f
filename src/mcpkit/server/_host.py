"""``CatalogHost``: what the parts of the programming model (tasks, files, the response
cache, the method handlers) read of the app they serve. The app's class sits above them,
since it makes them; they name this interface instead of importing it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from mcpkit.server._catalog import McpCatalogManager
    from mcpkit.server._engine.engine import McpEngine


class CatalogHost(Protocol):
    """An app: the catalog of what it serves, and the engine serving it."""

    @property
    def catalog(self) -> McpCatalogManager: ...

    @property
    def engine(self) -> McpEngine: ...


__all__ = ["CatalogHost"]
