"""Opaque cursors for the list methods."""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import TypeVar

from mcpkit._exceptions import InvalidParamsError

T = TypeVar("T")

#: Items per page of tools/list, resources/list, prompts/list, resources/templates/list.
DEFAULT_PAGE_SIZE = 100


def encode_cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(f"o:{offset}".encode()).decode()


def decode_cursor(cursor: object) -> int:
    """The offset a cursor stands for; a cursor we did not issue is -32602."""
    if cursor is None:
        return 0
    try:
        text = base64.urlsafe_b64decode(str(cursor).encode()).decode()
        kind, _, number = text.partition(":")
        offset = int(number)
    except (ValueError, UnicodeDecodeError):
        raise InvalidParamsError("Invalid cursor", {"cursor": cursor}) from None
    if kind != "o" or offset < 0:
        raise InvalidParamsError("Invalid cursor", {"cursor": cursor})
    return offset


def paginate(items: Sequence[T], cursor: object, page_size: int) -> tuple[Sequence[T], str | None]:
    """One page of ``items`` from ``cursor`` and the cursor of the next page (None at the end)."""
    start = decode_cursor(cursor)
    end = start + page_size
    page = items[start:end]
    return page, (encode_cursor(end) if end < len(items) else None)
