# Generated from schema.json (sha256 ef70b61f99b6d2e5e3b46863822eab08dff6a45bedc7a08914e0e5b133f40203) — do not edit.
# MCP specification 2026-07-28; regenerate with `python tools/gen_types.py`.
# ruff: noqa: E501
"""MCP 2026-07-28 protocol types as msgspec Structs, generated from its schema."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import msgspec

__all__ = [
    "Annotations",
    "AudioContent",
    "BaseMetadata",
    "BlobResourceContents",
    "BooleanSchema",
    "CacheableResult",
    "CallToolRequest",
    "CallToolRequestParams",
    "CallToolResult",
    "CallToolResultResponse",
    "CancelledNotification",
    "CancelledNotificationParams",
    "ClientCapabilities",
    "ClientCapabilitiesElicitation",
    "ClientCapabilitiesSampling",
    "ClientNotification",
    "ClientRequest",
    "ClientResult",
    "CompleteRequest",
    "CompleteRequestParams",
    "CompleteRequestParamsArgument",
    "CompleteRequestParamsContext",
    "CompleteResult",
    "CompleteResultCompletion",
    "CompleteResultResponse",
    "ContentBlock",
    "CreateMessageRequest",
    "CreateMessageRequestParams",
    "CreateMessageResult",
    "Cursor",
    "DiscoverRequest",
    "DiscoverResult",
    "DiscoverResultResponse",
    "ElicitRequest",
    "ElicitRequestFormParams",
    "ElicitRequestParams",
    "ElicitRequestURLParams",
    "ElicitResult",
    "EmbeddedResource",
    "EmptyResult",
    "EnumSchema",
    "Error",
    "GetPromptRequest",
    "GetPromptRequestParams",
    "GetPromptResult",
    "GetPromptResultResponse",
    "HeaderMismatchError",
    "HeaderMismatchErrorError",
    "Icon",
    "Icons",
    "ImageContent",
    "Implementation",
    "InputRequest",
    "InputRequests",
    "InputRequiredResult",
    "InputResponse",
    "InputResponseRequestParams",
    "InputResponses",
    "InternalError",
    "InvalidParamsError",
    "InvalidRequestError",
    "JSONArray",
    "JSONObject",
    "JSONRPCErrorResponse",
    "JSONRPCMessage",
    "JSONRPCNotification",
    "JSONRPCRequest",
    "JSONRPCResponse",
    "JSONRPCResultResponse",
    "JSONValue",
    "LegacyTitledEnumSchema",
    "ListPromptsRequest",
    "ListPromptsResult",
    "ListPromptsResultResponse",
    "ListResourceTemplatesRequest",
    "ListResourceTemplatesResult",
    "ListResourceTemplatesResultResponse",
    "ListResourcesRequest",
    "ListResourcesResult",
    "ListResourcesResultResponse",
    "ListRootsRequest",
    "ListRootsRequestParams",
    "ListRootsResult",
    "ListToolsRequest",
    "ListToolsResult",
    "ListToolsResultResponse",
    "LoggingLevel",
    "LoggingMessageNotification",
    "LoggingMessageNotificationParams",
    "MetaObject",
    "MethodNotFoundError",
    "MissingRequiredClientCapabilityError",
    "MissingRequiredClientCapabilityErrorError",
    "MissingRequiredClientCapabilityErrorErrorData",
    "ModelHint",
    "ModelPreferences",
    "MultiSelectEnumSchema",
    "Notification",
    "NotificationMetaObject",
    "NotificationParams",
    "NumberSchema",
    "PaginatedRequest",
    "PaginatedRequestParams",
    "PaginatedResult",
    "ParseError",
    "PrimitiveSchemaDefinition",
    "ProgressNotification",
    "ProgressNotificationParams",
    "ProgressToken",
    "Prompt",
    "PromptArgument",
    "PromptListChangedNotification",
    "PromptMessage",
    "PromptReference",
    "ReadResourceRequest",
    "ReadResourceRequestParams",
    "ReadResourceResult",
    "ReadResourceResultResponse",
    "Request",
    "RequestId",
    "RequestMetaObject",
    "RequestParams",
    "Resource",
    "ResourceContents",
    "ResourceLink",
    "ResourceListChangedNotification",
    "ResourceRequestParams",
    "ResourceTemplate",
    "ResourceTemplateReference",
    "ResourceUpdatedNotification",
    "ResourceUpdatedNotificationParams",
    "Result",
    "ResultMetaObject",
    "ResultType",
    "Role",
    "Root",
    "SamplingMessage",
    "SamplingMessageContentBlock",
    "ServerCapabilities",
    "ServerCapabilitiesPrompts",
    "ServerCapabilitiesResources",
    "ServerCapabilitiesTools",
    "ServerNotification",
    "ServerResult",
    "SingleSelectEnumSchema",
    "StringSchema",
    "SubscriptionFilter",
    "SubscriptionsAcknowledgedNotification",
    "SubscriptionsAcknowledgedNotificationParams",
    "SubscriptionsListenRequest",
    "SubscriptionsListenRequestParams",
    "SubscriptionsListenResult",
    "SubscriptionsListenResultMetaObject",
    "SubscriptionsListenResultResponse",
    "TextContent",
    "TextResourceContents",
    "TitledMultiSelectEnumSchema",
    "TitledMultiSelectEnumSchemaItems",
    "TitledMultiSelectEnumSchemaItemsAnyOfItem",
    "TitledSingleSelectEnumSchema",
    "TitledSingleSelectEnumSchemaOneOfItem",
    "Tool",
    "ToolAnnotations",
    "ToolChoice",
    "ToolListChangedNotification",
    "ToolResultContent",
    "ToolUseContent",
    "UnsupportedProtocolVersionError",
    "UnsupportedProtocolVersionErrorError",
    "UnsupportedProtocolVersionErrorErrorData",
    "UntitledMultiSelectEnumSchema",
    "UntitledMultiSelectEnumSchemaItems",
    "UntitledSingleSelectEnumSchema",
]


#: An opaque token used to represent a cursor for pagination.
Cursor = str


#: The parameters for a request to elicit additional information from the user via the client.
ElicitRequestParams = dict[str, Any]


EnumSchema = dict[str, Any]


InputResponse = dict[str, Any]


#: A map of client responses to server-initiated requests. Keys correspond to the keys in the
#: InputRequests map; values are the client's result for each request.
InputResponses = dict[str, InputResponse]


JSONValue = Any


JSONArray = list[JSONValue]


JSONObject = dict[str, Any]


#: Refers to any valid JSON-RPC object that can be decoded off the wire, or encoded to be sent.
JSONRPCMessage = dict[str, Any]


#: A response to a request, containing either the result or error.
JSONRPCResponse = dict[str, Any]


#: The severity of a log message.
LoggingLevel = Literal["alert", "critical", "debug", "emergency", "error", "info", "notice", "warning"]


#: Represents the contents of a `_meta` field, which clients and servers use to attach additional
#: metadata to their interactions.
MetaObject = dict[str, Any]


MultiSelectEnumSchema = dict[str, Any]


#: Restricted schema definitions that only allow primitive types without nested objects or
#: arrays.
PrimitiveSchemaDefinition = dict[str, Any]


#: A progress token, used to associate progress notifications with the original request.
ProgressToken = str | int


#: A uniquely identifying ID for a request in JSON-RPC.
RequestId = str | int


#: Indicates the type of a Result object, allowing the client to determine how to parse the
#: response.
ResultType = str


#: The sender or recipient of messages and data in a conversation.
Role = Literal["assistant", "user"]


ServerResult = dict[str, Any]


SingleSelectEnumSchema = dict[str, Any]


class Annotations(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"last_modified": "lastModified"},
):
    """Optional annotations for the client. The client can use annotations to inform how objects are
    used or displayed
    """
    #: Describes who the intended audience of this object or data is.
    audience: list[Role] | None = None
    #: The moment the resource was last modified, as an ISO 8601 formatted string.
    last_modified: str | None = None
    #: Describes how important this data is for operating the server.
    priority: int | float | None = None


class AudioContent(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="type",
    tag="audio",
    rename={"meta": "_meta", "mime_type": "mimeType"},
):
    """Audio provided to or from an LLM."""
    #: The base64-encoded audio data.
    data: str
    #: The MIME type of the audio. Different providers may support different audio types.
    mime_type: str
    type: ClassVar[Literal["audio"]] = "audio"
    meta: dict[str, Any] | None = None
    #: Optional annotations for the client.
    annotations: Annotations | None = None


class BaseMetadata(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Base interface for metadata with name (identifier) and title (display name) properties."""
    #: Intended for programmatic or logical use, but used as a display name in past specs or
    #: fallback (if title isn't present).
    name: str
    #: Intended for UI and end-user contexts — optimized to be human-readable and easily
    #: understood, even by those unfamiliar with domain-specific terminology.
    title: str | None = None


class BlobResourceContents(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta", "mime_type": "mimeType"},
):
    #: A base64-encoded string representing the binary data of the item.
    blob: str
    #: The URI of this resource.
    uri: str
    meta: dict[str, Any] | None = None
    #: The MIME type of this resource, if known.
    mime_type: str | None = None


