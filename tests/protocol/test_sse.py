"""SSE codec: encoding, WHATWG parsing rules, arbitrary chunking, and the size bound."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpkit._exceptions import InvalidRequestError, MessageTooLargeError
from mcpkit.protocol._sse import (
    DEFAULT_MAX_SSE_EVENT_BYTES,
    SseDecoder,
    SseEvent,
    encode_comment,
    encode_event,
)


def decode_all(data: bytes, **kwargs: object) -> list[SseEvent]:
    return SseDecoder(**kwargs).feed(data)  # type: ignore[arg-type]


def decode_bytewise(data: bytes) -> list[SseEvent]:
    decoder = SseDecoder()
    events: list[SseEvent] = []
    for i in range(len(data)):
        events += decoder.feed(data[i : i + 1])
    return events


# --------------------------------------------------------------------------- encoding


def test_encode_event_fields_and_multiline_data() -> None:
    assert encode_event("hi") == b"data: hi\n\n"
    assert encode_event(b'{"a":1}', event="message", id="42", retry=3000) == (
        b'event: message\nid: 42\nretry: 3000\ndata: {"a":1}\n\n'
    )
    assert encode_event("a\nb\r\nc\rd") == b"data: a\ndata: b\ndata: c\ndata: d\n\n"
    assert encode_event("") == b"data:\n\n"
    assert encode_event("x\n") == b"data: x\ndata:\n\n"
    assert encode_event("é") == "data: é\n\n".encode()


def test_encode_comment() -> None:
    assert encode_comment("ping") == b": ping\n\n"
    assert encode_comment() == b":\n\n"
    assert encode_comment("a\nb") == b": a\n: b\n\n"
    assert decode_all(encode_comment("keep-alive") * 3) == []


@pytest.mark.parametrize(
    "kwargs",
    [{"event": "a\nb"}, {"id": "1\r"}, {"id": "a\0b"}, {"retry": -1}, {"retry": True}],
)
def test_encode_rejects_values_the_format_cannot_carry(kwargs: dict) -> None:
    with pytest.raises(ValueError):
        encode_event("x", **kwargs)


# --------------------------------------------------------------------------- decoding rules


def test_line_endings_crlf_cr_lf_all_work() -> None:
    stream = b"data: a\r\n\r\ndata: b\r\rdata: c\n\ndata: d\r\n\n"
    assert [e.data for e in decode_all(stream)] == ["a", "b", "c", "d"]
    assert [e.data for e in decode_bytewise(stream)] == ["a", "b", "c", "d"]


def test_crlf_split_across_chunks_is_one_line_break() -> None:
    decoder = SseDecoder()
    assert decoder.feed(b"data: a\r") == []
    assert decoder.feed(b"\ndata: b\r") == []
    # "\r" then "\n\r": the LF completes the CRLF, the next CR is the blank line.
    assert decoder.feed(b"\n\r") == [SseEvent(data="a\nb")]


def test_utf8_split_inside_a_sequence() -> None:
    payload = "data: héllo wörld ✓\n\n".encode()
    assert decode_bytewise(payload) == [SseEvent(data="héllo wörld ✓")]


def test_invalid_utf8_becomes_replacement_character() -> None:
    assert decode_all(b"data: a\xffb\n\n") == [SseEvent(data="a\ufffdb")]


def test_leading_space_stripped_once_and_only_one() -> None:
    assert decode_all(b"data:x\n\n")[0].data == "x"
    assert decode_all(b"data: x\n\n")[0].data == "x"
    assert decode_all(b"data:  x\n\n")[0].data == " x"
    assert decode_all(b"data: a: b\n\n")[0].data == "a: b"


def test_field_without_colon_has_empty_value() -> None:
    assert decode_all(b"data\n\n") == [SseEvent(data="")]
    assert decode_all(b"data\ndata\n\n") == [SseEvent(data="\n")]
    assert decode_all(b"data: x\nevent\n\n") == [SseEvent(data="x")]


def test_comments_and_unknown_fields_are_ignored() -> None:
    stream = b": hello\nfoo: bar\ndata: 1\n:comment\nDATA: nope\n\n"
    assert decode_all(stream) == [SseEvent(data="1")]


def test_bom_dropped_only_at_stream_start_even_when_split() -> None:
    bom = b"\xef\xbb\xbf"
    assert decode_all(bom + b"data: x\n\n") == [SseEvent(data="x")]
    assert decode_bytewise(bom + b"data: x\n\n") == [SseEvent(data="x")]
    decoder = SseDecoder()
    assert decoder.feed(b"\xef") == []
    assert decoder.feed(b"\xbb") == []
    assert decoder.feed(b"\xbfdata: y\n\n" + bom + b"data: z\n\n") == [SseEvent(data="y")]
    # A second BOM is part of a line: the field name is then "\ufeffdata", unknown.


def test_blocks_without_data_and_id_are_not_dispatched() -> None:
    assert decode_all(b"event: ping\n\n") == []
    assert decode_all(b"retry: 10\n\n") == []
    assert decode_all(b"\n\n\n") == []


def test_id_only_block_is_dispatched_for_priming() -> None:
    decoder = SseDecoder()
    assert decoder.feed(b"id: prime-1\ndata\n\n") == [SseEvent(data="", id="prime-1")]
    assert decoder.feed(b"id: prime-2\n\n") == [SseEvent(data="", id="prime-2")]
    assert decoder.last_event_id == "prime-2"


def test_last_event_id_is_sticky_and_set_on_dispatch() -> None:
    decoder = SseDecoder()
    assert decoder.last_event_id is None
    assert decoder.feed(b"id: 1\ndata: a\n\n") == [SseEvent(data="a", id="1")]
    assert decoder.feed(b"data: b\n\n") == [SseEvent(data="b")]  # the event's own id: none
    assert decoder.last_event_id == "1"  # ...but the stream's last id sticks
    decoder.feed(b"id: 2\ndata: c")
    assert decoder.last_event_id == "1"  # not until the event is complete
    decoder.feed(b"\n\n")
    assert decoder.last_event_id == "2"
    decoder.feed(b"id\ndata: d\n\n")  # an empty id resets it
    assert decoder.last_event_id is None


def test_id_containing_nul_is_ignored() -> None:
    decoder = SseDecoder()
    assert decoder.feed(b"id: 1\n\nid: a\x00b\ndata: x\n\n") == [
        SseEvent(data="", id="1"),
        SseEvent(data="x"),
    ]
    assert decoder.last_event_id == "1"


def test_retry_only_when_all_ascii_digits() -> None:
    decoder = SseDecoder()
    assert decoder.feed(b"retry: 1500\ndata: x\n\n") == [SseEvent(data="x", retry=1500)]
    assert decoder.retry == 1500
    assert decoder.feed(b"retry: 15s\ndata: y\n\nretry: -1\ndata: z\n\n") == [
        SseEvent(data="y"),
        SseEvent(data="z"),
    ]
    assert decoder.feed("retry: ١٢\ndata: w\n\n".encode()) == [SseEvent(data="w")]
    assert decoder.feed(b"retry:\ndata: v\n\n") == [SseEvent(data="v")]
    assert decoder.retry == 1500


def test_event_type_and_default() -> None:
    assert decode_all(b"event: endpoint\ndata: /m\n\n") == [SseEvent(data="/m", event="endpoint")]
    assert decode_all(b"event:\ndata: x\n\n") == [SseEvent(data="x")]
    # The type does not leak into the next event.
    assert decode_all(b"event: a\ndata: 1\n\ndata: 2\n\n")[1] == SseEvent(data="2")


def test_incomplete_event_is_held_until_its_blank_line() -> None:
    decoder = SseDecoder()
    assert decoder.feed(b"data: part") == []
    assert decoder.feed(b"ial\n") == []
    assert decoder.feed(b"\n") == [SseEvent(data="partial")]


# --------------------------------------------------------------------------- round trip

# Text for data: anything (surrogates cannot be UTF-8 encoded). CR and CRLF come back as LF.
_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
_single_line = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n\0"), max_size=12
)
_events = st.lists(
    st.builds(
        SseEvent,
        data=_text,
        event=st.none() | _single_line.filter(bool),
        id=st.none() | _single_line,
        retry=st.none() | st.integers(min_value=0, max_value=10**9),
    ),
    max_size=6,
)


def _normalized(event: SseEvent) -> SseEvent:
    return SseEvent(
        data=re.sub(r"\r\n|\r", "\n", event.data), event=event.event, id=event.id, retry=event.retry
    )


@given(_events, st.lists(st.integers(min_value=0, max_value=10_000), max_size=12), st.booleans())
@settings(max_examples=400)
def test_decoding_any_chunking_of_encoded_events_gives_them_back(
    events: list[SseEvent], cuts: list[int], comments: bool
) -> None:
    parts = []
    for e in events:
        parts.append(encode_event(e.data, event=e.event, id=e.id, retry=e.retry))
        if comments:
            parts.append(encode_comment("keep-alive"))
    stream = b"".join(parts)
    positions = sorted({0, len(stream), *(c % (len(stream) + 1) for c in cuts)})
    decoder = SseDecoder()
    decoded: list[SseEvent] = []
    for start, end in zip(positions, positions[1:]):
        decoded += decoder.feed(stream[start:end])
    assert decoded == [_normalized(e) for e in events]
    ids = [e.id for e in events if e.id is not None]
    assert decoder.last_event_id == (ids[-1] or None if ids else None)


# --------------------------------------------------------------------------- size bound


@pytest.mark.parametrize("chunk_size", [1, 7, 1 << 20])
def test_bound_single_line_exact_and_one_over(chunk_size: int) -> None:
    limit = 64

    def feed_all(data: bytes) -> list[SseEvent]:
        decoder = SseDecoder(max_event_bytes=limit)
        out: list[SseEvent] = []
        for i in range(0, len(data), chunk_size):
            out += decoder.feed(data[i : i + chunk_size])
        return out

    assert feed_all(encode_event("x" * limit)) == [SseEvent(data="x" * limit)]
    with pytest.raises(MessageTooLargeError):
        feed_all(encode_event("x" * (limit + 1)))


def test_bound_counts_joined_lines_and_utf8_bytes() -> None:
    limit = 10
    exact = "ab\ncd\néé"  # 2 + 1 + 2 + 1 + 4 bytes
    assert len(exact.encode()) == limit
    assert decode_all(encode_event(exact), max_event_bytes=limit) == [SseEvent(data=exact)]
    with pytest.raises(MessageTooLargeError):
        decode_all(encode_event(exact + "x"), max_event_bytes=limit)
    with pytest.raises(MessageTooLargeError):
        decode_all(encode_event(exact + "\n"), max_event_bytes=limit)  # the join LF counts


def test_bound_applies_per_event_not_per_stream() -> None:
    decoder = SseDecoder(max_event_bytes=8)
    for _ in range(100):
        assert decoder.feed(encode_event("12345678")) == [SseEvent(data="12345678")]


def test_never_ending_line_is_refused_before_its_end() -> None:
    decoder = SseDecoder(max_event_bytes=1000)
    decoder.feed(b"data: ")
    for _ in range(9):
        decoder.feed(b"x" * 100)
    with pytest.raises(MessageTooLargeError):
        decoder.feed(b"x" * 101)
    with pytest.raises(MessageTooLargeError):
        decoder.feed(b"\n\n")  # the stream is out of sync: the decoder stays failed


def test_bound_covers_comment_and_other_lines() -> None:
    with pytest.raises(MessageTooLargeError):
        decode_all(b":" + b"c" * 100, max_event_bytes=50)
    with pytest.raises(MessageTooLargeError):
        decode_all(b"event: " + b"e" * 100 + b"\n", max_event_bytes=50)


def test_unbounded_decoder_and_default() -> None:
    assert DEFAULT_MAX_SSE_EVENT_BYTES == 1024 * 1024
    assert SseDecoder().max_event_bytes == DEFAULT_MAX_SSE_EVENT_BYTES
    big = "y" * (DEFAULT_MAX_SSE_EVENT_BYTES + 1)
    assert decode_all(encode_event(big), max_event_bytes=None) == [SseEvent(data=big)]
    with pytest.raises(MessageTooLargeError):
        decode_all(encode_event(big))


def test_too_large_is_an_invalid_request_protocol_error() -> None:
    with pytest.raises(InvalidRequestError) as info:
        decode_all(encode_event("z" * 20), max_event_bytes=10)
    assert info.value.to_error()["code"] == -32600
