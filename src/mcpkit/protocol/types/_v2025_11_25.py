# Generated from schema.json (sha256 268a5f82ba70fd7e4b6dc4aa1e64f116f74b4d0edcb69dc046829c79dd4e97e7) — do not edit.
# MCP specification 2025-11-25; regenerate with `python tools/gen_types.py`.
# ruff: noqa: E501
"""MCP 2025-11-25 protocol types as msgspec Structs, generated from its schema."""

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
    "CancelTaskRequest",
    "CancelTaskRequestParams",
    "CancelTaskResult",
    "CancelledNotification",
    "CancelledNotificationParams",
    "ClientCapabilities",
    "ClientCapabilitiesElicitation",
    "ClientCapabilitiesRoots",
    "ClientCapabilitiesSampling",
    "ClientCapabilitiesTasks",
    "ClientCapabilitiesTasksRequests",
    "ClientCapabilitiesTasksRequestsElicitation",
    "ClientCapabilitiesTasksRequestsSampling",
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
    "CreateTaskResult",
    "Cursor",
    "ElicitRequest",
    "ElicitRequestFormParams",
    "ElicitRequestParams",
    "ElicitRequestURLParams",
    "ElicitResult",
    "ElicitationCompleteNotification",
    "ElicitationCompleteNotificationParams",
    "EmbeddedResource",
    "EmptyResult",
    "EnumSchema",
    "Error",
    "GetPromptRequest",
    "GetPromptRequestParams",
    "GetPromptResult",
    "GetTaskPayloadRequest",
    "GetTaskPayloadRequestParams",
    "GetTaskPayloadResult",
    "GetTaskRequest",
    "GetTaskRequestParams",
    "GetTaskResult",
    "Icon",
    "Icons",
    "ImageContent",
    "Implementation",
    "InitializeRequest",
    "InitializeRequestParams",
    "InitializeResult",
    "InitializedNotification",
    "JSONRPCErrorResponse",
    "JSONRPCMessage",
    "JSONRPCNotification",
    "JSONRPCRequest",
    "JSONRPCResponse",
    "JSONRPCResultResponse",
    "LegacyTitledEnumSchema",
    "ListPromptsRequest",
    "ListPromptsResult",
    "ListResourceTemplatesRequest",
    "ListResourceTemplatesResult",
    "ListResourcesRequest",
    "ListResourcesResult",
    "ListRootsRequest",
    "ListRootsResult",
    "ListTasksRequest",
    "ListTasksResult",
    "ListToolsRequest",
    "ListToolsResult",
    "LoggingLevel",
    "LoggingMessageNotification",
    "LoggingMessageNotificationParams",
    "ModelHint",
    "ModelPreferences",
    "MultiSelectEnumSchema",
    "Notification",
    "NotificationParams",
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
    "RelatedTaskMetadata",
    "Request",
    "RequestId",
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
    "Role",
    "Root",
    "RootsListChangedNotification",
    "SamplingMessage",
    "SamplingMessageContentBlock",
    "ServerCapabilities",
    "ServerCapabilitiesPrompts",
    "ServerCapabilitiesResources",
    "ServerCapabilitiesTasks",
    "ServerCapabilitiesTasksRequests",
    "ServerCapabilitiesTasksRequestsTools",
    "ServerCapabilitiesTools",
    "ServerNotification",
    "ServerRequest",
    "ServerResult",
    "SetLevelRequest",
    "SetLevelRequestParams",
    "SingleSelectEnumSchema",
    "StringSchema",
    "SubscribeRequest",
    "SubscribeRequestParams",
    "Task",
    "TaskAugmentedRequestParams",
    "TaskMetadata",
    "TaskStatus",
    "TaskStatusNotification",
    "TaskStatusNotificationParams",
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
    "ToolExecution",
    "ToolListChangedNotification",
    "ToolResultContent",
    "ToolUseContent",
    "URLElicitationRequiredError",
    "URLElicitationRequiredErrorError",
    "UnsubscribeRequest",
    "UnsubscribeRequestParams",
    "UntitledMultiSelectEnumSchema",
    "UntitledMultiSelectEnumSchemaItems",
    "UntitledSingleSelectEnumSchema",
]


ClientResult = dict[str, Any]


#: An opaque token used to represent a cursor for pagination.
Cursor = str


#: The parameters for a request to elicit additional information from the user via the client.
ElicitRequestParams = dict[str, Any]


