"""Property tests of the SSE codec (mcpkit.protocol._sse): encoded events come back through
any line endings, comments and chunking; any bytes decode the same however they are split,
and the same as a plain transcription of the WHATWG algorithm; the size bound holds right
up to its boundary. tests/protocol/test_sse.py has the rule-by-rule examples."""

from __future__ import annotations

import re
from collections.abc import Iterable

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from mcpkit._exceptions import MessageTooLargeError
from mcpkit.protocol._sse import SseDecoder, SseEvent, encode_comment, encode_event
from tests.protocol._budget import fuzz_settings

# --------------------------------------------------------------------------- helpers

_text = st.text(st.characters(codec="utf-8"), max_size=30)
_single_line = st.text(st.characters(codec="utf-8", exclude_characters="\r\n\0"), max_size=12)
_retries = st.integers(min_value=0, max_value=10**18 - 1)
_events = st.lists(
    st.builds(
        SseEvent,
        data=_text,
        event=st.none() | _single_line.filter(bool),
        id=st.none() | _single_line,
        retry=st.none() | _retries,
    ),
    max_size=6,
)
_cuts = st.lists(st.integers(min_value=0, max_value=10_000), max_size=12)


def _feed_in_pieces(decoder: SseDecoder, stream: bytes, cuts: Iterable[int]) -> list[SseEvent]:
    positions = sorted({0, len(stream), *(c % (len(stream) + 1) for c in cuts)})
    events: list[SseEvent] = []
    for start, end in zip(positions, positions[1:]):
        events += decoder.feed(stream[start:end])
    return events


def _normalized(event: SseEvent) -> SseEvent:
    # The format cannot carry which line break the data had: CRLF and CR come back as LF.
    return SseEvent(re.sub(r"\r\n|\r", "\n", event.data), event.event, event.id, event.retry)


def _reference(stream: bytes) -> tuple[list[SseEvent], str | None, int | None]:
    """WHATWG HTML 9.2.6 "Interpreting an event stream", read whole, with mcpkit's two
    documented differences: a block with an ``id`` but no ``data`` is dispatched, and the
    default event type is None. Returns (events, last event ID, reconnection time)."""
    text = stream.decode("utf-8", errors="replace")
    text = text.removeprefix("\ufeff")
    lines = re.split(r"\r\n|\r|\n", text)
    lines.pop()  # the text after the last line break is an incomplete line: never processed
    events: list[SseEvent] = []
    data: list[str] = []
    event_type = ""
    block_id: str | None = None
    block_retry: int | None = None
    id_buffer = ""
    last_id: str | None = None
    reconnect: int | None = None
    for line in lines:
        if not line:
            last_id = id_buffer or None
            if data or block_id is not None:
                events.append(SseEvent("\n".join(data), event_type or None, block_id, block_retry))
            data, event_type, block_id, block_retry = [], "", None, None
            continue
        if line.startswith(":"):
            continue
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
            data.append(value)
        elif name == "event":
            event_type = value
        elif name == "id" and "\0" not in value:
            id_buffer = block_id = value
        elif name == "retry" and re.fullmatch(r"[0-9]+", value):
            if len(value.lstrip("0")) <= 18:  # mcpkit ignores retries past 18 digits
                block_retry = reconnect = int(value)
    return events, last_id, reconnect


def _terminate(lines: list[str], endings: list[int]) -> str:
    """Join ``lines`` with a mix of CRLF, CR and LF. A CR followed by an LF that ends an
    empty line would read as one CRLF, merging two line breaks: that LF becomes a CR."""
    out: list[str] = []
    previous = ""
    for i, line in enumerate(lines):
        ending = ("\n", "\r", "\r\n")[endings[i % len(endings)] % 3] if endings else "\n"
        if previous == "\r" and not line and ending.startswith("\n"):
            ending = "\r"
        out.append(line + ending)
        previous = ending
    return "".join(out)


# --------------------------------------------------------------------------- round trips


@given(
    _events,
    st.lists(st.integers(min_value=0, max_value=2), max_size=20),
    st.lists(st.integers(min_value=0, max_value=60), max_size=6),
    st.booleans(),
    _cuts,
)
@fuzz_settings
def test_encoded_events_come_back_through_any_line_endings_comments_and_chunking(
    events: list[SseEvent],
    endings: list[int],
    comment_at: list[int],
    tight: bool,
    cuts: list[int],
) -> None:
    lines: list[str] = []
    for e in events:
        block = encode_event(e.data, event=e.event, id=e.id, retry=e.retry).decode()
        lines += block[:-1].split("\n")  # "a\n\n" is the lines "a" and "", each LF-ended
    if tight:
        # "data:x" reads as "data: x": one space after the colon is optional.
        lines = [re.sub(r"^(data|id|event|retry): (?=[^ ])", r"\1:", line) for line in lines]
    for n, position in enumerate(sorted(comment_at, reverse=True)):
        lines.insert(position % (len(lines) + 1), ": keep-alive" if n % 2 else ":")
    stream = _terminate(lines, endings).encode()
    decoder = SseDecoder()
    assert _feed_in_pieces(decoder, stream, cuts) == [_normalized(e) for e in events]
    ids = [e.id for e in events if e.id is not None]
    assert decoder.last_event_id == ((ids[-1] or None) if ids else None)
    retries = [e.retry for e in events if e.retry is not None]
    assert decoder.retry == (retries[-1] if retries else None)


