"""The ``x-mcp-header`` annotations of tools, for 2026-07-28 over Streamable HTTP (SEP-2243).

The transport mirrors a ``tools/call``'s arguments into ``Mcp-Param-*`` headers as the
tool's input schema says; the client fills the transport's cache from ``tools/list``,
leaves out (with a warning) a tool whose annotations break the rules, and lists the tools
once before calling one it has not seen.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from mcpkit.client._results import convert
from mcpkit.protocol import types as t
from mcpkit.protocol._headers import header_annotations
from mcpkit.protocol._versions import Era

if TYPE_CHECKING:
    from mcpkit.client._session import ClientSession
    from mcpkit.client._state import ClientState

logger = logging.getLogger("mcpkit.client")

__all__ = ["MAX_HEADER_LOOKUPS", "ToolHeaderMirror"]

#: Tool names remembered as "listed once to find its x-mcp-header annotations".
MAX_HEADER_LOOKUPS = 1024


#: Lists the tools afresh (``McpClient.list_tools``), which refills the cache.
Relister = Callable[..., Awaitable[object]]


class ToolHeaderMirror:
    """The ``x-mcp-header`` bookkeeping of one client: the annotations ``tools/list`` gave,
    kept in the transport's cache, and a listing before calling a tool not seen yet."""

    def __init__(
        self,
        session: ClientSession,
        state: ClientState,
        relist: Relister,
        *,
        max_lookups: int = MAX_HEADER_LOOKUPS,
    ) -> None:
        self._session = session
        self._state = state
        self._relist = relist
        self.max_lookups = max_lookups
        self._lookups: set[str] = set()

    def _cache(self) -> dict[str, Any] | None:
        """The transport's ``x-mcp-header`` cache (Streamable HTTP only)."""
        cache = getattr(self._session.stream, "tool_headers", None)
        return cache if isinstance(cache, dict) else None

    def mirrors(self) -> bool:
        """Whether requests are mirrored into HTTP headers (2026-07-28 Streamable HTTP)."""
        return self._state.era is Era.MODERN and self._cache() is not None

    async def relist(self, timeout: float | None) -> None:
        """List the tools afresh (their annotations may have changed)."""
        await self._relist(timeout=timeout)

    def tools(self, raw: list[Any]) -> list[t.Tool]:
        """The listed tools, their annotations kept in the transport's cache (when requests
        are mirrored into headers); a tool with invalid annotations is left out."""
        cache = self._cache() if self.mirrors() else None
        if cache is None:
            return [convert(item, t.Tool) for item in raw]
        tools: list[t.Tool] = []
        annotations: dict[str, Any] = {}
        for item in raw:
            name = item.get("name") if isinstance(item, dict) else None
            try:
                found = header_annotations(
                    item.get("inputSchema") if isinstance(item, dict) else None
                )
            except ValueError as exc:
                logger.warning("left out tool %r: invalid x-mcp-header annotation: %s", name, exc)
                continue
            tool = convert(item, t.Tool)
            annotations[tool.name] = found
            tools.append(tool)
        cache.clear()
        cache.update(annotations)
        return tools

    async def learn(self, name: str, timeout: float | None) -> None:
        """List the tools once when ``name``'s annotations are not known yet."""
        if not self.mirrors():
            return
        cache = self._cache()
        if cache is not None and name not in cache and name not in self._lookups:
            if len(self._lookups) >= self.max_lookups:
                self._lookups.clear()
            self._lookups.add(name)
            await self.relist(timeout)