EnumSchema = dict[str, Any]


#: Refers to any valid JSON-RPC object that can be decoded off the wire, or encoded to be sent.
JSONRPCMessage = dict[str, Any]


#: A response to a request, containing either the result or error.
JSONRPCResponse = dict[str, Any]


#: The severity of a log message.
LoggingLevel = Literal["alert", "critical", "debug", "emergency", "error", "info", "notice", "warning"]


MultiSelectEnumSchema = dict[str, Any]


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


SingleSelectEnumSchema = dict[str, Any]


#: The status of a task.
TaskStatus = Literal["cancelled", "completed", "failed", "input_required", "working"]


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
    #: See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on
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
    #: See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on
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
    rename={"meta": "_meta"},
):
    """Parameters for a `tools/call` request."""
    #: The name of the tool.
    name: str
    #: See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on
    #: `_meta` usage.
    meta: dict[str, Any] | None = None
    #: Arguments to use for the tool call.
    arguments: dict[str, Any] | None = None
    #: If specified, the caller is requesting task-augmented execution for this request. The
    #: request will return a CreateTaskResult immediately, and the actual result can be
    #: retrieved later via tasks/result.
    task: TaskMetadata | None = None


class CallToolResult(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta", "is_error": "isError", "structured_content": "structuredContent"},
):
    """The server's response to a tool call."""
    #: A list of content objects that represent the unstructured result of the tool call.
    content: list[ContentBlock]
    #: See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on
    #: `_meta` usage.
    meta: dict[str, Any] | None = None
    #: Whether the tool call ended in an error.
    is_error: bool | None = None
    #: An optional JSON object that represents the structured result of the tool call.
    structured_content: dict[str, Any] | None = None


class CancelTaskRequestParams(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta", "task_id": "taskId"},
):
    #: The task identifier to cancel.
    task_id: str
    #: Protocol-level metadata, e.g. `progressToken`.
    meta: dict[str, Any] | None = None


class CancelTaskRequest(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="method",
    tag="tasks/cancel",
):
    """A request to cancel a task."""
    id: RequestId
    jsonrpc: Literal["2.0"]
    method: ClassVar[Literal["tasks/cancel"]] = "tasks/cancel"
    params: CancelTaskRequestParams


class CancelTaskResult(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={
        "meta": "_meta",
        "created_at": "createdAt",
        "last_updated_at": "lastUpdatedAt",
        "poll_interval": "pollInterval",
        "status_message": "statusMessage",
        "task_id": "taskId",
    },
):
    """The response to a tasks/cancel request."""
    #: ISO 8601 timestamp when the task was created.
    created_at: str
    #: ISO 8601 timestamp when the task was last updated.
    last_updated_at: str
    #: Current task state.
    status: TaskStatus
    #: The task identifier.
    task_id: str
    #: Actual retention duration from creation in milliseconds, null for unlimited.
    ttl: int | None
    #: See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on
    #: `_meta` usage.
    meta: dict[str, Any] | None = None
    #: Suggested polling interval in milliseconds.
    poll_interval: int | None = None
    #: Optional human-readable message describing the current task state.
    status_message: str | None = None


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

    For task cancellation, use the `tasks/cancel` request instead of this notification.
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
    #: See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on
    #: `_meta` usage.
    meta: dict[str, Any] | None = None
    #: An optional string describing the reason for the cancellation. This MAY be logged or
    #: presented to the user.
    reason: str | None = None
    #: The ID of the request to cancel.
    request_id: RequestId | None = None


