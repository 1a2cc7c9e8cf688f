"""What the provider does to get a token, one attempt at a time: answer a 401 (discover,
refresh, else authorize), a 403 ``insufficient_scope`` (step up to the union of the
scopes), or authorize before the first request.

Scopes: the challenge's ``scope``, else the resource's ``scopes_supported``, else the
configured ones. At most ``max_authorizations_per_scope`` authorizations per scope set.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from mcpkit.auth._challenge import Challenge, find_challenge, parse_www_authenticate
from mcpkit.auth.client._authorization_code import AuthorizationCodeFlow, merge_scopes
from mcpkit.auth.client._direct_grants import DirectGrants
from mcpkit.auth.client._discovery import AuthorizationServerMetadata
from mcpkit.auth.client._server_discovery import Discovered, ServerDiscovery
from mcpkit.auth.client._settings import ProviderSettings
from mcpkit.auth.client._storage import OAuthToken
from mcpkit.auth.client._tokens import ProviderTokens, TokenRefresher

logger = logging.getLogger("mcpkit.auth.client")


class Authorizer:
    """Gets the provider its tokens; the lock keeps concurrent requests to one attempt."""

    def __init__(
        self,
        settings: ProviderSettings,
        tokens: ProviderTokens,
        discovery: ServerDiscovery,
        refresher: TokenRefresher,
        code_flow: AuthorizationCodeFlow,
        direct: DirectGrants,
    ) -> None:
        self._settings = settings
        self._tokens = tokens
        self._discovery = discovery
        self._refresher = refresher
        self._code_flow = code_flow
        self._direct = direct
        self._requested: list[str] = []
        self._attempts: dict[frozenset[str], int] = {}
        self._lock = asyncio.Lock()

    async def handle_challenge(
        self, www_authenticate: str | Sequence[str] | None, status_code: int = 401
    ) -> str | None:
        """React to a 401/403 challenge; the ``Authorization`` value to retry with, or None
        when retrying would not help. Raises ``OAuthError`` when authorization fails."""
        challenges = parse_www_authenticate(www_authenticate)
        challenge = (
            find_challenge(challenges, "DPoP", "Bearer")
            if self._settings.dpop
            else find_challenge(challenges, "Bearer", "DPoP")
        )
        challenge = challenge or Challenge("Bearer")
        used = self._tokens.token
        async with self._lock:
            await self._tokens.load()
            current = self._tokens.token
            if (
                current is not None
                and current is not used
                and not current.expired(self._settings.clock())
            ):
                return self._tokens.authorization_value()  # renewed meanwhile (or loaded)
            if challenge.error == "use_dpop_nonce":
                return self._tokens.authorization_value() if current is not None else None
            if status_code == 403:
                if challenge.error != "insufficient_scope":
                    return None
                wanted = merge_scopes(self._requested, challenge.scopes)
                return await self._authorize_limited(
                    wanted, challenge.resource_metadata, step_up=True
                )
            return await self._answer_401(challenge, used)

    async def _answer_401(self, challenge: Challenge, used: OAuthToken | None) -> str | None:
        # Discover again on every 401: the resource may have moved to another
        # authorization server, whose tokens (and client ids) are not the old one's.
        discovered = await self._discovery.discover(challenge.resource_metadata)
        if (
            used is not None
            and used.refresh_token
            and self._settings.grant_type == "authorization_code"
        ):
            refreshed = await self._refresher.refresh(None, discovered[0], discovered[1])
            if refreshed is not None:
                return self._tokens.authorization_value()
        return await self._authorize_limited(
            challenge.scopes or None, challenge.resource_metadata, discovered=discovered
        )

    async def _authorize_limited(
        self,
        scopes: list[str] | None,
        resource_metadata: str | None,
        step_up: bool = False,
        discovered: Discovered | None = None,
    ) -> str | None:
        key = frozenset(scopes or ())
        count = self._attempts.get(key, 0)
        if count >= self._settings.max_authorizations_per_scope:
            logger.warning(
                "authorization for scopes %s already tried %d times; giving up", sorted(key), count
            )
            return None
        self._attempts[key] = count + 1
        await self._authorize(scopes, resource_metadata, step_up=step_up, discovered=discovered)
        return self._tokens.authorization_value()

    async def ensure_token(self) -> OAuthToken:
        """A usable token, authorizing now (discovery via the well-known URLs) when there
        is none: for clients that authorize before their first request."""
        async with self._lock:
            token = await self._tokens.load()
            if token is not None and not token.expired(self._settings.clock()):
                return token
            if token is not None and token.refresh_token:
                refreshed = await self._refresher.refresh(None)
                if refreshed is not None:
                    return refreshed
            await self._authorize(self._settings.scopes, None)
            token = self._tokens.token
            assert token is not None
            return token

    async def refresh(self) -> OAuthToken | None:
        """Use the refresh token now; None when there is none or it was refused."""
        async with self._lock:
            await self._tokens.load()
            return await self._refresher.refresh(None)

    async def _authorize(
        self,
        scope_hint: list[str] | None,
        resource_metadata: str | None,
        step_up: bool = False,
        discovered: Discovered | None = None,
    ) -> None:
        metadata, resource, resource_scopes = discovered or await self._discovery.discover(
            resource_metadata
        )
        if scope_hint:
            scopes = list(scope_hint)
        elif resource_scopes:
            scopes = list(resource_scopes)
        else:
            scopes = list(self._settings.scopes or ())
        if step_up:
            scopes = merge_scopes(self._requested, scopes)
        token = await self._grant(metadata, resource, scopes)
        self._requested = [s for s in scopes if s != "offline_access"]
        await self._tokens.set(token)

    async def _grant(
        self, metadata: AuthorizationServerMetadata, resource: str, scopes: list[str]
    ) -> OAuthToken:
        """A new token by the configured grant type."""
        if self._settings.grant_type == "client_credentials":
            return await self._direct.client_credentials(metadata, resource, scopes)
        if self._settings.grant_type == "jwt_bearer":
            return await self._direct.jwt_bearer(metadata, resource, scopes)
        return await self._code_flow.run(metadata, resource, scopes)
