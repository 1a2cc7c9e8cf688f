"""The authorization-server side: ``OAuthProxy`` in front of an upstream provider
(``OidcUpstream``), its state in a ``ProxyStore`` (``MemoryProxyStore``)."""

from mcpkit.auth._proxy._access import ProxyTokenVerifier
from mcpkit.auth._proxy._proxy import OAuthProxy
from mcpkit.auth._proxy._records import UpstreamIdentity
from mcpkit.auth._proxy._store import MemoryProxyStore, ProxyStore, StoreFullError
from mcpkit.auth._proxy._upstream import OidcUpstream, Upstream

__all__ = [
    "MemoryProxyStore",
    "OAuthProxy",
    "OidcUpstream",
    "ProxyStore",
    "ProxyTokenVerifier",
    "StoreFullError",
    "Upstream",
    "UpstreamIdentity",
]