class ClientCapabilitiesElicitation(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Present if the client supports elicitation from the server."""
    form: dict[str, Any] | None = None
    url: dict[str, Any] | None = None


class ClientCapabilitiesRoots(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"list_changed": "listChanged"},
):
    """Present if the client supports listing roots."""
    #: Whether the client supports notifications for changes to the roots list.
    list_changed: bool | None = None


class ClientCapabilitiesSampling(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Present if the client supports sampling from an LLM."""
    #: Whether the client supports context inclusion via includeContext parameter. If not
    #: declared, servers SHOULD only use `includeContext: "none"` (or omit it).
    context: dict[str, Any] | None = None
    #: Whether the client supports tool use via tools and toolChoice parameters.
    tools: dict[str, Any] | None = None


class ClientCapabilitiesTasksRequestsElicitation(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Task support for elicitation-related requests."""
    #: Whether the client supports task-augmented elicitation/create requests.
    create: dict[str, Any] | None = None


class ClientCapabilitiesTasksRequestsSampling(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"create_message": "createMessage"},
):
    """Task support for sampling-related requests."""
    #: Whether the client supports task-augmented sampling/createMessage requests.
    create_message: dict[str, Any] | None = None


class ClientCapabilitiesTasksRequests(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Specifies which request types can be augmented with tasks."""
    #: Task support for elicitation-related requests.
    elicitation: ClientCapabilitiesTasksRequestsElicitation | None = None
    #: Task support for sampling-related requests.
    sampling: ClientCapabilitiesTasksRequestsSampling | None = None


class ClientCapabilitiesTasks(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"list_": "list"},
):
    """Present if the client supports task-augmented requests."""
    #: Whether this client supports tasks/cancel.
    cancel: dict[str, Any] | None = None
    #: Whether this client supports tasks/list.
    list_: dict[str, Any] | None = None
    #: Specifies which request types can be augmented with tasks.
    requests: ClientCapabilitiesTasksRequests | None = None


class ClientCapabilities(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Capabilities a client may support. Known capabilities are defined here, in this schema, but
    this is not a closed set: any client can define its own, additional capabilities.
    """
    #: Present if the client supports elicitation from the server.
    elicitation: ClientCapabilitiesElicitation | None = None
    #: Experimental, non-standard capabilities that the client supports.
    experimental: dict[str, dict[str, Any]] | None = None
    #: Present if the client supports listing roots.
    roots: ClientCapabilitiesRoots | None = None
    #: Present if the client supports sampling from an LLM.
    sampling: ClientCapabilitiesSampling | None = None
    #: Present if the client supports task-augmented requests.
    tasks: ClientCapabilitiesTasks | None = None


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
    #: The argument's information
    argument: CompleteRequestParamsArgument
    ref: PromptReference | ResourceTemplateReference
    #: See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on
    #: `_meta` usage.
    meta: dict[str, Any] | None = None
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


class CompleteResult(msgspec.Struct, kw_only=True, omit_defaults=True, rename={"meta": "_meta"}):
    """The server's response to a completion/complete request"""
    completion: CompleteResultCompletion
    #: See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on
    #: `_meta` usage.
    meta: dict[str, Any] | None = None


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
    id: RequestId
    jsonrpc: Literal["2.0"]
    method: ClassVar[Literal["sampling/createMessage"]] = "sampling/createMessage"
    params: CreateMessageRequestParams


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
        "tool_choice": "toolChoice",
    },
):
    """Parameters for a `sampling/createMessage` request."""
    #: The requested maximum number of tokens to sample (to prevent runaway completions).
    max_tokens: int
    messages: list[SamplingMessage]
    #: See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on
    #: `_meta` usage.
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
    #: If specified, the caller is requesting task-augmented execution for this request. The
    #: request will return a CreateTaskResult immediately, and the actual result can be
    #: retrieved later via tasks/result.
    task: TaskMetadata | None = None
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
    """The client's response to a sampling/createMessage request from the server.
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
    #: See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on
    #: `_meta` usage.
    meta: dict[str, Any] | None = None
    #: The reason why sampling stopped, if known.
    stop_reason: str | None = None


class CreateTaskResult(msgspec.Struct, kw_only=True, omit_defaults=True, rename={"meta": "_meta"}):
    """A response to a task-augmented request."""
    task: Task
    #: See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on
    #: `_meta` usage.
    meta: dict[str, Any] | None = None


class ElicitRequest(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="method",
    tag="elicitation/create",
):
    """A request from the server to elicit additional information from the user via the client."""
    id: RequestId
    jsonrpc: Literal["2.0"]
    method: ClassVar[Literal["elicitation/create"]] = "elicitation/create"
    params: ElicitRequestParams


class ElicitRequestFormParams(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta", "requested_schema": "requestedSchema"},
):
    """The parameters for a request to elicit non-sensitive information from the user via a form in
    the client.
    """
    #: The message to present to the user describing what information is being requested.
    message: str
    #: A restricted subset of JSON Schema. Only top-level properties are allowed, without
    #: nesting.
    requested_schema: dict[str, Any]
    #: See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on
    #: `_meta` usage.
    meta: dict[str, Any] | None = None
    #: The elicitation mode.
    mode: Literal["form"] | None = None
    #: If specified, the caller is requesting task-augmented execution for this request. The
    #: request will return a CreateTaskResult immediately, and the actual result can be
    #: retrieved later via tasks/result.
    task: TaskMetadata | None = None


class ElicitRequestURLParams(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta", "elicitation_id": "elicitationId"},
):
    """The parameters for a request to elicit information from the user via a URL in the client."""
    #: The ID of the elicitation, which must be unique within the context of the server. The
    #: client MUST treat this ID as an opaque value.
    elicitation_id: str
    #: The message to present to the user explaining why the interaction is needed.
    message: str
    #: The elicitation mode.
    mode: Literal["url"]
    #: The URL that the user should navigate to.
    url: str
    #: See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on
    #: `_meta` usage.
    meta: dict[str, Any] | None = None
    #: If specified, the caller is requesting task-augmented execution for this request. The
    #: request will return a CreateTaskResult immediately, and the actual result can be
    #: retrieved later via tasks/result.
    task: TaskMetadata | None = None


class ElicitResult(msgspec.Struct, kw_only=True, omit_defaults=True, rename={"meta": "_meta"}):
    """The client's response to an elicitation request."""
    #: The user action in response to the elicitation. - "accept": User submitted the
    #: form/confirmed the action - "decline": User explicitly decline the action - "cancel":
    #: User dismissed without making an explicit choice
    action: Literal["accept", "cancel", "decline"]
    #: See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on
    #: `_meta` usage.
    meta: dict[str, Any] | None = None
    #: The submitted form data, only present when action is "accept" and mode was "form".
    #: Contains values matching the requested schema. Omitted for out-of-band mode responses.
    content: dict[str, list[str] | str | int | bool] | None = None


