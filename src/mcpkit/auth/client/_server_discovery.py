"""Which authorization server guards the MCP server, and the resource to ask tokens for:
protected-resource metadata (RFC 9728), whose ``resource`` must name this server, then
the authorization server's metadata (RFC 8414 / OpenID discovery); without resource
metadata, the 2025-03-26 rule (the server's origin is the authorization server).

The metadata fetching itself is ``_discovery``'s; this keeps the provider's last answer.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from mcpkit.auth._types import OAuthError
from mcpkit.auth.client._discovery import (
    AuthorizationServerMetadata,
    ProtectedResourceMetadata,
    discover_authorization_server,
    discover_protected_resource,
    fallback_metadata,
    origin,
    resource_matches_server,
)
from mcpkit.auth.client._settings import ProviderSettings

logger = logging.getLogger("mcpkit.auth.client")

#: (authorization server, resource identifier, scopes_supported of the resource).
Discovered = tuple[AuthorizationServerMetadata, str, list[str] | None]


class ServerDiscovery:
    """Discovers the provider's authorization server; ``on_server_changed`` runs when a
    discovery finds another one than the last."""

    def __init__(self, settings: ProviderSettings, on_server_changed: Callable[[], None]) -> None:
        self._settings = settings
        self._on_server_changed = on_server_changed
        self._prm: ProtectedResourceMetadata | None = None
        self._as: AuthorizationServerMetadata | None = None
        self._resource: str | None = None

    @property
    def current(self) -> tuple[AuthorizationServerMetadata | None, str | None]:
        """The authorization server and resource the last discovery found (None: none yet)."""
        return self._as, self._resource

    async def discover(self, resource_metadata: str | None) -> Discovered:
        """Discover now, starting at the challenge's ``resource_metadata`` URL when given.
        Raises ``OAuthError`` when the metadata is missing, or names another resource."""
        server_url = self._settings.server_url
        prm = await discover_protected_resource(self._settings.http, server_url, resource_metadata)
        self._prm = prm
        if prm is not None:
            metadata = await self._server_of(prm)
            resource = prm.resource
            scopes = prm.scopes_supported
        else:
            # 2025-03-26: no resource metadata; the server's origin is the authorization server.
            logger.info(
                "no protected-resource metadata for %s; using its origin as authorization server",
                server_url,
            )
            metadata = await discover_authorization_server(
                self._settings.http, origin(server_url), same_origin_issuer=True
            ) or fallback_metadata(server_url)
            resource = server_url
            scopes = None
        if self._as is not None and self._as.issuer != metadata.issuer:
            logger.info(
                "authorization server changed from %s to %s", self._as.issuer, metadata.issuer
            )
            self._on_server_changed()
        self._as = metadata
        self._resource = resource
        return metadata, resource, scopes

    async def _server_of(self, prm: ProtectedResourceMetadata) -> AuthorizationServerMetadata:
        """The metadata of the first authorization server the resource lists."""
        server_url = self._settings.server_url
        if not resource_matches_server(prm.resource, server_url):
            raise OAuthError(
                f"protected-resource metadata names resource {prm.resource!r}, not this server "
                f"({server_url}); refusing to authorize",
                error="invalid_resource",
            )
        if not prm.authorization_servers:
            raise OAuthError(
                f"protected-resource metadata at {prm.url} lists no authorization server"
            )
        issuer = prm.authorization_servers[0]
        metadata = await discover_authorization_server(self._settings.http, issuer)
        if metadata is None:
            raise OAuthError(f"no authorization server metadata found for {issuer}")
        return metadata