class BooleanSchema(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="type",
    tag="boolean",
):
    type: ClassVar[Literal["boolean"]] = "boolean"
    default: bool | None = None
    description: str | None = None
    title: str | None = None


class CacheableResult(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={
        "meta": "_meta",
        "cache_scope": "cacheScope",
        "result_type": "resultType",
        "ttl_ms": "ttlMs",
    },
):
    """A result that supports a time-to-live (TTL) hint for client-side caching."""
    #: Indicates the intended scope of the cached response, analogous to HTTP `Cache-Control:
    #: public` vs `Cache-Control: private`.
    cache_scope: Literal["private", "public"]
    #: Indicates the type of the result, which allows the client to determine how to parse
    #: the result object.
    result_type: str
    #: A hint from the server indicating how long (in milliseconds) the client MAY cache this
    #: response before re-fetching. Semantics are analogous to HTTP Cache-Control max-age.
    ttl_ms: int
    meta: dict[str, Any] | None = None


class CallToolRequest(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="method",
    tag="tools/call",
):
    """Used by the client to invoke a tool provided by the server."""
    id: RequestId
    jsonrpc: Literal["2.0"]
    method: ClassVar[Literal["tools/call"]] = "tools/call"
    params: CallToolRequestParams


class CallToolRequestParams(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta", "input_responses": "inputResponses", "request_state": "requestState"},
):
    """Parameters for a `tools/call` request."""
    meta: dict[str, Any]
    #: The name of the tool.
    name: str
    #: Arguments to use for the tool call.
    arguments: dict[str, Any] | None = None
    input_responses: InputResponses | None = None
    request_state: str | None = None


class CallToolResult(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={
        "meta": "_meta",
        "is_error": "isError",
        "result_type": "resultType",
        "structured_content": "structuredContent",
    },
):
    """The result returned by the server for a CallToolRequesttools/call request."""
    #: A list of content objects that represent the unstructured result of the tool call.
    content: list[ContentBlock]
    #: Indicates the type of the result, which allows the client to determine how to parse
    #: the result object.
    result_type: str
    meta: dict[str, Any] | None = None
    #: Whether the tool call ended in an error.
    is_error: bool | None = None
    #: An optional JSON value that represents the structured result of the tool call.
    structured_content: Any = None


