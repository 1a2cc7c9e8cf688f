"""JSON-RPC 2.0 messages and their codec (sans-I/O).

``decode_message`` turns one frame of bytes into a message or a batch; ``encode_message``
turns a message into bytes. Nothing here reads a socket or knows a transport.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from types import FrameType
from typing import Any, Literal, TypeGuard

import msgspec

from mcpkit._exceptions import (
    InvalidRequestError,
    MessageTooDeepError,
    MessageTooLargeError,
    ParseError,
)

#: A JSON-RPC request id.
RequestId = str | int

#: Default bound on one decoded frame (a line on stdio, a POST body, a WebSocket message).
DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024
#: Default bound on how deeply one decoded frame nests arrays and objects, the message object
#: itself counting 1 (a batch's array adds one). The MCP schemas' deepest definition nests 10
#: levels, so a ``tools/list`` result carrying it as a tool's ``inputSchema`` nests 15.
DEFAULT_MAX_MESSAGE_DEPTH = 64

_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder()


class JsonRpcRequest(msgspec.Struct, eq=False):
    """A request: expects exactly one response with the same id.

    The message classes are msgspec Structs for the cost of making one (one per message,
    in C), not to be encoded as they are: ``to_dict`` gives the wire form. Equality is
    identity, as for any plain object."""

    id: RequestId
    method: str
    params: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The message as a JSON-RPC dict."""
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": self.id, "method": self.method}
        if self.params is not None:
            msg["params"] = self.params
        return msg

    def __repr__(self) -> str:
        return f"JsonRpcRequest(id={self.id!r}, method={self.method!r})"


class _Call(msgspec.Struct, forbid_unknown_fields=True):
    """A request or notification as ``decode_message`` first reads a frame: every member's
    type checked by msgspec in C, no dict made of the top level. A member absent, of another
    type or unknown (a response, a bad frame) sends the frame to the general path. Unknown
    members are refused rather than skipped: msgspec skips a member without reading it, and
    the general path must see the whole frame (a key that is not UTF-8 is a parse error)."""

    jsonrpc: Literal["2.0"] | msgspec.UnsetType = msgspec.UNSET
    id: RequestId | msgspec.UnsetType = msgspec.UNSET
    method: str | msgspec.UnsetType = msgspec.UNSET
    params: dict[str, Any] | None = None


_call_decoder = msgspec.json.Decoder(_Call)


class JsonRpcNotification(msgspec.Struct, eq=False):
    """A one-way message: no id, no response."""

    method: str
    params: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The message as a JSON-RPC dict."""
        msg: dict[str, Any] = {"jsonrpc": "2.0", "method": self.method}
        if self.params is not None:
            msg["params"] = self.params
        return msg

    def __repr__(self) -> str:
        return f"JsonRpcNotification(method={self.method!r})"


class JsonRpcResponse(msgspec.Struct, eq=False):
    """A successful answer to a request."""

    id: RequestId
    result: Any

    def to_dict(self) -> dict[str, Any]:
        """The message as a JSON-RPC dict."""
        return {"jsonrpc": "2.0", "id": self.id, "result": self.result}

    def __repr__(self) -> str:
        return f"JsonRpcResponse(id={self.id!r})"


class JsonRpcErrorResponse(msgspec.Struct, eq=False):
    """A failed answer; ``id`` is None when the request's id could not be read."""

    id: RequestId | None
    error: dict[str, Any]

    @property
    def code(self) -> int:
        """The error's JSON-RPC code."""
        return int(self.error.get("code", 0))

    def to_dict(self) -> dict[str, Any]:
        # As error_response(): no id member at all when it is unknown, never null.
        """The message as a JSON-RPC dict (no ``id`` member when the id is unknown)."""
        if self.id is None:
            return {"jsonrpc": "2.0", "error": self.error}
        return {"jsonrpc": "2.0", "id": self.id, "error": self.error}

    def __repr__(self) -> str:
        return f"JsonRpcErrorResponse(id={self.id!r}, code={self.code})"


#: Any one JSON-RPC message, as ``decode_message`` returns it.
JsonRpcMessage = JsonRpcRequest | JsonRpcNotification | JsonRpcResponse | JsonRpcErrorResponse


def _valid_id(value: object) -> TypeGuard[RequestId]:
    # MCP: "RequestId = string | number" and never null; booleans are not numbers here.
    return isinstance(value, (str, int)) and not isinstance(value, bool)


