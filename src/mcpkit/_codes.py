"""JSON-RPC and MCP error codes."""

from __future__ import annotations

from enum import IntEnum


class ErrorCode(IntEnum):
    """Error codes used on the wire.

    The JSON-RPC 2.0 range first, then the MCP implementation-defined ones.
    """

    PARSE_ERROR = -32700
    INVALID_REQUEST = -32600
    METHOD_NOT_FOUND = -32601
    INVALID_PARAMS = -32602
    INTERNAL_ERROR = -32603
    RESOURCE_NOT_FOUND = -32002
    SESSION_EXPIRED = -32009
    HEADER_MISMATCH = -32020
    MISSING_REQUIRED_CAPABILITY = -32021
    UNSUPPORTED_PROTOCOL_VERSION = -32022
    URL_ELICITATION_REQUIRED = -32042
