"""The client's identity at an authorization server: how it gets a client id there
(pre-registered, a Client ID Metadata Document URL, or dynamic registration, RFC 7591, with
what ``OAuthClientMetadata`` says), kept per server in the ``TokenStorage``.

Does not find the authorization server (``ServerDiscovery``) nor ask it for tokens.
"""

from __future__ import annotations

import httpx

from mcpkit.auth._types import OAuthError
from mcpkit.auth.client._discovery import AuthorizationServerMetadata, origin
from mcpkit.auth.client._grants import JWT_BEARER_GRANT
from mcpkit.auth.client._responses import post_json, refusal
from mcpkit.auth.client._settings import ProviderSettings
from mcpkit.auth.client._storage import OAuthClientInformation


def issuer_key(metadata: AuthorizationServerMetadata) -> str:
    """What a registration is kept under: the server's issuer, else its token endpoint's origin."""
    return metadata.issuer or origin(metadata.token_endpoint)


class ClientRegistration:
    """The provider's client at the current authorization server; ``forget`` when that
    server changes."""

    def __init__(self, settings: ProviderSettings) -> None:
        self._settings = settings
        self._client: OAuthClientInformation | None = None

    def forget(self) -> None:
        """Drop the client in use (the resource moved to another authorization server)."""
        self._client = None

    async def client_for(self, metadata: AuthorizationServerMetadata) -> OAuthClientInformation:
        """The client to use at this authorization server, registering one when needed.
        Raises ``OAuthError`` when there is no way to get one."""
        settings = self._settings
        key = issuer_key(metadata)
        if settings.client_id is not None:
            return self._pre_registered(metadata, key)
        if self._client is not None and self._client.issuer == key and self._fits(self._client):
            return self._client
        stored = await settings.storage.get_client(key)
        if (
            stored is not None
            and stored.issuer == key
            and self._fits(stored)
            and not (
                stored.client_secret_expires_at
                and stored.client_secret_expires_at <= settings.clock()
            )
        ):
            self._client = stored
            return stored
        if settings.client_metadata_url is not None and metadata.supports_cimd:
            method = "private_key_jwt" if settings.private_key is not None else "none"
            self._client = OAuthClientInformation(settings.client_metadata_url, None, method, key)
            return self._client
        if metadata.registration_endpoint:
            self._client = await self._register(metadata, key)
            await settings.storage.set_client(key, self._client)
            return self._client
        raise OAuthError(
            f"cannot get a client id at {key}: it supports neither Client ID Metadata Documents "
            "(or none was configured) nor dynamic registration; configure a pre-registered client_id",
            error="invalid_client",
        )

    async def registered_redirect_uris(self, metadata: AuthorizationServerMetadata) -> list[str]:
        """The redirect URIs of the registration kept for this server (none for a
        pre-registered client or a Client ID Metadata Document)."""
        if self._settings.client_id is not None:
            return []
        key = issuer_key(metadata)
        client = self._client if self._client is not None and self._client.issuer == key else None
        client = client or await self._settings.storage.get_client(key)
        uris = client.registration.get("redirect_uris") if client is not None else None
        return [uri for uri in uris if isinstance(uri, str)] if isinstance(uris, list) else []

    def _fits(self, client: OAuthClientInformation) -> bool:
        """Whether a registration kept lists the redirect URI in use (a loopback one's
        port may have changed since): if not, the client registers again."""
        uris = client.registration.get("redirect_uris")
        wanted = self._settings.client_metadata.redirect_uris
        if self._settings.grant_type != "authorization_code" or not wanted:
            return True
        return not isinstance(uris, list) or wanted[0] in uris

    def _pre_registered(
        self, metadata: AuthorizationServerMetadata, key: str
    ) -> OAuthClientInformation:
        """The configured client, refused at a server other than its ``client_issuer``."""
        settings = self._settings
        assert settings.client_id is not None
        if (
            settings.client_issuer is not None
            and metadata.issuer is not None
            and settings.client_issuer != metadata.issuer
        ):
            raise OAuthError(
                f"the pre-registered client is for {settings.client_issuer}, but this server now uses "
                f"{metadata.issuer}; refusing to use its credentials there",
                error="invalid_client",
            )
        return OAuthClientInformation(
            client_id=settings.client_id,
            client_secret=settings.client_secret,
            token_endpoint_auth_method=settings.token_endpoint_auth_method,
            issuer=key,
        )

    def _auth_method(self, metadata: AuthorizationServerMetadata) -> str:
        """The token endpoint authentication method to register with."""
        if self._settings.client_metadata.token_endpoint_auth_method:
            return self._settings.client_metadata.token_endpoint_auth_method
        supported = metadata.token_auth_methods
        for method in ("none", "client_secret_basic", "client_secret_post"):
            if method in supported:
                return method
        return supported[0] if supported else "client_secret_basic"

    async def _register(
        self, metadata: AuthorizationServerMetadata, key: str
    ) -> OAuthClientInformation:
        """Dynamic registration (RFC 7591) at the server's ``registration_endpoint``."""
        settings = self._settings
        assert metadata.registration_endpoint is not None
        if (
            settings.grant_type == "authorization_code"
            and not settings.client_metadata.redirect_uris
        ):
            raise OAuthError("dynamic registration needs client_metadata.redirect_uris")
        method = self._auth_method(metadata)
        body = settings.client_metadata.registration_request(method)
        if settings.grant_type == "client_credentials":
            body["grant_types"] = ["client_credentials"]
            body["response_types"] = []
        elif settings.grant_type == "jwt_bearer":
            body["grant_types"] = [JWT_BEARER_GRANT]
            body["response_types"] = []
        try:
            response, data = await post_json(
                settings.http,
                metadata.registration_endpoint,
                "dynamic registration",
                json=body,
                headers={"accept": "application/json"},
            )
        except httpx.HTTPError as exc:
            raise OAuthError(
                f"dynamic registration at {metadata.registration_endpoint} failed: {exc!r}"
            ) from exc
        if response.status_code not in (200, 201) or not isinstance(data.get("client_id"), str):
            raise refusal("dynamic registration", response, data)
        expires = data.get("client_secret_expires_at")
        return OAuthClientInformation(
            client_id=data["client_id"],
            client_secret=data.get("client_secret")
            if isinstance(data.get("client_secret"), str)
            else None,
            token_endpoint_auth_method=data.get("token_endpoint_auth_method") or method,
            issuer=key,
            client_secret_expires_at=float(expires)
            if isinstance(expires, (int, float)) and expires > 0
            else None,
            registration=data,
        )
