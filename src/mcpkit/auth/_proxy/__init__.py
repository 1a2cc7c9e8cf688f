"""The authorization-server side: ``OAuthProxy`` in front of an upstream provider
(``OidcUpstream``), its state in a ``ProxyStore`` (``MemoryProxyStore`` for one process,
``SqliteProxyStore`` for the workers of one machine, ``RedisProxyStore`` for instances on
several)."""

from mcpkit.auth._proxy._access import ProxyTokenVerifier
from mcpkit.auth._proxy._proxy import OAuthProxy
from mcpkit.auth._proxy._records import UpstreamIdentity
from mcpkit.auth._proxy._redis_store import RedisProxyStore
from mcpkit.auth._proxy._sqlite_store import SqliteProxyStore
from mcpkit.auth._proxy._store import MemoryProxyStore, ProxyStore, StoreFullError
from mcpkit.auth._proxy._upstream import OidcUpstream, Upstream

__all__ = [
    "MemoryProxyStore",
    "OAuthProxy",
    "OidcUpstream",
    "ProxyStore",
    "ProxyTokenVerifier",
    "RedisProxyStore",
    "SqliteProxyStore",
    "StoreFullError",
    "Upstream",
    "UpstreamIdentity",
]
