"""``content-length`` header pairs: made for each answer (no table of them is kept: it
would be module state every app of the process shares)."""

from __future__ import annotations

import json

from mcpkit.transports.http._asgi import content_length, json_response


def test_the_pair_names_the_size() -> None:
    assert content_length(0) == (b"content-length", b"0")
    assert content_length(123_456) == (b"content-length", b"123456")
    for size in range(3000):
        assert content_length(size) == (b"content-length", str(size).encode())


def test_a_json_answer_declares_its_own_length() -> None:
    for value in ({"a": 1}, {"text": "x" * 5000}, [1, 2, 3], {"a": 1}):
        start, body = json_response(200, value, [(b"mcp-protocol-version", b"2025-11-25")])
        headers = dict(start["headers"])
        assert headers[b"content-length"] == str(len(body["body"])).encode()
        assert headers[b"content-type"] == b"application/json"
        assert json.loads(body["body"]) == value
