"""JSON-RPC 2.0 messages and their codec (sans-I/O).

``decode_message`` turns one frame of bytes into a message or a batch; ``encode_message``
turns a message into bytes. Nothing here reads a socket or knows a transport.
"""

from __future__ import annotations

from typing import Any, TypeGuard

import msgspec

from mcpkit._exceptions import InvalidRequestError, MessageTooLargeError, ParseError

RequestId = str | int

#: Default bound on one decoded frame (a line on stdio, a POST body, a WebSocket message).
DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024

_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder()


class JsonRpcRequest:
    """A request: expects exactly one response with the same id."""

    __slots__ = ("id", "method", "params")

    def __init__(self, id: RequestId, method: str, params: dict[str, Any] | None = None) -> None:
        self.id = id
        self.method = method
        self.params = params

    def to_dict(self) -> dict[str, Any]:
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": self.id, "method": self.method}
        if self.params is not None:
            msg["params"] = self.params
        return msg

    def __repr__(self) -> str:
        return f"JsonRpcRequest(id={self.id!r}, method={self.method!r})"


class JsonRpcNotification:
    """A one-way message: no id, no response."""

    __slots__ = ("method", "params")

    def __init__(self, method: str, params: dict[str, Any] | None = None) -> None:
        self.method = method
        self.params = params

    def to_dict(self) -> dict[str, Any]:
        msg: dict[str, Any] = {"jsonrpc": "2.0", "method": self.method}
        if self.params is not None:
            msg["params"] = self.params
        return msg

    def __repr__(self) -> str:
        return f"JsonRpcNotification(method={self.method!r})"


class JsonRpcResponse:
    """A successful answer to a request."""

    __slots__ = ("id", "result")

    def __init__(self, id: RequestId, result: Any) -> None:
        self.id = id
        self.result = result

    def to_dict(self) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": self.id, "result": self.result}

    def __repr__(self) -> str:
        return f"JsonRpcResponse(id={self.id!r})"


class JsonRpcErrorResponse:
    """A failed answer; ``id`` is None when the request's id could not be read."""

    __slots__ = ("error", "id")

    def __init__(self, id: RequestId | None, error: dict[str, Any]) -> None:
        self.id = id
        self.error = error

    @property
    def code(self) -> int:
        return int(self.error.get("code", 0))

    def to_dict(self) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": self.id, "error": self.error}

    def __repr__(self) -> str:
        return f"JsonRpcErrorResponse(id={self.id!r}, code={self.code})"


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
    if "id" not in obj:
        raise _invalid("neither a request, a notification nor a response")
    rid = obj["id"]
    if "result" in obj:
        result = obj["result"]
        if not _valid_id(rid):
            raise _invalid("a response id must be a string or an integer")
        return JsonRpcResponse(rid, result)
    error = obj.get("error")
    if isinstance(error, dict) and isinstance(error.get("code"), int):
        return JsonRpcErrorResponse(rid if _valid_id(rid) else None, error)
    raise _invalid("a response needs a result or an error object", rid if _valid_id(rid) else None)


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


def decode_json(data: bytes | str, *, max_bytes: int | None = DEFAULT_MAX_MESSAGE_BYTES) -> Any:
    """Decode one frame of JSON, enforcing the size bound. Raises ``ParseError``."""
    if max_bytes is not None and len(data) > max_bytes:
        raise MessageTooLargeError(f"Message of {len(data)} bytes exceeds the limit of {max_bytes}")
    try:
        return _decoder.decode(data)
    except msgspec.DecodeError as exc:
        raise ParseError(f"Parse error: {exc}") from None


def decode_message(
    data: bytes | str, *, max_bytes: int | None = DEFAULT_MAX_MESSAGE_BYTES
) -> JsonRpcMessage | list[JsonRpcMessage | InvalidRequestError]:
    """Decode one frame into a message, or a batch (a list) when the frame is a JSON array.

    A batch keeps its invalid members as ``InvalidRequestError`` items so that each gets its
    own error reply. Raises ``ParseError``, ``MessageTooLargeError`` or ``InvalidRequestError``.
    """
    obj = decode_json(data, max_bytes=max_bytes)
    if type(obj) is dict:
        # The common case, a well-formed request, checked inline; parse_message does the rest.
        method = obj.get("method")
        rid = obj.get("id")
        params = obj.get("params")
        if (
            type(method) is str
            and (type(rid) is int or type(rid) is str)
            and (params is None or type(params) is dict)
            and obj.get("jsonrpc") == "2.0"
        ):
            return JsonRpcRequest(rid, method, params)
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


def encode_message(message: JsonRpcMessage | dict[str, Any] | list[dict[str, Any]]) -> bytes:
    """Serialize a message, an already-built message dict, or a batch of them to JSON bytes."""
    if isinstance(message, (dict, list)):
        return _encoder.encode(message)
    return _encoder.encode(message.to_dict())


def encode_json(value: Any) -> bytes:
    """Serialize any JSON value with the shared encoder."""
    return _encoder.encode(value)


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
