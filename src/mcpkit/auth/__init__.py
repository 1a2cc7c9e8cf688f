"""Authorization for MCP over HTTP (in the core install: no extra needed).

Server side: ``BearerAuthConfig`` (set as ``StreamableHttpServerOptions.bearer_auth``)
gates every HTTP transport and serves the protected-resource metadata; ``JwtVerifier`` is
a ready token verifier, ``IntrospectionVerifier`` (RFC 7662) and ``OidcVerifier`` (keys
found by OpenID discovery) two more; DPoP (RFC 9449) proofs and nonces are checked when enabled,
their state shared by a server's instances through ``RedisDPoPState``. The
identity of an accepted request is an ``AuthInfo``. ``HostAuth`` puts a host application's
own check (FastAPI, Starlette, Lauren) in front of a mounted MCP app instead.

Authorization-server side: ``OAuthProxy`` is the MCP server's own OAuth 2.1 authorization
server in front of an upstream provider (``OidcUpstream``, ``OAuth2Upstream``, or a preset:
``GitHubUpstream``, ``GoogleUpstream``, ``EntraUpstream``, ``Auth0Upstream``,
``OktaUpstream``, ``KeycloakUpstream``), its state in memory, in SQLite
(``SqliteProxyStore``) or in Redis (``RedisProxyStore``); ``DevAuthServer`` is a
development identity provider to sign in with locally.

Per component: ``auth=`` on a tool, resource or prompt takes a scope, scopes, a predicate
or an ``AuthRequirement`` (``require_scopes``, ``require``); a caller who does not satisfy
it finds the component absent (docs/auth.md).

Client side: ``mcpkit.auth.client.OAuthClientProvider``.
"""

from mcpkit.auth._challenge import (
    Challenge,
    build_challenge,
    find_challenge,
    parse_www_authenticate,
)
from mcpkit.auth._types import (
    CURRENT_AUTH,
    SCOPE_KEY,
    AuthInfo,
    AuthPredicate,
    AuthRequirement,
    AuthResult,
    OAuthError,
    current_auth,
    require,
    require_scopes,
)

# The token and proof modules import joserfc and cryptography: they load on first use, so
# importing ``mcpkit.auth._types`` (as every HTTP transport does) stays cheap.
_LAZY = {
    "mcpkit.auth._dpop": (
        "DPoPError",
        "DPoPNonceManager",
        "DPoPProof",
        "DPoPProofFactory",
        "DPoPProofVerifier",
        "access_token_hash",
        "jwk_thumbprint",
    ),
    "mcpkit.auth._dpop_state": ("DPoPStateStore", "LocalDPoPState", "RedisDPoPState"),
    "mcpkit.auth._dpop_sqlite": ("FileDPoPState",),
    "mcpkit.auth._host": ("HostAuth", "HostVerifier"),
    "mcpkit.auth._jwt": ("JwksCache", "JwksError", "JwtVerifier"),
    "mcpkit.auth._introspection": ("IntrospectionVerifier",),
    "mcpkit.auth._oidc": ("OidcVerifier",),
    "mcpkit.auth._unavailable": ("VerifierUnavailableError",),
    "mcpkit.auth._server": ("WELL_KNOWN_PRM", "BearerAuthConfig", "BearerAuthGate"),
    "mcpkit.auth._proxy": (
        "Auth0Upstream",
        "EntraUpstream",
        "GitHubUpstream",
        "GoogleUpstream",
        "KeycloakUpstream",
        "MemoryProxyStore",
        "OAuth2Upstream",
        "OAuthProxy",
        "OidcUpstream",
        "OktaUpstream",
        "ProxyStore",
        "ProxyTokenVerifier",
        "RedisProxyStore",
        "SqliteProxyStore",
        "StoreFullError",
        "Upstream",
        "UpstreamIdentity",
    ),
    "mcpkit.auth._dev": ("DevAuthServer", "DevUser"),
}
_LAZY_NAMES = {name: module for module, names in _LAZY.items() for name in names}

TYPE_CHECKING = False
if TYPE_CHECKING:
    from mcpkit.auth._config import BearerAuthConfig
    from mcpkit.auth._dev import DevAuthServer, DevUser
    from mcpkit.auth._dpop import (
        DPoPError,
        DPoPNonceManager,
        DPoPProof,
        DPoPProofFactory,
        DPoPProofVerifier,
        access_token_hash,
        jwk_thumbprint,
    )
    from mcpkit.auth._dpop_sqlite import FileDPoPState
    from mcpkit.auth._dpop_state import DPoPStateStore, LocalDPoPState, RedisDPoPState
    from mcpkit.auth._host import HostAuth, HostVerifier
    from mcpkit.auth._introspection import IntrospectionVerifier
    from mcpkit.auth._jwt import JwksCache, JwksError, JwtVerifier
    from mcpkit.auth._oidc import OidcVerifier
    from mcpkit.auth._proxy import (
        Auth0Upstream,
        EntraUpstream,
        GitHubUpstream,
        GoogleUpstream,
        KeycloakUpstream,
        MemoryProxyStore,
        OAuth2Upstream,
        OAuthProxy,
        OidcUpstream,
        OktaUpstream,
        ProxyStore,
        ProxyTokenVerifier,
        RedisProxyStore,
        SqliteProxyStore,
        StoreFullError,
        Upstream,
        UpstreamIdentity,
    )
    from mcpkit.auth._server import WELL_KNOWN_PRM, BearerAuthGate
    from mcpkit.auth._unavailable import VerifierUnavailableError

__all__ = [
    "CURRENT_AUTH",
    "SCOPE_KEY",
    "WELL_KNOWN_PRM",
    "Auth0Upstream",
    "AuthInfo",
    "AuthPredicate",
    "AuthRequirement",
    "AuthResult",
    "BearerAuthConfig",
    "BearerAuthGate",
    "Challenge",
    "DPoPError",
    "DPoPNonceManager",
    "DPoPProof",
    "DPoPProofFactory",
    "DPoPProofVerifier",
    "DPoPStateStore",
    "DevAuthServer",
    "DevUser",
    "EntraUpstream",
    "FileDPoPState",
    "GitHubUpstream",
    "GoogleUpstream",
    "HostAuth",
    "HostVerifier",
    "IntrospectionVerifier",
    "JwksCache",
    "JwksError",
    "JwtVerifier",
    "KeycloakUpstream",
    "LocalDPoPState",
    "MemoryProxyStore",
    "OAuth2Upstream",
    "OAuthError",
    "OAuthProxy",
    "OidcUpstream",
    "OidcVerifier",
    "OktaUpstream",
    "ProxyStore",
    "ProxyTokenVerifier",
    "RedisDPoPState",
    "RedisProxyStore",
    "SqliteProxyStore",
    "StoreFullError",
    "Upstream",
    "UpstreamIdentity",
    "VerifierUnavailableError",
    "access_token_hash",
    "build_challenge",
    "current_auth",
    "find_challenge",
    "jwk_thumbprint",
    "parse_www_authenticate",
    "require",
    "require_scopes",
]


def __getattr__(name: str) -> object:
    module = _LAZY_NAMES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
