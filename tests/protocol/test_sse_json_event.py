"""``encode_json_event``: the one-copy SSE frame of an encoded JSON value. It must give the
very bytes ``encode_event`` gives (raw line breaks included, through its fallback), refuse
what ``encode_event`` refuses, and decode back to the JSON it was given, however large.
``json_event_chunks`` writes the same bytes, a large value as a chunk of its own."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpkit.protocol._jsonrpc import encode_json
from mcpkit.protocol._sse import (
    MIN_UNJOINED_DATA_BYTES,
    SseDecoder,
    encode_event,
    encode_json_event,
    json_event_chunks,
)
from tests.protocol._budget import fuzz_settings

_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(st.characters(codec="utf-8")),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)
_single_line = st.text(st.characters(codec="utf-8", exclude_characters="\r\n\0"), max_size=12)


@fuzz_settings
@given(value=_json, event=st.none() | _single_line.filter(bool), id=st.none() | _single_line)
def test_same_bytes_as_encode_event_for_any_json(value, event, id):
    data = encode_json(value)
    assert encode_json_event(data, event=event, id=id) == encode_event(data, event=event, id=id)


@fuzz_settings
@given(
    raw=st.binary(max_size=40)
    .map(lambda b: b.replace(b"\x00", b""))
    .map(lambda b: b.decode("utf-8", "ignore").encode()),
    id=st.none() | _single_line,
)
def test_raw_line_breaks_take_the_general_path(raw, id):
    data = b"[1,\n2,\r\n3\r]" + raw
    assert encode_json_event(data, event="message", id=id) == encode_event(
        data, event="message", id=id
    )


@pytest.mark.parametrize(
    ("event", "id"),
    [("a\nb", None), ("message", "x\ry"), ("message", "nul\0id"), ("two\r\nlines", "1")],
)
def test_refuses_what_encode_event_refuses(event, id):
    with pytest.raises(ValueError) as general:
        encode_event(b"{}", event=event, id=id)
    with pytest.raises(ValueError) as fast:
        encode_json_event(b"{}", event=event, id=id)
    assert str(fast.value) == str(general.value)


def test_a_refused_type_is_not_remembered():
    with pytest.raises(ValueError):
        encode_json_event(b"{}", event="bad\ntype")
    with pytest.raises(ValueError):
        encode_json_event(b"{}", event="bad\ntype")  # refused again, not served from the cache


def test_empty_data_is_an_empty_data_line():
    assert encode_json_event(b"", id="7") == encode_event(b"", id="7") == b"id: 7\ndata:\n\n"


def test_a_large_value_decodes_back_whole():
    text = 'line "one"\n\ttab \\ backslash é ✓\n' * 200_000  # ~6.8 MB of text, escaped in JSON
    message = {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": text}]}}
    data = encode_json(message)
    frame = encode_json_event(data, event="message", id="s/1")
    assert frame.count(b"\n") == 4  # event, id, one data line, the blank line
    decoder = SseDecoder(max_event_bytes=None)
    events = decoder.feed(frame[:1000]) + decoder.feed(frame[1000:])
    assert len(events) == 1 and events[0].id == "s/1" and events[0].event == "message"
    assert events[0].data.encode() == data


@pytest.mark.parametrize("size", [10, MIN_UNJOINED_DATA_BYTES - 10, MIN_UNJOINED_DATA_BYTES * 3])
@pytest.mark.parametrize("id", [None, "s1:7"])
@pytest.mark.parametrize("line_break", [False, True])
def test_chunks_write_the_same_bytes(size, id, line_break):
    value = ['a "quoted"\ttext', "x" * size]
    data = encode_json(value)
    if line_break:
        data = data[:1] + b"\n" + data[1:]  # JSON allows one between tokens
    chunks = json_event_chunks(data, event="message", id=id)
    assert b"".join(chunks) == encode_json_event(data, event="message", id=id)
    unjoined = len(data) >= MIN_UNJOINED_DATA_BYTES and not line_break
    assert len(chunks) == (3 if unjoined else 1)
    if unjoined:
        assert chunks[1] is data  # not copied
    events = list(SseDecoder(max_event_bytes=None).feed(b"".join(chunks)))
    assert len(events) == 1 and json.loads(events[0].data) == value
