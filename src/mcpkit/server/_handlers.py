"""The app's method handlers, installed in its engine's dispatcher: lifecycle and
``server/discover``, tools, resources, prompts, completion, logging,
``subscriptions/listen`` and the ``tasks/*`` methods, for both eras. Each takes (request,
binding) and returns the result dict or raises a ``ProtocolError``."""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

import msgspec

from mcpkit._exceptions import (
    InvalidParamsError,
    InvalidRequestError,
    ProtocolError,
    ResourceNotFoundError,
    ToolError,
)
from mcpkit.protocol._jsonrpc import JsonRpcNotification, JsonRpcRequest
from mcpkit.protocol._versions import (
    HANDSHAKE_VERSIONS,
    LATEST_VERSION,
    SUPPORTED_VERSIONS,
    V2024_11_05,
    negotiate_version,
)
from mcpkit.server._access import (
    completes_hidden,
    in_view,
    listed,
    mark_private,
    match_template,
    permits,
    refuse_step_up,
    usable,
)
from mcpkit.server._context import McpToolContext
from mcpkit.server._engine.binding import TransportBinding
from mcpkit.server._engine.execution import McpExecutionContext
from mcpkit.server._engine.pagination import paginate
from mcpkit.server._engine.session import LOG_LEVELS
from mcpkit.server._engine.sync_calls import ASYNC, call_entry
from mcpkit.server._engine.unexpected import new_error_id
from mcpkit.server._eras import downgrade as _downgrade
from mcpkit.server._eras.mrtr import InputRequired
from mcpkit.server._inject.plan import CallScope
from mcpkit.server._pipeline import run_pipeline
from mcpkit.server._results import (
    error_result,
    exception_text,
    is_call_tool_result,
    prompt_messages,
    resource_contents,
    structured_tool_result,
    tool_result,
)
from mcpkit.server._session_view import view_of
from mcpkit.server._versions import version_asked

if TYPE_CHECKING:
    from mcpkit.server._catalog import McpCatalogManager
    from mcpkit.server._engine.dispatcher import McpDispatcher
    from mcpkit.server._engine.engine import McpEngine
    from mcpkit.server._engine.listen import OpenListens
    from mcpkit.server._engine.subscriptions import ResourceSubscriptionManager
    from mcpkit.server._engine.sync_calls import SyncWorkers
    from mcpkit.server._tasks.manager import TaskManager

logger = logging.getLogger("mcpkit.server")


class HandledApp(Protocol):
    """What the method handlers read of the app they serve: its catalog and description,
    its engine's parts, its tasks. (The app's class makes them: they name only this.)"""

    @property
    def catalog(self) -> McpCatalogManager: ...
    @property
    def engine(self) -> McpEngine: ...
    @property
    def dispatcher(self) -> McpDispatcher: ...
    @property
    def subscriptions(self) -> ResourceSubscriptionManager: ...
    @property
    def listens(self) -> OpenListens: ...
    @property
    def sync_workers(self) -> SyncWorkers: ...
    @property
    def tasks(self) -> TaskManager: ...
    @property
    def instructions(self) -> str | None: ...
    @property
    def lifespan_context(self) -> Any: ...
    @property
    def page_size(self) -> int: ...
    @property
    def mask_error_details(self) -> bool: ...

    def server_info(self, version: str | None = None) -> dict[str, Any]: ...

    def capabilities(self, version: str | None = None) -> dict[str, Any]: ...


#: Most values one completion/complete answer carries (spec: at most 100).
MAX_COMPLETION_VALUES = 100

#: The log lines of a tool that raised (with the traceback; under ``mask_error_details``
#: with the error id the client got), raised ``ToolError`` (INFO, no traceback) or returned
#: a value its output schema refuses: ``mcpkit call`` hides them unless ``--debug``, having
#: printed the error.
TOOL_RAISED = "tool %s raised; the client got an isError result"
TOOL_RAISED_MASKED = "tool %s raised; the client got an isError result naming error id %s"
TOOL_ERROR = "tool %s raised ToolError: %s"
OUTPUT_REFUSED = "Tool '%s' returned a value its output schema refuses: %s"
#: What the model reads of a tool's exception under ``mask_error_details``.
MASKED_TOOL_ERROR = "Tool '%s' failed (error id %s); see the server log"


