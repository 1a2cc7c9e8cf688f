"""``OAuthProxy``: the MCP server's own OAuth 2.1 authorization server, in front of an
upstream OpenID Connect / OAuth provider the proxy is registered at once.

MCP clients register with the proxy (RFC 7591) or name the URL of their Client ID Metadata
Document as their ``client_id``, sign their users in through it, and get the proxy's own
tokens: JWTs signed with its key, for the MCP resource alone, naming the upstream user (``sub``, ``email``, ``name``, ``upstream``). The provider's tokens stay in
the proxy. The MCP server accepts the proxy's tokens through ``bearer_auth()`` (the usual
``BearerAuthConfig``, with the in-process ``verifier()``), so the user reaches tools as
``ctx.auth``.

Endpoints, under ``base_url`` (the issuer): ``/.well-known/oauth-authorization-server``
(RFC 8414), ``/authorize``, ``/token``, ``/register``, ``/revoke`` (RFC 7009), ``/jwks``,
``/oauth/consent`` (the consent form) and ``/oauth/callback`` (the provider's redirect URI,
registered there). ``StreamableHttpServerOptions(auth_server=proxy)`` serves them beside the
MCP endpoint; the proxy is also an ASGI app of its own.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from mcpkit.auth._config import BearerAuthConfig
from mcpkit.auth._dpop import DEFAULT_DPOP_ALGORITHMS
from mcpkit.auth._proxy._access import (
    DEFAULT_ACCESS_TOKEN_TTL,
    DEFAULT_CLOCK_SKEW,
    AccessTokens,
    ProxyTokenVerifier,
    load_signing_key,
)
from mcpkit.auth._proxy._authorize import BrowserFlow
from mcpkit.auth._proxy._cimd import DEFAULT_CLIENT_METADATA_TIMEOUT
from mcpkit.auth._proxy._clients import ClientRegistry
from mcpkit.auth._proxy._http import (
    DEFAULT_MAX_FORM_BYTES,
    OAuthEndpointError,
    Receive,
    Route,
    Scope,
    Send,
    read_body,
    send,
    send_error,
    send_json,
    send_preflight,
)
from mcpkit.auth._proxy._settings import (
    AUTHORIZE_PATH,
    CALLBACK_PATH,
    CONSENT_PATH,
    DEFAULT_CODE_TTL,
    DEFAULT_CONSENT_TTL,
    DEFAULT_PENDING_TTL,
    DEFAULT_REFRESH_TOKEN_TTL,
    JWKS_PATH,
    METADATA_PATH,
    REGISTER_PATH,
    REVOKE_PATH,
    TOKEN_PATH,
    ProxySettings,
)
from mcpkit.auth._proxy._store import MemoryProxyStore, ProxyStore
from mcpkit.auth._proxy._token import TokenService
from mcpkit.auth._proxy._upstream import Upstream

Endpoint = Callable[[Scope, Receive, Send], Any]

#: Which methods each endpoint answers (OPTIONS: a CORS preflight where browsers call).
_METHODS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        METADATA_PATH: ("GET", "HEAD", "OPTIONS"),
        JWKS_PATH: ("GET", "HEAD", "OPTIONS"),
        AUTHORIZE_PATH: ("GET", "POST"),
        CONSENT_PATH: ("POST",),
        CALLBACK_PATH: ("GET",),
        TOKEN_PATH: ("POST", "OPTIONS"),
        REGISTER_PATH: ("POST", "OPTIONS"),
        REVOKE_PATH: ("POST", "OPTIONS"),
    }
)


class OAuthProxy:
    """An OAuth 2.1 authorization server for one MCP resource, signing users in upstream.

    ``upstream``: the provider (``OidcUpstream``); ``base_url``: where the proxy is reached
    (its issuer; the endpoints hang from it); ``resource``: the MCP endpoint's URL, the
    audience of every token. ``scopes``: the scopes clients may ask for, and get when they
    name none (empty: whatever they ask for is granted as asked). ``signing_key``: a private
    JWK, PEM or joserfc key (None: a new P-256 key, so tokens end with the process).
    ``clock_skew``: seconds the clocks of instances sharing that key may differ by, which
    a token's times are forgiven (``DEFAULT_CLOCK_SKEW``). ``store``: where clients, codes,
    tokens and consents live (None: a ``MemoryProxyStore``, one process's; ``SqliteProxyStore``
    or ``RedisProxyStore`` for several workers or instances).

    Clients register dynamically (``/register``) or, with ``client_metadata_documents``
    (the default), name the https URL of their Client ID Metadata Document as their
    ``client_id``: the proxy fetches it (within ``client_metadata_timeout`` seconds, from a
    public address only) and caches it. ``allow_insecure_client_metadata``: for tests and
    development only, documents are also fetched from loopback and private addresses, and
    over plain http from a loopback host.

    ``dpop=True``: DPoP (RFC 9449) end to end. A token request with a ``DPoP`` proof gets
    tokens bound to its key (``token_type: DPoP``; a public client's refresh token too),
    the metadata names ``dpop_signing_alg_values_supported``, and ``bearer_auth()`` accepts
    bound tokens with their proofs, and plain Bearer tokens of clients that send none.
    """

    def __init__(
        self,
        *,
        upstream: Upstream,
        base_url: str,
        resource: str,
        scopes: Sequence[str] = (),
        signing_key: Any = None,
        store: ProxyStore | None = None,
        access_token_ttl: float = DEFAULT_ACCESS_TOKEN_TTL,
        clock_skew: float = DEFAULT_CLOCK_SKEW,
        refresh_token_ttl: float = DEFAULT_REFRESH_TOKEN_TTL,
        code_ttl: float = DEFAULT_CODE_TTL,
        pending_ttl: float = DEFAULT_PENDING_TTL,
        consent_ttl: float = DEFAULT_CONSENT_TTL,
        max_form_bytes: int = DEFAULT_MAX_FORM_BYTES,
        resource_name: str | None = None,
        client_metadata_documents: bool = True,
        client_metadata_timeout: float = DEFAULT_CLIENT_METADATA_TIMEOUT,
        allow_insecure_client_metadata: bool = False,
        dpop: bool = False,
        dpop_algorithms: Sequence[str] = DEFAULT_DPOP_ALGORITHMS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.upstream = upstream
        self.settings = ProxySettings(
            base_url=base_url,
            resource=resource,
            scopes_supported=tuple(scopes),
            pending_ttl=pending_ttl,
            code_ttl=code_ttl,
            refresh_token_ttl=refresh_token_ttl,
            consent_ttl=consent_ttl,
            max_form_bytes=max_form_bytes,
            dpop_algorithms=tuple(dpop_algorithms) if dpop else None,
            clock=clock,
        )
        self.resource_name = resource_name
        self.store: ProxyStore = store if store is not None else MemoryProxyStore(clock=clock)
        self.tokens = AccessTokens(
            load_signing_key(signing_key),
            self.settings.issuer,
            resource,
            self.store,
            ttl=access_token_ttl,
            clock=clock,
            clock_skew=clock_skew,
        )
        self.clients = ClientRegistry(
            self.store,
            self.settings.scopes_supported,
            clock,
            documents=client_metadata_documents,
            allow_insecure=allow_insecure_client_metadata,
            timeout=client_metadata_timeout,
        )
        self.browser = BrowserFlow(self.settings, self.store, upstream, self.clients)
        self.token_service = TokenService(self.settings, self.store, self.clients, self.tokens)
        #: Path (under ``base_url``) -> the endpoint serving it.
        self.routes: dict[str, Endpoint] = {
            METADATA_PATH: self._metadata,
            JWKS_PATH: self._jwks,
            AUTHORIZE_PATH: self.browser.authorize,
            CONSENT_PATH: self.browser.consent,
            CALLBACK_PATH: self.browser.callback,
            TOKEN_PATH: self.token_service.token,
            REGISTER_PATH: self._register,
            REVOKE_PATH: self.token_service.revoke,
        }

    @property
    def issuer(self) -> str:
        """The proxy's issuer identifier (``base_url`` without a trailing slash)."""
        return self.settings.issuer

    @property
    def resource(self) -> str:
        """The MCP resource the proxy issues tokens for."""
        return self.settings.resource

    def metadata(self) -> dict[str, Any]:
        """The authorization server metadata document (RFC 8414)."""
        s = self.settings
        doc: dict[str, Any] = {
            "issuer": s.issuer,
            "authorization_endpoint": s.url(AUTHORIZE_PATH),
            "token_endpoint": s.url(TOKEN_PATH),
            "registration_endpoint": s.url(REGISTER_PATH),
            "revocation_endpoint": s.url(REVOKE_PATH),
            "jwks_uri": s.url(JWKS_PATH),
            "response_types_supported": ["code"],
            "response_modes_supported": ["query"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": [
                "none",
                "client_secret_basic",
                "client_secret_post",
            ],
            "revocation_endpoint_auth_methods_supported": [
                "none",
                "client_secret_basic",
                "client_secret_post",
            ],
            "authorization_response_iss_parameter_supported": True,
            "client_id_metadata_document_supported": self.clients.documents is not None,
        }
        if s.scopes_supported:
            doc["scopes_supported"] = list(s.scopes_supported)
        if s.dpop_algorithms is not None:
            doc["dpop_signing_alg_values_supported"] = list(s.dpop_algorithms)
        return doc

    def verifier(self) -> ProxyTokenVerifier:
        """The in-process verifier of the proxy's access tokens (``verify(token)``)."""
        return self.tokens.verifier()

    def bearer_auth(self, **fields: Any) -> BearerAuthConfig:
        """The ``BearerAuthConfig`` that accepts the proxy's tokens: its verifier, the
        resource, and the proxy as the one authorization server in the resource metadata.
        ``fields`` set the config's other fields (``required_scopes``, ``public_url``...)."""
        fields.setdefault("scopes_supported", self.settings.scopes_supported)
        fields.setdefault("resource_name", self.resource_name)
        algorithms = self.settings.dpop_algorithms
        if algorithms is not None:  # its tokens may be DPoP-bound: the gate takes both
            fields.setdefault("enable_dpop", True)
            fields.setdefault("dpop_allow_bearer", True)
            fields.setdefault("dpop_algorithms", algorithms)
        return BearerAuthConfig(
            verify=self.verifier().verify,
            resource=self.resource,
            authorization_servers=[self.issuer],
            **fields,
        )

    async def __call__(self, scope: Scope, receive: Receive, send_: Send) -> None:
        """The proxy as an ASGI app of its own (its paths relative to where it is mounted)."""
        if scope["type"] != "http":
            return
        path = scope["path"]
        root = (scope.get("root_path") or "").rstrip("/")
        if root and path.startswith(root):
            path = path[len(root) :] or "/"
        endpoint = self.routes.get(path.rstrip("/") or "/")
        if endpoint is None:
            await send(send_, 404, b"Not Found", [(b"content-type", b"text/plain")])
            return
        await self.serve(path.rstrip("/"), scope, receive, send_)

    async def serve(self, path: str, scope: Scope, receive: Receive, send_: Send) -> None:
        """Serve one of ``routes`` (the method checked first)."""
        methods = _METHODS[path]
        method = scope["method"]
        if method not in methods:
            allow = ", ".join(methods).encode()
            await send(send_, 405, b"", [(b"allow", allow)])
            return
        if method == "OPTIONS":
            await send_preflight(send_, ", ".join(methods).encode())
            return
        await self.routes[path](scope, receive, send_)

    async def _metadata(self, scope: Scope, receive: Receive, send_: Send) -> None:
        await send_json(send_, 200, self.metadata(), cacheable=True)

    async def _jwks(self, scope: Scope, receive: Receive, send_: Send) -> None:
        await send_json(send_, 200, self.tokens.jwks(), cacheable=True)

    async def _register(self, scope: Scope, receive: Receive, send_: Send) -> None:
        try:
            answer = await self.clients.register(
                await read_body(receive, self.settings.max_form_bytes)
            )
        except OAuthEndpointError as exc:
            await send_error(send_, exc)
            return
        await send_json(send_, 201, answer)

    async def aclose(self) -> None:
        """Close the HTTP client client metadata documents are fetched with (the upstream
        and the store are the application's to close)."""
        if self.clients.documents is not None:
            await self.clients.documents.aclose()

    def endpoints(self) -> Mapping[str, Endpoint]:
        """Path -> ASGI app, for a router serving the proxy beside other routes."""
        return {path: Route(self, path) for path in self.routes}


__all__ = ["OAuthProxy"]
