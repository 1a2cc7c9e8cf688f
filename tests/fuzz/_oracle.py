"""The fuzzer's oracle: from an input's bytes alone, which replies the server owes it.

Written from JSON-RPC 2.0 (sections 4-6) and MCP's ``RequestId`` (string or integer, never
null or boolean), independently of mcpkit's decoder: a request with a readable id is owed
exactly one reply carrying that id; a frame that is not JSON, or JSON that is not a message
and has no readable id, is owed one error without an id; notifications and responses are
owed nothing (an id-less error response included: replying to it would answer an answer).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Expect:
    """Replies an input is owed: per request id (min, max), and id-less errors (min, max)."""

    ids: dict[Any, tuple[int, int]] = field(default_factory=dict)
    anon: tuple[int, int] = (0, 0)

    def add_id(self, rid: Any, low: int = 1, high: int = 1) -> None:
        key = id_key(rid)
        was = self.ids.get(key, (0, 0))
        self.ids[key] = (was[0] + low, was[1] + high)

    def add_anon(self, n: int = 1) -> None:
        self.anon = (self.anon[0] + n, self.anon[1] + n)


def id_key(rid: Any) -> Any:
    """Ids as dictionary keys that keep 1 and "1" apart (and True away from 1)."""
    return (type(rid).__name__, rid if not isinstance(rid, (list, dict)) else repr(rid))


def strict_json(data: bytes) -> tuple[bool, Any]:
    """(True, value) when ``data`` is JSON any conforming decoder reads the same: UTF-8, no
    NaN/Infinity, finite numbers, no lone surrogates."""
    try:
        value = json.loads(data.decode("utf-8"), parse_constant=_refuse)
    except (ValueError, RecursionError):
        return False, None
    return _finite(value), value


def _refuse(name: str) -> None:
    raise ValueError(name)


def _finite(value: Any) -> bool:
    if isinstance(value, float):
        return value not in (float("inf"), float("-inf"))
    if isinstance(value, str):
        return not any(0xD800 <= ord(c) <= 0xDFFF for c in value)
    if isinstance(value, list):
        return all(_finite(v) for v in value)
    if isinstance(value, dict):
        return all(_finite(k) and _finite(v) for k, v in value.items())
    return True


def valid_id(value: object) -> bool:
    return type(value) in (int, str)  # MCP RequestId: never null, never a boolean


def classify(obj: Any) -> tuple[str, Any]:
    """JSON-RPC 2.0 sections 4-5 with MCP's RequestId: ``(kind, id)``, kind one of request,
    notification, response, error, invalid, and id the one an error reply must carry (None
    when unreadable). Lenient where mcpkit is (a receiver may be): ``"method": null`` and
    ``"params": null`` read as absent, a message with both ``result`` and ``error`` is a
    result, an error object needs only an integer ``code`` (JSON true is not one), and an
    error answers even an unreadable id."""
    if type(obj) is not dict:
        return "invalid", None
    rid = obj.get("id")
    readable = rid if valid_id(rid) else None
    if obj.get("jsonrpc") != "2.0":
        return "invalid", readable
    if obj.get("method") is not None:
        if "id" in obj and not valid_id(rid):
            return "invalid", None
        if type(obj["method"]) is not str:
            return "invalid", readable
        if obj.get("params") is not None and type(obj["params"]) is not dict:
            return "invalid", readable
        return ("request" if "id" in obj else "notification"), readable
    if "result" in obj:
        return ("response", rid) if valid_id(rid) else ("invalid", None)
    error = obj.get("error")
    if type(error) is dict and type(error.get("code")) is int:
        return "error", readable
    return "invalid", readable


def expect_frame(data: bytes, expect: Expect, *, batches: bool) -> None:
    """Add what one frame is owed to ``expect``."""
    ok, value = strict_json(data)
    if not ok:
        expect.add_anon()
        return
    if type(value) is list:
        # Refused whole: an empty batch, a batch outside 2025-03-26, and one holding an
        # initialize request ("MUST NOT be part of a JSON-RPC batch", 2025-03-26).
        if not value or not batches or any(_is_initialize(m) for m in value):
            expect.add_anon()
            return
        for member in value:
            _expect_message(member, expect)
        return
    _expect_message(value, expect)


def _is_initialize(obj: Any) -> bool:
    return classify(obj)[0] == "request" and obj.get("method") == "initialize"


def _expect_message(obj: Any, expect: Expect) -> None:
    kind, rid = classify(obj)
    if kind == "request":
        # subscriptions/listen is a stream that ends without a reply when it is cancelled.
        listen = obj.get("method") == "subscriptions/listen"
        expect.add_id(rid, 0 if listen else 1, 1)
    elif kind == "invalid":
        if rid is None:
            expect.add_anon()
        else:
            expect.add_id(rid)
    # Notifications and responses are owed nothing (an error response with no id included).


def encode(message: Any) -> bytes:
    """Compact UTF-8 JSON; lone surrogates pass through (as invalid UTF-8) on purpose."""
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode(
        "utf-8", "surrogatepass"
    )


def stdio_frames(payload: bytes) -> list[bytes]:
    """The frames a newline-delimited stream makes of ``payload`` (as mcpkit's stdio framing
    does: split at LF, one CR stripped, blank lines skipped)."""
    frames = []
    for line in payload.split(b"\n"):
        line = line.removesuffix(b"\r")
        if line.strip():
            frames.append(line)
    return frames
