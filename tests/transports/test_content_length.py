"""``content-length`` header pairs: made once per size and shared by the answers, in a table
that never holds more than ``MAX_LENGTH_HEADERS`` sizes."""

from __future__ import annotations

import json

from mcpkit.transports.http import _asgi
from mcpkit.transports.http._asgi import MAX_LENGTH_HEADERS, content_length, json_response


def test_the_pair_names_the_size_and_is_shared() -> None:
    assert content_length(0) == (b"content-length", b"0")
    assert content_length(123_456) == (b"content-length", b"123456")
    assert content_length(57) is content_length(57)


def test_the_table_is_cleared_when_full_and_stays_correct() -> None:
    for size in range(3 * MAX_LENGTH_HEADERS):
        assert content_length(size) == (b"content-length", str(size).encode())
        assert len(_asgi._LENGTH_HEADERS) <= MAX_LENGTH_HEADERS


def test_a_json_answer_declares_its_own_length() -> None:
    for value in ({"a": 1}, {"text": "x" * 5000}, [1, 2, 3], {"a": 1}):
        start, body = json_response(200, value, [(b"mcp-protocol-version", b"2025-11-25")])
        headers = dict(start["headers"])
        assert headers[b"content-length"] == str(len(body["body"])).encode()
        assert headers[b"content-type"] == b"application/json"
        assert json.loads(body["body"]) == value
