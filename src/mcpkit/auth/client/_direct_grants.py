"""The grants that need no user: client credentials (RFC 6749 §4.4) and JWT bearer with
an assertion (RFC 7523 §2.1, e.g. workload identity federation or an ID-JAG).

Which grant the provider uses is ``Authorizer``'s choice; the request is ``TokenEndpoint``'s.
"""

from __future__ import annotations

import inspect

from mcpkit.auth._types import OAuthError
from mcpkit.auth.client._discovery import AuthorizationServerMetadata
from mcpkit.auth.client._grants import JWT_BEARER_GRANT, AssertionContext
from mcpkit.auth.client._registration import ClientRegistration
from mcpkit.auth.client._settings import ProviderSettings
from mcpkit.auth.client._storage import OAuthToken
from mcpkit.auth.client._token_endpoint import TokenEndpoint


class DirectGrants:
    """Gets tokens straight from the token endpoint, with the client's own credentials."""

    def __init__(
        self, settings: ProviderSettings, registration: ClientRegistration, endpoint: TokenEndpoint
    ) -> None:
        self._settings = settings
        self._registration = registration
        self._endpoint = endpoint

    async def client_credentials(
        self, metadata: AuthorizationServerMetadata, resource: str, scopes: list[str]
    ) -> OAuthToken:
        """A token for the client itself. Raises ``OAuthError`` when refused."""
        client = await self._registration.client_for(metadata)
        form = {"grant_type": "client_credentials", "resource": resource}
        if scopes:
            form["scope"] = " ".join(scopes)
        return await self._endpoint.request(metadata, client, form, resource)

    async def jwt_bearer(
        self, metadata: AuthorizationServerMetadata, resource: str, scopes: list[str]
    ) -> OAuthToken:
        """RFC 7523 §2.1: the assertion is the grant. A refusal is final: no retry with
        another grant type. Raises ``OAuthError`` when there is no assertion or it is refused."""
        client = await self._registration.client_for(metadata)
        assertion = self._settings.assertion
        if callable(assertion):
            context = AssertionContext(
                metadata.issuer,
                metadata.token_endpoint,
                resource,
                tuple(scopes),
                self._settings.http,
            )
            assertion = assertion(context)
            if inspect.isawaitable(assertion):
                assertion = await assertion
        if not isinstance(assertion, str) or not assertion:
            raise OAuthError("the assertion source gave no assertion")
        form = {"grant_type": JWT_BEARER_GRANT, "assertion": assertion, "resource": resource}
        if scopes:
            form["scope"] = " ".join(scopes)
        return await self._endpoint.request(metadata, client, form, resource)
