"""A cheap look at outbound and inbound JSON-RPC frames, without decoding them fully.

The HTTP transports only need to know what a frame is (request, response, which method and
id) to route it; params and results stay undecoded ``msgspec.Raw`` until asked for.
"""

from __future__ import annotations

from typing import Any

import msgspec

__all__ = ["FramePeek", "decoded", "peek", "raw_field"]


class FramePeek(msgspec.Struct):
    """The routing fields of one JSON-RPC message."""

    id: Any = msgspec.UNSET
    method: str | None = None
    result: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET
    error: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET
    params: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET

    @property
    def is_request(self) -> bool:
        return self.method is not None and isinstance(self.id, (int, str))

    @property
    def is_response(self) -> bool:
        """A response with an id this client could have used (never a list or an object)."""
        return (
            self.method is None
            and isinstance(self.id, (int, str))
            and (self.result is not msgspec.UNSET or self.error is not msgspec.UNSET)
        )


_peek_decoder = msgspec.json.Decoder(FramePeek | list[FramePeek])


def peek(frame: bytes) -> list[FramePeek]:
    """The messages of ``frame`` (one, or a batch); none when it is not JSON-RPC."""
    try:
        found = _peek_decoder.decode(frame)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return []
    return found if isinstance(found, list) else [found]


def decoded(raw: Any) -> Any:
    """A ``Raw`` field decoded, or None when absent or not JSON."""
    if not isinstance(raw, msgspec.Raw):
        return None
    try:
        return msgspec.json.decode(raw)
    except msgspec.DecodeError:
        return None


def raw_field(raw: Any, name: str) -> Any:
    """One key of a ``Raw`` object field, or None."""
    value = decoded(raw)
    return value.get(name) if isinstance(value, dict) else None
