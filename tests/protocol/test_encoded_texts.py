"""Long strings escaped once (``_encoded_texts``): every answer is byte for byte what
msgspec alone makes, whatever was kept before; a long string that comes back (the same
object or an equal one) is escaped once; what is kept stays under its bound; a value is
never changed; small answers stop being walked."""

from __future__ import annotations

import random
import threading
from typing import Any

import msgspec
import pytest

from mcpkit.protocol import _encoded_texts
from mcpkit.protocol._encoded_texts import EncodedTexts
from mcpkit.protocol._jsonrpc import encode_message, encoded_texts
from mcpkit.transports.http._asgi import json_response

MIN = 4096
plain = msgspec.json.Encoder().encode


class Recording:
    """msgspec's encoder, recording every long string it had to escape itself."""

    def __init__(self) -> None:
        self.escaped: list[int] = []

    def __call__(self, value: Any) -> bytes:
        self._note(value)
        return plain(value)

    def _note(self, value: Any) -> None:
        if type(value) is str and len(value) >= MIN:
            self.escaped.append(len(value))
        elif type(value) is dict:
            for item in value.values():
                self._note(item)
        elif type(value) is list:
            for item in value:
                self._note(item)


def answer(text: str, request_id: int = 1) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "result": {"content": [{"type": "text", "text": text}]},
    }


def text_of(size: int, seed: int) -> str:
    """A text with everything JSON escapes: quotes, backslashes, tabs, line breaks, other
    controls, non-ASCII (two to four bytes in UTF-8), U+2028."""
    rng = random.Random(seed)
    alphabet = 'abc "\\\t\n\r\x00\x1f é€😀\u2028xyz'
    return "".join(rng.choice(alphabet) for _ in range(size))


def test_every_answer_is_what_the_encoder_alone_makes():
    recording = Recording()
    texts = EncodedTexts(recording, min_chars=MIN)
    text = text_of(3 * MIN, seed=1)
    bodies = [texts.encode(answer(text, n)) for n in range(6)]
    assert bodies == [plain(answer(text, n)) for n in range(6)]
    # Seen in the first answer's body, noted in the second, kept in the third: escaped
    # three times (the third alone), then never again.
    assert recording.escaped == [len(text)] * 3
    assert texts.kept_bytes > len(text)


def test_an_equal_string_uses_the_kept_encoding():
    recording = Recording()
    texts = EncodedTexts(recording, min_chars=MIN)
    text = text_of(2 * MIN, seed=2)
    for _ in range(3):
        texts.encode(answer(text))
    escaped = len(recording.escaped)
    copy = "".join([text[:10], text[10:]])  # equal, another object
    assert copy is not text
    assert texts.encode(answer(copy)) == plain(answer(copy))
    assert len(recording.escaped) == escaped


def test_a_value_is_never_changed():
    texts = EncodedTexts(plain, min_chars=MIN)
    text = text_of(MIN, seed=3)
    values = [answer(text) for _ in range(4)]
    for value in values:
        texts.encode(value)
    for value in values:
        assert value == answer(text)
        assert type(value["result"]["content"][0]["text"]) is str


def test_strings_alike_in_their_samples_are_told_apart():
    """Same length, same start, middle and end: the fingerprint agrees, the content does
    not. Each answer still carries its own string."""
    texts = EncodedTexts(plain, min_chars=MIN)
    base = text_of(4 * MIN, seed=4)
    quarter = len(base) // 4
    first = base[:quarter] + "A" + base[quarter + 1 :]
    second = base[:quarter] + "B" + base[quarter + 1 :]
    order = [first, second, first, first, second, second, first, second] * 3
    for n, text in enumerate(order):
        assert texts.encode(answer(text, n)) == plain(answer(text, n))


@pytest.mark.parametrize("where", ["structured", "resource", "nested list"])
def test_long_strings_anywhere_in_an_answer(where):
    recording = Recording()
    texts = EncodedTexts(recording, min_chars=MIN)
    text = text_of(MIN, seed=5)
    shapes = {
        "structured": {"result": {"structuredContent": {"report": text}, "content": []}},
        "resource": {"result": {"contents": [{"uri": "a://b", "text": text, "mimeType": "x"}]}},
        "nested list": {"result": [[["short", text]], {"k": [text]}]},
    }
    value = shapes[where]
    for _ in range(5):
        assert texts.encode(value) == plain(value)
    assert len(recording.escaped) < 5 * (2 if where == "nested list" else 1)


