"""The ``OAuthClientProvider`` settings its parts read.

The parts read them at each use, so that one changed on the provider after construction
applies at once. Types only: the settings and the type of the ``authorize`` callback.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import httpx

    from mcpkit.auth._dpop import DPoPProofFactory
    from mcpkit.auth.client._client_metadata import OAuthClientMetadata
    from mcpkit.auth.client._storage import TokenStorage

#: ``authorize(url)`` shows the user the authorization URL and returns where the
#: authorization server sent them back: the full redirect URL (or its query parameters).
AuthorizeCallback = Callable[[str], Awaitable["str | Mapping[str, str]"]]


class RedirectReceiver(Protocol):
    """What receives the redirect of an authorization on the client's side, e.g. a
    loopback HTTP server (``LoopbackReceiver``): its redirect URI is known only once it
    listens, so the authorization code grant opens it first (before registering)."""

    async def open(self, registered: Sequence[str]) -> str:
        """Start receiving; the redirect URI to use. ``registered``: the redirect URIs
        of a registration kept from an earlier login at this server, to reuse if it can."""
        ...

    async def close(self) -> None:
        """Stop receiving."""
        ...


class ProviderSettings(Protocol):
    """What ``OAuthClientProvider`` was configured with (see its docstring)."""

    server_url: str
    client_metadata: OAuthClientMetadata
    authorize_callback: AuthorizeCallback | None
    redirect_receiver: RedirectReceiver | None
    client_id: str | None
    client_secret: str | None
    client_issuer: str | None
    token_endpoint_auth_method: str | None
    client_metadata_url: str | None
    grant_type: str
    assertion: Any
    private_key: Any
    signing_algorithm: str | None
    scopes: list[str] | None
    storage: TokenStorage
    dpop: DPoPProofFactory | None
    max_authorizations_per_scope: int
    request_offline_access: bool
    clock: Callable[[], float]
    #: Every authorization URL handed to ``authorize`` (newest last).
    authorization_requests: list[str]

    @property
    def http(self) -> httpx.AsyncClient:
        """The HTTP client for discovery, registration and the token endpoint."""
        ...
