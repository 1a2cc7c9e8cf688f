"""Server-Sent Events: encoding events and incrementally decoding an event stream (sans-I/O).

Owns the ``text/event-stream`` wire format only; which events a transport sends, and when it
reconnects, live in the transports. Decoding follows the WHATWG HTML "event stream
interpretation" rules, with two deliberate differences that suit MCP:

* A block that has an ``id`` field but no ``data`` is dispatched (with ``data == ""``) instead
  of only updating the last event ID, so a transport sees the priming event a Streamable HTTP
  server sends before anything else. A block with neither ``data`` nor ``id`` (a lone
  ``event:`` or ``retry:``) is not dispatched, as the spec says.
* ``SseEvent.event`` is None when the type is the default ("message").

Line breaks inside ``data`` travel as separate ``data:`` lines, and any of CRLF, CR or LF in
the data comes back as LF: the format cannot carry which one it was.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from mcpkit._exceptions import MessageTooLargeError

__all__ = [
    "DEFAULT_MAX_SSE_EVENT_BYTES",
    "SseDecoder",
    "SseEvent",
    "encode_comment",
    "encode_event",
    "encode_json_event",
    "json_event_chunks",
]

#: Default bound on the data of one event (and on any other single line) while decoding.
DEFAULT_MAX_SSE_EVENT_BYTES = 1024 * 1024

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_LINE_BREAK_BYTES = re.compile(rb"\r\n|\r|\n")
_BOM = b"\xef\xbb\xbf"
_DATA_PREFIX = b"data:"
_HEAD_LEN = len(_DATA_PREFIX) + 1
#: Longest ``retry`` read (significant digits): past it (over 31 million years) the field is
#: ignored, as browsers ignore one that overflows; it also keeps ``int()`` away from values
#: past Python's 4,300-digit bound, which would raise ``ValueError`` out of ``feed``.
_MAX_RETRY_DIGITS = 18
_RETRY_END = 10**_MAX_RETRY_DIGITS


@dataclass(frozen=True, slots=True)
class SseEvent:
    """One dispatched event.

    ``id`` is the ``id`` field of this event's own block (None when it had none); the sticky
    value a client resumes from is ``SseDecoder.last_event_id``. ``retry`` is likewise this
    block's ``retry`` field, if it had a valid one.
    """

    data: str
    event: str | None = None
    id: str | None = None
    retry: int | None = None


def encode_event(
    data: str | bytes,
    *,
    event: str | None = None,
    id: str | None = None,
    retry: int | None = None,
) -> bytes:
    """The bytes of one event: fields, one ``data:`` line per line of ``data``, a blank line.

    ``bytes`` data must be UTF-8. Raises ``ValueError`` for an ``event`` or ``id`` containing a
    line break (or an ``id`` containing NUL, which decoders ignore) and a ``retry`` that is
    negative or has more than 18 digits (which decoders ignore too).
    """
    if isinstance(data, bytes):
        data = data.decode("utf-8")
    lines = _field_lines(event, id)
    if retry is not None:
        if isinstance(retry, bool) or not isinstance(retry, int) or not 0 <= retry < _RETRY_END:
            # repr() of an int past 4,300 digits raises ValueError itself: not shown then.
            large = isinstance(retry, int) and abs(retry) >= _RETRY_END
            shown = "one so large" if large else repr(retry)
            raise ValueError(f"SSE retry must be an int from 0 to 10**18 - 1, not {shown}")
        lines.append(f"retry: {retry}")
    lines.extend(_field("data", line) for line in _LINE_BREAK.split(data))
    return ("\n".join(lines) + "\n\n").encode("utf-8")


#: Encoded JSON of at least this many bytes goes out as a chunk of its own between its
#: event's head and end (``json_event_chunks``): never copied into one frame.
MIN_UNJOINED_DATA_BYTES = 64 * 1024


def json_event_chunks(
    data: bytes, *, event: str | None = None, id: str | None = None
) -> tuple[bytes, ...]:
    """``encode_json_event``'s frame as chunks that, written in order, are the same bytes:
    the frame itself, or for ``data`` of ``MIN_UNJOINED_DATA_BYTES`` or more its head,
    ``data`` itself and its end, which saves a large answer a copy, and that copy's memory."""
    if len(data) < MIN_UNJOINED_DATA_BYTES or b"\n" in data or b"\r" in data:
        return (encode_json_event(data, event=event, id=id),)
    return (_fields_head(event, id) + b"data: ", data, b"\n\n")