class ElicitationCompleteNotificationParams(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta", "elicitation_id": "elicitationId"},
):
    #: The ID of the elicitation that completed.
    elicitation_id: str
    #: Protocol-level metadata, e.g. `progressToken`.
    meta: dict[str, Any] | None = None


class ElicitationCompleteNotification(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="method",
    tag="notifications/elicitation/complete",
):
    """An optional notification from the server to the client, informing it of a completion of a
    out-of-band elicitation request.
    """
    jsonrpc: Literal["2.0"]
    method: ClassVar[Literal["notifications/elicitation/complete"]] = "notifications/elicitation/complete"
    params: ElicitationCompleteNotificationParams


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
    #: See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on
    #: `_meta` usage.
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
    rename={"meta": "_meta"},
):
    """Parameters for a `prompts/get` request."""
    #: The name of the prompt or prompt template.
    name: str
    #: See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on
    #: `_meta` usage.
    meta: dict[str, Any] | None = None
    #: Arguments to use for templating the prompt.
    arguments: dict[str, str] | None = None


class GetPromptResult(msgspec.Struct, kw_only=True, omit_defaults=True, rename={"meta": "_meta"}):
    """The server's response to a prompts/get request from the client."""
    messages: list[PromptMessage]
    #: See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on
    #: `_meta` usage.
    meta: dict[str, Any] | None = None
    #: An optional description for the prompt.
    description: str | None = None


class GetTaskPayloadRequestParams(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta", "task_id": "taskId"},
):
    #: The task identifier to retrieve results for.
    task_id: str
    #: Protocol-level metadata, e.g. `progressToken`.
    meta: dict[str, Any] | None = None


class GetTaskPayloadRequest(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="method",
    tag="tasks/result",
):
    """A request to retrieve the result of a completed task."""
    id: RequestId
    jsonrpc: Literal["2.0"]
    method: ClassVar[Literal["tasks/result"]] = "tasks/result"
    params: GetTaskPayloadRequestParams


class GetTaskPayloadResult(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta"},
):
    """The response to a tasks/result request.
    The structure matches the result type of the original request.
    For example, a tools/call task would return the CallToolResult structure.
    """
    #: See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on
    #: `_meta` usage.
    meta: dict[str, Any] | None = None


class GetTaskRequestParams(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta", "task_id": "taskId"},
):
    #: The task identifier to query.
    task_id: str
    #: Protocol-level metadata, e.g. `progressToken`.
    meta: dict[str, Any] | None = None


class GetTaskRequest(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="method",
    tag="tasks/get",
):
    """A request to retrieve the state of a task."""
    id: RequestId
    jsonrpc: Literal["2.0"]
    method: ClassVar[Literal["tasks/get"]] = "tasks/get"
    params: GetTaskRequestParams