def test_what_is_kept_stays_under_its_bound():
    one = text_of(MIN, seed=6)
    bound = 2 * (len(one) * 4 + len(plain(one))) + 1024  # about two entries
    texts = EncodedTexts(plain, min_chars=MIN, max_bytes=bound)
    strings = [text_of(MIN, seed=10 + n) for n in range(5)]
    for _ in range(4):
        for text in strings:
            assert texts.encode(answer(text)) == plain(answer(text))
            assert 0 <= texts.kept_bytes <= bound


def test_a_string_past_the_bound_is_escaped_each_time():
    recording = Recording()
    text = text_of(MIN, seed=7)
    texts = EncodedTexts(recording, min_chars=MIN, max_bytes=len(text))
    for _ in range(4):
        assert texts.encode(answer(text)) == plain(answer(text))
    assert recording.escaped == [len(text)] * 4 and texts.kept_bytes == 0


def test_a_lowered_bound_drops_entries_at_once_and_zero_keeps_none():
    recording = Recording()
    texts = EncodedTexts(recording, min_chars=MIN)
    strings = [text_of(MIN, seed=30 + n) for n in range(3)]
    for _ in range(3):
        for text in strings:
            texts.encode(answer(text))
    full = texts.kept_bytes
    texts.max_bytes = full - 1
    assert 0 < texts.kept_bytes <= full - 1
    texts.max_bytes = 0
    assert texts.kept_bytes == 0 and not texts.active
    escaped = len(recording.escaped)
    for _ in range(3):
        assert texts.encode(answer(strings[0])) == plain(answer(strings[0]))
    assert len(recording.escaped) == escaped + 3 and texts.kept_bytes == 0


def test_small_answers_stop_being_walked(monkeypatch):
    monkeypatch.setattr(_encoded_texts, "MAX_IDLE_WALKS", 8)
    texts = EncodedTexts(plain, min_chars=MIN)
    texts.encode(answer(text_of(MIN, seed=8)))
    assert texts.active
    for n in range(7):
        texts.encode(answer("small", n))
    assert texts.active
    texts.encode(answer("small"))
    assert not texts.active
    texts.encode(answer(text_of(MIN, seed=8)))  # a long body again
    assert texts.active


def test_a_wide_answer_is_walked_within_its_bound():
    texts = EncodedTexts(plain, min_chars=MIN)
    text = text_of(MIN, seed=9)
    wide = {"result": {"items": [str(n) for n in range(20_000)] + [text]}}
    for _ in range(4):
        assert texts.encode(wide) == plain(wide)


def test_threads_encoding_at_once_get_their_own_answers():
    texts = EncodedTexts(plain, min_chars=MIN, max_bytes=6 * MIN * 5)
    strings = [text_of(MIN, seed=20 + n) for n in range(6)]
    expected = [plain(answer(text)) for text in strings]
    wrong: list[int] = []

    def run(offset: int) -> None:
        for n in range(120):
            index = (n + offset) % len(strings)
            if texts.encode(answer(strings[index])) != expected[index]:
                wrong.append(index)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert wrong == []
    assert texts.kept_bytes <= 6 * MIN * 5


def test_messages_and_json_answers_keep_long_texts_and_clear():
    """The shared encoder: messages (``encode_message``: stdio, SSE events) and JSON
    answers over HTTP (``json_response``, which tests ``active`` itself) share it."""
    encoded_texts.clear()
    try:
        text = text_of(encoded_texts.min_chars, seed=11)
        for n in range(3):
            assert encode_message(answer(text, n)) == plain(answer(text, n))
            _, body = json_response(200, answer(text, n))
            assert body["body"] == plain(answer(text, n))
        assert encoded_texts.kept_bytes > len(text)
    finally:
        encoded_texts.clear()
    assert encoded_texts.kept_bytes == 0 and not encoded_texts.active