def _masked_where_mounted(entry: Any) -> bool:
    """Whether an app ``entry`` was mounted from masks its tools' errors: a mounted app's
    ``mask_error_details`` holds for its tools wherever they are served (the serving app's
    own flag masks every tool it serves, mounted ones included)."""
    return any(app.mask_error_details for app in entry.mounted_from)


async def _refused_arguments(message: str) -> dict[str, Any]:
    return error_result(message)


def _params(request: JsonRpcRequest) -> dict[str, Any]:
    return request.params or {}


def _version(binding: TransportBinding) -> str | None:
    """The protocol version results are shaped for (``_eras.downgrade``)."""
    session = binding.session
    return session.protocol_version if session is not None else None


def _require_str(params: dict[str, Any], key: str) -> str:
    value = params.get(key)
    if not isinstance(value, str):
        raise InvalidParamsError(f'"{key}" must be a string', {"param": key})
    return value


class MethodHandlers:
    """Binds every handshake-era method of the dispatcher to the app's catalog."""

    def __init__(self, app: HandledApp) -> None:
        self.app = app
        self.catalog = app.catalog
        self.workers = app.sync_workers

    def install(self) -> None:
        d = self.app.dispatcher
        for method, handler in {
            "initialize": self.initialize,
            "ping": self.ping,
            "tools/list": self.list_tools,
            "tools/call": self.call_tool,
            "resources/list": self.list_resources,
            "resources/templates/list": self.list_resource_templates,
            "resources/read": self.read_resource,
            "resources/subscribe": self.subscribe,
            "resources/unsubscribe": self.unsubscribe,
            "prompts/list": self.list_prompts,
            "prompts/get": self.get_prompt,
            "completion/complete": self.complete,
            "logging/setLevel": self.set_level,
            "server/discover": self.discover,
            "subscriptions/listen": self.listen,
            "tasks/get": self.app.tasks.get_task,
            "tasks/update": self.app.tasks.update_task,
            "tasks/cancel": self.app.tasks.cancel_task,
            "tasks/result": self.app.tasks.task_result,  # 2025-11-25 only
            "tasks/list": self.app.tasks.list_tasks,  # 2025-11-25 only
        }.items():
            d.register(method, handler)
        self.app.tasks.execute_tool = self.execute_tool
        d.on_notification("notifications/initialized", self.initialized)

    # lifecycle --------------------------------------------------------------------------

    async def initialize(
        self, request: JsonRpcRequest, binding: TransportBinding
    ) -> dict[str, Any]:
        params = _params(request)
        session = binding.session
        if session is None:
            raise InvalidRequestError("initialize needs a session-bearing transport")
        if session.initialize_seen and not session.ephemeral:
            raise InvalidRequestError("initialize was already received on this session")
        version = negotiate_version(params.get("protocolVersion"), HANDSHAKE_VERSIONS)
        session.protocol_version = version
        session.client_info = (
            params.get("clientInfo") if isinstance(params.get("clientInfo"), dict) else None
        )
        caps = params.get("capabilities")
        session.client_capabilities = caps if isinstance(caps, dict) else {}
        session.initialize_seen = True
        result: dict[str, Any] = {
            "protocolVersion": version,
            "capabilities": self.app.capabilities(version),
            "serverInfo": self.app.server_info(version),
        }
        if self.app.instructions:
            result["instructions"] = self.app.instructions
        return result

    async def discover(self, request: JsonRpcRequest, binding: TransportBinding) -> dict[str, Any]:
        """``server/discover`` (2026-07-28): versions, capabilities, identity."""
        result: dict[str, Any] = {
            "supportedVersions": list(SUPPORTED_VERSIONS),
            "capabilities": self.app.capabilities(LATEST_VERSION),
            "serverInfo": self.app.server_info(),
        }
        if self.app.instructions:
            result["instructions"] = self.app.instructions
        return result

    async def listen(self, request: JsonRpcRequest, binding: TransportBinding) -> dict[str, Any]:
        """``subscriptions/listen``: stream the change notifications the client opted in to
        until it goes away (or the server shuts down, which answers the request); at most
        ``max_listens_per_connection`` open at once on a connection."""
        subscription = self.app.tasks.subscription(request, binding)  # its params checked
        with self.app.listens.hold(binding.connection_key):
            return await subscription.run()

    async def initialized(self, note: JsonRpcNotification, binding: TransportBinding) -> None:
        if binding.session is not None:
            binding.session.initialized = True

    async def ping(self, request: JsonRpcRequest, binding: TransportBinding) -> dict[str, Any]:
        return {}

    async def set_level(self, request: JsonRpcRequest, binding: TransportBinding) -> dict[str, Any]:
        level = _params(request).get("level")
        if level not in LOG_LEVELS:
            raise InvalidParamsError(f"Unknown log level: {level!r}", {"levels": list(LOG_LEVELS)})
        if binding.session is not None:
            binding.session.log_level = level
        return {}

    # invocation -------------------------------------------------------------------------

    async def invoke(
        self,
        entry: Any,
        kind: str,
        target: str,
        kwargs: dict[str, Any],
        request: JsonRpcRequest,
        binding: TransportBinding,
    ) -> Any:
        """Call an entry's function with its injected context, through its pipeline."""
        plan = entry.injection
        if plan is not None:  # Header / State / Depends: filled after the guards (_inject.plan)
            scope = CallScope(self.app, binding, request, plan.owner)

            async def call() -> Any:
                return await plan.call(entry, kwargs, scope, self.workers)

            if entry.pipeline.empty:
                return await call()
        else:
            if entry.injected:
                ctx = McpToolContext(
                    binding, request, self.app.dispatcher, self.app.lifespan_context
                )
                for name in entry.injected:
                    kwargs[name] = ctx
            if entry.pipeline.empty:
                return await call_entry(entry, kwargs, self.workers)

            async def call() -> Any:
                return await call_entry(entry, kwargs, self.workers)

        exec_ctx = McpExecutionContext(
            tool_name=target,
            method_name=entry.method_name,
            server_class=entry.server_class,
            headers=binding.headers,
            execution_context=binding.execution_context,
            session_id=binding.session_id,
            metadata=entry.pipeline.metadata,
            tool_use_id=request.id,
            kind=kind,
            arguments=kwargs,
            binding=binding,
            request=binding.request,
            params=request.params,
        )
        return await run_pipeline(entry.pipeline, exec_ctx, call)

    # tools ------------------------------------------------------------------------------

    async def list_tools(
        self, request: JsonRpcRequest, binding: TransportBinding
    ) -> dict[str, Any]:
        catalog = self.catalog
        restricted = catalog.restricts("tools") or view_of(binding) is not None
        if restricted:  # per caller: its session's view, the tools its identity may call
            entries, _ = listed(catalog, "tools", catalog.list_tools(), binding)
            tools = [entry.to_wire() for entry in entries]
        else:
            tools = catalog.tool_wire_list()
        page, cursor = paginate(tools, _params(request).get("cursor"), self.app.page_size)
        result: dict[str, Any] = {"tools": _downgrade.tools(list(page), _version(binding))}
        if cursor:
            result["nextCursor"] = cursor
        if restricted:
            mark_private(result, binding)
        return result

    def call_tool(
        self, request: JsonRpcRequest, binding: TransportBinding
    ) -> Awaitable[dict[str, Any]]:
        """Check the call and hand back the coroutine that runs it (a plain function: the
        dispatcher awaits what it returns, one coroutine fewer on every tools/call)."""
        params = request.params or {}
        name = params.get("name")
        entry = self.catalog.get_tool(name) if isinstance(name, str) else None
        if binding.session is not None and binding.session.visibility is not None:
            entry = in_view(self.catalog, "tools", name, entry, binding)
        if entry is None or (entry.auth is not None and not permits(entry.auth, binding.auth)):
            if entry is not None:  # listed to it, to step up for
                refuse_step_up("tool", entry.name, entry, binding.auth)
            # A tool the caller may not call is one it cannot tell from an unknown one.
            raise InvalidParamsError(f"Unknown tool: {name}", {"name": name})
        if entry.version is not None and "_meta" in params:  # the call may pick a version
            entry = version_asked(self.catalog, name, params["_meta"]) or entry
        arguments = params.get("arguments")
        if arguments is not None and not isinstance(arguments, dict):
            raise InvalidParamsError('"arguments" must be an object')
        if entry.arguments_map is not None:  # a transformed tool: as the original takes them
            arguments = entry.arguments_map(arguments or {})
        signature = entry.signature
        try:
            kwargs = (
                signature.validate(arguments) if signature is not None else dict(arguments or {})
            )
        except InvalidParamsError as exc:
            # Arguments the input schema refuses are a tool execution error in every version
            # (tools, "Error Handling"): the model reads what was wrong and can try again.
            return _refused_arguments(exc.message)
        if entry.task_support is not None or "task" in params:
            mode = self.app.tasks.mode_for(entry, binding, request)
            if mode is not None:  # a task: answered with a CreateTaskResult (either era's)
                return self.app.tasks.call_tool(mode, entry, kwargs, request, binding)
        return self.execute_tool(entry, kwargs, request, binding)

    async def execute_tool(
        self, entry: Any, kwargs: dict[str, Any], request: JsonRpcRequest, binding: TransportBinding
    ) -> dict[str, Any]:
        """Run a tool to its ``CallToolResult`` (tool failures become ``isError`` results;
        ``InputRequired`` and protocol errors propagate: a missing client capability is
        -32021 in both eras, see docs/eras.md)."""
        signature = entry.signature
        try:
            if entry.timeout is None and entry.pipeline.empty and not entry.injected:
                # the plain tool: called here, not through invoke()
                if entry.call_mode == ASYNC:
                    value = await entry.fn(**kwargs)
                else:
                    value = await call_entry(entry, kwargs, self.workers)
            elif entry.timeout is None:
                value = await self.invoke(entry, "tool", entry.name, kwargs, request, binding)
            else:
                try:
                    async with asyncio.timeout(entry.timeout) as deadline:
                        value = await self.invoke(
                            entry, "tool", entry.name, kwargs, request, binding
                        )
                except TimeoutError:
                    if not deadline.expired():  # another timeout, such as a client request's
                        raise
                    return error_result(f"Tool '{entry.name}' timed out after {entry.timeout} s")
        except (InputRequired, ProtocolError):
            raise  # MissingCapabilityError included: -32021, the request itself fails
        except ToolError as exc:
            # Raised on purpose, for the model: no bug, so no traceback.
            logger.info(TOOL_ERROR, entry.name, exc)
            return error_result(exception_text(exc))
        except Exception as exc:
            # The client sees only the text: the traceback goes to the server log (stderr
            # under stdio, which is the log file an AI client keeps for the server).
            if self.app.mask_error_details or _masked_where_mounted(entry):
                error_id = new_error_id()
                logger.warning(TOOL_RAISED_MASKED, entry.name, error_id, exc_info=exc)
                return error_result(MASKED_TOOL_ERROR % (entry.name, error_id))
            logger.warning(TOOL_RAISED, entry.name, exc_info=exc)
            return error_result(exception_text(exc))
        if entry.output_schema is None or signature is None or signature.output_schema is None:
            return _downgrade.tool_result(tool_result(value), _version(binding))
        if type(value) in signature.plain_output:
            # An int or str the schema takes whatever its value: JSON as it is (structure_output
            # would return it unchanged), never a CallToolResult, and a text block every
            # version has: no step is needed.
            return structured_tool_result({"result": value}, True)
        if is_call_tool_result(value):
            return _downgrade.tool_result(tool_result(value), _version(binding))
        try:
            structured = signature.structure_output(value)
        except Exception as exc:
            logger.warning(OUTPUT_REFUSED, entry.name, exc)
            return error_result(OUTPUT_REFUSED % (entry.name, exc))
        return _downgrade.tool_result(
            structured_tool_result(structured, signature.wraps_output), _version(binding)
        )

    # resources --------------------------------------------------------------------------

    def _listed(
        self, request: JsonRpcRequest, binding: TransportBinding, kind: str, entries: list[Any]
    ) -> dict[str, Any]:
        """One page of the list ``kind`` (resources, templates, prompts) as the caller sees
        it: without what its identity may not use."""
        entries, restricted = listed(self.catalog, kind, entries, binding)
        page, cursor = paginate(entries, _params(request).get("cursor"), self.app.page_size)
        described = [entry.to_wire() for entry in page]
        result: dict[str, Any] = {kind: _downgrade.descriptions(described, _version(binding))}
        if cursor:
            result["nextCursor"] = cursor
        if restricted:
            mark_private(result, binding)
        return result

    async def list_resources(
        self, request: JsonRpcRequest, binding: TransportBinding
    ) -> dict[str, Any]:
        return self._listed(request, binding, "resources", self.catalog.list_resources())

    async def list_resource_templates(
        self, request: JsonRpcRequest, binding: TransportBinding
    ) -> dict[str, Any]:
        templates = self.catalog.list_resource_templates()
        return self._listed(request, binding, "resourceTemplates", templates)

    async def read_resource(
        self, request: JsonRpcRequest, binding: TransportBinding
    ) -> dict[str, Any]:
        uri = _require_str(_params(request), "uri")
        entry: Any = in_view(
            self.catalog, "resources", uri, self.catalog.get_resource(uri), binding
        )
        if entry is not None and entry.auth is not None:
            refuse_step_up("resource", uri, entry, binding.auth)
            entry = usable(entry, binding.auth)  # hidden: read as an unknown URI
        kwargs: dict[str, Any] = {}
        if entry is None:
            found = match_template(self.catalog, uri, binding.auth, view_of(binding))
            if found is None:
                raise ResourceNotFoundError(uri)
            entry, kwargs = found
            refuse_step_up("resource", uri, entry, binding.auth)
            kwargs = dict(kwargs)
            if entry.converters is not None:
                _convert_variables(entry.converters, kwargs, uri)
            if "uri" in entry.injected or _accepts(entry.fn, "uri"):
                kwargs.setdefault("uri", uri)
        value = await self.invoke(entry, "resource", uri, kwargs, request, binding)
        return {"contents": resource_contents(value, uri, entry.mime_type)}

    async def subscribe(self, request: JsonRpcRequest, binding: TransportBinding) -> dict[str, Any]:
        uri = _require_str(_params(request), "uri")
        session = binding.session
        if session is None or session.send is None:
            raise InvalidRequestError(
                "resources/subscribe needs a session with a channel to the client"
            )
        try:
            self.app.subscriptions.subscribe(uri, session.key, session.send)
        except ValueError as exc:
            raise InvalidParamsError(str(exc)) from None
        return {}

    async def unsubscribe(
        self, request: JsonRpcRequest, binding: TransportBinding
    ) -> dict[str, Any]:
        uri = _require_str(_params(request), "uri")
        if binding.session is not None:
            self.app.subscriptions.unsubscribe(uri, binding.session.key)
        return {}

    # prompts ----------------------------------------------------------------------------

    async def list_prompts(
        self, request: JsonRpcRequest, binding: TransportBinding
    ) -> dict[str, Any]:
        return self._listed(request, binding, "prompts", self.catalog.list_prompts())

    async def get_prompt(
        self, request: JsonRpcRequest, binding: TransportBinding
    ) -> dict[str, Any]:
        params = _params(request)
        name = _require_str(params, "name")
        entry = in_view(self.catalog, "prompts", name, self.catalog.get_prompt(name), binding)
        if entry is None or (entry.auth is not None and not permits(entry.auth, binding.auth)):
            if entry is not None:  # listed to it, to step up for
                refuse_step_up("prompt", name, entry, binding.auth)
            raise InvalidParamsError(f"Unknown prompt: {name}", {"name": name})
        arguments = params.get("arguments")
        if arguments is not None and not isinstance(arguments, dict):
            raise InvalidParamsError('"arguments" must be an object')
        kwargs = entry.signature.validate(arguments)
        value = await self.invoke(entry, "prompt", name, kwargs, request, binding)
        result = _downgrade.prompt_result(prompt_messages(value), _version(binding))
        if entry.description and "description" not in result:
            result = {**result, "description": entry.description}
        return result

    # completion -------------------------------------------------------------------------

    async def complete(self, request: JsonRpcRequest, binding: TransportBinding) -> dict[str, Any]:
        ref_type, target, arg_name, value, context = completion_params(_params(request))
        entry = self.catalog.find_completion(ref_type, target, arg_name)
        if entry is None or completes_hidden(self.catalog, ref_type, target, binding):
            return {"completion": {"values": [], "hasMore": False}}
        offered = {"value": value, "argument": arg_name, "context": context}
        kwargs = {key: val for key, val in offered.items() if key in entry.accepts}
        found = await call_entry(entry, kwargs, self.workers)
        # A dict is a completion already counted (``values`` with ``total``/``hasMore``),
        # as a proxied server's is; anything else is the values themselves.
        counted = found if isinstance(found, dict) else {}
        values = list(counted.get("values") or []) if counted else list(found)
        total = counted.get("total", len(values))
        completion: dict[str, Any] = {
            "values": [str(v) for v in values[:MAX_COMPLETION_VALUES]],
            "total": total if isinstance(total, int) else len(values),
            "hasMore": bool(counted.get("hasMore")) or len(values) > MAX_COMPLETION_VALUES,
        }
        return {"completion": completion}


