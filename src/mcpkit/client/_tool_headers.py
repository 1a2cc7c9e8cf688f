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

logger = logging.getLogger("mcpkit.client")

__all__ = ["MAX_HEADER_LOOKUPS", "ToolHeaderMirroring"]

#: Tool names remembered as "listed once to find its x-mcp-header annotations".
MAX_HEADER_LOOKUPS = 1024


class ToolHeaderMirroring:
    """``x-mcp-header`` bookkeeping of ``McpClient`` (a mixin: it refreshes the cache with
    the client's ``list_tools``)."""

    era: Era | None
    session: ClientSession
    _header_lookups: set[str]
    list_tools: Callable[..., Awaitable[list[t.Tool]]]

    def _tool_header_cache(self) -> dict[str, Any] | None:
        """The transport's ``x-mcp-header`` cache (Streamable HTTP only)."""
        cache = getattr(self.session.stream, "tool_headers", None)
        return cache if isinstance(cache, dict) else None

    def _mirrors_headers(self) -> bool:
        """Whether requests are mirrored into HTTP headers (2026-07-28 Streamable HTTP)."""
        return self.era is Era.MODERN and self._tool_header_cache() is not None

    def _tools_with_header_annotations(self, raw: list[Any]) -> list[t.Tool]:
        """The listed tools, their annotations kept in the transport's cache (when requests
        are mirrored into headers); a tool with invalid annotations is left out."""
        cache = self._tool_header_cache() if self._mirrors_headers() else None
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

    async def _learn_tool_headers(self, name: str, timeout: float | None) -> None:
        """List the tools once when ``name``'s annotations are not known yet."""
        if not self._mirrors_headers():
            return
        cache = self._tool_header_cache()
        if cache is not None and name not in cache and name not in self._header_lookups:
            if len(self._header_lookups) >= MAX_HEADER_LOOKUPS:
                self._header_lookups.clear()
            self._header_lookups.add(name)
            await self.list_tools(timeout=timeout)
