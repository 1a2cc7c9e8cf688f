"""The server engine and programming model. Knows nothing of HTTP: transports hand it
messages with a ``TransportBinding``."""

from mcpkit.server._app import McpServerApp
from mcpkit.server._catalog import McpCatalogManager
from mcpkit.server._context import McpToolContext
from mcpkit.server._decorators import (
    mcp_completion,
    mcp_lifespan,
    mcp_prompt,
    mcp_resource,
    mcp_server,
    mcp_tool,
    set_metadata,
    use_exception_handlers,
    use_guards,
    use_interceptors,
    use_middleware,
)
from mcpkit.server._elicitation import ElicitResult
from mcpkit.server._engine.binding import CURRENT_BINDING, TransportBinding
from mcpkit.server._engine.connection import ServerConnection, serve_stream
from mcpkit.server._engine.dispatcher import McpDispatcher
from mcpkit.server._engine.engine import McpEngine
from mcpkit.server._engine.execution import McpExecutionContext
from mcpkit.server._engine.registry import McpConnectionRegistry
from mcpkit.server._engine.request_scope import McpRequestScope
from mcpkit.server._engine.session import McpSession
from mcpkit.server._engine.subscriptions import ResourceSubscriptionManager
from mcpkit.server._engine.sync_calls import DEFAULT_MAX_SYNC_WORKERS
from mcpkit.server._entries import PromptEntry, ResourceEntry, ResourceTemplateEntry, ToolEntry
from mcpkit.server._files.resources import DirectoryResource, FileResource
from mcpkit.server._inject.markers import Depends, Header, State
from mcpkit.server._results import Audio, File, Image
from mcpkit.server._tasks.manager import TASKS_EXTENSION, current_task_id, deferred_task, start_task
from mcpkit.server._versions import VersionSpec

__all__ = [
    "CURRENT_BINDING",
    "DEFAULT_MAX_SYNC_WORKERS",
    "TASKS_EXTENSION",
    "Audio",
    "Depends",
    "DirectoryResource",
    "ElicitResult",
    "File",
    "FileResource",
    "Header",
    "Image",
    "McpCatalogManager",
    "McpConnectionRegistry",
    "McpDispatcher",
    "McpEngine",
    "McpExecutionContext",
    "McpRequestScope",
    "McpServerApp",
    "McpSession",
    "McpToolContext",
    "PromptEntry",
    "ResourceEntry",
    "ResourceSubscriptionManager",
    "ResourceTemplateEntry",
    "ServerConnection",
    "State",
    "ToolEntry",
    "TransportBinding",
    "VersionSpec",
    "current_task_id",
    "deferred_task",
    "mcp_completion",
    "mcp_lifespan",
    "mcp_prompt",
    "mcp_resource",
    "mcp_server",
    "mcp_tool",
    "serve_stream",
    "set_metadata",
    "start_task",
    "use_exception_handlers",
    "use_guards",
    "use_interceptors",
    "use_middleware",
]