class CallToolResultResponse(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A successful response from the server for a CallToolRequesttools/call request."""
    id: RequestId
    jsonrpc: Literal["2.0"]
    result: dict[str, Any]


class CancelledNotification(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="method",
    tag="notifications/cancelled",
):
    """This notification is sent by the client to indicate that it is cancelling a request it
    previously issued.

    On stdio, the server also sends this notification, solely to terminate a
    SubscriptionsListenRequestsubscriptions/listen stream: it references the ID of the
    `subscriptions/listen` request that opened the stream. Servers MUST NOT use this notification to
    cancel any other request.

    The request SHOULD still be in-flight, but due to communication latency, it is always possible
    that this notification MAY arrive after the request has already finished.

    This notification indicates that the result will be unused, so any associated processing SHOULD
    cease.
    """
    jsonrpc: Literal["2.0"]
    method: ClassVar[Literal["notifications/cancelled"]] = "notifications/cancelled"
    params: CancelledNotificationParams


class CancelledNotificationParams(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta", "request_id": "requestId"},
):
    """Parameters for a `notifications/cancelled` notification."""
    #: The ID of the request to cancel.
    request_id: RequestId
    meta: dict[str, Any] | None = None
    #: An optional string describing the reason for the cancellation. This MAY be logged or
    #: presented to the user.
    reason: str | None = None


class ClientCapabilitiesElicitation(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Present if the client supports elicitation from the server."""
    form: JSONObject | None = None
    url: JSONObject | None = None


class ClientCapabilitiesSampling(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Present if the client supports sampling from an LLM."""
    #: Whether the client supports context inclusion via `includeContext` parameter. If not
    #: declared, servers SHOULD only use `includeContext: "none"` (or omit it).
    context: JSONObject | None = None
    #: Whether the client supports tool use via `tools` and `toolChoice` parameters.
    tools: JSONObject | None = None


class ClientCapabilities(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Capabilities a client may support. Known capabilities are defined here, in this schema, but
    this is not a closed set: any client can define its own, additional capabilities.
    """
    #: Present if the client supports elicitation from the server.
    elicitation: ClientCapabilitiesElicitation | None = None
    #: Experimental, non-standard capabilities that the client supports.
    experimental: dict[str, JSONObject] | None = None
    #: Optional MCP extensions that the client supports. Keys are extension identifiers
    #: (e.g., "io.modelcontextprotocol/oauth-client-credentials"), and values are per-
    #: extension settings objects. An empty object indicates support with no settings.
    extensions: dict[str, JSONObject] | None = None
    #: Present if the client supports listing roots.
    roots: dict[str, Any] | None = None
    #: Present if the client supports sampling from an LLM.
    sampling: ClientCapabilitiesSampling | None = None


class ClientNotification(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="method",
    tag="notifications/cancelled",
):
    """This notification is sent by the client to indicate that it is cancelling a request it
    previously issued.

    On stdio, the server also sends this notification, solely to terminate a
    SubscriptionsListenRequestsubscriptions/listen stream: it references the ID of the
    `subscriptions/listen` request that opened the stream. Servers MUST NOT use this notification to
    cancel any other request.

    The request SHOULD still be in-flight, but due to communication latency, it is always possible
    that this notification MAY arrive after the request has already finished.

    This notification indicates that the result will be unused, so any associated processing SHOULD
    cease.
    """
    jsonrpc: Literal["2.0"]
    method: ClassVar[Literal["notifications/cancelled"]] = "notifications/cancelled"
    params: CancelledNotificationParams


class CompleteRequest(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="method",
    tag="completion/complete",
):
    """A request from the client to the server, to ask for completion options."""
    id: RequestId
    jsonrpc: Literal["2.0"]
    method: ClassVar[Literal["completion/complete"]] = "completion/complete"
    params: CompleteRequestParams


class CompleteRequestParamsArgument(msgspec.Struct, kw_only=True, omit_defaults=True):
    """The argument's information"""
    #: The name of the argument
    name: str
    #: The value of the argument to use for completion matching.
    value: str


class CompleteRequestParamsContext(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Additional, optional context for completions"""
    #: Previously-resolved variables in a URI template or prompt.
    arguments: dict[str, str] | None = None


class CompleteRequestParams(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta"},
):
    """Parameters for a `completion/complete` request."""
    meta: dict[str, Any]
    #: The argument's information
    argument: CompleteRequestParamsArgument
    ref: PromptReference | ResourceTemplateReference
    #: Additional, optional context for completions
    context: CompleteRequestParamsContext | None = None


class CompleteResultCompletion(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"has_more": "hasMore"},
):
    #: An array of completion values. Must not exceed 100 items.
    values: list[str]
    #: Indicates whether there are additional completion options beyond those provided in the
    #: current response, even if the exact total is unknown.
    has_more: bool | None = None
    #: The total number of completion options available. This can exceed the number of values
    #: actually sent in the response.
    total: int | None = None


class CompleteResult(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta", "result_type": "resultType"},
):
    """The result returned by the server for a CompleteRequestcompletion/complete request."""
    completion: CompleteResultCompletion
    #: Indicates the type of the result, which allows the client to determine how to parse
    #: the result object.
    result_type: str
    meta: dict[str, Any] | None = None


class CompleteResultResponse(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A successful response from the server for a CompleteRequestcompletion/complete request."""
    id: RequestId
    jsonrpc: Literal["2.0"]
    result: CompleteResult


class CreateMessageRequest(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="method",
    tag="sampling/createMessage",
):
    """A request from the server to sample an LLM via the client. The client has full discretion
    over which model to select. The client should also inform the user before beginning sampling, to
    allow them to inspect the request (human in the loop) and decide whether to approve it.
    """
    method: ClassVar[Literal["sampling/createMessage"]] = "sampling/createMessage"
    params: CreateMessageRequestParams


class CreateMessageRequestParams(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={
        "include_context": "includeContext",
        "max_tokens": "maxTokens",
        "model_preferences": "modelPreferences",
        "stop_sequences": "stopSequences",
        "system_prompt": "systemPrompt",
        "tool_choice": "toolChoice",
    },
):
    """Parameters for a `sampling/createMessage` request."""
    #: The requested maximum number of tokens to sample (to prevent runaway completions).
    max_tokens: int
    messages: list[SamplingMessage]
    #: A request to include context from one or more MCP servers (including the caller), to
    #: be attached to the prompt. The client MAY ignore this request.
    include_context: Literal["allServers", "none", "thisServer"] | None = None
    #: Optional metadata to pass through to the LLM provider. The format of this metadata is
    #: provider-specific.
    metadata: JSONObject | None = None
    #: The server's preferences for which model to select. The client MAY ignore these
    #: preferences.
    model_preferences: ModelPreferences | None = None
    stop_sequences: list[str] | None = None
    #: An optional system prompt the server wants to use for sampling. The client MAY modify
    #: or omit this prompt.
    system_prompt: str | None = None
    temperature: int | float | None = None
    #: Controls how the model uses tools. The client MUST return an error if this field is
    #: provided but ClientCapabilities.sampling.tools is not declared. Default is `{ mode:
    #: "auto" }`.
    tool_choice: ToolChoice | None = None
    #: Tools that the model may use during generation. The client MUST return an error if
    #: this field is provided but ClientCapabilities.sampling.tools is not declared.
    tools: list[Tool] | None = None


class CreateMessageResult(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta", "stop_reason": "stopReason"},
):
    """The result returned by the client for a CreateMessageRequestsampling/createMessage request.
    The client should inform the user before returning the sampled message, to allow them
    to inspect the response (human in the loop) and decide whether to allow the server to see it.
    """
    content: (
        TextContent
        | ImageContent
        | AudioContent
        | ToolUseContent
        | ToolResultContent
        | list[SamplingMessageContentBlock]
    )
    #: The name of the model that generated the message.
    model: str
    role: Role
    meta: dict[str, Any] | None = None
    #: The reason why sampling stopped, if known.
    stop_reason: str | None = None


class DiscoverRequest(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="method",
    tag="server/discover",
):
    """A request from the client asking the server to advertise its supported
    protocol versions, capabilities, and other metadata. Servers **MUST**
    implement `server/discover`. Clients **MAY** call it but are not required
    to — version negotiation can also happen inline via per-request `_meta`.
    """
    id: RequestId
    jsonrpc: Literal["2.0"]
    method: ClassVar[Literal["server/discover"]] = "server/discover"
    params: RequestParams


class DiscoverResult(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={
        "meta": "_meta",
        "cache_scope": "cacheScope",
        "result_type": "resultType",
        "supported_versions": "supportedVersions",
        "ttl_ms": "ttlMs",
    },
):
    """The result returned by the server for a DiscoverRequestserver/discover request."""
    #: Indicates the intended scope of the cached response, analogous to HTTP `Cache-Control:
    #: public` vs `Cache-Control: private`.
    cache_scope: Literal["private", "public"]
    #: The capabilities of the server.
    capabilities: ServerCapabilities
    #: Indicates the type of the result, which allows the client to determine how to parse
    #: the result object.
    result_type: str
    #: MCP Protocol Versions this server supports. The client should choose a version from
    #: this list for use in subsequent requests.
    supported_versions: list[str]
    #: A hint from the server indicating how long (in milliseconds) the client MAY cache this
    #: response before re-fetching. Semantics are analogous to HTTP Cache-Control max-age.
    ttl_ms: int
    meta: dict[str, Any] | None = None
    #: Natural-language guidance describing the server and its features.
    instructions: str | None = None


class DiscoverResultResponse(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A successful response from the server for a DiscoverRequestserver/discover request."""
    id: RequestId
    jsonrpc: Literal["2.0"]
    result: DiscoverResult


class ElicitRequest(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="method",
    tag="elicitation/create",
):
    """A request from the server to elicit additional information from the user via the client."""
    method: ClassVar[Literal["elicitation/create"]] = "elicitation/create"
    params: ElicitRequestParams


class ElicitRequestFormParams(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"requested_schema": "requestedSchema"},
):
    """The parameters for a request to elicit non-sensitive information from the user via a form in
    the client.
    """
    #: The message to present to the user describing what information is being requested.
    message: str
    #: A restricted subset of JSON Schema. Only top-level properties are allowed, without
    #: nesting.
    requested_schema: dict[str, Any]
    #: The elicitation mode.
    mode: Literal["form"] | None = None


class ElicitRequestURLParams(msgspec.Struct, kw_only=True, omit_defaults=True):
    """The parameters for a request to elicit information from the user via a URL in the client."""
    #: The message to present to the user explaining why the interaction is needed.
    message: str
    #: The elicitation mode.
    mode: Literal["url"]
    #: The URL that the user should navigate to.
    url: str


class ElicitResult(msgspec.Struct, kw_only=True, omit_defaults=True):
    """The result returned by the client for an ElicitRequestelicitation/create request."""
    #: The user action in response to the elicitation. - `"accept"`: User submitted the
    #: form/confirmed the action - `"decline"`: User explicitly declined the action -
    #: `"cancel"`: User dismissed without making an explicit choice
    action: Literal["accept", "cancel", "decline"]
    #: The submitted form data, only present when action is `"accept"` and mode was `"form"`.
    #: Contains values matching the requested schema. Omitted for out-of-band mode responses.
    content: dict[str, list[str] | str | int | bool] | None = None


class EmbeddedResource(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="type",
    tag="resource",
    rename={"meta": "_meta"},
):
    """The contents of a resource, embedded into a prompt or tool call result.

    It is up to the client how best to render embedded resources for the benefit
    of the LLM and/or the user.
    """
    resource: dict[str, Any]
    type: ClassVar[Literal["resource"]] = "resource"
    meta: dict[str, Any] | None = None
    #: Optional annotations for the client.
    annotations: Annotations | None = None


class Error(msgspec.Struct, kw_only=True, omit_defaults=True):
    #: The error type that occurred.
    code: int
    #: A short description of the error. The message SHOULD be limited to a concise single
    #: sentence.
    message: str
    #: Additional information about the error. The value of this member is defined by the
    #: sender (e.g. detailed error information, nested errors etc.).
    data: Any = None


class GetPromptRequest(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="method",
    tag="prompts/get",
):
    """Used by the client to get a prompt provided by the server."""
    id: RequestId
    jsonrpc: Literal["2.0"]
    method: ClassVar[Literal["prompts/get"]] = "prompts/get"
    params: GetPromptRequestParams


class GetPromptRequestParams(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta", "input_responses": "inputResponses", "request_state": "requestState"},
):
    """Parameters for a `prompts/get` request."""
    meta: dict[str, Any]
    #: The name of the prompt or prompt template.
    name: str
    #: Arguments to use for templating the prompt.
    arguments: dict[str, str] | None = None
    input_responses: InputResponses | None = None
    request_state: str | None = None


class GetPromptResult(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta", "result_type": "resultType"},
):
    """The result returned by the server for a GetPromptRequestprompts/get request."""
    messages: list[PromptMessage]
    #: Indicates the type of the result, which allows the client to determine how to parse
    #: the result object.
    result_type: str
    meta: dict[str, Any] | None = None
    #: An optional description for the prompt.
    description: str | None = None


class GetPromptResultResponse(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A successful response from the server for a GetPromptRequestprompts/get request."""
    id: RequestId
    jsonrpc: Literal["2.0"]
    result: dict[str, Any]


class HeaderMismatchErrorError(msgspec.Struct, kw_only=True, omit_defaults=True):
    code: Literal[-32020]
    #: A short description of the error. The message SHOULD be limited to a concise single
    #: sentence.
    message: str
    #: Additional information about the error. The value of this member is defined by the
    #: sender (e.g. detailed error information, nested errors etc.).
    data: Any = None


class HeaderMismatchError(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Returned when a server rejects a request because the values in the HTTP
    headers do not match the corresponding values in the request body, or
    because required headers are missing or malformed. For HTTP, the response
    status code MUST be `400 Bad Request`.
    """
    error: HeaderMismatchErrorError
    jsonrpc: Literal["2.0"]
    id: RequestId | None = None


class Icon(msgspec.Struct, kw_only=True, omit_defaults=True, rename={"mime_type": "mimeType"}):
    """An optionally-sized icon that can be displayed in a user interface."""
    #: A standard URI pointing to an icon resource. May be an HTTP/HTTPS URL or a `data:` URI
    #: with Base64-encoded image data.
    src: str
    #: Optional MIME type override if the source MIME type is missing or generic. For
    #: example: `"image/png"`, `"image/jpeg"`, or `"image/svg+xml"`.
    mime_type: str | None = None
    #: Optional array of strings that specify sizes at which the icon can be used. Each
    #: string should be in WxH format (e.g., `"48x48"`, `"96x96"`) or `"any"` for scalable
    #: formats like SVG.
    sizes: list[str] | None = None
    #: Optional specifier for the theme this icon is designed for. `"light"` indicates the
    #: icon is designed to be used with a light background, and `"dark"` indicates the icon
    #: is designed to be used with a dark background.
    theme: Literal["dark", "light"] | None = None


class Icons(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Base interface to add `icons` property."""
    #: Optional set of sized icons that the client can display in a user interface.
    icons: list[Icon] | None = None


class ImageContent(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="type",
    tag="image",
    rename={"meta": "_meta", "mime_type": "mimeType"},
):
    """An image provided to or from an LLM."""
    #: The base64-encoded image data.
    data: str
    #: The MIME type of the image. Different providers may support different image types.
    mime_type: str
    type: ClassVar[Literal["image"]] = "image"
    meta: dict[str, Any] | None = None
    #: Optional annotations for the client.
    annotations: Annotations | None = None


class Implementation(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"website_url": "websiteUrl"},
):
    """Describes the MCP implementation."""
    #: Intended for programmatic or logical use, but used as a display name in past specs or
    #: fallback (if title isn't present).
    name: str
    #: The version of this implementation.
    version: str
    #: An optional human-readable description of what this implementation does.
    description: str | None = None
    #: Optional set of sized icons that the client can display in a user interface.
    icons: list[Icon] | None = None
    #: Intended for UI and end-user contexts — optimized to be human-readable and easily
    #: understood, even by those unfamiliar with domain-specific terminology.
    title: str | None = None
    #: An optional URL of the website for this implementation.
    website_url: str | None = None


class InputRequiredResult(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={
        "meta": "_meta",
        "input_requests": "inputRequests",
        "request_state": "requestState",
        "result_type": "resultType",
    },
):
    """An InputRequiredResult sent by the server to indicate that additional input is needed
    before the request can be completed.

    At least one of `inputRequests` or `requestState` MUST be present.
    """
    #: Indicates the type of the result, which allows the client to determine how to parse
    #: the result object.
    result_type: str
    meta: dict[str, Any] | None = None
    input_requests: InputRequests | None = None
    request_state: str | None = None


class InputResponseRequestParams(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta", "input_responses": "inputResponses", "request_state": "requestState"},
):
    meta: dict[str, Any]
    input_responses: InputResponses | None = None
    request_state: str | None = None


class InternalError(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A JSON-RPC error indicating that an internal error occurred on the receiver. This error is
    returned when the receiver encounters an unexpected condition that prevents it from fulfilling
    the request.
    """
    #: The error type that occurred.
    code: Literal[-32603]
    #: A short description of the error. The message SHOULD be limited to a concise single
    #: sentence.
    message: str
    #: Additional information about the error. The value of this member is defined by the
    #: sender (e.g. detailed error information, nested errors etc.).
    data: Any = None


class InvalidParamsError(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A JSON-RPC error indicating that the method parameters are invalid or malformed.

    In MCP, this error is returned in various contexts when request parameters fail validation:

    - **Tools**: Unknown tool name or invalid tool arguments
    - **Prompts**: Unknown prompt name or missing required arguments
    - **Pagination**: Invalid or expired cursor values
    - **Logging**: Invalid log level
    - **Elicitation**: Server requests an elicitation mode not declared in client capabilities
    - **Sampling**: Missing tool result or tool results mixed with other content
    """
    #: The error type that occurred.
    code: Literal[-32602]
    #: A short description of the error. The message SHOULD be limited to a concise single
    #: sentence.
    message: str
    #: Additional information about the error. The value of this member is defined by the
    #: sender (e.g. detailed error information, nested errors etc.).
    data: Any = None


class InvalidRequestError(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A JSON-RPC error indicating that the request is not a valid request object. This error is
    returned when the message structure does not conform to the JSON-RPC 2.0 specification
    requirements for a request (e.g., missing required fields like `jsonrpc` or `method`, or using
    invalid types for these fields).
    """
    #: The error type that occurred.
    code: Literal[-32600]
    #: A short description of the error. The message SHOULD be limited to a concise single
    #: sentence.
    message: str
    #: Additional information about the error. The value of this member is defined by the
    #: sender (e.g. detailed error information, nested errors etc.).
    data: Any = None


class JSONRPCErrorResponse(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A response to a request that indicates an error occurred."""
    error: Error
    jsonrpc: Literal["2.0"]
    id: RequestId | None = None


class JSONRPCNotification(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A notification which does not expect a response."""
    jsonrpc: Literal["2.0"]
    method: str
    params: dict[str, Any] | None = None


class JSONRPCRequest(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A request that expects a response."""
    id: RequestId
    jsonrpc: Literal["2.0"]
    method: str
    params: dict[str, Any] | None = None


class JSONRPCResultResponse(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A successful (non-error) response to a request."""
    id: RequestId
    jsonrpc: Literal["2.0"]
    result: Result


class LegacyTitledEnumSchema(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="type",
    tag="string",
    rename={"enum_names": "enumNames"},
):
    """Use TitledSingleSelectEnumSchema instead.
    This interface will be removed in a future version.
    """
    enum: list[str]
    type: ClassVar[Literal["string"]] = "string"
    default: str | None = None
    description: str | None = None
    #: (Legacy) Display names for enum values. Non-standard according to JSON schema 2020-12.
    enum_names: list[str] | None = None
    title: str | None = None


class ListPromptsRequest(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="method",
    tag="prompts/list",
):
    """Sent from the client to request a list of prompts and prompt templates the server has."""
    id: RequestId
    jsonrpc: Literal["2.0"]
    method: ClassVar[Literal["prompts/list"]] = "prompts/list"
    params: PaginatedRequestParams


class ListPromptsResult(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={
        "meta": "_meta",
        "cache_scope": "cacheScope",
        "next_cursor": "nextCursor",
        "result_type": "resultType",
        "ttl_ms": "ttlMs",
    },
):
    """The result returned by the server for a ListPromptsRequestprompts/list request."""
    #: Indicates the intended scope of the cached response, analogous to HTTP `Cache-Control:
    #: public` vs `Cache-Control: private`.
    cache_scope: Literal["private", "public"]
    prompts: list[Prompt]
    #: Indicates the type of the result, which allows the client to determine how to parse
    #: the result object.
    result_type: str
    #: A hint from the server indicating how long (in milliseconds) the client MAY cache this
    #: response before re-fetching. Semantics are analogous to HTTP Cache-Control max-age.
    ttl_ms: int
    meta: dict[str, Any] | None = None
    #: An opaque token representing the pagination position after the last returned result.
    #: If present, there may be more results available.
    next_cursor: str | None = None


class ListPromptsResultResponse(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A successful response from the server for a ListPromptsRequestprompts/list request."""
    id: RequestId
    jsonrpc: Literal["2.0"]
    result: ListPromptsResult


class ListResourceTemplatesRequest(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="method",
    tag="resources/templates/list",
):
    """Sent from the client to request a list of resource templates the server has."""
    id: RequestId
    jsonrpc: Literal["2.0"]
    method: ClassVar[Literal["resources/templates/list"]] = "resources/templates/list"
    params: PaginatedRequestParams


class ListResourceTemplatesResult(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={
        "meta": "_meta",
        "cache_scope": "cacheScope",
        "next_cursor": "nextCursor",
        "resource_templates": "resourceTemplates",
        "result_type": "resultType",
        "ttl_ms": "ttlMs",
    },
):
    """The result returned by the server for a ListResourceTemplatesRequestresources/templates/list
    request.
    """
    #: Indicates the intended scope of the cached response, analogous to HTTP `Cache-Control:
    #: public` vs `Cache-Control: private`.
    cache_scope: Literal["private", "public"]
    resource_templates: list[ResourceTemplate]
    #: Indicates the type of the result, which allows the client to determine how to parse
    #: the result object.
    result_type: str
    #: A hint from the server indicating how long (in milliseconds) the client MAY cache this
    #: response before re-fetching. Semantics are analogous to HTTP Cache-Control max-age.
    ttl_ms: int
    meta: dict[str, Any] | None = None
    #: An opaque token representing the pagination position after the last returned result.
    #: If present, there may be more results available.
    next_cursor: str | None = None


class ListResourceTemplatesResultResponse(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A successful response from the server for a
    ListResourceTemplatesRequestresources/templates/list request.
    """
    id: RequestId
    jsonrpc: Literal["2.0"]
    result: ListResourceTemplatesResult


class ListResourcesRequest(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="method",
    tag="resources/list",
):
    """Sent from the client to request a list of resources the server has."""
    id: RequestId
    jsonrpc: Literal["2.0"]
    method: ClassVar[Literal["resources/list"]] = "resources/list"
    params: PaginatedRequestParams


class ListResourcesResult(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={
        "meta": "_meta",
        "cache_scope": "cacheScope",
        "next_cursor": "nextCursor",
        "result_type": "resultType",
        "ttl_ms": "ttlMs",
    },
):
    """The result returned by the server for a ListResourcesRequestresources/list request."""
    #: Indicates the intended scope of the cached response, analogous to HTTP `Cache-Control:
    #: public` vs `Cache-Control: private`.
    cache_scope: Literal["private", "public"]
    resources: list[Resource]
    #: Indicates the type of the result, which allows the client to determine how to parse
    #: the result object.
    result_type: str
    #: A hint from the server indicating how long (in milliseconds) the client MAY cache this
    #: response before re-fetching. Semantics are analogous to HTTP Cache-Control max-age.
    ttl_ms: int
    meta: dict[str, Any] | None = None
    #: An opaque token representing the pagination position after the last returned result.
    #: If present, there may be more results available.
    next_cursor: str | None = None


class ListResourcesResultResponse(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A successful response from the server for a ListResourcesRequestresources/list request."""
    id: RequestId
    jsonrpc: Literal["2.0"]
    result: ListResourcesResult


class ListRootsRequestParams(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta"},
):
    meta: dict[str, Any] | None = None


class ListRootsRequest(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="method",
    tag="roots/list",
):
    """Sent from the server to request a list of root URIs from the client. Roots allow
    servers to ask for specific directories or files to operate on. A common example
    for roots is providing a set of repositories or directories a server should operate
    on.

    This request is typically used when the server needs to understand the file system
    structure or access specific locations that the client has permission to read from.
    """
    method: ClassVar[Literal["roots/list"]] = "roots/list"
    params: ListRootsRequestParams | None = None


class ListRootsResult(msgspec.Struct, kw_only=True, omit_defaults=True):
    """The result returned by the client for a ListRootsRequestroots/list request.
    This result contains an array of Root objects, each representing a root directory
    or file that the server can operate on.
    """
    roots: list[Root]


class ListToolsRequest(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="method",
    tag="tools/list",
):
    """Sent from the client to request a list of tools the server has."""
    id: RequestId
    jsonrpc: Literal["2.0"]
    method: ClassVar[Literal["tools/list"]] = "tools/list"
    params: PaginatedRequestParams


class ListToolsResult(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={
        "meta": "_meta",
        "cache_scope": "cacheScope",
        "next_cursor": "nextCursor",
        "result_type": "resultType",
        "ttl_ms": "ttlMs",
    },
):
    """The result returned by the server for a ListToolsRequesttools/list request."""
    #: Indicates the intended scope of the cached response, analogous to HTTP `Cache-Control:
    #: public` vs `Cache-Control: private`.
    cache_scope: Literal["private", "public"]
    #: Indicates the type of the result, which allows the client to determine how to parse
    #: the result object.
    result_type: str
    tools: list[Tool]
    #: A hint from the server indicating how long (in milliseconds) the client MAY cache this
    #: response before re-fetching. Semantics are analogous to HTTP Cache-Control max-age.
    ttl_ms: int
    meta: dict[str, Any] | None = None
    #: An opaque token representing the pagination position after the last returned result.
    #: If present, there may be more results available.
    next_cursor: str | None = None


class ListToolsResultResponse(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A successful response from the server for a ListToolsRequesttools/list request."""
    id: RequestId
    jsonrpc: Literal["2.0"]
    result: ListToolsResult


class LoggingMessageNotification(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="method",
    tag="notifications/message",
):
    """JSONRPCNotification of a log message passed from server to client. The client opts in by
    setting `"io.modelcontextprotocol/logLevel"` in a request's `_meta`.
    """
    jsonrpc: Literal["2.0"]
    method: ClassVar[Literal["notifications/message"]] = "notifications/message"
    params: LoggingMessageNotificationParams


class LoggingMessageNotificationParams(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta"},
):
    """Parameters for a `notifications/message` notification."""
    #: The data to be logged, such as a string message or an object. Any JSON serializable
    #: type is allowed here.
    data: Any
    #: The severity of this log message.
    level: LoggingLevel
    meta: dict[str, Any] | None = None
    #: An optional name of the logger issuing this message.
    logger: str | None = None


class MethodNotFoundError(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A JSON-RPC error indicating that the requested method does not exist or is not available.

    In MCP, a server returns this error when a client invokes a method the server does not implement
    — either a genuinely unknown method, or one gated behind a server capability the server did not
    advertise (e.g., calling `prompts/list` when the `prompts` capability was not advertised).

    A request that requires a client capability the client did not declare is signalled instead by
    MissingRequiredClientCapabilityError (`-32021`).
    """
    #: The error type that occurred.
    code: Literal[-32601]
    #: A short description of the error. The message SHOULD be limited to a concise single
    #: sentence.
    message: str
    #: Additional information about the error. The value of this member is defined by the
    #: sender (e.g. detailed error information, nested errors etc.).
    data: Any = None


class MissingRequiredClientCapabilityErrorErrorData(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"required_capabilities": "requiredCapabilities"},
):
    #: The capabilities the server requires from the client to process this request.
    required_capabilities: ClientCapabilities


class MissingRequiredClientCapabilityErrorError(msgspec.Struct, kw_only=True, omit_defaults=True):
    code: Literal[-32021]
    data: MissingRequiredClientCapabilityErrorErrorData
    #: A short description of the error. The message SHOULD be limited to a concise single
    #: sentence.
    message: str


class MissingRequiredClientCapabilityError(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Returned when processing a request requires a capability the client did not
    declare in `clientCapabilities`. For HTTP, the response status code MUST be
    `400 Bad Request`.
    """
    error: MissingRequiredClientCapabilityErrorError
    jsonrpc: Literal["2.0"]
    id: RequestId | None = None


class ModelHint(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Hints to use for model selection.

    Keys not declared here are currently left unspecified by the spec and are up
    to the client to interpret.
    """
    #: A hint for a model name.
    name: str | None = None


class ModelPreferences(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={
        "cost_priority": "costPriority",
        "intelligence_priority": "intelligencePriority",
        "speed_priority": "speedPriority",
    },
):
    """The server's preferences for model selection, requested of the client during sampling.

    Because LLMs can vary along multiple dimensions, choosing the "best" model is
    rarely straightforward.  Different models excel in different areas—some are
    faster but less capable, others are more capable but more expensive, and so
    on. This interface allows servers to express their priorities across multiple
    dimensions to help clients make an appropriate selection for their use case.

    These preferences are always advisory. The client MAY ignore them. It is also
    up to the client to decide how to interpret these preferences and how to
    balance them against other considerations.
    """
    #: How much to prioritize cost when selecting a model. A value of 0 means cost is not
    #: important, while a value of 1 means cost is the most important factor.
    cost_priority: int | float | None = None
    #: Optional hints to use for model selection.
    hints: list[ModelHint] | None = None
    #: How much to prioritize intelligence and capabilities when selecting a model. A value
    #: of 0 means intelligence is not important, while a value of 1 means intelligence is the
    #: most important factor.
    intelligence_priority: int | float | None = None
    #: How much to prioritize sampling speed (latency) when selecting a model. A value of 0
    #: means speed is not important, while a value of 1 means speed is the most important
    #: factor.
    speed_priority: int | float | None = None


class Notification(msgspec.Struct, kw_only=True, omit_defaults=True):
    method: str
    params: dict[str, Any] | None = None


class NotificationMetaObject(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"subscription_id": "io.modelcontextprotocol/subscriptionId"},
):
    """Extends MetaObject with additional notification-specific fields. All key naming rules from
    `MetaObject` apply.
    """
    #: Identifies the subscription stream a notification was delivered on.
    subscription_id: RequestId | None = None


class NotificationParams(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta"},
):
    """Common params for any notification."""
    meta: dict[str, Any] | None = None


class NumberSchema(msgspec.Struct, kw_only=True, omit_defaults=True):
    type: Literal["integer", "number"]
    default: int | float | None = None
    description: str | None = None
    maximum: int | float | None = None
    minimum: int | float | None = None
    title: str | None = None


class PaginatedRequest(msgspec.Struct, kw_only=True, omit_defaults=True):
    id: RequestId
    jsonrpc: Literal["2.0"]
    method: str
    params: PaginatedRequestParams


class PaginatedRequestParams(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta"},
):
    """Common params for paginated requests."""
    meta: dict[str, Any]
    #: An opaque token representing the current pagination position. If provided, the server
    #: should return results starting after this cursor.
    cursor: str | None = None


class PaginatedResult(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta", "next_cursor": "nextCursor", "result_type": "resultType"},
):
    #: Indicates the type of the result, which allows the client to determine how to parse
    #: the result object.
    result_type: str
    meta: dict[str, Any] | None = None
    #: An opaque token representing the pagination position after the last returned result.
    #: If present, there may be more results available.
    next_cursor: str | None = None


class ParseError(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A JSON-RPC error indicating that invalid JSON was received by the server. This error is
    returned when the server cannot parse the JSON text of a message.
    """
    #: The error type that occurred.
    code: Literal[-32700]
    #: A short description of the error. The message SHOULD be limited to a concise single
    #: sentence.
    message: str
    #: Additional information about the error. The value of this member is defined by the
    #: sender (e.g. detailed error information, nested errors etc.).
    data: Any = None


class ProgressNotification(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="method",
    tag="notifications/progress",
):
    """An out-of-band notification used to inform the receiver of a progress update for a
    long-running request.
    """
    jsonrpc: Literal["2.0"]
    method: ClassVar[Literal["notifications/progress"]] = "notifications/progress"
    params: ProgressNotificationParams


class ProgressNotificationParams(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta", "progress_token": "progressToken"},
):
    """Parameters for a ProgressNotificationnotifications/progress notification."""
    #: The progress thus far. This should increase every time progress is made, even if the
    #: total is unknown.
    progress: int | float
    #: The progress token which was given in the initial request, used to associate this
    #: notification with the request that is proceeding.
    progress_token: ProgressToken
    meta: dict[str, Any] | None = None
    #: An optional message describing the current progress.
    message: str | None = None
    #: Total number of items to process (or total progress required), if known.
    total: int | float | None = None


class Prompt(msgspec.Struct, kw_only=True, omit_defaults=True, rename={"meta": "_meta"}):
    """A prompt or prompt template that the server offers."""
    #: Intended for programmatic or logical use, but used as a display name in past specs or
    #: fallback (if title isn't present).
    name: str
    meta: dict[str, Any] | None = None
    #: A list of arguments to use for templating the prompt.
    arguments: list[PromptArgument] | None = None
    #: An optional description of what this prompt provides
    description: str | None = None
    #: Optional set of sized icons that the client can display in a user interface.
    icons: list[Icon] | None = None
    #: Intended for UI and end-user contexts — optimized to be human-readable and easily
    #: understood, even by those unfamiliar with domain-specific terminology.
    title: str | None = None


class PromptArgument(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Describes an argument that a prompt can accept."""
    #: Intended for programmatic or logical use, but used as a display name in past specs or
    #: fallback (if title isn't present).
    name: str
    #: A human-readable description of the argument.
    description: str | None = None
    #: Whether this argument must be provided.
    required: bool | None = None
    #: Intended for UI and end-user contexts — optimized to be human-readable and easily
    #: understood, even by those unfamiliar with domain-specific terminology.
    title: str | None = None


class PromptListChangedNotification(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="method",
    tag="notifications/prompts/list_changed",
):
    """An optional notification from the server to the client, informing it that the list of prompts
    it offers has changed. This is only delivered on a
    SubscriptionsListenRequestsubscriptions/listen stream when the client requested it via the
    `promptsListChanged` filter field.
    """
    jsonrpc: Literal["2.0"]
    method: ClassVar[Literal["notifications/prompts/list_changed"]] = "notifications/prompts/list_changed"
    params: NotificationParams | None = None


class PromptMessage(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Describes a message returned as part of a prompt.

    This is similar to SamplingMessage, but also supports the embedding of
    resources from the MCP server.
    """
    content: ContentBlock
    role: Role


class PromptReference(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="type",
    tag="ref/prompt",
):
    """Identifies a prompt."""
    #: Intended for programmatic or logical use, but used as a display name in past specs or
    #: fallback (if title isn't present).
    name: str
    type: ClassVar[Literal["ref/prompt"]] = "ref/prompt"
    #: Intended for UI and end-user contexts — optimized to be human-readable and easily
    #: understood, even by those unfamiliar with domain-specific terminology.
    title: str | None = None


class ReadResourceRequest(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="method",
    tag="resources/read",
):
    """Sent from the client to the server, to read a specific resource URI."""
    id: RequestId
    jsonrpc: Literal["2.0"]
    method: ClassVar[Literal["resources/read"]] = "resources/read"
    params: ReadResourceRequestParams


class ReadResourceRequestParams(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta", "input_responses": "inputResponses", "request_state": "requestState"},
):
    """Parameters for a `resources/read` request."""
    meta: dict[str, Any]
    #: The URI of the resource. The URI can use any protocol; it is up to the server how to
    #: interpret it.
    uri: str
    input_responses: InputResponses | None = None
    request_state: str | None = None


class ReadResourceResult(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={
        "meta": "_meta",
        "cache_scope": "cacheScope",
        "result_type": "resultType",
        "ttl_ms": "ttlMs",
    },
):
    """The result returned by the server for a ReadResourceRequestresources/read request."""
    #: Indicates the intended scope of the cached response, analogous to HTTP `Cache-Control:
    #: public` vs `Cache-Control: private`.
    cache_scope: Literal["private", "public"]
    contents: list[dict[str, Any]]
    #: Indicates the type of the result, which allows the client to determine how to parse
    #: the result object.
    result_type: str
    #: A hint from the server indicating how long (in milliseconds) the client MAY cache this
    #: response before re-fetching. Semantics are analogous to HTTP Cache-Control max-age.
    ttl_ms: int
    meta: dict[str, Any] | None = None


class ReadResourceResultResponse(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A successful response from the server for a ReadResourceRequestresources/read request."""
    id: RequestId
    jsonrpc: Literal["2.0"]
    result: dict[str, Any]


class Request(msgspec.Struct, kw_only=True, omit_defaults=True):
    method: str
    params: dict[str, Any] | None = None


class RequestMetaObject(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={
        "client_capabilities": "io.modelcontextprotocol/clientCapabilities",
        "client_info": "io.modelcontextprotocol/clientInfo",
        "log_level": "io.modelcontextprotocol/logLevel",
        "protocol_version": "io.modelcontextprotocol/protocolVersion",
        "progress_token": "progressToken",
    },
):
    """Extends MetaObject with additional request-specific fields. All key naming rules from
    `MetaObject` apply.
    """
    #: The client's capabilities for this specific request. Required.
    client_capabilities: ClientCapabilities
    #: The MCP Protocol Version being used for this request. Required.
    protocol_version: str
    #: Identifies the client software making the request. Clients SHOULD include this field
    #: on every request unless specifically configured not to do so.
    client_info: Implementation | None = None
    #: The desired log level for this request. Optional.
    log_level: LoggingLevel | None = None
    #: If specified, the caller is requesting out-of-band progress notifications for this
    #: request (as represented by ProgressNotificationnotifications/progress).
    progress_token: ProgressToken | None = None


class RequestParams(msgspec.Struct, kw_only=True, omit_defaults=True, rename={"meta": "_meta"}):
    """Common params for any request."""
    meta: dict[str, Any]


class Resource(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta", "mime_type": "mimeType"},
):
    """A known resource that the server is capable of reading."""
    #: Intended for programmatic or logical use, but used as a display name in past specs or
    #: fallback (if title isn't present).
    name: str
    #: The URI of this resource.
    uri: str
    meta: dict[str, Any] | None = None
    #: Optional annotations for the client.
    annotations: Annotations | None = None
    #: A description of what this resource represents.
    description: str | None = None
    #: Optional set of sized icons that the client can display in a user interface.
    icons: list[Icon] | None = None
    #: The MIME type of this resource, if known.
    mime_type: str | None = None
    #: The size of the raw resource content, in bytes (i.e., before base64 encoding or any
    #: tokenization), if known.
    size: int | None = None
    #: Intended for UI and end-user contexts — optimized to be human-readable and easily
    #: understood, even by those unfamiliar with domain-specific terminology.
    title: str | None = None


class ResourceContents(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta", "mime_type": "mimeType"},
):
    """The contents of a specific resource or sub-resource."""
    #: The URI of this resource.
    uri: str
    meta: dict[str, Any] | None = None
    #: The MIME type of this resource, if known.
    mime_type: str | None = None


class ResourceLink(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="type",
    tag="resource_link",
    rename={"meta": "_meta", "mime_type": "mimeType"},
):
    """A resource that the server is capable of reading, included in a prompt or tool call result.

    Note: resource links returned by tools are not guaranteed to appear in the results of
    ListResourcesRequestresources/list requests.
    """
    #: Intended for programmatic or logical use, but used as a display name in past specs or
    #: fallback (if title isn't present).
    name: str
    type: ClassVar[Literal["resource_link"]] = "resource_link"
    #: The URI of this resource.
    uri: str
    meta: dict[str, Any] | None = None
    #: Optional annotations for the client.
    annotations: Annotations | None = None
    #: A description of what this resource represents.
    description: str | None = None
    #: Optional set of sized icons that the client can display in a user interface.
    icons: list[Icon] | None = None
    #: The MIME type of this resource, if known.
    mime_type: str | None = None
    #: The size of the raw resource content, in bytes (i.e., before base64 encoding or any
    #: tokenization), if known.
    size: int | None = None
    #: Intended for UI and end-user contexts — optimized to be human-readable and easily
    #: understood, even by those unfamiliar with domain-specific terminology.
    title: str | None = None


class ResourceListChangedNotification(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="method",
    tag="notifications/resources/list_changed",
):
    """An optional notification from the server to the client, informing it that the list of
    resources it can read from has changed. This is only delivered on a
    SubscriptionsListenRequestsubscriptions/listen stream when the client requested it via the
    `resourcesListChanged` filter field.
    """
    jsonrpc: Literal["2.0"]
    method: ClassVar[Literal["notifications/resources/list_changed"]] = "notifications/resources/list_changed"
    params: NotificationParams | None = None


class ResourceRequestParams(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta"},
):
    """Common params for resource-related requests."""
    meta: dict[str, Any]
    #: The URI of the resource. The URI can use any protocol; it is up to the server how to
    #: interpret it.
    uri: str


class ResourceTemplate(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta", "mime_type": "mimeType", "uri_template": "uriTemplate"},
):
    """A template description for resources available on the server."""
    #: Intended for programmatic or logical use, but used as a display name in past specs or
    #: fallback (if title isn't present).
    name: str
    #: A URI template (according to RFC 6570) that can be used to construct resource URIs.
    uri_template: str
    meta: dict[str, Any] | None = None
    #: Optional annotations for the client.
    annotations: Annotations | None = None
    #: A description of what this template is for.
    description: str | None = None
    #: Optional set of sized icons that the client can display in a user interface.
    icons: list[Icon] | None = None
    #: The MIME type for all resources that match this template. This should only be included
    #: if all resources matching this template have the same type.
    mime_type: str | None = None
    #: Intended for UI and end-user contexts — optimized to be human-readable and easily
    #: understood, even by those unfamiliar with domain-specific terminology.
    title: str | None = None


class ResourceTemplateReference(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="type",
    tag="ref/resource",
):
    """A reference to a resource or resource template definition."""
    type: ClassVar[Literal["ref/resource"]] = "ref/resource"
    #: The URI or URI template of the resource.
    uri: str


class ResourceUpdatedNotification(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="method",
    tag="notifications/resources/updated",
):
    """A notification from the server to the client, informing it that a resource has changed and
    may need to be read again. This is only sent for resources the client opted in to via the
    `resourceSubscriptions` field of a SubscriptionsListenRequestsubscriptions/listen request.
    """
    jsonrpc: Literal["2.0"]
    method: ClassVar[Literal["notifications/resources/updated"]] = "notifications/resources/updated"
    params: ResourceUpdatedNotificationParams


class ResourceUpdatedNotificationParams(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta"},
):
    """Parameters for a `notifications/resources/updated` notification."""
    #: The URI of the resource that has been updated. This might be a sub-resource of the one
    #: that the client actually subscribed to.
    uri: str
    meta: dict[str, Any] | None = None


class Result(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta", "result_type": "resultType"},
):
    """Common result fields."""
    #: Indicates the type of the result, which allows the client to determine how to parse
    #: the result object.
    result_type: str
    meta: dict[str, Any] | None = None


class ResultMetaObject(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"server_info": "io.modelcontextprotocol/serverInfo"},
):
    """Extends MetaObject with additional result-specific fields. All key naming rules from
    `MetaObject` apply.
    """
    #: Identifies the server software producing the response. Servers SHOULD include this
    #: field on every response unless specifically configured not to do so.
    server_info: Implementation | None = None


class Root(msgspec.Struct, kw_only=True, omit_defaults=True, rename={"meta": "_meta"}):
    """Represents a root directory or file that the server can operate on."""
    #: The URI identifying the root. This *must* start with `file://` for now. This
    #: restriction may be relaxed in future versions of the protocol to allow other URI
    #: schemes.
    uri: str
    meta: dict[str, Any] | None = None
    #: An optional name for the root. This can be used to provide a human-readable identifier
    #: for the root, which may be useful for display purposes or for referencing the root in
    #: other parts of the application.
    name: str | None = None


class SamplingMessage(msgspec.Struct, kw_only=True, omit_defaults=True, rename={"meta": "_meta"}):
    """Describes a message issued to or received from an LLM API."""
    content: (
        TextContent
        | ImageContent
        | AudioContent
        | ToolUseContent
        | ToolResultContent
        | list[SamplingMessageContentBlock]
    )
    role: Role
    meta: dict[str, Any] | None = None


class ServerCapabilitiesPrompts(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"list_changed": "listChanged"},
):
    """Present if the server offers any prompt templates."""
    #: Whether this server supports notifications for changes to the prompt list.
    list_changed: bool | None = None


class ServerCapabilitiesResources(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"list_changed": "listChanged"},
):
    """Present if the server offers any resources to read."""
    #: Whether this server supports notifications for changes to the resource list.
    list_changed: bool | None = None
    #: Whether this server supports subscribing to resource updates.
    subscribe: bool | None = None


class ServerCapabilitiesTools(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"list_changed": "listChanged"},
):
    """Present if the server offers any tools to call."""
    #: Whether this server supports notifications for changes to the tool list.
    list_changed: bool | None = None


class ServerCapabilities(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Capabilities that a server may support. Known capabilities are defined here, in this schema,
    but this is not a closed set: any server can define its own, additional capabilities.
    """
    #: Present if the server supports argument autocompletion suggestions.
    completions: JSONObject | None = None
    #: Experimental, non-standard capabilities that the server supports.
    experimental: dict[str, JSONObject] | None = None
    #: Optional MCP extensions that the server supports. Keys are extension identifiers
    #: (e.g., "io.modelcontextprotocol/tasks"), and values are per-extension settings
    #: objects. An empty object indicates support with no settings.
    extensions: dict[str, JSONObject] | None = None
    #: Present if the server supports sending log messages to the client.
    logging: JSONObject | None = None
    #: Present if the server offers any prompt templates.
    prompts: ServerCapabilitiesPrompts | None = None
    #: Present if the server offers any resources to read.
    resources: ServerCapabilitiesResources | None = None
    #: Present if the server offers any tools to call.
    tools: ServerCapabilitiesTools | None = None


class StringSchema(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="type",
    tag="string",
    rename={"max_length": "maxLength", "min_length": "minLength"},
):
    type: ClassVar[Literal["string"]] = "string"
    default: str | None = None
    description: str | None = None
    format: Literal["date", "date-time", "email", "uri"] | None = None
    max_length: int | None = None
    min_length: int | None = None
    title: str | None = None


class SubscriptionFilter(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={
        "prompts_list_changed": "promptsListChanged",
        "resource_subscriptions": "resourceSubscriptions",
        "resources_list_changed": "resourcesListChanged",
        "tools_list_changed": "toolsListChanged",
    },
):
    """The set of notification types a client may opt in to on a
    SubscriptionsListenRequestsubscriptions/listen request.

    Each notification type is **opt-in**; the server **MUST NOT** send
    notification types the client has not explicitly requested here.
    """
    #: If true, receive PromptListChangedNotificationnotifications/prompts/list_changed.
    prompts_list_changed: bool | None = None
    #: Subscribe to ResourceUpdatedNotificationnotifications/resources/updated for these
    #: resource URIs. Replaces the former `resources/subscribe` RPC.
    resource_subscriptions: list[str] | None = None
    #: If true, receive ResourceListChangedNotificationnotifications/resources/list_changed.
    resources_list_changed: bool | None = None
    #: If true, receive ToolListChangedNotificationnotifications/tools/list_changed.
    tools_list_changed: bool | None = None


class SubscriptionsAcknowledgedNotification(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="method",
    tag="notifications/subscriptions/acknowledged",
):
    """Sent by the server to acknowledge that a
    SubscriptionsListenRequestsubscriptions/listen subscription has been
    established and to report which notification types it agreed to honor.

    This notification MUST be the first message the server sends carrying the
    subscription's ID in `io.modelcontextprotocol/subscriptionId`. The server MUST
    NOT send any notification on the subscription before acknowledging it. On
    stdio, where every subscription shares one channel, this ordering is defined
    per subscription ID and not per channel: messages belonging to other
    subscriptions MAY be interleaved before it.
    """
    jsonrpc: Literal["2.0"]
    method: ClassVar[Literal["notifications/subscriptions/acknowledged"]] = "notifications/subscriptions/acknowledged"
    params: SubscriptionsAcknowledgedNotificationParams


class SubscriptionsAcknowledgedNotificationParams(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta"},
):
    """Parameters for a
    SubscriptionsAcknowledgedNotificationnotifications/subscriptions/acknowledged notification.
    """
    #: The subset of requested notification types the server agreed to honor.
    notifications: SubscriptionFilter
    meta: dict[str, Any] | None = None


class SubscriptionsListenRequest(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="method",
    tag="subscriptions/listen",
):
    """Sent from the client to open a long-lived channel for receiving notifications
    outside the context of a specific request. Replaces the previous HTTP GET
    endpoint and ensures consistent behavior between HTTP and STDIO.
    """
    id: RequestId
    jsonrpc: Literal["2.0"]
    method: ClassVar[Literal["subscriptions/listen"]] = "subscriptions/listen"
    params: SubscriptionsListenRequestParams


class SubscriptionsListenRequestParams(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta"},
):
    """Parameters for a SubscriptionsListenRequestsubscriptions/listen request."""
    meta: dict[str, Any]
    #: The notifications the client opts in to on this stream. The server **MUST NOT** send
    #: notification types the client has not explicitly requested.
    notifications: SubscriptionFilter


class SubscriptionsListenResult(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta", "result_type": "resultType"},
):
    """The response to a SubscriptionsListenRequestsubscriptions/listen
    request, signalling that the subscription has ended gracefully (for example,
    during server shutdown). Because the listen stream is long-lived, this result
    is sent only when the server tears the subscription down; an abrupt transport
    close carries no response. The result body is otherwise empty.
    """
    meta: dict[str, Any]
    #: Indicates the type of the result, which allows the client to determine how to parse
    #: the result object.
    result_type: str


class SubscriptionsListenResultMetaObject(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={
        "server_info": "io.modelcontextprotocol/serverInfo",
        "subscription_id": "io.modelcontextprotocol/subscriptionId",
    },
):
    """Extends ResultMetaObject with the subscription-stream identifier carried by a
    SubscriptionsListenResult. All key naming rules from `MetaObject` apply.
    """
    #: Identifies the subscription stream this response closes, so the client can correlate
    #: it with the originating subscription — mirroring the same key on the stream's
    #: notifications.
    subscription_id: RequestId
    #: Identifies the server software producing the response. Servers SHOULD include this
    #: field on every response unless specifically configured not to do so.
    server_info: Implementation | None = None


class SubscriptionsListenResultResponse(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A successful response from the server for a SubscriptionsListenRequestsubscriptions/listen
    request, sent when the server tears the subscription down gracefully.
    """
    id: RequestId
    jsonrpc: Literal["2.0"]
    result: SubscriptionsListenResult


class TextContent(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="type",
    tag="text",
    rename={"meta": "_meta"},
):
    """Text provided to or from an LLM."""
    #: The text content of the message.
    text: str
    type: ClassVar[Literal["text"]] = "text"
    meta: dict[str, Any] | None = None
    #: Optional annotations for the client.
    annotations: Annotations | None = None


class TextResourceContents(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta", "mime_type": "mimeType"},
):
    #: The text of the item. This must only be set if the item can actually be represented as
    #: text (not binary data).
    text: str
    #: The URI of this resource.
    uri: str
    meta: dict[str, Any] | None = None
    #: The MIME type of this resource, if known.
    mime_type: str | None = None


class TitledMultiSelectEnumSchemaItemsAnyOfItem(msgspec.Struct, kw_only=True, omit_defaults=True):
    #: The constant enum value.
    const: str
    #: Display title for this option.
    title: str


class TitledMultiSelectEnumSchemaItems(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"any_of": "anyOf"},
):
    """Schema for array items with enum options and display labels."""
    #: Array of enum options with values and display labels.
    any_of: list[TitledMultiSelectEnumSchemaItemsAnyOfItem]


class TitledMultiSelectEnumSchema(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="type",
    tag="array",
    rename={"max_items": "maxItems", "min_items": "minItems"},
):
    """Schema for multiple-selection enumeration with display titles for each option."""
    #: Schema for array items with enum options and display labels.
    items: TitledMultiSelectEnumSchemaItems
    type: ClassVar[Literal["array"]] = "array"
    #: Optional default value.
    default: list[str] | None = None
    #: Optional description for the enum field.
    description: str | None = None
    #: Maximum number of items to select.
    max_items: int | None = None
    #: Minimum number of items to select.
    min_items: int | None = None
    #: Optional title for the enum field.
    title: str | None = None


class TitledSingleSelectEnumSchemaOneOfItem(msgspec.Struct, kw_only=True, omit_defaults=True):
    #: The enum value.
    const: str
    #: Display label for this option.
    title: str


class TitledSingleSelectEnumSchema(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="type",
    tag="string",
    rename={"one_of": "oneOf"},
):
    """Schema for single-selection enumeration with display titles for each option."""
    #: Array of enum options with values and display labels.
    one_of: list[TitledSingleSelectEnumSchemaOneOfItem]
    type: ClassVar[Literal["string"]] = "string"
    #: Optional default value.
    default: str | None = None
    #: Optional description for the enum field.
    description: str | None = None
    #: Optional title for the enum field.
    title: str | None = None


class Tool(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta", "input_schema": "inputSchema", "output_schema": "outputSchema"},
):
    """Definition for a tool the client can call."""
    #: A JSON Schema object defining the expected parameters for the tool.
    input_schema: dict[str, Any]
    #: Intended for programmatic or logical use, but used as a display name in past specs or
    #: fallback (if title isn't present).
    name: str
    meta: dict[str, Any] | None = None
    #: Optional additional tool information.
    annotations: ToolAnnotations | None = None
    #: A human-readable description of the tool.
    description: str | None = None
    #: Optional set of sized icons that the client can display in a user interface.
    icons: list[Icon] | None = None
    #: An optional JSON Schema object defining the structure of the tool's output returned in
    #: the structuredContent field of a CallToolResult. This can be any valid JSON Schema
    #: 2020-12.
    output_schema: dict[str, Any] | None = None
    #: Intended for UI and end-user contexts — optimized to be human-readable and easily
    #: understood, even by those unfamiliar with domain-specific terminology.
    title: str | None = None


class ToolAnnotations(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={
        "destructive_hint": "destructiveHint",
        "idempotent_hint": "idempotentHint",
        "open_world_hint": "openWorldHint",
        "read_only_hint": "readOnlyHint",
    },
):
    """Additional properties describing a Tool to clients.

    NOTE: all properties in `ToolAnnotations` are **hints**.
    They are not guaranteed to provide a faithful description of
    tool behavior (including descriptive properties like `title`).

    Clients should never make tool use decisions based on `ToolAnnotations`
    received from untrusted servers.
    """
    #: If true, the tool may perform destructive updates to its environment. If false, the
    #: tool performs only additive updates.
    destructive_hint: bool | None = None
    #: If true, calling the tool repeatedly with the same arguments will have no additional
    #: effect on its environment.
    idempotent_hint: bool | None = None
    #: If true, this tool may interact with an "open world" of external entities. If false,
    #: the tool's domain of interaction is closed. For example, the world of a web search
    #: tool is open, whereas that of a memory tool is not.
    open_world_hint: bool | None = None
    #: If true, the tool does not modify its environment.
    read_only_hint: bool | None = None
    #: A human-readable title for the tool.
    title: str | None = None


class ToolChoice(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Controls tool selection behavior for sampling requests."""
    #: Controls the tool use ability of the model: - `"auto"`: Model decides whether to use
    #: tools (default) - `"required"`: Model MUST use at least one tool before completing -
    #: `"none"`: Model MUST NOT use any tools
    mode: Literal["auto", "none", "required"] | None = None


class ToolListChangedNotification(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="method",
    tag="notifications/tools/list_changed",
):
    """An optional notification from the server to the client, informing it that the list of tools
    it offers has changed. This is only delivered on a
    SubscriptionsListenRequestsubscriptions/listen stream when the client requested it via the
    `toolsListChanged` filter field.
    """
    jsonrpc: Literal["2.0"]
    method: ClassVar[Literal["notifications/tools/list_changed"]] = "notifications/tools/list_changed"
    params: NotificationParams | None = None


class ToolResultContent(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="type",
    tag="tool_result",
    rename={
        "meta": "_meta",
        "is_error": "isError",
        "structured_content": "structuredContent",
        "tool_use_id": "toolUseId",
    },
):
    """The result of a tool use, provided by the user back to the assistant."""
    #: The unstructured result content of the tool use.
    content: list[ContentBlock]
    #: The ID of the tool use this result corresponds to.
    tool_use_id: str
    type: ClassVar[Literal["tool_result"]] = "tool_result"
    #: Optional metadata about the tool result. Clients SHOULD preserve this field when
    #: including tool results in subsequent sampling requests to enable caching
    #: optimizations.
    meta: dict[str, Any] | None = None
    #: Whether the tool use resulted in an error.
    is_error: bool | None = None
    #: An optional structured result value.
    structured_content: Any = None


class ToolUseContent(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="type",
    tag="tool_use",
    rename={"meta": "_meta"},
):
    """A request from the assistant to call a tool."""
    #: A unique identifier for this tool use.
    id: str
    #: The arguments to pass to the tool, conforming to the tool's input schema.
    input: dict[str, Any]
    #: The name of the tool to call.
    name: str
    type: ClassVar[Literal["tool_use"]] = "tool_use"
    #: Optional metadata about the tool use. Clients SHOULD preserve this field when
    #: including tool uses in subsequent sampling requests to enable caching optimizations.
    meta: dict[str, Any] | None = None


class UnsupportedProtocolVersionErrorErrorData(msgspec.Struct, kw_only=True, omit_defaults=True):
    #: The protocol version that was requested by the client.
    requested: str
    #: Protocol versions the server supports. The client should choose a mutually supported
    #: version from this list and retry.
    supported: list[str]


class UnsupportedProtocolVersionErrorError(msgspec.Struct, kw_only=True, omit_defaults=True):
    code: Literal[-32022]
    data: UnsupportedProtocolVersionErrorErrorData
    #: A short description of the error. The message SHOULD be limited to a concise single
    #: sentence.
    message: str


class UnsupportedProtocolVersionError(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Returned when the request's protocol version is unknown to the server or
    unsupported (e.g., a known experimental or draft version the server has
    chosen not to implement). For HTTP, the response status code MUST be
    `400 Bad Request`.
    """
    error: UnsupportedProtocolVersionErrorError
    jsonrpc: Literal["2.0"]
    id: RequestId | None = None


class UntitledMultiSelectEnumSchemaItems(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="type",
    tag="string",
):
    """Schema for the array items."""
    #: Array of enum values to choose from.
    enum: list[str]
    type: ClassVar[Literal["string"]] = "string"


class UntitledMultiSelectEnumSchema(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="type",
    tag="array",
    rename={"max_items": "maxItems", "min_items": "minItems"},
):
    """Schema for multiple-selection enumeration without display titles for options."""
    #: Schema for the array items.
    items: UntitledMultiSelectEnumSchemaItems
    type: ClassVar[Literal["array"]] = "array"
    #: Optional default value.
    default: list[str] | None = None
    #: Optional description for the enum field.
    description: str | None = None
    #: Maximum number of items to select.
    max_items: int | None = None
    #: Minimum number of items to select.
    min_items: int | None = None
    #: Optional title for the enum field.
    title: str | None = None


class UntitledSingleSelectEnumSchema(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="type",
    tag="string",
):
    """Schema for single-selection enumeration without display titles for options."""
    #: Array of enum values to choose from.
    enum: list[str]
    type: ClassVar[Literal["string"]] = "string"
    #: Optional default value.
    default: str | None = None
    #: Optional description for the enum field.
    description: str | None = None
    #: Optional title for the enum field.
    title: str | None = None


ClientRequest = (
    DiscoverRequest
    | ListResourcesRequest
    | ListResourceTemplatesRequest
    | ReadResourceRequest
    | SubscriptionsListenRequest
    | ListPromptsRequest
    | GetPromptRequest
    | ListToolsRequest
    | CallToolRequest
    | CompleteRequest
)


#: Common result fields.
ClientResult = Result


ContentBlock = TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource


#: Common result fields.
EmptyResult = Result


InputRequest = CreateMessageRequest | ListRootsRequest | ElicitRequest


#: A map of server-initiated requests that the client must fulfill. Keys are server-assigned
#: identifiers; values are the request objects.
InputRequests = dict[str, InputRequest]


SamplingMessageContentBlock = (
    TextContent
    | ImageContent
    | AudioContent
    | ToolUseContent
    | ToolResultContent
)


ServerNotification = (
    CancelledNotification
    | ProgressNotification
    | ResourceListChangedNotification
    | SubscriptionsAcknowledgedNotification
    | ResourceUpdatedNotification
    | PromptListChangedNotification
    | ToolListChangedNotification
    | LoggingMessageNotification
)
