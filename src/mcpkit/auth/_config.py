"""``BearerAuthConfig``: how the HTTP server checks access tokens, what it advertises
(RFC 9728) and how it answers a refusal; ``BearerAuthGate`` (``_server``) applies it."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mcpkit.auth._dpop import (
    DEFAULT_DPOP_ALGORITHMS,
    DEFAULT_DPOP_CLOCK_SKEW,
    DEFAULT_DPOP_MAX_AGE,
    DEFAULT_NONCE_LIFETIME,
    DEFAULT_REPLAY_CACHE_SIZE,
)
from mcpkit.auth._dpop_state import DPoPStateStore
from mcpkit.auth._types import AuthResult

Verify = Callable[[str], "AuthResult | Awaitable[AuthResult]"]


ScopeCheck = Callable[[frozenset[str], str], bool]


@dataclass(slots=True)
class BearerAuthConfig:
    """How the HTTP server checks access tokens (RFC 6750, RFC 9728, RFC 8707, RFC 9449).

    ``verify(token)`` (sync or async) returns an ``AuthResult``; a sync verifier runs on the
    event loop, so one that does I/O should be async. ``JwtVerifier`` is a ready one.

    ``resource_metadata_url`` (the URL in the challenge) and the metadata's ``resource``
    default to URLs built from ``public_url`` or, without it, from the request's scheme and
    Host header. Set them (or ``public_url``) behind a proxy.

    ``required_scopes``: every one must be granted (``scope_check(granted, required)``
    decides "granted" when scopes form a hierarchy). ``expected_resource`` (by default
    ``resource``, this server's identifier in its metadata): the token's audience must
    include it (compared with scheme and host case-folded, default port and trailing slash
    dropped) while ``validate_token_resource`` is on; tokens without an audience are then
    refused. With neither, and a verifier not checking ``aud`` itself, tokens issued for any
    other server would be accepted: the gate logs a warning naming the options.
    """

    verify: Verify
    resource_metadata_url: str = ""
    scopes_supported: Sequence[str] = ()
    required_scopes: Sequence[str] = ()
    expected_resource: str = ""
    validate_token_resource: bool = True
    authorization_servers: Sequence[str] = ()
    serve_metadata_endpoint: bool = True
    enable_dpop: bool = False
    # -- beyond the core fields --------------------------------------------------------
    #: ``resource`` in the metadata document; defaults to ``expected_resource``, else the
    #: endpoint's URL.
    resource: str = ""
    #: Scheme and host clients reach this server at (``https://mcp.example.com``).
    public_url: str = ""
    resource_name: str | None = None
    resource_documentation: str | None = None
    #: More members for the metadata document.
    metadata_extra: Mapping[str, Any] = field(default_factory=dict)
    scope_check: ScopeCheck | None = None
    #: With ``enable_dpop``: also accept plain Bearer tokens (not bound to a key).
    dpop_allow_bearer: bool = False
    dpop_algorithms: Sequence[str] = DEFAULT_DPOP_ALGORITHMS
    dpop_require_nonce: bool = True
    dpop_nonce_lifetime: float = DEFAULT_NONCE_LIFETIME
    #: Shared by every worker so each accepts the nonces the others issue; None: a key per
    #: nonce period, from ``dpop_store``.
    dpop_nonce_secret: bytes | None = None
    dpop_max_age: float = DEFAULT_DPOP_MAX_AGE
    dpop_clock_skew: float = DEFAULT_DPOP_CLOCK_SKEW
    #: Most proofs remembered to refuse replays, by the stores the gate makes itself (a
    #: ``dpop_store`` given has its own bound).
    dpop_replay_cache_size: int = DEFAULT_REPLAY_CACHE_SIZE
    #: Where nonce keys and accepted proofs live (a ``DPoPStateStore``: ``RedisDPoPState``
    #: for several instances). None: the server's Redis when its options have one
    #: (``--redis-url``, ``redis_options``), else this process alone (``LocalDPoPState``).
    dpop_store: DPoPStateStore | None = None
    #: Wall clock (seconds) for DPoP checks; tests inject their own.
    clock: Callable[[], float] = time.time

    def __post_init__(self) -> None:
        if not callable(self.verify):
            raise TypeError("BearerAuthConfig.verify must be callable")