class GetTaskResult(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={
        "meta": "_meta",
        "created_at": "createdAt",
        "last_updated_at": "lastUpdatedAt",
        "poll_interval": "pollInterval",
        "status_message": "statusMessage",
        "task_id": "taskId",
    },
):
    """The response to a tasks/get request."""
    #: ISO 8601 timestamp when the task was created.
    created_at: str
    #: ISO 8601 timestamp when the task was last updated.
    last_updated_at: str
    #: Current task state.
    status: TaskStatus
    #: The task identifier.
    task_id: str
    #: Actual retention duration from creation in milliseconds, null for unlimited.
    ttl: int | None
    #: See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on
    #: `_meta` usage.
    meta: dict[str, Any] | None = None
    #: Suggested polling interval in milliseconds.
    poll_interval: int | None = None
    #: Optional human-readable message describing the current task state.
    status_message: str | None = None


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
    #: Optional specifier for the theme this icon is designed for. `light` indicates the icon
    #: is designed to be used with a light background, and `dark` indicates the icon is
    #: designed to be used with a dark background.
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
    #: See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on
    #: `_meta` usage.
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
    id: RequestId
    jsonrpc: Literal["2.0"]
    method: ClassVar[Literal["initialize"]] = "initialize"
    params: InitializeRequestParams


class InitializeRequestParams(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta", "client_info": "clientInfo", "protocol_version": "protocolVersion"},
):
    """Parameters for an `initialize` request."""
    capabilities: ClientCapabilities
    client_info: Implementation
    #: The latest version of the Model Context Protocol that the client supports. The client
    #: MAY decide to support older versions as well.
    protocol_version: str
    #: See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on
    #: `_meta` usage.
    meta: dict[str, Any] | None = None


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
    #: See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on
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
    jsonrpc: Literal["2.0"]
    method: ClassVar[Literal["notifications/initialized"]] = "notifications/initialized"
    params: NotificationParams | None = None


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
    params: PaginatedRequestParams | None = None


class ListPromptsResult(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta", "next_cursor": "nextCursor"},
):
    """The server's response to a prompts/list request from the client."""
    prompts: list[Prompt]
    #: See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on
    #: `_meta` usage.
    meta: dict[str, Any] | None = None
    #: An opaque token representing the pagination position after the last returned result.
    #: If present, there may be more results available.
    next_cursor: str | None = None


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
    params: PaginatedRequestParams | None = None


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
    #: See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on
    #: `_meta` usage.
    meta: dict[str, Any] | None = None
    #: An opaque token representing the pagination position after the last returned result.
    #: If present, there may be more results available.
    next_cursor: str | None = None


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
    params: PaginatedRequestParams | None = None


class ListResourcesResult(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta", "next_cursor": "nextCursor"},
):
    """The server's response to a resources/list request from the client."""
    resources: list[Resource]
    #: See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on
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
    id: RequestId
    jsonrpc: Literal["2.0"]
    method: ClassVar[Literal["roots/list"]] = "roots/list"
    params: RequestParams | None = None


class ListRootsResult(msgspec.Struct, kw_only=True, omit_defaults=True, rename={"meta": "_meta"}):
    """The client's response to a roots/list request from the server.
    This result contains an array of Root objects, each representing a root directory
    or file that the server can operate on.
    """
    roots: list[Root]
    #: See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on
    #: `_meta` usage.
    meta: dict[str, Any] | None = None


class ListTasksRequest(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="method",
    tag="tasks/list",
):
    """A request to retrieve a list of tasks."""
    id: RequestId
    jsonrpc: Literal["2.0"]
    method: ClassVar[Literal["tasks/list"]] = "tasks/list"
    params: PaginatedRequestParams | None = None


class ListTasksResult(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta", "next_cursor": "nextCursor"},
):
    """The response to a tasks/list request."""
    tasks: list[Task]
    #: See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on
    #: `_meta` usage.
    meta: dict[str, Any] | None = None
    #: An opaque token representing the pagination position after the last returned result.
    #: If present, there may be more results available.
    next_cursor: str | None = None


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
    params: PaginatedRequestParams | None = None


