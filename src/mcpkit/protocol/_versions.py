"""Protocol versions, the two eras, and version negotiation.

Handshake era: ``initialize`` negotiates a version and opens a session.
Modern era (2026-07-28): no handshake; every request names its version in ``_meta``.
"""

from __future__ import annotations

from enum import Enum

V2024_11_05 = "2024-11-05"
V2025_03_26 = "2025-03-26"
V2025_06_18 = "2025-06-18"
V2025_11_25 = "2025-11-25"
V2026_07_28 = "2026-07-28"

#: The versions of the handshake era (``initialize``, sessions), oldest first.
HANDSHAKE_VERSIONS: tuple[str, ...] = (V2024_11_05, V2025_03_26, V2025_06_18, V2025_11_25)
#: The versions of the 2026-07-28 era (no handshake, ``_meta`` on every request).
MODERN_VERSIONS: tuple[str, ...] = (V2026_07_28,)
#: Every version mcpkit speaks, oldest first.
SUPPORTED_VERSIONS: tuple[str, ...] = HANDSHAKE_VERSIONS + MODERN_VERSIONS
#: The newest handshake-era version: what ``initialize`` asks for by default.
LATEST_HANDSHAKE_VERSION = HANDSHAKE_VERSIONS[-1]
#: The newest version of all.
LATEST_VERSION = SUPPORTED_VERSIONS[-1]
#: The same versions as sets, for the membership tests every request makes: a header's value
#: is a new string each time, which a tuple compares with its members one by one (~200
#: instructions each) and a set hashes once.
SUPPORTED_VERSION_SET: frozenset[str] = frozenset(SUPPORTED_VERSIONS)
MODERN_VERSION_SET: frozenset[str] = frozenset(MODERN_VERSIONS)


class Era(Enum):
    """The two protocol eras: the handshake era (2024-11-05 to 2025-11-25) and the stateless
    modern one (2026-07-28)."""

    HANDSHAKE = "handshake"
    MODERN = "modern"


def era_of(version: str) -> Era:
    """The era a known version belongs to; unknown versions raise ``ValueError``."""
    if version in HANDSHAKE_VERSIONS:
        return Era.HANDSHAKE
    if version in MODERN_VERSIONS:
        return Era.MODERN
    raise ValueError(f"unknown protocol version {version!r}")


def negotiate_version(requested: object, supported: tuple[str, ...] = HANDSHAKE_VERSIONS) -> str:
    """The version the server answers ``initialize`` with.

    The client's version when the server supports it, else the latest the server supports
    (lifecycle, "Version Negotiation").
    """
    if isinstance(requested, str) and requested in supported:
        return requested
    return supported[-1]


def allows_batches(version: str | None) -> bool:
    """JSON-RPC batches exist only in 2025-03-26 (added there, removed in 2025-06-18)."""
    return version == V2025_03_26


def allows_batch_post(session_version: str | None, header_version: str | None) -> bool:
    """Whether a Streamable HTTP POST may carry a JSON-RPC batch: when the session's
    negotiated version allows batches, or (no session yet, or none at all) the request's
    ``MCP-Protocol-Version`` header names such a version."""
    return allows_batches(session_version) or allows_batches(header_version)


def is_supported(version: str | None) -> bool:
    """Whether a request naming ``version`` (an ``MCP-Protocol-Version`` header) may be
    served: None (no header; the server assumes a version) or a version of either era."""
    return version is None or version in SUPPORTED_VERSION_SET


def is_modern(version: str | None) -> bool:
    """Whether ``version`` belongs to the stateless 2026-07-28 era."""
    return version in MODERN_VERSION_SET


def resumable_streams(version: str | None) -> bool:
    """Whether a session of ``version`` gets SSE streams it can resume after the server
    closes them early (a priming event id first, SEP-1699): from 2025-11-25 on. Earlier
    clients had no event id to resume from."""
    # ISO dates: their order as strings is their order in time.
    return version is not None and version >= V2025_11_25
