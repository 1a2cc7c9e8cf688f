"""Sans-I/O protocol layer: JSON-RPC messages and codec, MCP types, versions, error codes,
framing, SSE and URI templates. Nothing here does I/O."""

from mcpkit._codes import ErrorCode
from mcpkit.protocol._jsonrpc import (
    DEFAULT_MAX_MESSAGE_BYTES,
    JsonRpcErrorResponse,
    JsonRpcMessage,
    JsonRpcNotification,
    JsonRpcRequest,
    JsonRpcResponse,
    RequestId,
    decode_message,
    encode_message,
    parse_message,
)
from mcpkit.protocol._sse import SseDecoder, SseEvent
from mcpkit.protocol._versions import (
    HANDSHAKE_VERSIONS,
    LATEST_HANDSHAKE_VERSION,
    LATEST_VERSION,
    MODERN_VERSIONS,
    SUPPORTED_VERSIONS,
    Era,
    era_of,
    negotiate_version,
)

__all__ = [
    "DEFAULT_MAX_MESSAGE_BYTES",
    "HANDSHAKE_VERSIONS",
    "LATEST_HANDSHAKE_VERSION",
    "LATEST_VERSION",
    "MODERN_VERSIONS",
    "SUPPORTED_VERSIONS",
    "Era",
    "ErrorCode",
    "JsonRpcErrorResponse",
    "JsonRpcMessage",
    "JsonRpcNotification",
    "JsonRpcRequest",
    "JsonRpcResponse",
    "RequestId",
    "SseDecoder",
    "SseEvent",
    "decode_message",
    "encode_message",
    "era_of",
    "negotiate_version",
    "parse_message",
]