def encode_json_event(data: bytes, *, event: str | None = None, id: str | None = None) -> bytes:
    """``encode_event`` for one encoded JSON value (``encode_json``'s output: UTF-8, and
    a line break inside a string is escaped, so it is one ``data:`` line): the frame is
    built with one copy of ``data``, however large, where ``encode_event`` makes several.
    ``data`` holding a raw line break (JSON allows one between tokens) takes the general
    path, with the same result. Checks ``event`` and ``id`` as ``encode_event`` does."""
    if b"\n" in data or b"\r" in data:
        return encode_event(data, event=event, id=id)
    head = _fields_head(event, id)
    return b"".join((head, b"data: " if data else b"data:", data, b"\n\n"))


#: The ``event:`` line of the id-less events MCP sends (fixed: other types are made anew).
_HEADS: Mapping[str, bytes] = MappingProxyType({"message": b"event: message\n"})


def _field_lines(event: str | None, id: str | None) -> list[str]:
    """The ``event`` and ``id`` lines of an event, checked (no line break; no NUL in an id)."""
    lines: list[str] = []
    if event is not None:
        _check_single_line("event", event)
        lines.append(_field("event", event))
    if id is not None:
        _check_single_line("id", id)
        if "\0" in id:
            raise ValueError("SSE id must not contain NUL")
        lines.append(_field("id", id))
    return lines


def _fields_head(event: str | None, id: str | None) -> bytes:
    """The field lines before ``data``, each ending in LF."""
    if id is None and event is not None:
        head = _HEADS.get(event)
        if head is not None:
            return head
    return "".join(line + "\n" for line in _field_lines(event, id)).encode("utf-8")


def encode_comment(text: str = "") -> bytes:
    """A comment block (``: text``), which decoders ignore: the keep-alive of SSE."""
    lines = _LINE_BREAK.split(text)
    return ("\n".join(f": {line}" if line else ":" for line in lines) + "\n\n").encode("utf-8")


def _field(name: str, value: str) -> str:
    # The decoder strips exactly one leading space, so always writing one keeps values intact.
    return f"{name}: {value}" if value else f"{name}:"


def _check_single_line(name: str, value: str) -> None:
    if "\n" in value or "\r" in value:
        raise ValueError(f"SSE {name} must not contain a line break")


