"""Which era (2026-07-28 "modern", or the ``initialize`` handshake) a server speaks, as found
by a client's probe, remembered per endpoint for the life of the process (versioning,
"Backward Compatibility": the era is a property of the server, not of one request)."""

from __future__ import annotations

from collections import OrderedDict
from urllib.parse import urlsplit, urlunsplit

from mcpkit.protocol._versions import Era

__all__ = [
    "MAX_CACHED_ERAS",
    "detected_era",
    "endpoint_key",
    "forget_detected_eras",
    "forget_era",
    "remember_era",
]

#: Endpoints whose era is remembered.
MAX_CACHED_ERAS = 256

_eras: OrderedDict[str, tuple[Era, str]] = OrderedDict()


def endpoint_key(endpoint: str) -> str:
    """An HTTP endpoint, normalised (scheme and host case, no fragment)."""
    parts = urlsplit(endpoint)
    return urlunsplit(
        (parts.scheme.lower(), parts.netloc.lower(), parts.path or "/", parts.query, "")
    )


def detected_era(key: str) -> tuple[Era, str] | None:
    """(era, protocol version) a client found for the endpoint ``key``, if any."""
    return _eras.get(key)


def remember_era(key: str, era: Era, version: str) -> None:
    _eras[key] = (era, version)
    _eras.move_to_end(key)
    while len(_eras) > MAX_CACHED_ERAS:
        _eras.popitem(last=False)


def forget_era(key: str) -> None:
    _eras.pop(key, None)


def forget_detected_eras() -> None:
    _eras.clear()
