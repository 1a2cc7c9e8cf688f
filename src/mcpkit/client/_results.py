"""Turning the raw result dicts a server sends into the typed results ``McpClient`` returns."""

from __future__ import annotations

from typing import Any, TypeVar

import msgspec

from mcpkit.client._extensions import announced_extensions
from mcpkit.protocol import types as t
from mcpkit.protocol._modern import SERVER_INFO_KEY

__all__ = [
    "DiscoveredCapabilities",
    "ServerDiscovery",
    "convert",
    "discovered_capabilities",
    "read_resource_result",
]

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


class DiscoveredCapabilities(t.ServerCapabilities, kw_only=True, omit_defaults=True):
    """A 2026-07-28 server's capabilities: the typed ``ServerCapabilities`` every era's
    ``server_info`` holds, with the ``extensions`` the server announces (2026-07-28 has the
    member, the handshake era's types do not; ``McpClient.server_extensions`` has them in
    either era)."""

    #: Extension identifiers (``io.modelcontextprotocol/tasks``) to their settings objects.
    extensions: dict[str, dict[str, Any]] | None = None


def discovered_capabilities(raw: Any) -> DiscoveredCapabilities:
    """The typed capabilities of a ``server/discover`` result; an extension entry that is not
    an object is left out rather than failing the whole answer."""
    caps = dict(raw) if isinstance(raw, dict) else {}
    if "extensions" in caps:
        announced = announced_extensions(caps)
        caps["extensions"] = dict(announced) if isinstance(caps["extensions"], dict) else None
    return convert(caps, DiscoveredCapabilities)


class ServerDiscovery(msgspec.Struct, kw_only=True, omit_defaults=True):
    """What ``server/discover`` told a 2026-07-28 client (``McpClient.discovery``)."""

    #: Protocol versions the server supports.
    supported_versions: list[str]
    #: What the server offers, with the extensions it announces (``capabilities.extensions``).
    capabilities: DiscoveredCapabilities
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
            capabilities=discovered_capabilities(raw.get("capabilities")),
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
