# Generated from schema.json (sha256 af845e7e5b9d27107d1690f0936022546177a1403e63ffb11470135b296a2e01) — do not edit.
# MCP specification 2025-06-18; regenerate with `python tools/gen_types.py`.
# ruff: noqa: E501
"""MCP 2025-06-18 protocol types as msgspec Structs, generated from its schema."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import msgspec

__all__ = [
    "Annotations",
    "AudioContent",
    "BaseMetadata",
    "BlobResourceContents",
    "BooleanSchema",
    "CallToolRequest",
    "CallToolRequestParams",
    "CallToolResult",
    "CancelledNotification",
    "CancelledNotificationParams",
    "ClientCapabilities",
    "ClientCapabilitiesRoots",
    "ClientNotification",
    "ClientRequest",
    "ClientResult",
    "CompleteRequest",
    "CompleteRequestParams",
    "CompleteRequestParamsArgument",
    "CompleteRequestParamsContext",
    "CompleteResult",
    "CompleteResultCompletion",
    "ContentBlock",
    "CreateMessageRequest",
    "CreateMessageRequestParams",
    "CreateMessageResult",
    "Cursor",
    "ElicitRequest",
    "ElicitRequestParams",
    "ElicitResult",
    "EmbeddedResource",
    "EmptyResult",
    "EnumSchema",
    "GetPromptRequest",
    "GetPromptRequestParams",
    "GetPromptResult",
    "ImageContent",
    "Implementation",
    "InitializeRequest",
    "InitializeRequestParams",
    "InitializeResult",
    "InitializedNotification",
    "JSONRPCError",
    "JSONRPCErrorError",
    "JSONRPCMessage",
    "JSONRPCNotification",
    "JSONRPCRequest",
    "JSONRPCResponse",
    "ListPromptsRequest",
    "ListPromptsRequestParams",
    "ListPromptsResult",
    "ListResourceTemplatesRequest",
    "ListResourceTemplatesRequestParams",
    "ListResourceTemplatesResult",
    "ListResourcesRequest",
    "ListResourcesRequestParams",
    "ListResourcesResult",
    "ListRootsRequest",
    "ListRootsResult",
    "ListToolsRequest",
    "ListToolsRequestParams",
    "ListToolsResult",
    "LoggingLevel",
    "LoggingMessageNotification",
    "LoggingMessageNotificationParams",
    "ModelHint",
    "ModelPreferences",
    "Notification",
    "NumberSchema",
    "PaginatedRequest",
    "PaginatedRequestParams",
    "PaginatedResult",
    "PingRequest",
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
    "Request",
    "RequestId",
    "Resource",
    "ResourceContents",
    "ResourceLink",
    "ResourceListChangedNotification",
    "ResourceTemplate",
    "ResourceTemplateReference",
    "ResourceUpdatedNotification",
    "ResourceUpdatedNotificationParams",
    "Result",
    "Role",
    "Root",
    "RootsListChangedNotification",
    "SamplingMessage",
    "ServerCapabilities",
    "ServerCapabilitiesPrompts",
    "ServerCapabilitiesResources",
    "ServerCapabilitiesTools",
    "ServerNotification",
    "ServerRequest",
    "ServerResult",
    "SetLevelRequest",
    "SetLevelRequestParams",
    "StringSchema",
    "SubscribeRequest",
    "SubscribeRequestParams",
    "TextContent",
    "TextResourceContents",
    "Tool",
    "ToolAnnotations",
    "ToolListChangedNotification",
    "UnsubscribeRequest",
    "UnsubscribeRequestParams",
]


ClientResult = dict[str, Any]


#: An opaque token used to represent a cursor for pagination.
Cursor = str


#: Refers to any valid JSON-RPC object that can be decoded off the wire, or encoded to be sent.
JSONRPCMessage = dict[str, Any]


#: The severity of a log message.
LoggingLevel = Literal["alert", "critical", "debug", "emergency", "error", "info", "notice", "warning"]


#: Restricted schema definitions that only allow primitive types without nested objects or
#: arrays.
PrimitiveSchemaDefinition = dict[str, Any]


#: A progress token, used to associate progress notifications with the original request.
ProgressToken = str | int


#: A uniquely identifying ID for a request in JSON-RPC.
RequestId = str | int


#: The sender or recipient of messages and data in a conversation.
Role = Literal["assistant", "user"]


ServerResult = dict[str, Any]


class Annotations(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"last_modified": "lastModified"},
):
    """Optional annotations for the client. The client can use annotations to inform how objects are
    used or displayed
    """
    #: Describes who the intended customer of this object or data is.
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
    #: See [General fields: `_meta`](/specification/2025-06-18/basic/index#meta) for notes on
    #: `_meta` usage.
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
    #: See [General fields: `_meta`](/specification/2025-06-18/basic/index#meta) for notes on
    #: `_meta` usage.
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


class CallToolRequestParams(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta"},
):
    name: str
    #: Protocol-level metadata, e.g. `progressToken`.
    meta: dict[str, Any] | None = None
    arguments: dict[str, Any] | None = None


class CallToolRequest(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="method",
    tag="tools/call",
):
    """Used by the client to invoke a tool provided by the server."""
    method: ClassVar[Literal["tools/call"]] = "tools/call"
    params: CallToolRequestParams


class CallToolResult(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta", "is_error": "isError", "structured_content": "structuredContent"},
):
    """The server's response to a tool call."""
    #: A list of content objects that represent the unstructured result of the tool call.
    content: list[ContentBlock]
    #: See [General fields: `_meta`](/specification/2025-06-18/basic/index#meta) for notes on
    #: `_meta` usage.
    meta: dict[str, Any] | None = None
    #: Whether the tool call ended in an error.
    is_error: bool | None = None
    #: An optional JSON object that represents the structured result of the tool call.
    structured_content: dict[str, Any] | None = None


