"""The provider's access token: the one in use, read once from and written through to the
``TokenStorage`` (under the server URL); and its renewal with the refresh token grant
(OAuth 2.1 §4.3).

Getting a first token is ``Authorizer``'s.
"""

from __future__ import annotations

import logging

from mcpkit.auth._types import OAuthError
from mcpkit.auth.client._discovery import AuthorizationServerMetadata
from mcpkit.auth.client._registration import ClientRegistration
from mcpkit.auth.client._server_discovery import ServerDiscovery
from mcpkit.auth.client._settings import ProviderSettings
from mcpkit.auth.client._storage import OAuthToken
from mcpkit.auth.client._token_endpoint import TokenEndpoint

logger = logging.getLogger("mcpkit.auth.client")


class ProviderTokens:
    """The current token of one provider, kept in step with its storage."""

    def __init__(self, settings: ProviderSettings) -> None:
        self._settings = settings
        self._token: OAuthToken | None = None
        self._loaded = False

    @property
    def token(self) -> OAuthToken | None:
        """The token in use; None before one was loaded or obtained."""
        return self._token

    async def load(self) -> OAuthToken | None:
        """Read a stored token (once) unless one is already in use; the token in use."""
        if not self._loaded:
            self._loaded = True
            stored = await self._settings.storage.get_tokens(self._settings.server_url)
            if stored is not None and self._token is None:
                self._token = stored
        return self._token

    async def set(self, token: OAuthToken | None) -> None:
        """Use ``token`` from now on (None: none) and store it."""
        self._token = token
        await self._settings.storage.set_tokens(self._settings.server_url, token)

    def authorization_value(self) -> str | None:
        """The ``Authorization`` header value of the token in use."""
        token = self._token
        return f"{token.scheme} {token.access_token}" if token is not None else None


class TokenRefresher:
    """Trades the refresh token of the token in use for a fresh token."""

    def __init__(
        self,
        tokens: ProviderTokens,
        discovery: ServerDiscovery,
        registration: ClientRegistration,
        endpoint: TokenEndpoint,
    ) -> None:
        self._tokens = tokens
        self._discovery = discovery
        self._registration = registration
        self._endpoint = endpoint

    async def refresh(
        self,
        resource_metadata: str | None,
        metadata: AuthorizationServerMetadata | None = None,
        resource: str | None = None,
    ) -> OAuthToken | None:
        """The fresh token, now in use; None when there is no refresh token, it belongs to
        another authorization server, or it was refused (the token is then dropped).
        ``metadata``/``resource``: the server just discovered, else the last one (else a
        discovery now, from ``resource_metadata``)."""
        token = self._tokens.token
        if token is None or not token.refresh_token:
            return None
        try:
            if metadata is None or resource is None:
                metadata, resource = self._discovery.current
            if metadata is None or resource is None:
                metadata, resource, _ = await self._discovery.discover(resource_metadata)
            if token.issuer and metadata.issuer and token.issuer != metadata.issuer:
                return None  # another authorization server now: its refresh token is no use
            client = await self._registration.client_for(metadata)
            form = {
                "grant_type": "refresh_token",
                "refresh_token": token.refresh_token,
                "resource": resource,
            }
            fresh = await self._endpoint.request(metadata, client, form, resource)
        except OAuthError as exc:
            logger.info("token refresh failed (%s); authorizing again", exc)
            await self._tokens.set(None)
            return None
        if fresh.refresh_token is None:
            fresh.refresh_token = token.refresh_token
        if fresh.scope is None:
            fresh.scope = token.scope
        await self._tokens.set(fresh)
        return fresh