class SseDecoder:
    """Incremental ``text/event-stream`` parser: feed bytes, get complete events.

    Chunks may split anywhere, including inside a UTF-8 sequence or between the CR and LF of
    a CRLF. Undecodable bytes become U+FFFD. A BOM at the very start of the stream is dropped.

    With ``max_event_bytes`` set, ``feed`` raises ``MessageTooLargeError`` as soon as the
    pending event's data (UTF-8 bytes of the data lines joined by LF, as it would be
    dispatched) or any single other line exceeds the bound; data of exactly the bound is
    accepted. After that error the decoder is unusable: the stream is out of sync.
    """

    def __init__(self, *, max_event_bytes: int | None = DEFAULT_MAX_SSE_EVENT_BYTES) -> None:
        self.max_event_bytes = max_event_bytes
        #: The id of the last complete event block that set one (sticky across events, as a
        #: client's ``Last-Event-ID``). None before any, or after an empty ``id:`` reset it.
        self.last_event_id: str | None = None
        #: The latest valid ``retry`` (reconnection time in ms) seen, sticky like the id.
        self.retry: int | None = None
        self._partial: list[bytes] = []  # an incomplete line, as received
        self._partial_len = 0
        self._partial_head = b""  # its first bytes, enough to recognise "data:"
        self._skip_lf = False  # the previous chunk ended in CR: a leading LF completes a CRLF
        self._at_start = True  # the BOM check is still pending
        self._head = b""  # stream bytes held back while they could still be a split BOM
        self._failed = False
        self._reset_block()
        self._id_buffer: str | None = None

    def _reset_block(self) -> None:
        self._data: list[str] = []
        self._data_len = 0  # UTF-8 bytes of the data lines, joins included
        self._event: str | None = None
        self._id: str | None = None
        self._block_retry: int | None = None

    def feed(self, chunk: bytes) -> list[SseEvent]:
        """Consume ``chunk`` and return the events it completed, in order."""
        if self._failed:
            raise MessageTooLargeError("SSE decoder already exceeded its size bound")
        events: list[SseEvent] = []
        if self._at_start:
            # Drop a BOM at the very start, which may itself arrive split over chunks.
            chunk = self._head + chunk
            if len(chunk) < len(_BOM) and _BOM.startswith(chunk):
                self._head = chunk
                return events
            self._head = b""
            self._at_start = False
            if chunk.startswith(_BOM):
                chunk = chunk[len(_BOM) :]
        if not chunk:
            return events
        if self._skip_lf:
            self._skip_lf = False
            if chunk[:1] == b"\n":
                chunk = chunk[1:]
        pos = 0
        for m in _LINE_BREAK_BYTES.finditer(chunk):
            piece = chunk[pos : m.start()]
            if m.group() == b"\r" and m.end() == len(chunk):
                self._skip_lf = True  # maybe half of a CRLF split across chunks
            pos = m.end()
            if self._partial:
                self._partial.append(piece)
                raw = b"".join(self._partial)
                self._partial.clear()
                self._partial_len = 0
                self._partial_head = b""
            else:
                raw = piece
            event = self._line(raw)
            if event is not None:
                events.append(event)
        rest = chunk[pos:]
        if rest:
            if len(self._partial_head) < _HEAD_LEN:
                self._partial_head += rest[: _HEAD_LEN - len(self._partial_head)]
            self._partial.append(rest)
            self._partial_len += len(rest)
            self._check_partial()
        return events

    # -- internals ------------------------------------------------------------------------

    def _too_large(self, what: str) -> MessageTooLargeError:
        self._failed = True
        return MessageTooLargeError(
            f"SSE {what} exceeds {self.max_event_bytes} bytes",
            {"limit": self.max_event_bytes},
        )

    def _check_partial(self) -> None:
        """Bound an incomplete line now, so a never-ending line cannot exhaust memory."""
        limit = self.max_event_bytes
        if limit is None:
            return
        join = 1 if self._data else 0
        if self._partial_len <= limit and self._data_len + join + self._partial_len <= limit:
            return  # cheap exit: even the whole line, read as data, fits
        head = self._partial_head
        if len(head) < len(_DATA_PREFIX) and _DATA_PREFIX.startswith(head):
            return  # cannot tell yet (only with a tiny limit)
        if head.startswith(_DATA_PREFIX):
            value = self._partial_len - len(_DATA_PREFIX) - (head[len(_DATA_PREFIX) :] == b" ")
            if self._data_len + join + value > limit:
                raise self._too_large("event data")
        elif self._partial_len > limit:
            raise self._too_large("line")

    def _line(self, raw: bytes) -> SseEvent | None:
        line = raw.decode("utf-8", errors="replace")
        if not line:
            return self._dispatch()
        if line[0] == ":":
            self._check_line(raw)
            return None  # a comment
        name, colon, value = line.partition(":")
        if colon and value[:1] == " ":
            value = value[1:]
        if name == "data":
            # Size from the raw bytes (what the bound protects), the join LF included.
            n = len(_DATA_PREFIX)
            value_bytes = len(raw) - n - (raw[n : n + 1] == b" ") if colon else 0
            added = value_bytes + (1 if self._data else 0)
            if self.max_event_bytes is not None and self._data_len + added > self.max_event_bytes:
                raise self._too_large("event data")
            self._data.append(value)
            self._data_len += added
            return None
        self._check_line(raw)
        if name == "event":
            self._event = value
        elif name == "id":
            if "\0" not in value:  # the spec ignores ids containing NUL
                self._id = value
                self._id_buffer = value
        elif name == "retry":
            if value.isascii() and value.isdigit() and len(value.lstrip("0")) <= _MAX_RETRY_DIGITS:
                self._block_retry = int(value)
                self.retry = self._block_retry
        # Any other field name is ignored, as the spec requires.
        return None

    def _check_line(self, raw: bytes) -> None:
        if self.max_event_bytes is not None and len(raw) > self.max_event_bytes:
            raise self._too_large("line")

    def _dispatch(self) -> SseEvent | None:
        self.last_event_id = self._id_buffer or None
        if not self._data and self._id is None:
            self._reset_block()
            return None
        event = SseEvent(
            data="\n".join(self._data),
            event=self._event or None,
            id=self._id,
            retry=self._block_retry,
        )
        self._reset_block()
        return event