class CancelledNotificationParams(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta", "request_id": "requestId"},
):
    #: The ID of the request to cancel.
    request_id: RequestId
    #: Protocol-level metadata, e.g. `progressToken`.
    meta: dict[str, Any] | None = None
    #: An optional string describing the reason for the cancellation. This MAY be logged or
    #: presented to the user.
    reason: str | None = None


class CancelledNotification(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="method",
    tag="notifications/cancelled",
):
    """This notification can be sent by either side to indicate that it is cancelling a
    previously-issued request.

    The request SHOULD still be in-flight, but due to communication latency, it is always possible
    that this notification MAY arrive after the request has already finished.

    This notification indicates that the result will be unused, so any associated processing SHOULD
    cease.

    A client MUST NOT attempt to cancel its `initialize` request.
    """
    method: ClassVar[Literal["notifications/cancelled"]] = "notifications/cancelled"
    params: CancelledNotificationParams


class ClientCapabilitiesRoots(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"list_changed": "listChanged"},
):
    """Present if the client supports listing roots."""
    #: Whether the client supports notifications for changes to the roots list.
    list_changed: bool | None = None


class ClientCapabilities(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Capabilities a client may support. Known capabilities are defined here, in this schema, but
    this is not a closed set: any client can define its own, additional capabilities.
    """
    #: Present if the client supports elicitation from the server.
    elicitation: dict[str, Any] | None = None
    #: Experimental, non-standard capabilities that the client supports.
    experimental: dict[str, dict[str, Any]] | None = None
    #: Present if the client supports listing roots.
    roots: ClientCapabilitiesRoots | None = None
    #: Present if the client supports sampling from an LLM.
    sampling: dict[str, Any] | None = None


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
    #: The argument's information
    argument: CompleteRequestParamsArgument
    ref: PromptReference | ResourceTemplateReference
    #: Protocol-level metadata, e.g. `progressToken`.
    meta: dict[str, Any] | None = None
    #: Additional, optional context for completions
    context: CompleteRequestParamsContext | None = None


class CompleteRequest(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="method",
    tag="completion/complete",
):
    """A request from the client to the server, to ask for completion options."""
    method: ClassVar[Literal["completion/complete"]] = "completion/complete"
    params: CompleteRequestParams


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


class CompleteResult(msgspec.Struct, kw_only=True, omit_defaults=True, rename={"meta": "_meta"}):
    """The server's response to a completion/complete request"""
    completion: CompleteResultCompletion
    #: See [General fields: `_meta`](/specification/2025-06-18/basic/index#meta) for notes on
    #: `_meta` usage.
    meta: dict[str, Any] | None = None


class CreateMessageRequestParams(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={
        "meta": "_meta",
        "include_context": "includeContext",
        "max_tokens": "maxTokens",
        "model_preferences": "modelPreferences",
        "stop_sequences": "stopSequences",
        "system_prompt": "systemPrompt",
    },
):
    #: The requested maximum number of tokens to sample (to prevent runaway completions).
    max_tokens: int
    messages: list[SamplingMessage]
    #: Protocol-level metadata, e.g. `progressToken`.
    meta: dict[str, Any] | None = None
    #: A request to include context from one or more MCP servers (including the caller), to
    #: be attached to the prompt. The client MAY ignore this request.
    include_context: Literal["allServers", "none", "thisServer"] | None = None
    #: Optional metadata to pass through to the LLM provider. The format of this metadata is
    #: provider-specific.
    metadata: dict[str, Any] | None = None
    #: The server's preferences for which model to select. The client MAY ignore these
    #: preferences.
    model_preferences: ModelPreferences | None = None
    stop_sequences: list[str] | None = None
    #: An optional system prompt the server wants to use for sampling. The client MAY modify
    #: or omit this prompt.
    system_prompt: str | None = None
    temperature: int | float | None = None


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


class CreateMessageResult(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta", "stop_reason": "stopReason"},
):
    """The client's response to a sampling/create_message request from the server. The client should
    inform the user before returning the sampled message, to allow them to inspect the response
    (human in the loop) and decide whether to allow the server to see it.
    """
    content: TextContent | ImageContent | AudioContent
    #: The name of the model that generated the message.
    model: str
    role: Role
    #: See [General fields: `_meta`](/specification/2025-06-18/basic/index#meta) for notes on
    #: `_meta` usage.
    meta: dict[str, Any] | None = None
    #: The reason why sampling stopped, if known.
    stop_reason: str | None = None


class ElicitRequestParams(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta", "requested_schema": "requestedSchema"},
):
    #: The message to present to the user.
    message: str
    #: A restricted subset of JSON Schema. Only top-level properties are allowed, without
    #: nesting.
    requested_schema: dict[str, Any]
    #: Protocol-level metadata, e.g. `progressToken`.
    meta: dict[str, Any] | None = None


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


class ElicitResult(msgspec.Struct, kw_only=True, omit_defaults=True, rename={"meta": "_meta"}):
    """The client's response to an elicitation request."""
    #: The user action in response to the elicitation. - "accept": User submitted the
    #: form/confirmed the action - "decline": User explicitly declined the action - "cancel":
    #: User dismissed without making an explicit choice
    action: Literal["accept", "cancel", "decline"]
    #: See [General fields: `_meta`](/specification/2025-06-18/basic/index#meta) for notes on
    #: `_meta` usage.
    meta: dict[str, Any] | None = None
    #: The submitted form data, only present when action is "accept". Contains values
    #: matching the requested schema.
    content: dict[str, str | int | bool] | None = None


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
    #: See [General fields: `_meta`](/specification/2025-06-18/basic/index#meta) for notes on
    #: `_meta` usage.
    meta: dict[str, Any] | None = None
    #: Optional annotations for the client.
    annotations: Annotations | None = None


class EnumSchema(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="type",
    tag="string",
    rename={"enum_names": "enumNames"},
):
    enum: list[str]
    type: ClassVar[Literal["string"]] = "string"
    description: str | None = None
    enum_names: list[str] | None = None
    title: str | None = None


class GetPromptRequestParams(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta"},
):
    #: The name of the prompt or prompt template.
    name: str
    #: Protocol-level metadata, e.g. `progressToken`.
    meta: dict[str, Any] | None = None
    #: Arguments to use for templating the prompt.
    arguments: dict[str, str] | None = None


class GetPromptRequest(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="method",
    tag="prompts/get",
):
    """Used by the client to get a prompt provided by the server."""
    method: ClassVar[Literal["prompts/get"]] = "prompts/get"
    params: GetPromptRequestParams


class GetPromptResult(msgspec.Struct, kw_only=True, omit_defaults=True, rename={"meta": "_meta"}):
    """The server's response to a prompts/get request from the client."""
    messages: list[PromptMessage]
    #: See [General fields: `_meta`](/specification/2025-06-18/basic/index#meta) for notes on
    #: `_meta` usage.
    meta: dict[str, Any] | None = None
    #: An optional description for the prompt.
    description: str | None = None


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
    #: See [General fields: `_meta`](/specification/2025-06-18/basic/index#meta) for notes on
    #: `_meta` usage.
    meta: dict[str, Any] | None = None
    #: Optional annotations for the client.
    annotations: Annotations | None = None


class Implementation(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Describes the name and version of an MCP implementation, with an optional title for UI
    representation.
    """
    #: Intended for programmatic or logical use, but used as a display name in past specs or
    #: fallback (if title isn't present).
    name: str
    version: str
    #: Intended for UI and end-user contexts — optimized to be human-readable and easily
    #: understood, even by those unfamiliar with domain-specific terminology.
    title: str | None = None


class InitializeRequestParams(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta", "client_info": "clientInfo", "protocol_version": "protocolVersion"},
):
    capabilities: ClientCapabilities
    client_info: Implementation
    #: The latest version of the Model Context Protocol that the client supports. The client
    #: MAY decide to support older versions as well.
    protocol_version: str
    #: Protocol-level metadata, e.g. `progressToken`.
    meta: dict[str, Any] | None = None


class InitializeRequest(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="method",
    tag="initialize",
):
    """This request is sent from the client to the server when it first connects, asking it to begin
    initialization.
    """
    method: ClassVar[Literal["initialize"]] = "initialize"
    params: InitializeRequestParams


class InitializeResult(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta", "protocol_version": "protocolVersion", "server_info": "serverInfo"},
):
    """After receiving an initialize request from the client, the server sends this response."""
    capabilities: ServerCapabilities
    #: The version of the Model Context Protocol that the server wants to use. This may not
    #: match the version that the client requested. If the client cannot support this
    #: version, it MUST disconnect.
    protocol_version: str
    server_info: Implementation
    #: See [General fields: `_meta`](/specification/2025-06-18/basic/index#meta) for notes on
    #: `_meta` usage.
    meta: dict[str, Any] | None = None
    #: Instructions describing how to use the server and its features.
    instructions: str | None = None


class InitializedNotification(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="method",
    tag="notifications/initialized",
):
    """This notification is sent from the client to the server after initialization has finished."""
    method: ClassVar[Literal["notifications/initialized"]] = "notifications/initialized"
    params: dict[str, Any] | None = None


class JSONRPCErrorError(msgspec.Struct, kw_only=True, omit_defaults=True):
    #: The error type that occurred.
    code: int
    #: A short description of the error. The message SHOULD be limited to a concise single
    #: sentence.
    message: str
    #: Additional information about the error. The value of this member is defined by the
    #: sender (e.g. detailed error information, nested errors etc.).
    data: Any = None


class JSONRPCError(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A response to a request that indicates an error occurred."""
    error: JSONRPCErrorError
    id: RequestId
    jsonrpc: Literal["2.0"]


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


class JSONRPCResponse(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A successful (non-error) response to a request."""
    id: RequestId
    jsonrpc: Literal["2.0"]
    result: Result


class ListPromptsRequestParams(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta"},
):
    #: Protocol-level metadata, e.g. `progressToken`.
    meta: dict[str, Any] | None = None
    #: An opaque token representing the current pagination position. If provided, the server
    #: should return results starting after this cursor.
    cursor: str | None = None


class ListPromptsRequest(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="method",
    tag="prompts/list",
):
    """Sent from the client to request a list of prompts and prompt templates the server has."""
    method: ClassVar[Literal["prompts/list"]] = "prompts/list"
    params: ListPromptsRequestParams | None = None


class ListPromptsResult(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta", "next_cursor": "nextCursor"},
):
    """The server's response to a prompts/list request from the client."""
    prompts: list[Prompt]
    #: See [General fields: `_meta`](/specification/2025-06-18/basic/index#meta) for notes on
    #: `_meta` usage.
    meta: dict[str, Any] | None = None
    #: An opaque token representing the pagination position after the last returned result.
    #: If present, there may be more results available.
    next_cursor: str | None = None


class ListResourceTemplatesRequestParams(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta"},
):
    #: Protocol-level metadata, e.g. `progressToken`.
    meta: dict[str, Any] | None = None
    #: An opaque token representing the current pagination position. If provided, the server
    #: should return results starting after this cursor.
    cursor: str | None = None


class ListResourceTemplatesRequest(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="method",
    tag="resources/templates/list",
):
    """Sent from the client to request a list of resource templates the server has."""
    method: ClassVar[Literal["resources/templates/list"]] = "resources/templates/list"
    params: ListResourceTemplatesRequestParams | None = None


class ListResourceTemplatesResult(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={
        "meta": "_meta",
        "next_cursor": "nextCursor",
        "resource_templates": "resourceTemplates",
    },
):
    """The server's response to a resources/templates/list request from the client."""
    resource_templates: list[ResourceTemplate]
    #: See [General fields: `_meta`](/specification/2025-06-18/basic/index#meta) for notes on
    #: `_meta` usage.
    meta: dict[str, Any] | None = None
    #: An opaque token representing the pagination position after the last returned result.
    #: If present, there may be more results available.
    next_cursor: str | None = None


class ListResourcesRequestParams(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta"},
):
    #: Protocol-level metadata, e.g. `progressToken`.
    meta: dict[str, Any] | None = None
    #: An opaque token representing the current pagination position. If provided, the server
    #: should return results starting after this cursor.
    cursor: str | None = None


class ListResourcesRequest(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="method",
    tag="resources/list",
):
    """Sent from the client to request a list of resources the server has."""
    method: ClassVar[Literal["resources/list"]] = "resources/list"
    params: ListResourcesRequestParams | None = None


class ListResourcesResult(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta", "next_cursor": "nextCursor"},
):
    """The server's response to a resources/list request from the client."""
    resources: list[Resource]
    #: See [General fields: `_meta`](/specification/2025-06-18/basic/index#meta) for notes on
    #: `_meta` usage.
    meta: dict[str, Any] | None = None
    #: An opaque token representing the pagination position after the last returned result.
    #: If present, there may be more results available.
    next_cursor: str | None = None


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
    params: dict[str, Any] | None = None


class ListRootsResult(msgspec.Struct, kw_only=True, omit_defaults=True, rename={"meta": "_meta"}):
    """The client's response to a roots/list request from the server.
    This result contains an array of Root objects, each representing a root directory
    or file that the server can operate on.
    """
    roots: list[Root]
    #: See [General fields: `_meta`](/specification/2025-06-18/basic/index#meta) for notes on
    #: `_meta` usage.
    meta: dict[str, Any] | None = None


class ListToolsRequestParams(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta"},
):
    #: Protocol-level metadata, e.g. `progressToken`.
    meta: dict[str, Any] | None = None
    #: An opaque token representing the current pagination position. If provided, the server
    #: should return results starting after this cursor.
    cursor: str | None = None


class ListToolsRequest(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="method",
    tag="tools/list",
):
    """Sent from the client to request a list of tools the server has."""
    method: ClassVar[Literal["tools/list"]] = "tools/list"
    params: ListToolsRequestParams | None = None


class ListToolsResult(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta", "next_cursor": "nextCursor"},
):
    """The server's response to a tools/list request from the client."""
    tools: list[Tool]
    #: See [General fields: `_meta`](/specification/2025-06-18/basic/index#meta) for notes on
    #: `_meta` usage.
    meta: dict[str, Any] | None = None
    #: An opaque token representing the pagination position after the last returned result.
    #: If present, there may be more results available.
    next_cursor: str | None = None


class LoggingMessageNotificationParams(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta"},
):
    #: The data to be logged, such as a string message or an object. Any JSON serializable
    #: type is allowed here.
    data: Any
    #: The severity of this log message.
    level: LoggingLevel
    #: Protocol-level metadata, e.g. `progressToken`.
    meta: dict[str, Any] | None = None
    #: An optional name of the logger issuing this message.
    logger: str | None = None


class LoggingMessageNotification(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="method",
    tag="notifications/message",
):
    """Notification of a log message passed from server to client. If no logging/setLevel request
    has been sent from the client, the server MAY decide which messages to send automatically.
    """
    method: ClassVar[Literal["notifications/message"]] = "notifications/message"
    params: LoggingMessageNotificationParams


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


class NumberSchema(msgspec.Struct, kw_only=True, omit_defaults=True):
    type: Literal["integer", "number"]
    description: str | None = None
    maximum: int | float | None = None
    minimum: int | float | None = None
    title: str | None = None


class PaginatedRequestParams(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta"},
):
    #: Protocol-level metadata, e.g. `progressToken`.
    meta: dict[str, Any] | None = None
    #: An opaque token representing the current pagination position. If provided, the server
    #: should return results starting after this cursor.
    cursor: str | None = None


class PaginatedRequest(msgspec.Struct, kw_only=True, omit_defaults=True):
    method: str
    params: PaginatedRequestParams | None = None


class PaginatedResult(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta", "next_cursor": "nextCursor"},
):
    #: See [General fields: `_meta`](/specification/2025-06-18/basic/index#meta) for notes on
    #: `_meta` usage.
    meta: dict[str, Any] | None = None
    #: An opaque token representing the pagination position after the last returned result.
    #: If present, there may be more results available.
    next_cursor: str | None = None


class PingRequest(msgspec.Struct, kw_only=True, omit_defaults=True, tag_field="method", tag="ping"):
    """A ping, issued by either the server or the client, to check that the other party is still
    alive. The receiver must promptly respond, or else may be disconnected.
    """
    method: ClassVar[Literal["ping"]] = "ping"
    params: dict[str, Any] | None = None


class ProgressNotificationParams(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta", "progress_token": "progressToken"},
):
    #: The progress thus far. This should increase every time progress is made, even if the
    #: total is unknown.
    progress: int | float
    #: The progress token which was given in the initial request, used to associate this
    #: notification with the request that is proceeding.
    progress_token: ProgressToken
    #: Protocol-level metadata, e.g. `progressToken`.
    meta: dict[str, Any] | None = None
    #: An optional message describing the current progress.
    message: str | None = None
    #: Total number of items to process (or total progress required), if known.
    total: int | float | None = None


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
    method: ClassVar[Literal["notifications/progress"]] = "notifications/progress"
    params: ProgressNotificationParams


class Prompt(msgspec.Struct, kw_only=True, omit_defaults=True, rename={"meta": "_meta"}):
    """A prompt or prompt template that the server offers."""
    #: Intended for programmatic or logical use, but used as a display name in past specs or
    #: fallback (if title isn't present).
    name: str
    #: See [General fields: `_meta`](/specification/2025-06-18/basic/index#meta) for notes on
    #: `_meta` usage.
    meta: dict[str, Any] | None = None
    #: A list of arguments to use for templating the prompt.
    arguments: list[PromptArgument] | None = None
    #: An optional description of what this prompt provides
    description: str | None = None
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
    it offers has changed. This may be issued by servers without any previous subscription from the
    client.
    """
    method: ClassVar[Literal["notifications/prompts/list_changed"]] = "notifications/prompts/list_changed"
    params: dict[str, Any] | None = None


class PromptMessage(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Describes a message returned as part of a prompt.

    This is similar to `SamplingMessage`, but also supports the embedding of
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


class ReadResourceRequestParams(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta"},
):
    #: The URI of the resource to read. The URI can use any protocol; it is up to the server
    #: how to interpret it.
    uri: str
    #: Protocol-level metadata, e.g. `progressToken`.
    meta: dict[str, Any] | None = None


class ReadResourceRequest(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="method",
    tag="resources/read",
):
    """Sent from the client to the server, to read a specific resource URI."""
    method: ClassVar[Literal["resources/read"]] = "resources/read"
    params: ReadResourceRequestParams


class ReadResourceResult(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta"},
):
    """The server's response to a resources/read request from the client."""
    contents: list[dict[str, Any]]
    #: See [General fields: `_meta`](/specification/2025-06-18/basic/index#meta) for notes on
    #: `_meta` usage.
    meta: dict[str, Any] | None = None


class Request(msgspec.Struct, kw_only=True, omit_defaults=True):
    method: str
    params: dict[str, Any] | None = None


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
    #: See [General fields: `_meta`](/specification/2025-06-18/basic/index#meta) for notes on
    #: `_meta` usage.
    meta: dict[str, Any] | None = None
    #: Optional annotations for the client.
    annotations: Annotations | None = None
    #: A description of what this resource represents.
    description: str | None = None
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
    #: See [General fields: `_meta`](/specification/2025-06-18/basic/index#meta) for notes on
    #: `_meta` usage.
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
    `resources/list` requests.
    """
    #: Intended for programmatic or logical use, but used as a display name in past specs or
    #: fallback (if title isn't present).
    name: str
    type: ClassVar[Literal["resource_link"]] = "resource_link"
    #: The URI of this resource.
    uri: str
    #: See [General fields: `_meta`](/specification/2025-06-18/basic/index#meta) for notes on
    #: `_meta` usage.
    meta: dict[str, Any] | None = None
    #: Optional annotations for the client.
    annotations: Annotations | None = None
    #: A description of what this resource represents.
    description: str | None = None
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
    resources it can read from has changed. This may be issued by servers without any previous
    subscription from the client.
    """
    method: ClassVar[Literal["notifications/resources/list_changed"]] = "notifications/resources/list_changed"
    params: dict[str, Any] | None = None


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
    #: See [General fields: `_meta`](/specification/2025-06-18/basic/index#meta) for notes on
    #: `_meta` usage.
    meta: dict[str, Any] | None = None
    #: Optional annotations for the client.
    annotations: Annotations | None = None
    #: A description of what this template is for.
    description: str | None = None
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


class ResourceUpdatedNotificationParams(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta"},
):
    #: The URI of the resource that has been updated. This might be a sub-resource of the one
    #: that the client actually subscribed to.
    uri: str
    #: Protocol-level metadata, e.g. `progressToken`.
    meta: dict[str, Any] | None = None


class ResourceUpdatedNotification(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="method",
    tag="notifications/resources/updated",
):
    """A notification from the server to the client, informing it that a resource has changed and
    may need to be read again. This should only be sent if the client previously sent a
    resources/subscribe request.
    """
    method: ClassVar[Literal["notifications/resources/updated"]] = "notifications/resources/updated"
    params: ResourceUpdatedNotificationParams


class Result(msgspec.Struct, kw_only=True, omit_defaults=True, rename={"meta": "_meta"}):
    #: See [General fields: `_meta`](/specification/2025-06-18/basic/index#meta) for notes on
    #: `_meta` usage.
    meta: dict[str, Any] | None = None


class Root(msgspec.Struct, kw_only=True, omit_defaults=True, rename={"meta": "_meta"}):
    """Represents a root directory or file that the server can operate on."""
    #: The URI identifying the root. This *must* start with file:// for now. This restriction
    #: may be relaxed in future versions of the protocol to allow other URI schemes.
    uri: str
    #: See [General fields: `_meta`](/specification/2025-06-18/basic/index#meta) for notes on
    #: `_meta` usage.
    meta: dict[str, Any] | None = None
    #: An optional name for the root. This can be used to provide a human-readable identifier
    #: for the root, which may be useful for display purposes or for referencing the root in
    #: other parts of the application.
    name: str | None = None


class RootsListChangedNotification(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="method",
    tag="notifications/roots/list_changed",
):
    """A notification from the client to the server, informing it that the list of roots has
    changed.
    This notification should be sent whenever the client adds, removes, or modifies any root.
    The server should then request an updated list of roots using the ListRootsRequest.
    """
    method: ClassVar[Literal["notifications/roots/list_changed"]] = "notifications/roots/list_changed"
    params: dict[str, Any] | None = None


class SamplingMessage(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Describes a message issued to or received from an LLM API."""
    content: TextContent | ImageContent | AudioContent
    role: Role


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
    completions: dict[str, Any] | None = None
    #: Experimental, non-standard capabilities that the server supports.
    experimental: dict[str, dict[str, Any]] | None = None
    #: Present if the server supports sending log messages to the client.
    logging: dict[str, Any] | None = None
    #: Present if the server offers any prompt templates.
    prompts: ServerCapabilitiesPrompts | None = None
    #: Present if the server offers any resources to read.
    resources: ServerCapabilitiesResources | None = None
    #: Present if the server offers any tools to call.
    tools: ServerCapabilitiesTools | None = None


class SetLevelRequestParams(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta"},
):
    #: The level of logging that the client wants to receive from the server. The server
    #: should send all logs at this level and higher (i.e., more severe) to the client as
    #: notifications/message.
    level: LoggingLevel
    #: Protocol-level metadata, e.g. `progressToken`.
    meta: dict[str, Any] | None = None


class SetLevelRequest(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="method",
    tag="logging/setLevel",
):
    """A request from the client to the server, to enable or adjust logging."""
    method: ClassVar[Literal["logging/setLevel"]] = "logging/setLevel"
    params: SetLevelRequestParams


class StringSchema(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="type",
    tag="string",
    rename={"max_length": "maxLength", "min_length": "minLength"},
):
    type: ClassVar[Literal["string"]] = "string"
    description: str | None = None
    format: Literal["date", "date-time", "email", "uri"] | None = None
    max_length: int | None = None
    min_length: int | None = None
    title: str | None = None


class SubscribeRequestParams(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta"},
):
    #: The URI of the resource to subscribe to. The URI can use any protocol; it is up to the
    #: server how to interpret it.
    uri: str
    #: Protocol-level metadata, e.g. `progressToken`.
    meta: dict[str, Any] | None = None


class SubscribeRequest(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="method",
    tag="resources/subscribe",
):
    """Sent from the client to request resources/updated notifications from the server whenever a
    particular resource changes.
    """
    method: ClassVar[Literal["resources/subscribe"]] = "resources/subscribe"
    params: SubscribeRequestParams


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
    #: See [General fields: `_meta`](/specification/2025-06-18/basic/index#meta) for notes on
    #: `_meta` usage.
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
    #: See [General fields: `_meta`](/specification/2025-06-18/basic/index#meta) for notes on
    #: `_meta` usage.
    meta: dict[str, Any] | None = None
    #: The MIME type of this resource, if known.
    mime_type: str | None = None


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
    #: See [General fields: `_meta`](/specification/2025-06-18/basic/index#meta) for notes on
    #: `_meta` usage.
    meta: dict[str, Any] | None = None
    #: Optional additional tool information.
    annotations: ToolAnnotations | None = None
    #: A human-readable description of the tool.
    description: str | None = None
    #: An optional JSON Schema object defining the structure of the tool's output returned in
    #: the structuredContent field of a CallToolResult.
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

    NOTE: all properties in ToolAnnotations are **hints**.
    They are not guaranteed to provide a faithful description of
    tool behavior (including descriptive properties like `title`).

    Clients should never make tool use decisions based on ToolAnnotations
    received from untrusted servers.
    """
    #: If true, the tool may perform destructive updates to its environment. If false, the
    #: tool performs only additive updates.
    destructive_hint: bool | None = None
    #: If true, calling the tool repeatedly with the same arguments will have no additional
    #: effect on the its environment.
    idempotent_hint: bool | None = None
    #: If true, this tool may interact with an "open world" of external entities. If false,
    #: the tool's domain of interaction is closed. For example, the world of a web search
    #: tool is open, whereas that of a memory tool is not.
    open_world_hint: bool | None = None
    #: If true, the tool does not modify its environment.
    read_only_hint: bool | None = None
    #: A human-readable title for the tool.
    title: str | None = None


class ToolListChangedNotification(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="method",
    tag="notifications/tools/list_changed",
):
    """An optional notification from the server to the client, informing it that the list of tools
    it offers has changed. This may be issued by servers without any previous subscription from the
    client.
    """
    method: ClassVar[Literal["notifications/tools/list_changed"]] = "notifications/tools/list_changed"
    params: dict[str, Any] | None = None


class UnsubscribeRequestParams(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta"},
):
    #: The URI of the resource to unsubscribe from.
    uri: str
    #: Protocol-level metadata, e.g. `progressToken`.
    meta: dict[str, Any] | None = None


class UnsubscribeRequest(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="method",
    tag="resources/unsubscribe",
):
    """Sent from the client to request cancellation of resources/updated notifications from the
    server. This should follow a previous resources/subscribe request.
    """
    method: ClassVar[Literal["resources/unsubscribe"]] = "resources/unsubscribe"
    params: UnsubscribeRequestParams


ClientNotification = (
    CancelledNotification
    | InitializedNotification
    | ProgressNotification
    | RootsListChangedNotification
)


ClientRequest = (
    InitializeRequest
    | PingRequest
    | ListResourcesRequest
    | ListResourceTemplatesRequest
    | ReadResourceRequest
    | SubscribeRequest
    | UnsubscribeRequest
    | ListPromptsRequest
    | GetPromptRequest
    | ListToolsRequest
    | CallToolRequest
    | SetLevelRequest
    | CompleteRequest
)


ContentBlock = TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource


EmptyResult = Result


ServerNotification = (
    CancelledNotification
    | ProgressNotification
    | ResourceListChangedNotification
    | ResourceUpdatedNotification
    | PromptListChangedNotification
    | ToolListChangedNotification
    | LoggingMessageNotification
)


ServerRequest = PingRequest | CreateMessageRequest | ListRootsRequest | ElicitRequest