class ListToolsResult(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta", "next_cursor": "nextCursor"},
):
    """The server's response to a tools/list request from the client."""
    tools: list[Tool]
    #: See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on
    #: `_meta` usage.
    meta: dict[str, Any] | None = None
    #: An opaque token representing the pagination position after the last returned result.
    #: If present, there may be more results available.
    next_cursor: str | None = None


class LoggingMessageNotification(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="method",
    tag="notifications/message",
):
    """JSONRPCNotification of a log message passed from server to client. If no logging/setLevel
    request has been sent from the client, the server MAY decide which messages to send
    automatically.
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
    #: See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on
    #: `_meta` usage.
    meta: dict[str, Any] | None = None
    #: An optional name of the logger issuing this message.
    logger: str | None = None


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


class NotificationParams(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta"},
):
    #: See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on
    #: `_meta` usage.
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
    params: PaginatedRequestParams | None = None


class PaginatedRequestParams(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta"},
):
    """Common parameters for paginated requests."""
    #: See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on
    #: `_meta` usage.
    meta: dict[str, Any] | None = None
    #: An opaque token representing the current pagination position. If provided, the server
    #: should return results starting after this cursor.
    cursor: str | None = None


class PaginatedResult(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta", "next_cursor": "nextCursor"},
):
    #: See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on
    #: `_meta` usage.
    meta: dict[str, Any] | None = None
    #: An opaque token representing the pagination position after the last returned result.
    #: If present, there may be more results available.
    next_cursor: str | None = None


class PingRequest(msgspec.Struct, kw_only=True, omit_defaults=True, tag_field="method", tag="ping"):
    """A ping, issued by either the server or the client, to check that the other party is still
    alive. The receiver must promptly respond, or else may be disconnected.
    """
    id: RequestId
    jsonrpc: Literal["2.0"]
    method: ClassVar[Literal["ping"]] = "ping"
    params: RequestParams | None = None


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
    """Parameters for a `notifications/progress` notification."""
    #: The progress thus far. This should increase every time progress is made, even if the
    #: total is unknown.
    progress: int | float
    #: The progress token which was given in the initial request, used to associate this
    #: notification with the request that is proceeding.
    progress_token: ProgressToken
    #: See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on
    #: `_meta` usage.
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
    #: See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on
    #: `_meta` usage.
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
    it offers has changed. This may be issued by servers without any previous subscription from the
    client.
    """
    jsonrpc: Literal["2.0"]
    method: ClassVar[Literal["notifications/prompts/list_changed"]] = "notifications/prompts/list_changed"
    params: NotificationParams | None = None


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
    rename={"meta": "_meta"},
):
    """Parameters for a `resources/read` request."""
    #: The URI of the resource. The URI can use any protocol; it is up to the server how to
    #: interpret it.
    uri: str
    #: See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on
    #: `_meta` usage.
    meta: dict[str, Any] | None = None


class ReadResourceResult(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta"},
):
    """The server's response to a resources/read request from the client."""
    contents: list[dict[str, Any]]
    #: See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on
    #: `_meta` usage.
    meta: dict[str, Any] | None = None


class RelatedTaskMetadata(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"task_id": "taskId"},
):
    """Metadata for associating messages with a task.
    Include this in the `_meta` field under the key `io.modelcontextprotocol/related-task`.
    """
    #: The task identifier this message is associated with.
    task_id: str


class Request(msgspec.Struct, kw_only=True, omit_defaults=True):
    method: str
    params: dict[str, Any] | None = None


class RequestParams(msgspec.Struct, kw_only=True, omit_defaults=True, rename={"meta": "_meta"}):
    """Common params for any request."""
    #: See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on
    #: `_meta` usage.
    meta: dict[str, Any] | None = None


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
    #: See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on
    #: `_meta` usage.
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
    #: See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on
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
    #: See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on
    #: `_meta` usage.
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
    resources it can read from has changed. This may be issued by servers without any previous
    subscription from the client.
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
    """Common parameters when working with resources."""
    #: The URI of the resource. The URI can use any protocol; it is up to the server how to
    #: interpret it.
    uri: str
    #: See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on
    #: `_meta` usage.
    meta: dict[str, Any] | None = None


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
    #: See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on
    #: `_meta` usage.
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
    may need to be read again. This should only be sent if the client previously sent a
    resources/subscribe request.
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
    #: See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on
    #: `_meta` usage.
    meta: dict[str, Any] | None = None