def completion_params(params: dict[str, Any]) -> tuple[str, str, str, str, dict[str, str]]:
    """``(ref type, prompt name or URI, argument name, value, context arguments)`` of a
    ``completion/complete`` request, checked as ``CompleteRequestParams`` has them (every
    version alike): -32602 before any completion function sees a value of the wrong type."""
    ref = params.get("ref")
    argument = params.get("argument")
    if not isinstance(ref, dict) or not isinstance(argument, dict):
        raise InvalidParamsError('"ref" and "argument" must be objects')
    ref_type = ref.get("type")
    if ref_type not in ("ref/prompt", "ref/resource"):
        raise InvalidParamsError(f"Unknown completion reference: {ref_type!r}", {"param": "ref"})
    field = "name" if ref_type == "ref/prompt" else "uri"
    target = ref.get(field)
    if not isinstance(target, str):
        raise InvalidParamsError(f'"ref.{field}" must be a string', {"param": f"ref.{field}"})
    for member in ("name", "value"):
        if not isinstance(argument.get(member), str):
            raise InvalidParamsError(
                f'"argument.{member}" must be a string', {"param": f"argument.{member}"}
            )
    context = params.get("context")
    if context is None:
        return ref_type, target, argument["name"], argument["value"], {}
    if not isinstance(context, dict):
        raise InvalidParamsError('"context" must be an object', {"param": "context"})
    arguments = context.get("arguments")
    if arguments is None:
        arguments = {}
    elif not isinstance(arguments, dict) or not all(isinstance(v, str) for v in arguments.values()):
        raise InvalidParamsError(
            '"context.arguments" must be an object of strings', {"param": "context.arguments"}
        )
    return ref_type, target, argument["name"], argument["value"], arguments


def _convert_variables(
    converters: dict[str, Callable[[Any], Any]], values: dict[str, Any], uri: str
) -> None:
    """A template's variables as the types their parameters declare; -32602 naming the
    variable whose text is no such value."""
    for name, convert in converters.items():
        if name in values:
            try:
                values[name] = convert(values[name])
            except (msgspec.ValidationError, ValueError) as exc:
                raise InvalidParamsError(
                    f"Invalid {name!r} in {uri}: {exc}", {"uri": uri, "variable": name}
                ) from None


def _accepts(fn: Any, name: str) -> bool:
    try:
        return name in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


__all__ = ["V2024_11_05", "MethodHandlers"]
