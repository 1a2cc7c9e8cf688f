"""Names from the OpenTelemetry semantic conventions for MCP that mcpkit records, and
what a request says about itself in their terms (span name, low-cardinality attributes).

Followed: the GenAI semantic conventions' MCP page, ``semantic-conventions-genai`` v0.1.0
(status: Development). Names the conventions do not define are marked as mcpkit's own.
"""

from __future__ import annotations

from typing import Any

#: The conventions these names follow.
SEMCONV_VERSION = "semantic-conventions-genai v0.1.0"

# attributes -----------------------------------------------------------------------------
MCP_METHOD_NAME = "mcp.method.name"
MCP_SESSION_ID = "mcp.session.id"
MCP_PROTOCOL_VERSION = "mcp.protocol.version"
MCP_RESOURCE_URI = "mcp.resource.uri"
GEN_AI_TOOL_NAME = "gen_ai.tool.name"
GEN_AI_PROMPT_NAME = "gen_ai.prompt.name"
GEN_AI_OPERATION_NAME = "gen_ai.operation.name"
JSONRPC_REQUEST_ID = "jsonrpc.request.id"
RPC_RESPONSE_STATUS_CODE = "rpc.response.status_code"
ERROR_TYPE = "error.type"
NETWORK_TRANSPORT = "network.transport"
NETWORK_PROTOCOL_NAME = "network.protocol.name"

#: ``error.type`` of a ``CallToolResult`` with ``isError: true`` (the conventions' value).
TOOL_ERROR = "tool_error"
#: ``error.type`` of a request the peer or the caller cancelled (mcpkit's value).
CANCELLED = "cancelled"
#: ``error.type`` of a request that got no answer in time (the conventions' example value).
TIMEOUT = "timeout"

# metrics --------------------------------------------------------------------------------
SERVER_OPERATION_DURATION = "mcp.server.operation.duration"
CLIENT_OPERATION_DURATION = "mcp.client.operation.duration"
#: mcpkit's own: sessions open now (the conventions have only a session duration).
SERVER_ACTIVE_SESSIONS = "mcp.server.session.active"
#: mcpkit's own: long-lived ``subscriptions/listen`` streams open now.
SERVER_OPEN_STREAMS = "mcp.server.stream.active"

#: The histogram buckets the conventions ask for, in seconds.
DURATION_BUCKETS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300)

#: Requests that stay open as a stream of notifications.
STREAM_METHODS = frozenset({"subscriptions/listen"})

#: The ``_meta`` keys of W3C trace context (SEP-414: unprefixed).
TRACE_CONTEXT_KEYS = ("traceparent", "tracestate", "baggage")

_RESOURCE_METHODS = frozenset({"resources/read", "resources/subscribe", "resources/unsubscribe"})


def describe(method: str, params: Any) -> tuple[str, dict[str, Any]]:
    """``(span name, attributes)`` of a request: ``tools/call get_weather``,
    ``prompts/get plan``, else the method alone (a resource URI is too many names)."""
    attributes: dict[str, Any] = {MCP_METHOD_NAME: method}
    name = method
    if type(params) is dict:
        if method == "tools/call":
            tool = params.get("name")
            attributes[GEN_AI_OPERATION_NAME] = "execute_tool"
            if type(tool) is str:
                attributes[GEN_AI_TOOL_NAME] = tool
                name = f"{method} {tool}"
        elif method == "prompts/get":
            prompt = params.get("name")
            if type(prompt) is str:
                attributes[GEN_AI_PROMPT_NAME] = prompt
                name = f"{method} {prompt}"
        elif method in _RESOURCE_METHODS:
            uri = params.get("uri")
            if type(uri) is str:
                attributes[MCP_RESOURCE_URI] = uri
    return name, attributes


#: The attributes a duration histogram keeps: the span's low-cardinality ones.
METRIC_ATTRIBUTES = (
    MCP_METHOD_NAME,
    GEN_AI_TOOL_NAME,
    GEN_AI_PROMPT_NAME,
    GEN_AI_OPERATION_NAME,
    MCP_PROTOCOL_VERSION,
    NETWORK_TRANSPORT,
    NETWORK_PROTOCOL_NAME,
    ERROR_TYPE,
    RPC_RESPONSE_STATUS_CODE,
)


def metric_attributes(attributes: dict[str, Any]) -> dict[str, Any]:
    """The subset of a span's attributes a metric point carries."""
    return {key: attributes[key] for key in METRIC_ATTRIBUTES if key in attributes}


def is_tool_error(method: str, result: Any) -> bool:
    """A ``tools/call`` answered with ``isError: true``: failed, though not in JSON-RPC."""
    return method == "tools/call" and type(result) is dict and result.get("isError") is True
