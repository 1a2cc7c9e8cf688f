"""``ctx.set_state`` / ``ctx.get_state`` / ``ctx.delete_state``: values a tool keeps for the
calls after it, with FastMCP's semantics.

Where a value lives:

- **A handshake-era session** (stdio, in memory, WebSocket, legacy SSE, a Streamable HTTP
  session): the session's, seen by its later requests (tools, resources, prompts) and by no
  other session; freed when the session ends (``lifecycle.close_connection``).
- **No session to keep it** (a 2026-07-28 request, stateless HTTP, a tasks-extension task,
  a session that has ended): the request's own, gone when the call returns. FastMCP does the
  same: its state is keyed by a session id that is new for every 2026-07-28 request.
- **This process only.** Sessions shared through a store (Redis) share no state: a request
  served by another instance, or after this instance dropped its copy of the session, sees
  none. FastMCP's default store (``MemoryStore``) is in-process too.

Values are kept as JSON (msgspec, pydantic models by ``model_dump``): ``get_state`` returns
a fresh copy, tuples come back as lists, as from FastMCP's store; anything else raises
``TypeError``. ``serializable=False`` keeps the object itself, for the current request only,
in front of the session's value under that key.

Bounded: at most ``max_keys`` keys and ``max_bytes`` bytes (keys and JSON values) per session
or request, ``StateLimitError`` past either (``app.session_state`` holds the bounds).

Nothing is made until a tool stores something: a session has no entry here and a context no
dict of its own before its first ``set_state``.
"""

from __future__ import annotations

from typing import Any

import msgspec

from mcpkit._exceptions import StateLimitError
from mcpkit.server._schema.engines import _enc_hook

#: Keys one session's state (or one request's) may hold.
DEFAULT_MAX_STATE_KEYS = 1000
#: Bytes one session's state (or one request's) may hold: its keys and its values as JSON.
DEFAULT_MAX_STATE_BYTES = 1024 * 1024


def check_key(key: Any) -> None:
    """``TypeError`` unless ``key`` is a str."""
    if type(key) is not str:
        raise TypeError(f"a state key is a str, not {type(key).__name__}")


def too_many_keys(max_keys: int, key: str) -> StateLimitError:
    """The refusal of a new ``key`` in a state holding ``max_keys`` keys already."""
    return StateLimitError(
        f"state is full: at most {max_keys} keys (app.session_state.max_keys); "
        f"delete_state() one before setting {key!r}"
    )


def encode_state(key: str, value: Any) -> bytes:
    """``value`` as the JSON kept under ``key``; ``TypeError`` for what is no JSON (with
    FastMCP's hint)."""
    check_key(key)
    try:
        return msgspec.json.encode(value, enc_hook=_enc_hook)
    except (TypeError, ValueError, NotImplementedError, RecursionError) as exc:
        raise TypeError(
            f"Value for state key {key!r} is not serializable ({exc}). Use "
            f"set_state({key!r}, value, serializable=False) to keep it for this request only."
        ) from exc


def decode_state(raw: bytes | None) -> Any:
    """A fresh copy of a kept value; None for none."""
    return None if raw is None else msgspec.json.decode(raw)


class StateBag:
    """One session's (or request's) state: the JSON of each key, and their size in all."""

    __slots__ = ("size", "values")

    def __init__(self) -> None:
        self.values: dict[str, bytes] = {}
        self.size = 0

    def put(self, key: str, raw: bytes, max_keys: int, max_bytes: int) -> None:
        """Keep ``raw`` under ``key``; ``StateLimitError`` (and nothing kept) past a bound."""
        old = self.values.get(key)
        cost = len(key.encode()) + len(raw)
        size = self.size + cost
        if old is None:
            if len(self.values) >= max_keys:
                raise too_many_keys(max_keys, key)
        else:
            size -= len(key.encode()) + len(old)
        if size > max_bytes:
            raise StateLimitError(
                f"state is full: {key!r} would take it to {size} bytes, past {max_bytes} "
                "(app.session_state.max_bytes: keys and values as JSON)"
            )
        self.values[key] = raw
        self.size = size

    def pop(self, key: str) -> None:
        raw = self.values.pop(key, None)
        if raw is not None:
            self.size -= len(key.encode()) + len(raw)


class SessionStates:
    """The state of each session of one app that stored any (``app.session_state``), by
    session key, and the bounds every state of the app keeps to."""

    def __init__(
        self, *, max_keys: int = DEFAULT_MAX_STATE_KEYS, max_bytes: int = DEFAULT_MAX_STATE_BYTES
    ) -> None:
        #: Keys one session's (or request's) state may hold.
        self.max_keys = max_keys
        #: Bytes one session's (or request's) state may hold, keys and JSON values.
        self.max_bytes = max_bytes
        self._bags: dict[str, StateBag] = {}

    def __len__(self) -> int:
        """Sessions holding state now."""
        return len(self._bags)

    def get(self, session_key: str) -> StateBag | None:
        """The state of a session; None when it has stored nothing."""
        return self._bags.get(session_key)

    def put(self, session_key: str, key: str, raw: bytes) -> None:
        """Keep ``raw`` under ``key`` in a session's state (made on its first value)."""
        bag = self._bags.get(session_key)
        if bag is None:
            bag = StateBag()
            bag.put(key, raw, self.max_keys, self.max_bytes)
            self._bags[session_key] = bag
        else:
            bag.put(key, raw, self.max_keys, self.max_bytes)

    def forget(self, session_key: str) -> None:
        """Free a session's state (it ended)."""
        self._bags.pop(session_key, None)


#: Each app's ``SessionStates``, by its dispatcher: what a call's context holds.
__all__ = [
    "DEFAULT_MAX_STATE_BYTES",
    "DEFAULT_MAX_STATE_KEYS",
    "SessionStates",
    "StateBag",
    "check_key",
    "decode_state",
    "encode_state",
    "too_many_keys",
]