def _invalid(reason: str, request_id: RequestId | None = None) -> InvalidRequestError:
    err = InvalidRequestError(f"Invalid request: {reason}")
    err.request_id = request_id  # type: ignore[attr-defined]
    return err


def parse_message(obj: object) -> JsonRpcMessage:
    """Classify one decoded JSON value as a JSON-RPC message.

    Raises ``InvalidRequestError`` (with ``request_id`` set when the id was readable).
    """
    if type(obj) is not dict:
        raise _invalid("a message must be a JSON object")
    if obj.get("jsonrpc") != "2.0":
        rid = obj.get("id")
        raise _invalid('"jsonrpc" must be "2.0"', rid if _valid_id(rid) else None)
    method = obj.get("method")
    if method is not None:
        return _parse_call(obj, method)
    rid = obj.get("id")
    if "result" in obj:  # a result answers one request: its id must be readable
        if not _valid_id(rid):
            raise _invalid("a response id must be a string or an integer")
        return JsonRpcResponse(rid, obj["result"])
    readable = rid if _valid_id(rid) else None
    error = obj.get("error")
    # An error may answer a request whose id could not be read: its id is then absent (the
    # 2025-11-25 schema) or null (JSON-RPC 2.0). The code is an integer: JSON true is not.
    if type(error) is dict and type(error.get("code")) is int:
        return JsonRpcErrorResponse(readable, error)
    if "id" not in obj:
        raise _invalid("neither a request, a notification nor a response")
    raise _invalid("a response needs a result or an error object", readable)


def _parse_call(obj: dict[str, Any], method: object) -> JsonRpcRequest | JsonRpcNotification:
    has_id = "id" in obj
    rid = obj.get("id")
    if has_id and not _valid_id(rid):
        raise _invalid("the id must be a string or an integer")
    if not isinstance(method, str):
        raise _invalid('"method" must be a string', rid if has_id else None)
    params = obj.get("params")
    if params is not None and type(params) is not dict:
        raise _invalid('"params" must be an object', rid if has_id else None)
    if has_id:
        return JsonRpcRequest(rid, method, params)  # type: ignore[arg-type]  # _valid_id checked it
    return JsonRpcNotification(method, params)


def _check_openers(data: bytes | str, obj: Any, max_depth: int) -> None:
    """Nesting past ``max_depth`` takes more than ``max_depth`` openers (and as many
    closers): most frames stop at their length (the caller's test), the rest at one C-speed
    count of their openers; only a frame with more openers gets the exact walk."""
    if _too_many_openers(data, max_depth):
        _check_depth(data, obj, max_depth)


def _too_many_openers(data: bytes | str, max_depth: int) -> bool:
    """Whether ``data`` holds more than ``max_depth`` openers (``[`` and ``{``): only then
    may it nest deeper than that."""
    if type(data) is bytes:
        openers = data.count(b"{")
        # Most requests hold no array: one scan instead of a count. ``in`` with the byte's
        # value is a bare memchr, a fifth of find()'s cost.
        if 91 in data:  # b"["
            openers += data.count(b"[")
    else:
        openers = data.count("[") + data.count("{")  # type: ignore[arg-type]  # str
    return openers > max_depth


def decode_json(
    data: bytes | str,
    *,
    max_bytes: int | None = DEFAULT_MAX_MESSAGE_BYTES,
    max_depth: int | None = DEFAULT_MAX_MESSAGE_DEPTH,
) -> Any:
    """Decode one frame of JSON, enforcing the size and depth bounds.

    Raises ``ParseError``, ``MessageTooLargeError`` or ``MessageTooDeepError`` (whose
    ``request_id`` is the frame's id when it could be read). With ``max_depth=None`` a frame
    is still refused, never a ``RecursionError``, when it nests too deeply to decode at all.
    """
    size = len(data)
    if max_bytes is not None and size > max_bytes:
        raise MessageTooLargeError(f"Message of {size} bytes exceeds the limit of {max_bytes}")
    try:
        obj = _decoder.decode(data)
    except msgspec.DecodeError as exc:
        raise ParseError(f"Parse error: {exc}") from None
    except RecursionError:  # deeper than msgspec goes (about 1,000 levels)
        raise _undecodable(data, max_depth) from None
    if max_depth is not None and size > 2 * max_depth:
        _check_openers(data, obj, max_depth)
    return obj