class Result(msgspec.Struct, kw_only=True, omit_defaults=True, rename={"meta": "_meta"}):
    #: See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on
    #: `_meta` usage.
    meta: dict[str, Any] | None = None


class Root(msgspec.Struct, kw_only=True, omit_defaults=True, rename={"meta": "_meta"}):
    """Represents a root directory or file that the server can operate on."""
    #: The URI identifying the root. This *must* start with file:// for now. This restriction
    #: may be relaxed in future versions of the protocol to allow other URI schemes.
    uri: str
    #: See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on
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
    jsonrpc: Literal["2.0"]
    method: ClassVar[Literal["notifications/roots/list_changed"]] = "notifications/roots/list_changed"
    params: NotificationParams | None = None


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
    #: See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on
    #: `_meta` usage.
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


class ServerCapabilitiesTasksRequestsTools(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Task support for tool-related requests."""
    #: Whether the server supports task-augmented tools/call requests.
    call: dict[str, Any] | None = None


class ServerCapabilitiesTasksRequests(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Specifies which request types can be augmented with tasks."""
    #: Task support for tool-related requests.
    tools: ServerCapabilitiesTasksRequestsTools | None = None


class ServerCapabilitiesTasks(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"list_": "list"},
):
    """Present if the server supports task-augmented requests."""
    #: Whether this server supports tasks/cancel.
    cancel: dict[str, Any] | None = None
    #: Whether this server supports tasks/list.
    list_: dict[str, Any] | None = None
    #: Specifies which request types can be augmented with tasks.
    requests: ServerCapabilitiesTasksRequests | None = None


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
    #: Present if the server supports task-augmented requests.
    tasks: ServerCapabilitiesTasks | None = None
    #: Present if the server offers any tools to call.
    tools: ServerCapabilitiesTools | None = None


class SetLevelRequest(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="method",
    tag="logging/setLevel",
):
    """A request from the client to the server, to enable or adjust logging."""
    id: RequestId
    jsonrpc: Literal["2.0"]
    method: ClassVar[Literal["logging/setLevel"]] = "logging/setLevel"
    params: SetLevelRequestParams


class SetLevelRequestParams(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta"},
):
    """Parameters for a `logging/setLevel` request."""
    #: The level of logging that the client wants to receive from the server. The server
    #: should send all logs at this level and higher (i.e., more severe) to the client as
    #: notifications/message.
    level: LoggingLevel
    #: See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on
    #: `_meta` usage.
    meta: dict[str, Any] | None = None


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
    id: RequestId
    jsonrpc: Literal["2.0"]
    method: ClassVar[Literal["resources/subscribe"]] = "resources/subscribe"
    params: SubscribeRequestParams


class SubscribeRequestParams(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta"},
):
    """Parameters for a `resources/subscribe` request."""
    #: The URI of the resource. The URI can use any protocol; it is up to the server how to
    #: interpret it.
    uri: str
    #: See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on
    #: `_meta` usage.
    meta: dict[str, Any] | None = None


class Task(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={
        "created_at": "createdAt",
        "last_updated_at": "lastUpdatedAt",
        "poll_interval": "pollInterval",
        "status_message": "statusMessage",
        "task_id": "taskId",
    },
):
    """Data associated with a task."""
    #: ISO 8601 timestamp when the task was created.
    created_at: str
    #: ISO 8601 timestamp when the task was last updated.
    last_updated_at: str
    #: Current task state.
    status: TaskStatus
    #: The task identifier.
    task_id: str
    #: Actual retention duration from creation in milliseconds, null for unlimited.
    ttl: int | None
    #: Suggested polling interval in milliseconds.
    poll_interval: int | None = None
    #: Optional human-readable message describing the current task state.
    status_message: str | None = None


class TaskAugmentedRequestParams(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta"},
):
    """Common params for any task-augmented request."""
    #: See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on
    #: `_meta` usage.
    meta: dict[str, Any] | None = None
    #: If specified, the caller is requesting task-augmented execution for this request. The
    #: request will return a CreateTaskResult immediately, and the actual result can be
    #: retrieved later via tasks/result.
    task: TaskMetadata | None = None


