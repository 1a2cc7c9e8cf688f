"""Property tests of the JSON-RPC codec (mcpkit.protocol._jsonrpc): every message comes back
from its bytes unchanged, and any other frame is refused with the error of its kind.

The kinds (JSON-RPC 2.0 section 5.1): bytes that are not JSON are a ``ParseError`` (-32700);
JSON that is not a message is an ``InvalidRequestError`` (-32600), carrying the request id
when it could be read; a frame past ``max_bytes`` is a ``MessageTooLargeError``. Nothing else
may escape ``decode_message``.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from mcpkit._exceptions import (
    InvalidRequestError,
    MessageTooLargeError,
    ParseError,
    ProtocolError,
)
from mcpkit.protocol._jsonrpc import (
    JsonRpcErrorResponse,
    JsonRpcMessage,
    JsonRpcNotification,
    JsonRpcRequest,
    JsonRpcResponse,
    decode_message,
    encode_message,
    error_response,
)
from tests.fuzz._oracle import classify
from tests.protocol._budget import fuzz_settings

# --------------------------------------------------------------------------- strategies

# Any text JSON can carry: every code point but the lone surrogates UTF-8 cannot encode.
_text = st.text(st.characters(codec="utf-8"), max_size=20)
# msgspec decodes integers of 64 bits (signed or unsigned) exactly.
_ints = st.integers(min_value=-(2**63), max_value=2**64 - 1)
_scalars = (
    st.none() | st.booleans() | _ints | st.floats(allow_nan=False, allow_infinity=False) | _text
)
# TODO(max_message_depth): nesting is kept shallow (max_leaves bounds it well under 64) until
# the depth bound lands; then add frames nested past DEFAULT_MAX_MESSAGE_DEPTH and expect
# MessageTooDeepError for them.
_json = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_text, inner, max_size=4),
    max_leaves=12,
)
_objects = st.dictionaries(_text, _json, max_size=5)
_ids = _ints | _text
_error_objects = st.fixed_dictionaries(
    {"code": st.integers(min_value=-(2**31), max_value=2**31 - 1), "message": _text},
    optional={"data": _json},
)

_messages: st.SearchStrategy[JsonRpcMessage] = st.one_of(
    st.builds(JsonRpcRequest, _ids, _text, st.none() | _objects),
    st.builds(JsonRpcNotification, _text, st.none() | _objects),
    st.builds(JsonRpcResponse, _ids, _json),
    st.builds(JsonRpcErrorResponse, _ids, _error_objects),
)


def _wire(message: Any) -> bytes:
    """Canonical bytes, for comparing values type for type (``1 == 1.0 == True`` in Python)."""
    return msgspec.json.encode(message.to_dict() if hasattr(message, "to_dict") else message)


# --------------------------------------------------------------------------- round trip


@given(_messages)
@fuzz_settings
def test_decoding_an_encoded_message_gives_it_back(message: JsonRpcMessage) -> None:
    data = encode_message(message)
    decoded = decode_message(data)
    assert type(decoded) is type(message)
    assert _wire(decoded) == _wire(message)
    # A str frame (what a WebSocket text message is) decodes the same as its bytes.
    assert _wire(decode_message(data.decode())) == _wire(message)
    # The dict form encodes to the same bytes as the message object.
    assert encode_message(message.to_dict()) == data


@given(st.lists(_messages, min_size=1, max_size=5))
@fuzz_settings
def test_decoding_an_encoded_batch_gives_each_member_back(messages: list[JsonRpcMessage]) -> None:
    decoded = decode_message(encode_message([m.to_dict() for m in messages]))
    assert isinstance(decoded, list)
    assert [type(m) for m in decoded] == [type(m) for m in messages]
    assert [_wire(m) for m in decoded] == [_wire(m) for m in messages]


@given(st.none() | _ids, _error_objects)
@fuzz_settings
@example(None, {"code": -32700, "message": "Parse error"})
def test_error_replies_the_codec_builds_decode_as_error_responses(
    request_id: Any, error: dict[str, Any]
) -> None:
    # error_response leaves "id" out when it is unknown, as the 2025-11-25 schema allows
    # (JSONRPCErrorResponse.id is optional); the decoder must read that shape back, or a
    # peer answers an error response with an Invalid Request of its own.
    reply = error_response(request_id, ProtocolError(error["message"], code=error["code"]))
    decoded = decode_message(encode_message(reply))
    assert isinstance(decoded, JsonRpcErrorResponse)
    assert decoded.id == request_id
    assert decoded.code == error["code"]


# --------------------------------------------------------------------------- classification

# Values that sit near the rules: right and wrong types for each member.
_member_values = st.one_of(
    st.sampled_from(["2.0", "1.0", "2", 2.0, 2, True, False, None, "", "ping", "tools/call"]),
    st.integers(min_value=-3, max_value=3),
    st.floats(allow_nan=False, allow_infinity=False),
    _text,
    st.lists(_scalars, max_size=2),
    st.dictionaries(st.sampled_from(["code", "message", "data", "x"]), _json, max_size=3),
    st.fixed_dictionaries({"code": st.integers(-32800, 0) | st.booleans(), "message": _text}),
)
_members = st.dictionaries(
    st.sampled_from(["id", "method", "params", "result", "error", "extra"]),
    _member_values,
    max_size=5,
)
# Mostly with the right "jsonrpc", so that the other members' rules are reached.
_candidate_messages = st.one_of(
    _members.map(lambda d: {"jsonrpc": "2.0", **d}),
    _members.map(lambda d: {"jsonrpc": "2.0", **d}),
    st.builds(lambda v, d: {"jsonrpc": v, **d}, _member_values, _members),
    _members,
)


_KINDS: dict[type, str] = {
    JsonRpcRequest: "request",
    JsonRpcNotification: "notification",
    JsonRpcResponse: "response",
    JsonRpcErrorResponse: "error",
}


def _actual(item: JsonRpcMessage | InvalidRequestError) -> tuple[str, Any]:
    if isinstance(item, InvalidRequestError):
        return "invalid", getattr(item, "request_id", None)
    return _KINDS[type(item)], getattr(item, "id", None)


def _classify(data: bytes) -> tuple[str, Any]:
    try:
        decoded = decode_message(data)
    except InvalidRequestError as exc:
        return _actual(exc)
    assert not isinstance(decoded, list)
    return _actual(decoded)


@given(_candidate_messages)
@fuzz_settings
@example({"jsonrpc": "2.0", "id": 1, "error": {"code": True, "message": "x"}})
@example({"jsonrpc": "2.0", "error": {"code": -32600, "message": "no id"}})
def test_every_json_object_is_classified_as_json_rpc_says(obj: dict[str, Any]) -> None:
    assert _classify(msgspec.json.encode(obj)) == classify(obj)


@given(st.lists(_candidate_messages | _json, max_size=5))
@fuzz_settings
def test_a_batch_keeps_each_member_verdict_and_an_empty_one_is_invalid(
    members: list[Any],
) -> None:
    data = msgspec.json.encode(members)
    if not members:
        with pytest.raises(InvalidRequestError):
            decode_message(data)
        return
    decoded = decode_message(data)
    assert isinstance(decoded, list)
    assert [_actual(item) for item in decoded] == [classify(m) for m in members]


@given(_scalars)
@fuzz_settings
def test_a_json_scalar_is_an_invalid_request_without_id(value: Any) -> None:
    with pytest.raises(InvalidRequestError) as info:
        decode_message(msgspec.json.encode(value))
    assert type(info.value) is InvalidRequestError
    assert getattr(info.value, "request_id", None) is None
    assert info.value.to_error()["code"] == -32600


# --------------------------------------------------------------------------- garbage


def _strict_json(data: bytes) -> bool:
    """Whether ``data`` is JSON (RFC 8259) that msgspec must decode: UTF-8, no NaN/Infinity,
    finite numbers, no lone surrogate escapes."""
    try:
        text = data.decode("utf-8")
        value = json.loads(text, parse_constant=_refuse)
    except (ValueError, RecursionError):
        return False
    return _in_range(value)


def _refuse(name: str) -> None:
    raise ValueError(name)


def _in_range(value: Any) -> bool:
    if isinstance(value, bool) or value is None:
        return True
    if isinstance(value, int):
        return True  # both give up at the same 4,300 digits (Python's int-from-text bound)
    if isinstance(value, float):
        return value not in (float("inf"), float("-inf"))
    if isinstance(value, str):
        return not any(0xD800 <= ord(c) <= 0xDFFF for c in value)
    if isinstance(value, list):
        return all(_in_range(v) for v in value)
    return all(_in_range(k) and _in_range(v) for k, v in value.items())


def _mangle(data: bytes, edits: list[tuple[int, int, bytes]]) -> bytes:
    out = bytearray(data)
    for position, cut, insert in edits:
        at = position % (len(out) + 1)
        out[at : at + cut] = insert
    return bytes(out)


_edits = st.lists(
    st.tuples(
        st.integers(min_value=0, max_value=1000),
        st.integers(min_value=0, max_value=3),
        st.binary(max_size=3)
        | st.sampled_from([b'"', b"{", b"}", b"[", b"]", b",", b":", b"\\", b"\\u", b"\xff"]),
    ),
    min_size=1,
    max_size=4,
)


@given(st.binary(max_size=200) | st.builds(_mangle, _messages.map(encode_message), _edits))
@fuzz_settings
@example(b"")
@example(b"\xef\xbb\xbf{}")
@example(b'{"jsonrpc": "2.0", "id": 1, "method": ')
@example(b'"\\ud800"')
@example(b"1e400")
@example(b"NaN")
def test_any_bytes_decode_or_are_refused_with_the_error_of_their_kind(data: bytes) -> None:
    try:
        decoded = decode_message(data)
    except ParseError as exc:
        assert exc.to_error()["code"] == -32700
        assert not _strict_json(data), "valid JSON refused as a parse error"
        return
    except InvalidRequestError as exc:
        assert exc.to_error()["code"] == -32600
        assert _strict_json(data), "a parse error reported as an invalid request"
        return
    assert _strict_json(data)
    for item in decoded if isinstance(decoded, list) else [decoded]:
        assert isinstance(item, (*_KINDS, InvalidRequestError))


@given(_messages, st.integers(min_value=-2, max_value=2))
@fuzz_settings
def test_the_size_bound_holds_right_up_to_the_boundary(message: JsonRpcMessage, off: int) -> None:
    data = encode_message(message)
    limit = len(data) + off
    if limit < len(data):
        with pytest.raises(MessageTooLargeError) as info:
            decode_message(data, max_bytes=limit)
        assert info.value.to_error()["code"] == -32600
    else:
        assert _wire(decode_message(data, max_bytes=limit)) == _wire(message)
    assert _wire(decode_message(data, max_bytes=None)) == _wire(message)
