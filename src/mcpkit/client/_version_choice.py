"""Which protocol version to speak with a server that named the ones it supports (in a
``DiscoverResult``, or the data of an ``UnsupportedProtocolVersionError``, -32022): what the
era negotiation settles on and what a 2026-07-28 request retried after a -32022 is sent in."""

from __future__ import annotations

from typing import Any

__all__ = ["latest_common", "supported_versions"]


def supported_versions(data: Any) -> list[str]:
    """The ``supported`` list of an ``UnsupportedProtocolVersionError``'s data."""
    supported = data.get("supported") if isinstance(data, dict) else None
    return [v for v in supported if isinstance(v, str)] if isinstance(supported, list) else []


def latest_common(ours: tuple[str, ...], theirs: list[str]) -> str | None:
    """The latest of ``ours`` that ``theirs`` has too."""
    common = [v for v in ours if v in theirs]
    return common[-1] if common else None
