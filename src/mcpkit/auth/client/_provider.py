"""``OAuthClientProvider``: the MCP client's side of authorization.

It plugs into the HTTP client transport through three hooks
(``HttpClientTransportOptions``): ``apply_per_request_headers`` puts the access token
(and, for DPoP-bound tokens, a fresh DPoP proof) on every request;
``observe_response_challenge`` collects ``DPoP-Nonce`` values; ``auth_challenge_handler``
answers a 401 (or a 403 ``insufficient_scope``) by authorizing and returning the
``Authorization`` value to retry with. ``provider.install(options)`` sets all three.

What a challenge sets off, in the spec's order:

1. protected-resource metadata: the challenge's ``resource_metadata``, else the
   path-suffixed well-known URL, else the root one (none at all: the 2025-03-26 rules, the
   server's origin is the authorization server); its ``resource`` must name this server;
2. authorization-server metadata: RFC 8414 then OpenID discovery (path-inserted, then
   path-appended), its ``issuer`` identical to the one asked for;
3. a client identity at that server: pre-registered, else a Client ID Metadata Document
   URL when the server supports them, else dynamic registration (RFC 7591) with an
   ``application_type``; registrations are kept per authorization server;
4. a token: authorization code with PKCE S256 (refused when the server does not list
   S256), ``state``, RFC 8707 ``resource`` and the RFC 9207 ``iss`` check; or the client
   credentials grant; or the JWT-bearer grant with an assertion; refresh when a refresh
   token is at hand;
5. scopes: the challenge's ``scope``, else the metadata's ``scopes_supported``, else none;
   a step-up (``insufficient_scope``) asks for the union of what was asked before and what
   the challenge names, at most ``max_authorizations_per_scope`` times per scope set.

The provider is a façade over parts, each in its own module: ``ServerDiscovery`` (1, 2),
``ClientRegistration`` (3), ``AuthorizationCodeFlow``, ``DirectGrants`` and
``TokenEndpoint`` (4), ``ProviderTokens`` and ``TokenRefresher`` (the token and its
refresh), ``DPoPProofs``, and ``Authorizer``, which answers challenges with them (5).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import urlsplit

import httpx

from mcpkit.auth._dpop import DPoPProofFactory
from mcpkit.auth.client._authorization_code import AuthorizationCodeFlow, pkce_pair
from mcpkit.auth.client._authorizer import Authorizer
from mcpkit.auth.client._client_metadata import OAuthClientMetadata
from mcpkit.auth.client._direct_grants import DirectGrants
from mcpkit.auth.client._discovery import origin
from mcpkit.auth.client._dpop_proofs import DPoPProofs
from mcpkit.auth.client._grants import JWT_BEARER_GRANT
from mcpkit.auth.client._registration import ClientRegistration
from mcpkit.auth.client._server_discovery import ServerDiscovery
from mcpkit.auth.client._settings import AuthorizeCallback, RedirectReceiver
from mcpkit.auth.client._storage import MemoryTokenStorage, OAuthToken, TokenStorage
from mcpkit.auth.client._token_endpoint import TokenEndpoint, load_private_key
from mcpkit.auth.client._tokens import ProviderTokens, TokenRefresher

#: Authorization attempts for one scope set before a challenge is treated as final.
DEFAULT_MAX_AUTHORIZATIONS_PER_SCOPE = 2


class OAuthClientProvider:
    """OAuth 2.1 for one MCP server (``server_url``); see the module docstring.

    Give ``authorize`` (an async callable that takes the authorization URL and returns the
    redirect it ended at) for the authorization code grant (and ``redirect_receiver``, a
    loopback server say, when the redirect URI is known only once it listens: it is opened
    before registering, and its URI replaces ``client_metadata.redirect_uris``), or
    ``grant_type="client_credentials"`` with ``client_id``/``client_secret`` (or
    ``private_key`` for ``private_key_jwt``). ``client_id`` alone is a pre-registered public client;
    ``client_issuer`` binds pre-registered credentials to their authorization server.
    ``grant_type="jwt_bearer"`` with ``assertion`` (a JWT, or a callable given an
    ``AssertionContext``, e.g. ``IdJagTokenExchange``) uses RFC 7523 (workload identity
    federation, enterprise-managed authorization).
    ``dpop=True`` makes a P-256 key and asks for DPoP-bound tokens (RFC 9449).

    The parts read the settings from the provider at each use, so one changed after
    construction applies at once.
    """

    def __init__(
        self,
        server_url: str,
        *,
        client_metadata: OAuthClientMetadata | None = None,
        authorize: AuthorizeCallback | None = None,
        redirect_receiver: RedirectReceiver | None = None,
        client_id: str | None = None,
        client_secret: str | None = None,
        client_issuer: str | None = None,
        token_endpoint_auth_method: str | None = None,
        client_metadata_url: str | None = None,
        grant_type: str = "authorization_code",
        assertion: Any = None,
        private_key: Any = None,
        signing_algorithm: str | None = None,
        scopes: Sequence[str] | None = None,
        storage: TokenStorage | None = None,
        dpop: bool | DPoPProofFactory = False,
        http_client: httpx.AsyncClient | None = None,
        max_authorizations_per_scope: int = DEFAULT_MAX_AUTHORIZATIONS_PER_SCOPE,
        request_offline_access: bool = True,
        timeout: float = 30.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if grant_type in ("jwt_bearer", JWT_BEARER_GRANT):
            grant_type = "jwt_bearer"
            if assertion is None:
                raise ValueError(
                    "the JWT-bearer grant needs an assertion (a JWT, or a callable making one)"
                )
        if grant_type not in ("authorization_code", "client_credentials", "jwt_bearer"):
            raise ValueError(f"unsupported grant type {grant_type!r}")
        if client_metadata_url is not None:
            parts = urlsplit(client_metadata_url)
            if parts.scheme != "https" or parts.path in ("", "/"):
                raise ValueError("a Client ID Metadata Document URL must be https with a path")
        self.server_url = server_url.split("#", 1)[0]
        self.client_metadata = client_metadata or OAuthClientMetadata()
        self.authorize_callback = authorize
        self.redirect_receiver = redirect_receiver
        self.client_id = client_id
        self.client_secret = client_secret
        self.client_issuer = client_issuer
        self.token_endpoint_auth_method = token_endpoint_auth_method
        self.client_metadata_url = client_metadata_url
        self.grant_type = grant_type
        self.assertion = assertion
        self.private_key = load_private_key(private_key)
        self.signing_algorithm = signing_algorithm
        self.scopes = list(scopes) if scopes else None
        self.storage: TokenStorage = storage or MemoryTokenStorage()
        if dpop is True:
            self.dpop: DPoPProofFactory | None = DPoPProofFactory(clock=clock)
        else:
            self.dpop = dpop or None
        self.max_authorizations_per_scope = max_authorizations_per_scope
        self.request_offline_access = request_offline_access
        self.clock = clock
        self._http = http_client
        self._own_http = http_client is None
        self._timeout = timeout
        #: Every authorization URL handed to ``authorize`` (newest last), for inspection.
        self.authorization_requests: list[str] = []
        self._proofs = DPoPProofs(self)
        self._tokens = ProviderTokens(self)
        registration = ClientRegistration(self)
        discovery = ServerDiscovery(self, registration.forget)
        endpoint = TokenEndpoint(self, self._proofs)
        self._authorizer = Authorizer(
            self,
            self._tokens,
            discovery,
            TokenRefresher(self._tokens, discovery, registration, endpoint),
            AuthorizationCodeFlow(self, registration, endpoint),
            DirectGrants(self, registration, endpoint),
        )

    # -- plumbing -----------------------------------------------------------------------

    @property
    def http(self) -> httpx.AsyncClient:
        """The HTTP client for discovery, registration and the token endpoint (made on
        first use unless ``http_client`` was given)."""
        if self._http is None:
            self._http = httpx.AsyncClient(timeout=self._timeout, follow_redirects=False)
        return self._http

    async def aclose(self) -> None:
        """Close the HTTP client, unless it was given."""
        if self._own_http and self._http is not None:
            await self._http.aclose()
            self._http = None

    async def __aenter__(self) -> OAuthClientProvider:
        await self.load()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    async def load(self) -> OAuthToken | None:
        """Read a stored token so the first request already carries it."""
        return await self._tokens.load()

    @property
    def token(self) -> OAuthToken | None:
        """The token in use; None before one was loaded or obtained."""
        return self._tokens.token

    def authorization_value(self) -> str | None:
        """The ``Authorization`` header value of the token in use; None without one."""
        return self._tokens.authorization_value()

    # -- transport hooks ----------------------------------------------------------------

    def install(self, options: Any) -> Any:
        """Set the three hooks on ``HttpClientTransportOptions``; returns the options."""
        options.apply_per_request_headers = self.apply_per_request_headers
        options.observe_response_challenge = self.observe_response_challenge
        options.auth_challenge_handler = self.auth_challenge_handler
        return options

    def apply_per_request_headers(self, context: Any, headers: dict[str, str]) -> None:
        """Put the access token (and a DPoP proof) on a request to this server."""
        token = self._tokens.token
        if token is None or origin(context.url) != origin(self.server_url):
            return
        headers["Authorization"] = f"{token.scheme} {token.access_token}"
        self.apply_dpop_proof(context, headers)

    def apply_dpop_proof(self, context: Any, headers: dict[str, str]) -> None:
        """A fresh DPoP proof for this request, when the token is DPoP-bound."""
        self._proofs.apply(context, headers, self._tokens.token)

    def observe_dpop_nonce(self, context: Any) -> None:
        """Remember a ``DPoP-Nonce`` a response carried (2xx and SSE included)."""
        self._proofs.observe(context)

    observe_response_challenge = observe_dpop_nonce

    async def auth_challenge_handler(
        self, www_authenticate: str, status_code: int | None = None
    ) -> str:
        """The transport's hook: the ``Authorization`` value to retry with, or "" for none."""
        if status_code is None:
            status_code = 403 if "insufficient_scope" in (www_authenticate or "") else 401
        return await self.handle_challenge(www_authenticate, status_code) or ""

    # -- authorization ------------------------------------------------------------------

    async def handle_challenge(
        self, www_authenticate: str | Sequence[str] | None, status_code: int = 401
    ) -> str | None:
        """React to a 401/403 challenge; the ``Authorization`` value to retry with, or None
        when retrying would not help. Raises ``OAuthError`` when authorization fails."""
        return await self._authorizer.handle_challenge(www_authenticate, status_code)

    async def ensure_token(self) -> OAuthToken:
        """A usable token, authorizing now (discovery via the well-known URLs) when there
        is none: for clients that authorize before their first request."""
        return await self._authorizer.ensure_token()

    async def refresh(self) -> OAuthToken | None:
        """Use the refresh token now; None when there is none or it was refused."""
        return await self._authorizer.refresh()


__all__ = ["AuthorizeCallback", "OAuthClientMetadata", "OAuthClientProvider", "pkce_pair"]
