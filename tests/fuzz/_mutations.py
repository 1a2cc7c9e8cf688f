"""Mutations of valid messages, and garbage, for the live fuzzer (tests/fuzz/_inputs.py).

TODO(max_message_depth): nesting stays under 64 levels (``MAX_NEST``) until the depth bound
lands in mcpkit.protocol._jsonrpc; then let ``nested`` go deeper and expect -32600.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tests.fuzz._oracle import encode

if TYPE_CHECKING:
    from tests.fuzz._inputs import Inputs

#: Deepest nesting any input reaches (see the module docstring's TODO).
MAX_NEST = 60
#: Largest string a mutation writes; one in ten of those frames passes the 4 MiB bounds.
_HUGE = 1 << 20


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place inside ``value`` (dict keys and list indexes), outermost first."""
    out: list[tuple[Any, ...]] = []
    if isinstance(value, dict):
        items: Any = value.items()
    else:
        items = enumerate(value) if isinstance(value, list) else ()
    for key, child in items:
        out.append(prefix + (key,))
        out += _paths(child, prefix + (key,))
    return out


def _pick(inputs: Inputs, message: dict[str, Any]) -> tuple[Any, Any] | None:
    paths = _paths(message)
    if not paths:
        return None
    path = inputs.rng.choice(paths)
    parent: Any = message
    for step in path[:-1]:
        parent = parent[step]
    return parent, path[-1]


def _other_type(inputs: Inputs, value: Any) -> Any:
    options = [None, True, 0, -1, 1.5, 2**63, "", "x", [], {}, [value], {"v": value}]
    return inputs.rng.choice([o for o in options if type(o) is not type(value)] or [None])


def _drop(inputs: Inputs, message: dict[str, Any]) -> bytes:
    picked = _pick(inputs, message)
    if picked:
        parent, key = picked
        del parent[key]
    return encode(message)


def _retype(inputs: Inputs, message: dict[str, Any]) -> bytes:
    picked = _pick(inputs, message)
    if picked:
        parent, key = picked
        parent[key] = _other_type(inputs, parent[key])
    return encode(message)


def _null(inputs: Inputs, message: dict[str, Any]) -> bytes:
    picked = _pick(inputs, message)
    if picked:
        parent, key = picked
        parent[key] = None
    return encode(message)


def _duplicate_key(inputs: Inputs, message: dict[str, Any]) -> bytes:
    key = inputs.rng.choice(list(message))
    other = _other_type(inputs, message[key]) if inputs.rng.random() < 0.5 else message[key]
    first = json.dumps({key: other})[1:-1]
    body = encode(message)
    # The duplicate first or last: decoders keep the last, so both orders matter.
    if inputs.rng.random() < 0.5:
        return b"{" + first.encode() + b"," + body[1:]
    return body[:-1] + b"," + first.encode() + b"}"


_WRONG_IDS: list[Any] = [
    None,
    True,
    False,
    1.5,
    -0.0,
    [],
    {},
    [1],
    {"id": 1},
    "",
    2**64 + 1,
    -(2**63),
    "x" * 2000,
]


def _wrong_id(inputs: Inputs, message: dict[str, Any]) -> bytes:
    if inputs.sent_ids and inputs.rng.random() < 0.3:
        message["id"] = inputs.rng.choice(inputs.sent_ids)  # reused: answered again, not lost
    else:
        message["id"] = copy.deepcopy(inputs.rng.choice(_WRONG_IDS))
    return encode(message)


