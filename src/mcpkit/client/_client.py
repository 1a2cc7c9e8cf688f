"""``McpClient``: the typed, high-level client over any ``MessageStream``, in either era.

Handshake era (2025-11-25 and earlier): ``initialize`` / ``notifications/initialized``, then
requests; the server sends its own requests (sampling, elicitation, roots). 2026-07-28
("modern"): no handshake, ``server/discover`` instead, and every request carries the
client's ``_meta``. ``McpClient.http`` and ``McpClient.stdio`` find out which era the server
speaks (``protocol_mode="auto"``); ``McpClient(stream)`` and ``McpClient.in_memory`` speak the
handshake era unless told otherwise.

This module holds the client's construction, its lifecycle and its typed API. The work is
done by helpers it holds, one job each, sharing one ``ClientState``: the request channel
(``_modern_requests``: a request in the era spoken), the era negotiation
(``_era_negotiation``), the handlers of what the server sends (``_server_messages``), the
open ``listen()`` streams (``_subscriptions``), the tools' ``x-mcp-header`` annotations
(``_tool_headers``) and tasks (``_tasks``). Its size: the client's public facade, one
short method per protocol operation (list, call, read, get, complete, subscribe, tasks,
listen), each handing the request to those helpers.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from mcpkit._version import __version__
from mcpkit.client._era_negotiation import DEFAULT_PROBE_TIMEOUT, PROTOCOL_MODES, EraNegotiator
from mcpkit.client._errors import ProtocolEraError
from mcpkit.client._extensions import declared_extensions
from mcpkit.client._modern_requests import DEFAULT_MAX_INPUT_ROUNDS, RequestChannel
from mcpkit.client._results import ServerDiscovery, convert, read_resource_result
from mcpkit.client._server_messages import (
    Callback,
    ElicitationHandler,
    LoggingHandler,
    RootsHandler,
    SamplingHandler,
    ServerMessageHandler,
)
from mcpkit.client._session import DEFAULT_REQUEST_TIMEOUT, ClientSession, ProgressCallback
from mcpkit.client._state import ClientState, Forwarded
from mcpkit.client._subscriptions import Listening, NotificationListeners
from mcpkit.client._task_state import TaskState
from mcpkit.client._tasks import StatusCallback, TaskClient, TaskWatchers, ToolTask
from mcpkit.client._tool_headers import ToolHeaderMirror
from mcpkit.client._tool_results import OutputSchemas, ToolResult
from mcpkit.client._tool_versions import with_version
from mcpkit.protocol import types as t
from mcpkit.protocol._stream import MessageStream
from mcpkit.protocol._versions import LATEST_HANDSHAKE_VERSION, MODERN_VERSIONS, Era

if TYPE_CHECKING:
    from mcpkit.client._http_options import HttpClientTransportOptions
    from mcpkit.client._websocket import WebSocketClientTransportOptions

__all__ = ["McpClient", "ServerDiscovery", "connect_http", "connect_websocket"]

#: Pages fetched by one auto-paginating list call before it stops (a server looping its cursor).
DEFAULT_MAX_PAGES = 1000


class McpClient:
    """A client for one MCP server.

    Use ``async with McpClient.stdio(options) as client`` (or ``McpClient.in_memory(app)``,
    or ``McpClient(stream)`` over any ``MessageStream``). Handlers answer the server's
    requests; giving one advertises the matching client capability.

    Its size: one method per request of the protocol (tools, resources, templates, prompts,
    completion, logging, tasks, listen, ping) and per way to connect, on the one object a
    user holds, as every MCP client SDK has it; each is a few lines over the session, where
    the work is.
    """

    # What the client knows of its connection (kept in its ClientState) -------------------

    client_info: Forwarded[dict[str, str]] = Forwarded("_state")
    """The ``clientInfo`` sent: ``{"name": client_name, "version": client_version}``."""
    protocol_version: Forwarded[str] = Forwarded("_state")
    """The protocol version in use (the one asked for, until ``connect()`` settles it)."""
    protocol_mode: Forwarded[str] = Forwarded("_state")
    """How the era is chosen: ``"auto"``, ``"legacy"`` (handshake) or ``"modern"``."""
    log_level: Forwarded[str | None] = Forwarded("_state")
    """The lowest level of ``notifications/message`` wanted (see ``set_logging_level``)."""
    max_input_rounds: Forwarded[int] = Forwarded("_state")
    """Input rounds one 2026-07-28 request may ask for before ``InputRequestError``."""
    probe_timeout: Forwarded[float] = Forwarded("_state")
    """Seconds the ``server/discover`` probe of ``protocol_mode="auto"`` waits."""
    era: Forwarded[Era | None] = Forwarded("_state")
    """The era spoken once connected (``Era.HANDSHAKE`` or ``Era.MODERN``)."""
    discovery: Forwarded[ServerDiscovery | None] = Forwarded("_state")
    """The ``server/discover`` answer (2026-07-28 only)."""
    server_info: Forwarded[t.InitializeResult | None] = Forwarded("_state")
    """Who the server is and what it offers: the ``initialize`` result, or (2026-07-28) the
    same shape made from ``server/discover`` (``protocol_version`` the one chosen); None for
    a resumed ``known_session_id`` (not known to this client)."""

    # The handlers of what the server sends ----------------------------------------------

    sampling_handler: Forwarded[SamplingHandler | None] = Forwarded("_handlers")
    """Answers ``sampling/createMessage`` (declares ``sampling``)."""
    elicitation_handler: Forwarded[ElicitationHandler | None] = Forwarded("_handlers")
    """Answers ``elicitation/create`` (declares ``elicitation``)."""
    roots: Forwarded[list[dict[str, Any]] | RootsHandler | None] = Forwarded("_handlers")
    """The roots ``roots/list`` answers, or a function giving them (declares ``roots``)."""
    logging_handler: Forwarded[LoggingHandler | None] = Forwarded("_handlers")
    """Called with the params of each ``notifications/message``."""
    on_list_changed: Forwarded[Callback | None] = Forwarded("_handlers")
    """Called with ``"tools"``, ``"resources"`` or ``"prompts"`` when that list changed."""
    on_resource_updated: Forwarded[Callback | None] = Forwarded("_handlers")
    """Called with the URI of each ``notifications/resources/updated``."""
    on_notification: Forwarded[Callback | None] = Forwarded("_handlers")
    """Called with ``(method, params)`` of every notification."""

    def __init__(
        self,
        stream: MessageStream,
        *,
        client_name: str = "mcpkit-client",
        client_version: str = __version__,
        protocol_version: str = LATEST_HANDSHAKE_VERSION,
        sampling_handler: SamplingHandler | None = None,
        elicitation_handler: ElicitationHandler | None = None,
        roots: list[dict[str, Any]] | RootsHandler | None = None,
        logging_handler: LoggingHandler | None = None,
        on_list_changed: Callback | None = None,
        on_resource_updated: Callback | None = None,
        on_notification: Callback | None = None,
        request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
        protocol_mode: str | None = None,
        log_level: str | None = None,
        max_input_rounds: int = DEFAULT_MAX_INPUT_ROUNDS,
        probe_timeout: float = DEFAULT_PROBE_TIMEOUT,
        extensions: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> None:
        """``protocol_version`` is the version asked for: a handshake one (``initialize``),
        or a modern one (``_meta``) which also makes ``protocol_mode`` default to
        ``"modern"``. ``log_level`` is the lowest level of ``notifications/message`` wanted
        (2026-07-28: sent in every request's ``_meta``; handshake era: ``logging/setLevel``
        after ``initialize``, when the server offers logging). ``extensions``: the protocol
        extensions this client supports, identifier to settings, declared in its
        capabilities in either era: ``{"io.modelcontextprotocol/ui": {"mimeTypes":
        ["text/html;profile=mcp-app"]}}`` says it shows MCP Apps pages."""
        if protocol_mode is None:
            protocol_mode = "modern" if protocol_version in MODERN_VERSIONS else "legacy"
        if protocol_mode not in PROTOCOL_MODES:
            raise ValueError(
                f"protocol_mode must be one of {', '.join(PROTOCOL_MODES)}, not {protocol_mode!r}"
            )
        if max_input_rounds < 1:
            raise ValueError("max_input_rounds must be at least 1")
        declared = declared_extensions(extensions)
        modern = protocol_version in MODERN_VERSIONS
        self._state = ClientState(
            client_info={"name": client_name, "version": client_version},
            protocol_mode=protocol_mode,
            protocol_version=protocol_version,
            handshake_version=LATEST_HANDSHAKE_VERSION if modern else protocol_version,
            modern_version=protocol_version if modern else MODERN_VERSIONS[-1],
            log_level=log_level,
            max_input_rounds=max_input_rounds,
            probe_timeout=probe_timeout,
        )
        self._listeners = NotificationListeners()
        self._task_watchers = TaskWatchers()
        self._handlers = ServerMessageHandler(
            self._state,
            self._listeners,
            self._task_watchers.status_changed,
            sampling_handler=sampling_handler,
            elicitation_handler=elicitation_handler,
            roots=roots,
            logging_handler=logging_handler,
            on_list_changed=on_list_changed,
            on_resource_updated=on_resource_updated,
            on_notification=on_notification,
            extensions=declared,
        )
        #: The JSON-RPC session: request/response matching, cancellation, progress.
        self.session = ClientSession(
            stream,
            on_request=self._handlers.on_request,
            on_notification=self._handlers.on_server_notification,
            request_timeout=request_timeout,
        )
        self._tool_headers = ToolHeaderMirror(self.session, self._state, self.list_tools)
        #: Which tools wrap their results (``tools/list``): ``call_tool``'s ``data``.
        self._outputs = OutputSchemas()
        self._channel = RequestChannel(
            self.session, self._state, self._handlers, self._tool_headers
        )
        self._era = EraNegotiator(self.session, self._state, self._channel, self._handlers)
        self._tasks = TaskClient(
            self._channel, self._state, self._handlers, self._tool_headers, self._task_watchers
        )
        # What connect() starts first (a transport, an in-memory app), and what aclose() stops.
        self._starter: Callable[[], Awaitable[None]] | None = None
        self._owned: list[Callable[[], Awaitable[None]]] = []

    # construction -----------------------------------------------------------------------

    @classmethod
    def stdio(cls, options: Any, **kwargs: Any) -> McpClient:
        """A client for a server started as a subprocess: ``StdioClientTransportOptions``, or
        the command as a list (``[sys.executable, "server.py"]``)."""
        from mcpkit.client._stdio import StdioClientTransport, StdioClientTransportOptions

        if type(options) in (list, tuple) and options and all(type(a) is str for a in options):
            options = StdioClientTransportOptions(command=options[0], arguments=list(options[1:]))
        if not isinstance(options, StdioClientTransportOptions):
            raise TypeError(
                "McpClient.stdio takes StdioClientTransportOptions(command=..., arguments=[...])"
                f" or the command as a list of strings, not {options!r}; e.g. StdioClientTransportOptions(command='mcpkit',"
                " arguments=['run', 'server.py'])"
            )
        transport = StdioClientTransport(options)
        kwargs.setdefault("protocol_mode", "auto")
        client = cls(transport, **kwargs)
        client._starter = transport.start
        return client

    @classmethod
    def in_memory(cls, app: Any, **kwargs: Any) -> McpClient:
        """A client wired in-process to a ``McpServerApp``."""
        from mcpkit.transports._memory import InMemoryTransport, serve_in_memory

        if not (hasattr(app, "start") and hasattr(app, "dispatcher")):
            raise TypeError(
                f"McpClient.in_memory takes an McpServerApp, not {app!r}: for a server class,"
                " McpClient.in_memory(McpServerApp(TheClass))"
            )

        client_end, server_end = InMemoryTransport.pair()
        client = cls(client_end, **kwargs)

        async def start() -> None:
            client._owned.append(await serve_in_memory(app, server_end))

        client._starter = start
        return client

    @classmethod
    def http(cls, options: Any, **kwargs: Any) -> McpClient:
        """A client for a server over HTTP (``HttpClientTransportOptions``, or a URL: auto-detect);
        ``auth="oauth"`` (or an ``OAuthLogin``) logs the user in first (see ``connect_http``)."""
        return connect_http(options, client_cls=cls, **kwargs)

    @classmethod
    def websocket(cls, url: str | WebSocketClientTransportOptions, **kwargs: Any) -> McpClient:
        """A client for a server at a ``ws://`` or ``wss://`` URL (subprotocol ``mcp``), or
        as ``WebSocketClientTransportOptions`` say (headers, authorization hooks)."""
        return connect_websocket(url, client_cls=cls, **kwargs)

    # connecting -------------------------------------------------------------------------

    async def connect(self) -> t.InitializeResult | None:
        """Start the transport and settle the era: ``server/discover`` (2026-07-28) or the
        ``initialize`` handshake, as ``protocol_mode`` says. Returns ``server_info``: None
        when resuming a ``known_session_id`` (HTTP), whose ``initialize`` result went to the
        client that opened the session."""
        self._refuse_reconnecting()
        if self._starter is not None:
            await self._starter()
        self.session.start()
        return await self._era.settle()

    def capabilities(self) -> dict[str, Any]:
        """The client capabilities the handlers given amount to, with the ``extensions``
        declared."""
        return self._handlers.capabilities()

    @property
    def server_extensions(self) -> Mapping[str, dict[str, Any]]:
        """The protocol extensions the server announced (``capabilities.extensions`` of the
        ``initialize`` or ``server/discover`` result), identifier to settings: read-only,
        empty when it announced none or before ``connect()``."""
        return self._state.server_extensions

    async def discover(self, *, timeout: float | None = None) -> ServerDiscovery:
        """``server/discover`` again (2026-07-28): refreshes ``discovery`` and ``server_info``."""
        return await self._era.discover(timeout=timeout)

    @property
    def session_id(self) -> str | None:
        """The Streamable HTTP session this client speaks in (``Mcp-Session-Id``), e.g. to
        hand it to another client as ``known_session_id``; None without one (2026-07-28,
        stateless, other transports)."""
        value = getattr(self.session.stream, "session_id", None)
        return value if isinstance(value, str) else None

    async def aclose(self) -> None:
        """Close the session and what the client started (its server process, in-memory app)."""
        await self.session.aclose()
        for stop in reversed(self._owned):
            await stop()
        self._owned.clear()

    def _refuse_reconnecting(self) -> None:
        if self.session.started:
            raise RuntimeError(
                "this client has already connected (one `async with client:` or connect() per"
                " client): make a new McpClient for another connection"
            )

    async def __aenter__(self) -> McpClient:
        self._refuse_reconnecting()  # before the try: a failure there closes the client
        try:
            await self.connect()
        except BaseException:
            await self.aclose()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # requests ---------------------------------------------------------------------------

    async def request(
        self, method: str, params: dict[str, Any] | None = None, **options: Any
    ) -> Any:
        """Send any request; returns the raw result dict (2026-07-28: with ``_meta`` added,
        multi round-trip requests followed to their final result)."""
        return await self._channel.send(method, params, **options)

    async def ping(self, *, timeout: float | None = None) -> None:
        """A round trip to the server. 2026-07-28 has no ``ping``: there it is a
        ``server/discover`` (the one request every server must answer)."""
        if self._state.era is Era.MODERN:
            await self._channel.send("server/discover", None, timeout=timeout)
            return
        await self.session.request("ping", timeout=timeout)

    async def _paged(
        self, method: str, key: str, *, timeout: float | None = None
    ) -> AsyncIterator[Any]:
        cursor: str | None = None
        for _ in range(DEFAULT_MAX_PAGES):
            params = {"cursor": cursor} if cursor else None
            page = await self._channel.send(method, params, timeout=timeout)
            for item in page.get(key, []):
                yield item
            cursor = page.get("nextCursor")
            if not cursor:
                return

    async def list_tools(self, *, timeout: float | None = None) -> list[t.Tool]:
        """Every tool, following ``nextCursor`` through all pages.

        2026-07-28 over Streamable HTTP: the tools' ``x-mcp-header`` annotations are kept
        for ``call_tool``, and a tool whose annotations break the rules is left out, with a
        warning (SEP-2243).
        """
        raw = [item async for item in self._paged("tools/list", "tools", timeout=timeout)]
        tools = self._tool_headers.tools(raw)
        self._outputs.learn(tools)
        return tools

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        progress: ProgressCallback | None = None,
        meta: dict[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        output_type: Any = None,
        version: str | None = None,
    ) -> ToolResult:
        """Call a tool; a tool failure comes back as ``is_error=True``, not an exception.
        ``headers``: HTTP headers for this call alone (over HTTP; ``ValueError`` for one the
        transport sets, such as ``Mcp-Session-Id``). ``result.data``: the structured content
        as Python values, of the tool's output type once ``list_tools()`` has shown its
        schema, or converted to ``output_type`` when given (``_tool_results``).
        ``version``: the version of the tool to run, on a server keeping several
        (``tool_versions``); the server refuses one it does not have (-32602)."""
        params: dict[str, Any] = {"name": name, "arguments": arguments or {}}
        meta = with_version(meta, version)
        if meta:
            params["_meta"] = meta
        await self._tool_headers.learn(name, timeout)
        raw = await self._channel.send(
            "tools/call", params, timeout=timeout, progress=progress, headers=headers
        )
        return self._outputs.result(name, raw, output_type)

    async def list_resources(self, *, timeout: float | None = None) -> list[t.Resource]:
        """Every resource the server lists (all pages)."""
        return [
            convert(item, t.Resource)
            async for item in self._paged("resources/list", "resources", timeout=timeout)
        ]

    async def list_resource_templates(
        self, *, timeout: float | None = None
    ) -> list[t.ResourceTemplate]:
        """Every resource template the server lists (all pages)."""
        return [
            convert(item, t.ResourceTemplate)
            async for item in self._paged(
                "resources/templates/list", "resourceTemplates", timeout=timeout
            )
        ]

    async def read_resource(
        self, uri: str, *, timeout: float | None = None, headers: Mapping[str, str] | None = None
    ) -> t.ReadResourceResult:
        """Read one resource (``resources/read``); ``headers`` as ``call_tool`` takes them."""
        raw = await self._channel.send(
            "resources/read", {"uri": uri}, timeout=timeout, headers=headers
        )
        return read_resource_result(raw)

    async def subscribe_resource(self, uri: str) -> None:
        """``resources/subscribe`` (handshake era; 2026-07-28 has ``listen()`` instead)."""
        if self._state.era is Era.MODERN:
            raise ProtocolEraError(
                "resources/subscribe is not part of 2026-07-28: use "
                f"`async with client.listen(resource_subscriptions=[{uri!r}])`"
            )
        await self.session.request("resources/subscribe", {"uri": uri})

    async def unsubscribe_resource(self, uri: str) -> None:
        """Stop the updates of a resource (handshake era; 2026-07-28 has
        ``subscriptions/listen``)."""
        if self._state.era is Era.MODERN:
            raise ProtocolEraError(
                "resources/unsubscribe is not part of 2026-07-28: leave the listen() block"
            )
        await self.session.request("resources/unsubscribe", {"uri": uri})

    def listen(
        self,
        *,
        tools_list_changed: bool = False,
        prompts_list_changed: bool = False,
        resources_list_changed: bool = False,
        resource_subscriptions: list[str] | None = None,
    ) -> Listening:
        """Subscribe to change notifications: ``async with client.listen(...) as stream:
        async for note in stream: ...`` (``note`` is a ``ServerNotification``).

        2026-07-28: one long-lived ``subscriptions/listen`` request, acknowledged before the
        block starts (``stream.acknowledged`` is the filter the server agreed to). Handshake
        era: ``resources/subscribe`` for the URIs, and the list-changed notifications the
        server sends anyway.
        """
        notifications: dict[str, Any] = {}
        for flag, wanted in (
            ("toolsListChanged", tools_list_changed),
            ("promptsListChanged", prompts_list_changed),
            ("resourcesListChanged", resources_list_changed),
        ):
            if wanted:
                notifications[flag] = True
        if resource_subscriptions:
            notifications["resourceSubscriptions"] = list(resource_subscriptions)
        return Listening(self._channel, self._listeners, notifications)

    async def list_prompts(self, *, timeout: float | None = None) -> list[t.Prompt]:
        """Every prompt the server lists (all pages)."""
        return [
            convert(item, t.Prompt)
            async for item in self._paged("prompts/list", "prompts", timeout=timeout)
        ]

    async def get_prompt(
        self,
        name: str,
        arguments: dict[str, str] | None = None,
        *,
        timeout: float | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> t.GetPromptResult:
        """A prompt's messages for ``arguments`` (``prompts/get``); ``headers`` as
        ``call_tool`` takes them."""
        params: dict[str, Any] = {"name": name}
        if arguments:
            params["arguments"] = arguments
        raw = await self._channel.send("prompts/get", params, timeout=timeout, headers=headers)
        return convert(raw, t.GetPromptResult)

    async def complete(
        self,
        ref: dict[str, Any],
        argument: str,
        value: str,
        *,
        context: dict[str, str] | None = None,
    ) -> t.CompleteResult:
        """``completion/complete``; ``ref`` is ``{"type": "ref/prompt", "name": ...}`` or
        ``{"type": "ref/resource", "uri": ...}``."""
        params: dict[str, Any] = {"ref": ref, "argument": {"name": argument, "value": value}}
        if context:
            params["context"] = {"arguments": context}
        raw = await self._channel.send("completion/complete", params)
        return convert(raw, t.CompleteResult)

    async def set_logging_level(self, level: str) -> None:
        """The lowest log level wanted. 2026-07-28 has no ``logging/setLevel``: the level
        goes in the ``_meta`` of every request from now on."""
        if self._state.era is not Era.MODERN:
            await self.session.request("logging/setLevel", {"level": level})
        self._state.log_level = level

    async def send_roots_list_changed(self) -> None:
        """Tell the server the roots changed (handshake era; a no-op in 2026-07-28, where
        the server asks for the roots with each request that needs them)."""
        if self._state.era is Era.MODERN:
            return
        await self.session.notify("notifications/roots/list_changed")

    # tasks ------------------------------------------------------------------------------

    async def call_tool_as_task(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        ttl_ms: int | None = None,
        timeout: float | None = None,
        meta: dict[str, Any] | None = None,
        version: str | None = None,
    ) -> ToolTask:
        """Call a tool as a task; returns its handle (``await handle.result()`` for the
        ``CallToolResult``). 2025-11-25: ``params.task`` with ``ttl_ms`` as its ``ttl``,
        refused with ``TasksNotSupportedError`` when the server does not declare
        ``tasks.requests.tools.call`` (a tool whose ``execution.taskSupport`` forbids it is
        the server's -32601). 2026-07-28: the call declares the tasks extension and the
        server decides (``ttl_ms`` is not sent: the server picks the ttl); a server that
        answers at once gives a handle with ``immediate`` set. ``version`` as
        ``call_tool`` takes it."""
        return await self._tasks.call_tool_as_task(
            name, arguments, ttl_ms=ttl_ms, timeout=timeout, meta=with_version(meta, version)
        )

    async def get_task(self, task_id: str, *, timeout: float | None = None) -> TaskState:
        """``tasks/get``: where the task stands (2026-07-28: with its result, error or
        input requests inline)."""
        return await self._tasks.get_task(task_id, timeout=timeout)

    async def get_task_result(
        self, task_id: str, *, timeout: float | None = None
    ) -> t.CallToolResult:
        """The result of a ``tools/call`` task. 2025-11-25: ``tasks/result``, which the server
        holds until the task ends (``timeout`` defaults to the client's request timeout;
        ``ToolTask.result()`` polls first instead). 2026-07-28 has no ``tasks/result``: polls
        ``tasks/get`` until the task ends (``timeout`` then bounds the whole wait)."""
        return await self._tasks.get_task_result(task_id, timeout=timeout)

    async def cancel_task(self, task_id: str, *, timeout: float | None = None) -> TaskState | None:
        """``tasks/cancel``. 2025-11-25: the task's new state (``cancelled``; refused with
        ``TasksNotSupportedError`` when the server does not declare ``tasks.cancel``).
        2026-07-28: None, the server only acknowledges (cancelling is cooperative: poll to
        see where the task ends)."""
        return await self._tasks.cancel_task(task_id, timeout=timeout)

    async def list_tasks(self, *, timeout: float | None = None) -> list[TaskState]:
        """``tasks/list``, every page (2025-11-25 only; needs ``tasks.list``)."""
        return await self._tasks.list_tasks(timeout=timeout)

    async def wait_for_task(
        self,
        task_id: str,
        *,
        timeout: float | None = None,
        poll_interval: float | None = None,
        on_status: StatusCallback | None = None,
    ) -> TaskState:
        """Poll ``tasks/get`` until the task ends; its final state.

        Waits between polls as long as the task's ``pollInterval`` (``pollIntervalMs``)
        says, else ``poll_interval`` seconds (default 1), waking early when a task status
        notification for it arrives. ``on_status(state)`` (sync or async) sees every state
        whose status or message changed. A task waiting for input gets it: 2026-07-28, each
        new ``inputRequests`` entry is answered by the client's handlers (``tasks/update``);
        2025-11-25, ``tasks/result`` is sent, alongside which the server asks. ``timeout``
        bounds the whole wait (``RequestTimeoutError``); the task goes on regardless.
        """
        return await self._tasks.wait_for_task(
            task_id, timeout=timeout, poll_interval=poll_interval, on_status=on_status
        )


# The HTTP and WebSocket transports are imported when a client is made: ``import mcpkit.client``
# loads no HTTP library.


def connect_http(
    options: HttpClientTransportOptions | str,
    *,
    client_cls: type[McpClient] = McpClient,
    auth: Any = None,
    **client_kwargs: Any,
) -> McpClient:
    """A client for the MCP server at ``options.endpoint`` (a bare URL means AUTO_DETECT),
    not connected yet (``async with`` it, or ``await client.connect()``).

    ``client_kwargs`` go to ``client_cls`` (handlers, ``request_timeout``...);
    ``protocol_mode`` defaults to ``"auto"`` (probe with ``server/discover``). ``auth``:
    ``"oauth"`` or an ``OAuthLogin`` (``mcpkit.auth.client``) logs the user in (a token
    kept from before is used, or refreshed), or an ``OAuthClientProvider``.
    """
    from mcpkit.client._http_factory import create_http_transport

    login = None
    if auth is not None:
        from mcpkit.client._http_login import HttpLogin

        login = HttpLogin(options, auth)
        options = login.options
    transport = create_http_transport(options)
    client_kwargs.setdefault("protocol_mode", "auto")
    client = client_cls(transport, **client_kwargs)
    client._starter = transport.start if login is None else login.starter(transport.start)
    if login is not None:
        client._owned.append(login.aclose)
    return client


def connect_websocket(
    url: str | WebSocketClientTransportOptions,
    *,
    client_cls: type[McpClient] = McpClient,
    **kwargs: Any,
) -> McpClient:
    """A client for the MCP server at the WebSocket ``url`` (``ws://`` or ``wss://``), or
    as ``WebSocketClientTransportOptions`` describe it (with an ``OAuthClientProvider``
    installed on them, say), not connected yet.

    Keywords named like an options field (``additional_headers`` or ``headers``,
    ``max_message_bytes``, ``open_timeout``, the auth hooks...) configure the transport
    (replacing those of given options); the rest go to ``client_cls``.
    """
    from mcpkit.client._http_factory import create_websocket_transport

    transport = create_websocket_transport(url, kwargs)
    client = client_cls(transport, **kwargs)
    client._starter = transport.start
    return client