@given(_text, _text, _cuts)
@fuzz_settings
def test_a_comment_never_dispatches_and_never_disturbs_the_next_event(
    comment: str, data: str, cuts: list[int]
) -> None:
    stream = encode_comment(comment) + encode_event(data) + encode_comment(comment)
    assert _feed_in_pieces(SseDecoder(), stream, cuts) == [_normalized(SseEvent(data))]


@given(st.integers(min_value=0, max_value=6000), st.integers(min_value=0, max_value=3))
@fuzz_settings
@example(5000, 0)
@example(19, 0)
@example(18, 3)
def test_a_retry_of_any_length_is_read_or_ignored_never_an_error(nines: int, zeros: int) -> None:
    value = "0" * zeros + "9" * nines
    decoder = SseDecoder()
    events = decoder.feed(f"retry: {value}\ndata: x\n\n".encode())
    expected = int(value) if value and nines <= 18 else None
    assert events == [SseEvent("x", retry=expected)]
    assert decoder.retry == expected


@given(_single_line, st.sampled_from(["\r", "\n", "\r\n"]), _single_line)
@fuzz_settings
def test_encoding_refuses_a_line_break_in_a_single_line_field(
    before: str, line_break: str, after: str
) -> None:
    with pytest.raises(ValueError):
        encode_event("x", event=before + line_break + after)
    with pytest.raises(ValueError):
        encode_event("x", id=before + line_break + after)
    with pytest.raises(ValueError):
        encode_event("x", id=before + "\0" + after)  # decoders ignore an id holding NUL


@given(st.integers(max_value=-1) | st.integers(min_value=10**18))
@fuzz_settings
def test_encoding_refuses_a_retry_decoders_would_not_read(retry: int) -> None:
    with pytest.raises(ValueError):
        encode_event("x", retry=retry)


# --------------------------------------------------------------------------- any bytes

_pieces = st.sampled_from(
    [
        b"data",
        b"data:",
        b"data: ",
        b"id",
        b"id: ",
        b"event: ",
        b"retry: ",
        b"retry:12",
        b":",
        b" ",
        b"\r",
        b"\n",
        b"\r\n",
        b"x",
        b"12",
        b"\x00",
        b"\xef\xbb\xbf",
        b"\xff",
        b"\xe2\x82",
        "é✓".encode(),
    ]
)
_streams = st.binary(max_size=120) | st.lists(_pieces, max_size=40).map(b"".join)


@given(_streams, _cuts)
@fuzz_settings
@example(b"\xef\xbb\xbf\xef\xbb\xbfdata: x\n\n", [1, 4])
@example(b"data: a\r\r\n\ndata: b\n\r", [8, 9])
def test_any_bytes_decode_as_the_whatwg_algorithm_says_however_they_are_split(
    stream: bytes, cuts: list[int]
) -> None:
    events, last_id, retry = _reference(stream)
    whole = SseDecoder(max_event_bytes=None)
    assert whole.feed(stream) == events
    assert (whole.last_event_id, whole.retry) == (last_id, retry)
    split = SseDecoder(max_event_bytes=None)
    assert _feed_in_pieces(split, stream, cuts) == events
    assert (split.last_event_id, split.retry) == (last_id, retry)


@given(_streams, _cuts, st.integers(min_value=1, max_value=40))
@fuzz_settings
def test_with_a_bound_any_bytes_decode_or_raise_too_large_and_nothing_else(
    stream: bytes, cuts: list[int], limit: int
) -> None:
    def run(pieces: list[int]) -> list[SseEvent] | None:
        decoder = SseDecoder(max_event_bytes=limit)
        try:
            return _feed_in_pieces(decoder, stream, pieces)
        except MessageTooLargeError:
            return None

    whole, split = run([]), run(cuts)
    assert whole == split  # the same verdict however the bytes arrive
    if whole is not None:
        assert whole == _reference(stream)[0]


# --------------------------------------------------------------------------- the bound


@given(
    st.lists(
        st.text(st.characters(codec="utf-8", exclude_characters="\r\n")), min_size=1, max_size=4
    ),
    st.integers(min_value=-2, max_value=2),
    _cuts,
)
@fuzz_settings
def test_the_data_bound_holds_right_up_to_the_boundary(
    lines: list[str], off: int, cuts: list[int]
) -> None:
    data = "\n".join(lines)
    size = len(data.encode())  # what the bound counts: UTF-8 bytes, the joining LFs included
    limit = max(size + off, 0)
    decoder = SseDecoder(max_event_bytes=limit)
    stream = encode_event(data)
    if size <= limit:
        assert _feed_in_pieces(decoder, stream, cuts) == [SseEvent(data)]
    else:
        with pytest.raises(MessageTooLargeError):
            _feed_in_pieces(decoder, stream, cuts)
