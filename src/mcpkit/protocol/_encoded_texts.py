"""Large texts escaped once: a long string that comes back in another answer (the same
object, or an equal one: a document held in memory, a file read again, a memoised tool's
result) reuses its JSON encoding instead of being escaped again.

Escaping is what a large answer costs: ~0.45 ns a character for text with quotes, tabs and
line breaks to escape, several times what writing its bytes to a socket costs. A kept
encoding goes into the answer as ``msgspec.Raw``, copied, not escaped.

Nothing changes for answers without long strings: the encoder's own call, and one length
test of what it made. Only once an answer's body reached ``min_chars`` are later answers
walked (a bounded walk of their dicts and lists) for strings of that length.

A string is kept on its second sighting, recognised by its length and three samples of its
characters, and used only when it is the kept string or equal to it (one ``memcmp``), so an
answer is always byte for byte what the encoder alone makes. The kept encodings, with their
strings, stay under ``max_bytes``; the least recently used goes first.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import Any

import msgspec

#: Strings shorter than this are escaped each time (microseconds; not worth an entry).
MIN_KEPT_TEXT_CHARS = 64 * 1024
#: Bound on the bytes held by kept encodings and their strings; 0 keeps none.
MAX_KEPT_TEXT_BYTES = 32 * 1024 * 1024
#: Bound on strings seen once and remembered (by fingerprint only) until seen again.
MAX_SEEN_TEXTS = 64
#: Dict members and list items visited per answer looking for long strings.
MAX_WALK_NODES = 256
#: Answers walked in a row without a long string before the walks stop (a long body seen
#: again starts them): a rare large answer does not tax every small one after it.
MAX_IDLE_WALKS = 256
#: Characters sampled at the start, middle and end of a string for its fingerprint.
_SAMPLE = 64

_Fingerprint = tuple[int, str, str, str]


def _fingerprint(text: str) -> _Fingerprint:
    middle = len(text) // 2
    return (len(text), text[:_SAMPLE], text[middle : middle + _SAMPLE], text[-_SAMPLE:])


class EncodedTexts:
    """The encoder of answers, keeping the encodings of long strings that come back."""

    def __init__(
        self,
        encode: Callable[[Any], bytes],
        *,
        min_chars: int = MIN_KEPT_TEXT_CHARS,
        max_bytes: int = MAX_KEPT_TEXT_BYTES,
    ) -> None:
        self._encode = encode
        self.min_chars = min_chars
        self._max_bytes = max_bytes
        #: fingerprint -> (string, its encoding, bytes held), oldest use first.
        self._kept: dict[_Fingerprint, tuple[str, msgspec.Raw, int]] = {}
        self._kept_bytes = 0
        self._seen: dict[_Fingerprint, None] = {}
        self._idle = 0
        self._lock = threading.Lock()
        #: Whether answers are walked: set once a body reached ``min_chars``.
        self.active = False

    @property
    def kept_bytes(self) -> int:
        """Bytes held now by kept encodings and their strings."""
        return self._kept_bytes

    @property
    def max_bytes(self) -> int:
        """The bound on ``kept_bytes``. Lowered, the least recently used entries go at once;
        0 keeps nothing and stops the walks."""
        return self._max_bytes

    @max_bytes.setter
    def max_bytes(self, value: int) -> None:
        with self._lock:
            self._max_bytes = value
            self._evict(0)
            if value <= 0:
                self._seen.clear()
                self.active = False

    def encode(self, value: Any) -> bytes:
        """``value`` as JSON bytes, exactly as the encoder makes them."""
        if self.active:
            if self._holds_long_text(value):
                self._idle = 0
                return self._encode(self._swap(value, [MAX_WALK_NODES]))
            self._idle += 1
            if self._idle >= MAX_IDLE_WALKS:
                self.active = False  # until a body reaches min_chars again
            return self._encode(value)
        body = self._encode(value)
        if len(body) >= self.min_chars:
            self.long_body()
        return body

    def long_body(self) -> None:
        """A body of ``min_chars`` or more was made (here, or by the encoder itself on a hot
        path that tests ``active`` first): answers are walked from now on."""
        if self._max_bytes > 0:
            self.active = True
            self._idle = 0

    def _holds_long_text(self, value: Any) -> bool:
        """Whether a string of ``min_chars`` or more is among the first ``MAX_WALK_NODES``
        members and items of ``value`` (the walk of every answer while active: kept flat)."""
        if type(value) not in _CONTAINERS:
            return type(value) is str and len(value) >= self.min_chars
        min_chars = self.min_chars
        budget = MAX_WALK_NODES
        stack = [value]
        while stack:
            node = stack.pop()
            for item in node.values() if type(node) is dict else node:
                kind = type(item)
                if kind is str:
                    if len(item) >= min_chars:
                        return True
                elif kind is dict or kind is list:
                    stack.append(item)
                budget -= 1
                if budget <= 0:
                    return False
        return False

    def clear(self) -> None:
        """Forget every kept encoding and sighting; answers are no longer walked."""
        with self._lock:
            self._kept.clear()
            self._seen.clear()
            self._kept_bytes = 0
            self.active = False

    def _swap(self, value: Any, budget: list[int]) -> Any:
        """``value``, with the long strings whose encoding is kept in it as ``Raw``: the
        containers on their way copied, ``value`` itself never changed."""
        kind = type(value)
        if kind is str:
            return self._raw(value) if len(value) >= self.min_chars else value
        if kind is not dict and kind is not list:
            return value
        copied: Any = None
        for key, item in value.items() if kind is dict else enumerate(value):
            budget[0] -= 1
            if budget[0] < 0:
                break
            if type(item) in _WALKED:
                swapped = self._swap(item, budget)
                if swapped is not item:
                    if copied is None:
                        copied = kind(value)
                    copied[key] = swapped
        return value if copied is None else copied

    def _raw(self, text: str) -> Any:
        """The kept encoding of ``text`` as ``Raw``; ``text`` itself when there is none yet
        (its first sighting is remembered, its second makes the entry)."""
        fingerprint = _fingerprint(text)
        entry = self._kept.get(fingerprint)
        if entry is not None and (entry[0] is text or entry[0] == text):
            with self._lock:
                if self._kept.pop(fingerprint, None) is not None:
                    self._kept[fingerprint] = entry  # now the most recently used
            return entry[1]
        if sys.getsizeof(text) + len(text) > self._max_bytes:
            return text  # could not be kept: escaped with the rest, as it always was
        with self._lock:
            if self._seen.pop(fingerprint, _UNSEEN) is _UNSEEN:
                if len(self._seen) >= MAX_SEEN_TEXTS:
                    self._seen.pop(next(iter(self._seen)))
                self._seen[fingerprint] = None
                return text
            encoded = self._encode(text)
            size = sys.getsizeof(text) + len(encoded)
            raw = msgspec.Raw(encoded)
            if size <= self._max_bytes:
                self._keep(fingerprint, (text, raw, size))
            return raw

    def _keep(self, fingerprint: _Fingerprint, entry: tuple[str, msgspec.Raw, int]) -> None:
        # Under the lock.
        old = self._kept.pop(fingerprint, None)
        if old is not None:
            self._kept_bytes -= old[2]
        self._evict(entry[2])
        self._kept[fingerprint] = entry
        self._kept_bytes += entry[2]

    def _evict(self, room: int) -> None:
        """Drop the least recently used entries until ``room`` more bytes fit (under the
        lock)."""
        while self._kept and self._kept_bytes + room > self._max_bytes:
            self._kept_bytes -= self._kept.pop(next(iter(self._kept)))[2]


_WALKED = frozenset((str, dict, list))
_CONTAINERS = frozenset((dict, list))
_UNSEEN = object()