def decode_message(
    data: bytes | str,
    *,
    max_bytes: int | None = DEFAULT_MAX_MESSAGE_BYTES,
    max_depth: int | None = DEFAULT_MAX_MESSAGE_DEPTH,
    requests_first: bool = True,
) -> JsonRpcMessage | list[JsonRpcMessage | InvalidRequestError]:
    """Decode one frame into a message, or a batch (a list) when the frame is a JSON array.

    A batch keeps its invalid members as ``InvalidRequestError`` items so that each gets its
    own error reply. Raises ``ParseError``, ``MessageTooLargeError`` (``MessageTooDeepError``
    past ``max_depth``) or ``InvalidRequestError``. ``requests_first``: the frame is tried as
    a request first (a server's usual frame); a client, whose frames are mostly responses,
    passes False.
    """
    # decode_json(), inline: every message
    size = len(data)
    if max_bytes is not None and size > max_bytes:
        raise MessageTooLargeError(f"Message of {size} bytes exceeds the limit of {max_bytes}")
    # The usual frame, a well-formed request or notification, read with its members' types
    # checked in C and no dict made of the top level. Any other (a response, a batch, a bad
    # or too deep frame) is decoded again below, where each gets its own answer.
    if requests_first:
        try:
            call = _call_decoder.decode(data)
        except (msgspec.DecodeError, RecursionError):
            pass
        else:
            named = call.method
            if (
                named is not msgspec.UNSET
                and call.jsonrpc is not msgspec.UNSET
                and (
                    max_depth is None
                    or size <= 2 * max_depth
                    or not _too_many_openers(data, max_depth)
                    or not nests_deeper(data, max_depth)
                )
            ):
                if call.id is msgspec.UNSET:
                    return JsonRpcNotification(named, call.params)
                return JsonRpcRequest(call.id, named, call.params)
    try:
        obj = _decoder.decode(data)
    except msgspec.DecodeError as exc:
        raise _unreadable(exc, data) from None
    except RecursionError:
        raise _undecodable(data, max_depth) from None
    if max_depth is not None and size > 2 * max_depth:
        _check_openers(data, obj, max_depth)
    if type(obj) is dict:
        # The common cases, a well-formed request or notification, checked inline;
        # parse_message does the rest.
        method = obj.get("method")
        params = obj.get("params")
        if (
            type(method) is str
            and (params is None or type(params) is dict)
            and obj.get("jsonrpc") == "2.0"
        ):
            rid = obj.get("id")
            if type(rid) is int or type(rid) is str:
                return JsonRpcRequest(rid, method, params)
            if rid is None and "id" not in obj:
                return JsonRpcNotification(method, params)
        return parse_message(obj)
    if type(obj) is list:
        if not obj:
            raise _invalid("an empty batch")
        items: list[JsonRpcMessage | InvalidRequestError] = []
        for member in obj:
            try:
                items.append(parse_message(member))
            except InvalidRequestError as exc:
                items.append(exc)
        return items
    return parse_message(obj)


#: Every byte but quotes and brackets (deleted by ``nests_deeper``), and ``{}`` as ``[]``.
_NOT_MARKS = bytes(b for b in range(256) if b not in b'"[]{}')
_SQUARE = bytes.maketrans(b"{}", b"[]")