class TaskMetadata(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Metadata for augmenting a request with task execution.
    Include this in the `task` field of the request parameters.
    """
    #: Requested duration in milliseconds to retain task from creation.
    ttl: int | None = None


class TaskStatusNotification(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    tag_field="method",
    tag="notifications/tasks/status",
):
    """An optional notification from the receiver to the requestor, informing them that a task's
    status has changed. Receivers are not required to send these notifications.
    """
    jsonrpc: Literal["2.0"]
    method: ClassVar[Literal["notifications/tasks/status"]] = "notifications/tasks/status"
    params: TaskStatusNotificationParams


class TaskStatusNotificationParams(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={
        "meta": "_meta",
        "created_at": "createdAt",
        "last_updated_at": "lastUpdatedAt",
        "poll_interval": "pollInterval",
        "status_message": "statusMessage",
        "task_id": "taskId",
    },
):
    """Parameters for a `notifications/tasks/status` notification."""
    #: ISO 8601 timestamp when the task was created.
    created_at: str
    #: ISO 8601 timestamp when the task was last updated.
    last_updated_at: str
    #: Current task state.
    status: TaskStatus
    #: The task identifier.
    task_id: str
    #: Actual retention duration from creation in milliseconds, null for unlimited.
    ttl: int | None
    #: See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on
    #: `_meta` usage.
    meta: dict[str, Any] | None = None
    #: Suggested polling interval in milliseconds.
    poll_interval: int | None = None
    #: Optional human-readable message describing the current task state.
    status_message: str | None = None


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
    #: See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on
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
    #: See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on
    #: `_meta` usage.
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
    #: See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on
    #: `_meta` usage.
    meta: dict[str, Any] | None = None
    #: Optional additional tool information.
    annotations: ToolAnnotations | None = None
    #: A human-readable description of the tool.
    description: str | None = None
    #: Execution-related properties for this tool.
    execution: ToolExecution | None = None
    #: Optional set of sized icons that the client can display in a user interface.
    icons: list[Icon] | None = None
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
    #: Controls the tool use ability of the model: - "auto": Model decides whether to use
    #: tools (default) - "required": Model MUST use at least one tool before completing -
    #: "none": Model MUST NOT use any tools
    mode: Literal["auto", "none", "required"] | None = None


class ToolExecution(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"task_support": "taskSupport"},
):
    """Execution-related properties for a tool."""
    #: Indicates whether this tool supports task-augmented execution. This allows clients to
    #: handle long-running operations through polling the task system.
    task_support: Literal["forbidden", "optional", "required"] | None = None


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
    #: An optional structured result object.
    structured_content: dict[str, Any] | None = None


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


class URLElicitationRequiredErrorError(msgspec.Struct, kw_only=True, omit_defaults=True):
    code: Literal[-32042]
    data: dict[str, Any]
    #: A short description of the error. The message SHOULD be limited to a concise single
    #: sentence.
    message: str


class URLElicitationRequiredError(msgspec.Struct, kw_only=True, omit_defaults=True):
    """An error response that indicates that the server requires the client to provide additional
    information via an elicitation request.
    """
    error: URLElicitationRequiredErrorError
    jsonrpc: Literal["2.0"]
    id: RequestId | None = None


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
    id: RequestId
    jsonrpc: Literal["2.0"]
    method: ClassVar[Literal["resources/unsubscribe"]] = "resources/unsubscribe"
    params: UnsubscribeRequestParams


class UnsubscribeRequestParams(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    rename={"meta": "_meta"},
):
    """Parameters for a `resources/unsubscribe` request."""
    #: The URI of the resource. The URI can use any protocol; it is up to the server how to
    #: interpret it.
    uri: str
    #: See [General fields: `_meta`](/specification/2025-11-25/basic/index#meta) for notes on
    #: `_meta` usage.
    meta: dict[str, Any] | None = None


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


ClientNotification = (
    CancelledNotification
    | InitializedNotification
    | ProgressNotification
    | TaskStatusNotification
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
    | GetTaskRequest
    | GetTaskPayloadRequest
    | CancelTaskRequest
    | ListTasksRequest
    | SetLevelRequest
    | CompleteRequest
)


ContentBlock = TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource


EmptyResult = Result


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
    | ResourceUpdatedNotification
    | PromptListChangedNotification
    | ToolListChangedNotification
    | TaskStatusNotification
    | LoggingMessageNotification
    | ElicitationCompleteNotification
)


ServerRequest = (
    PingRequest
    | GetTaskRequest
    | GetTaskPayloadRequest
    | CancelTaskRequest
    | ListTasksRequest
    | CreateMessageRequest
    | ListRootsRequest
    | ElicitRequest
)
