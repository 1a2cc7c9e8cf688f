"""The authorization-server side: ``OAuthProxy`` in front of an upstream provider
(``OidcUpstream``, ``OAuth2Upstream``, or a provider's preset: ``GitHubUpstream``,
``GoogleUpstream``, ``EntraUpstream``, ``Auth0Upstream``, ``OktaUpstream``,
``KeycloakUpstream``), its state in a ``ProxyStore`` (``MemoryProxyStore`` for one process,
``SqliteProxyStore`` for the workers of one machine, ``RedisProxyStore`` for instances on
several)."""

from mcpkit.auth._proxy._access import ProxyTokenVerifier
from mcpkit.auth._proxy._oauth2 import OAuth2Upstream
from mcpkit.auth._proxy._providers import (
    Auth0Upstream,
    EntraUpstream,
    GitHubUpstream,
    GoogleUpstream,
    KeycloakUpstream,
    OktaUpstream,
)
from mcpkit.auth._proxy._proxy import OAuthProxy
from mcpkit.auth._proxy._records import UpstreamIdentity
from mcpkit.auth._proxy._redis_store import RedisProxyStore
from mcpkit.auth._proxy._sqlite_store import SqliteProxyStore
from mcpkit.auth._proxy._store import MemoryProxyStore, ProxyStore, StoreFullError
from mcpkit.auth._proxy._upstream import OidcUpstream, Upstream

__all__ = [
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
]