def nests_deeper(data: bytes | str, limit: int) -> bool:
    """Whether the JSON text ``data`` (valid JSON) nests arrays and objects more than
    ``limit`` levels deep.

    C-speed steps, no parsing: escaped backslashes and quotes go, then every byte but quotes
    and brackets; strings without brackets are then adjacent quote pairs (dropped), the rare
    rest is cut out between quotes. Each pass over the brackets left removes the innermost
    ``[]`` pairs, one nesting level."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    if b"\\" in raw and b'\\"' in raw:  # without an escaped quote, every quote is a delimiter
        raw = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    # Dropping two adjacent quotes never moves a bracket into or out of a string.
    marks = raw.translate(_SQUARE, _NOT_MARKS).replace(b'""', b"")
    if b'"' in marks:
        marks = b"".join(marks.split(b'"')[::2])
    if b"[" * (limit + 1) in marks:  # a chain of openers: found at once, however long
        return True
    for level in range(limit):
        if len(marks) <= 2 * (limit - level):  # n pairs nest at most n deep
            return False
        marks = marks.replace(b"[]", b"")
    return bool(marks)


#: A JSON string, or one bracket: the tokens ``_peek_id`` walks.
_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]')
#: What follows a key ``"id"``: the colon, then an integer or a string.
_ID_VALUE = re.compile(rb'\s*:\s*(-?[0-9]+|"(?:[^"\\]|\\.)*")')
#: Tokens ``_peek_id`` looks at before giving up.
_ID_SCAN_TOKENS = 4096


def _peek_id(data: bytes | str) -> RequestId | None:
    """The top-level ``id`` of a frame too deep to decode, when it comes early enough."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    depth = 0
    for count, token in enumerate(_TOKEN.finditer(raw)):
        if count >= _ID_SCAN_TOKENS:
            break
        first = token.group()[:1]
        if first == b'"':
            if depth == 1 and token.group() == b'"id"':
                value = _ID_VALUE.match(raw, token.end())
                if value is not None:
                    try:
                        rid = _decoder.decode(value.group(1))
                    except msgspec.DecodeError:
                        return None
                    return rid if _valid_id(rid) else None
        elif first in b"[{":
            if depth == 0 and first == b"[":
                return None  # a batch: no single id
            depth += 1
        else:
            depth -= 1
    return None


def _check_depth(data: bytes | str, obj: Any, limit: int) -> None:
    """Refuse the decoded frame ``data`` (``obj``) if it nests deeper than ``limit``."""
    if nests_deeper(data, limit):
        rid = obj.get("id") if type(obj) is dict else None
        raise _too_deep(limit, rid if _valid_id(rid) else None)


def _unreadable(exc: msgspec.DecodeError, data: bytes | str) -> ParseError:
    """The parse error of a frame the decoder cannot read. One that is JSON but for a number
    no float or int holds (``1e400``, thousands of digits) carries its id, when that can be
    read: its request is answered, not left to its client's timeout."""
    err = ParseError(f"Parse error: {exc}")
    if "out of range" in str(exc):
        err.request_id = _peek_id(data)  # type: ignore[attr-defined]
    return err


def _undecodable(data: bytes | str, limit: int | None) -> MessageTooDeepError:
    """The refusal of a frame too deep for the decoder itself (its ``RecursionError``)."""
    if limit is not None and limit < _decoder_reach():
        return _too_deep(limit, _peek_id(data))  # deeper than the decoder goes: than limit too
    within = limit is None or not nests_deeper(data, limit)
    return _too_deep(None if within else limit, _peek_id(data))


def _decoder_reach() -> int:
    """Levels the decoder surely goes down from here before its ``RecursionError``: what is
    left of the recursion limit below this frame, halved for safety."""
    depth = 0
    frame: FrameType | None = sys._getframe()
    while frame is not None:
        depth += 1
        frame = frame.f_back
    return (sys.getrecursionlimit() - depth) // 2


def _too_deep(limit: int | None, request_id: RequestId | None) -> MessageTooDeepError:
    if limit is None:
        err = MessageTooDeepError("Invalid request: the message nests too deeply to decode")
    else:
        err = MessageTooDeepError(
            f"Invalid request: the message nests deeper than the limit of {limit} levels"
            " (max_message_depth)"
        )
    err.request_id = request_id  # type: ignore[attr-defined]
    return err


#: Serialize any JSON value with the shared encoder (its bound method: no Python frame
#: around the C call, on every answer).
encode_json: Callable[[Any], bytes] = _encoder.encode


def encode_message(message: JsonRpcMessage | dict[str, Any] | list[dict[str, Any]]) -> bytes:
    """Serialize a message, an already-built message dict, or a batch of them to JSON bytes."""
    if isinstance(message, (dict, list)):
        return encode_json(message)
    return encode_json(message.to_dict())


def error_response(request_id: RequestId | None, exc: Any) -> dict[str, Any]:
    """The wire dict of an error reply for a ``ProtocolError``.

    Without a readable request id the ``id`` member is left out, as the 2025-11-25 schema
    allows (``JSONRPCErrorResponse.id`` is optional there and never null).
    """
    if request_id is None:
        return {"jsonrpc": "2.0", "error": exc.to_error()}
    return {"jsonrpc": "2.0", "id": request_id, "error": exc.to_error()}


def result_response(request_id: RequestId, result: dict[str, Any]) -> dict[str, Any]:
    """The wire dict of a successful reply."""
    return {"jsonrpc": "2.0", "id": request_id, "result": result}
