"""``header_map``: the request's headers by name, as every HTTP endpoint reads them. Names MCP
uses come from a fixed table of decoded names; any other name is decoded as it comes; the
values are Latin-1 (HTTP's own), and the last of a repeated header wins."""

from __future__ import annotations

from mcpkit.transports.http._asgi import header_map


def scope(*pairs: tuple[bytes, bytes]) -> dict[str, object]:
    return {"type": "http", "headers": list(pairs)}


def test_known_and_unknown_names_both_map_to_their_values() -> None:
    headers = header_map(
        scope(
            (b"host", b"127.0.0.1:8000"),
            (b"mcp-session-id", b"abc"),
            (b"x-custom-thing", b"yes"),
            (b"mcp-param-region", b"eu"),
        )
    )
    assert headers == {
        "host": "127.0.0.1:8000",
        "mcp-session-id": "abc",
        "x-custom-thing": "yes",
        "mcp-param-region": "eu",
    }


def test_values_are_latin_1_and_the_last_repeat_wins() -> None:
    headers = header_map(scope((b"accept", b"text/plain"), (b"accept", b"caf\xe9")))
    assert headers == {"accept": "café"}


def test_no_headers_is_an_empty_map() -> None:
    assert header_map(scope()) == {}
