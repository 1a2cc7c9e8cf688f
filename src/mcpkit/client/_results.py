"""Turning the raw result dicts a server sends into the typed results ``McpClient`` returns."""

from __future__ import annotations

from typing import Any, TypeVar

import msgspec

from mcpkit.protocol import types as t
from mcpkit.protocol._modern import SERVER_INFO_KEY

__all__ = ["ServerDiscovery", "convert", "read_resource_result"]

T = TypeVar("T")


def convert(data: Any, tp: type[T]) -> T:
    return msgspec.convert(data, tp, strict=False)


def read_resource_result(raw: dict[str, Any]) -> t.ReadResourceResult:
    result = convert(raw, t.ReadResourceResult)
    # The schema's contents union has no tag; pick the member by its distinguishing key.
    contents: list[Any] = [
        convert(item, t.TextResourceContents if "text" in item else t.BlobResourceContents)
        for item in raw.get("contents", [])
    ]
    result.contents = contents
    return result


class ServerDiscovery(msgspec.Struct, kw_only=True, omit_defaults=True):
    """What ``server/discover`` told a 2026-07-28 client (``McpClient.discovery``)."""

    #: Protocol versions the server supports.
    supported_versions: list[str]
    capabilities: t.ServerCapabilities
    #: The server's self-reported identity (``_meta`` ``serverInfo``), when it gave one.
    server_info: t.Implementation | None = None
    instructions: str | None = None
    #: Caching hints (SEP-2549): how long the answer stays fresh, and for whom.
    ttl_ms: int | None = None
    cache_scope: str | None = None
    meta: dict[str, Any] | None = None

    @classmethod
    def from_result(cls, raw: dict[str, Any]) -> ServerDiscovery:
        """What a ``server/discover`` result says (versions, capabilities, server info)."""
        meta = raw.get("_meta") if isinstance(raw.get("_meta"), dict) else None
        info = (meta or {}).get(SERVER_INFO_KEY) or raw.get("serverInfo")
        ttl = raw.get("ttlMs")
        return cls(
            supported_versions=[
                v for v in raw.get("supportedVersions") or [] if isinstance(v, str)
            ],
            capabilities=convert(raw.get("capabilities") or {}, t.ServerCapabilities),
            server_info=convert(info, t.Implementation)
            if isinstance(info, dict) and "name" in info
            else None,
            instructions=raw.get("instructions")
            if isinstance(raw.get("instructions"), str)
            else None,
            ttl_ms=ttl if isinstance(ttl, int) and not isinstance(ttl, bool) else None,
            cache_scope=raw.get("cacheScope") if isinstance(raw.get("cacheScope"), str) else None,
            meta=meta,
        )