def _huge_string(inputs: Inputs, message: dict[str, Any]) -> bytes:
    size = inputs.rng.choice([10_000, 100_000, 440_000, _HUGE])  # a string is size/4 chars
    if inputs.rng.random() < 0.1:
        size = 5 * _HUGE
    text = inputs.rng.choice(["x", "é", "🙂", "\\", '"']) * (size // 4)
    strings = [p for p in _paths(message) if isinstance(_get(message, p), str)]
    if strings:
        path = inputs.rng.choice(strings)
        _set(message, path, text)
    else:
        message["extra"] = text
    return encode(message)


_UNICODE = ["\u0000", "\ufeff", "\u202e", "\uffff", "🙂" * 10, "e\u0301" * 5, "\U0010ffff"]


def _unicode(inputs: Inputs, message: dict[str, Any]) -> bytes:
    strings = [p for p in _paths(message) if isinstance(_get(message, p), str)]
    roll = inputs.rng.random()
    if strings and roll < 0.6:
        path = inputs.rng.choice(strings)
        _set(message, path, str(_get(message, path)) + inputs.rng.choice(_UNICODE))
        return encode(message)
    body = encode(message)
    at = body.find(b'"', 1)
    # A lone surrogate escape, or bytes that are not UTF-8, inside a string.
    bad = inputs.rng.choice([b"\\ud800", b"\\udc00x", b"\xff", b"\xc3", b"\xed\xa0\x80", b"\\u00"])
    return body[: at + 1] + bad + body[at + 1 :] if at > 0 else body + bad


def _method(inputs: Inputs, message: dict[str, Any]) -> bytes:
    method = str(message.get("method", "ping"))
    message["method"] = inputs.rng.choice(
        [method.upper(), method + " ", " " + method, method + "/x", "rpc.discover", "", "$/x"]
        + ["initialize", "notifications/initialized", "ping", "server/discover"]
    )
    return encode(message)


def _jsonrpc(inputs: Inputs, message: dict[str, Any]) -> bytes:
    message["jsonrpc"] = inputs.rng.choice(["1.0", "2", 2.0, 2, None, "2.0 ", ""])
    return encode(message)


def _params_type(inputs: Inputs, message: dict[str, Any]) -> bytes:
    message["params"] = inputs.rng.choice([[], [1, 2], "params", 7, True, [message.get("params")]])
    return encode(message)


def _nest(inputs: Inputs, message: dict[str, Any]) -> bytes:
    depth = inputs.rng.randint(2, MAX_NEST - 8)  # the message's own levels stay under 64
    value: Any = "deep"
    for _ in range(depth):
        value = [value] if inputs.rng.random() < 0.5 else {"k": value}
    params = message.setdefault("params", {})
    if isinstance(params, dict):
        params["deep"] = value
    return encode(message)


def _batch(inputs: Inputs, message: dict[str, Any]) -> bytes:
    members: list[Any] = [message, inputs.request(), inputs.notification()]
    members.append(inputs.rng.choice([1, "x", None, {}, [], {"jsonrpc": "2.0"}]))
    inputs.rng.shuffle(members)
    return encode(members[: inputs.rng.randint(1, len(members))])


def _truncate(inputs: Inputs, message: dict[str, Any]) -> bytes:
    body = encode(message)
    return body[: inputs.rng.randint(0, max(0, len(body) - 1))]


def _flip(inputs: Inputs, message: dict[str, Any]) -> bytes:
    body = bytearray(encode(message))
    for _ in range(inputs.rng.randint(1, 4)):
        at = inputs.rng.randrange(len(body))
        body[at] = inputs.rng.randrange(256) if inputs.rng.random() < 0.5 else body[at] ^ 0x20
    return bytes(body)


def _extra(inputs: Inputs, message: dict[str, Any]) -> bytes:
    for _ in range(inputs.rng.randint(1, 3)):
        message[inputs.rng.choice(["result", "error", "extra", "id2", "_meta", "params"])] = (
            inputs.gen.any_json()
        )
    return encode(message)


def _response(inputs: Inputs, message: dict[str, Any]) -> bytes:
    """A response from the client that answers nothing (unknown or missing id)."""
    rid = message.get("id")
    shape: dict[str, Any] = {"jsonrpc": "2.0"}
    if inputs.rng.random() < 0.5:
        shape["result"] = inputs.gen.any_json()
    else:
        shape["error"] = {"code": inputs.rng.choice([-32603, 0, 7]), "message": "fuzz"}
    if inputs.rng.random() < 0.7 and rid is not None:
        shape["id"] = rid
    return encode(shape)


def _get(message: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        message = message[step]
    return message


def _set(message: Any, path: tuple[Any, ...], value: Any) -> None:
    _get(message, path[:-1])[path[-1]] = value


Mutation = Callable[["Inputs", dict[str, Any]], bytes]
MUTATIONS: list[tuple[str, Mutation]] = [
    ("drop-field", _drop),
    ("retype-field", _retype),
    ("null-field", _null),
    ("duplicate-key", _duplicate_key),
    ("wrong-id", _wrong_id),
    ("huge-string", _huge_string),
    ("unicode", _unicode),
    ("method", _method),
    ("jsonrpc-version", _jsonrpc),
    ("params-type", _params_type),
    ("nested", _nest),
    ("batch", _batch),
    ("truncated", _truncate),
    ("bit-flip", _flip),
    ("extra-members", _extra),
    ("stray-response", _response),
]


# --------------------------------------------------------------------------- garbage


def _random_bytes(inputs: Inputs) -> bytes:
    return bytes(inputs.rng.randrange(256) for _ in range(inputs.rng.randint(1, 200)))


def _random_json(inputs: Inputs) -> bytes:
    return encode(inputs.gen.any_json())


_TOKENS = ["{", "}", "[", "]", ",", ":", '"', '"jsonrpc"', '"2.0"', '"id"', "1", '"method"']
_TOKENS += ["null", "true", "-", "0e", "\\", " ", "1e999", "NaN"]


def _token_soup(inputs: Inputs) -> bytes:
    return "".join(inputs.rng.choice(_TOKENS) for _ in range(inputs.rng.randint(1, 40))).encode()


def _blank(inputs: Inputs) -> bytes:
    return inputs.rng.choice([b" ", b"\t", b"\r", b"\x0b", b"\x00", b"\xef\xbb\xbf{}", b"[]"])


GARBAGE: list[tuple[str, Callable[[Inputs], bytes]]] = [
    ("random-bytes", _random_bytes),
    ("random-json", _random_json),
    ("token-soup", _token_soup),
    ("blank", _blank),
]
