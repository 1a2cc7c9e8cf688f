"""``McpProxy``: an ``McpServerApp`` whose catalog is the backend's and whose handlers
forward to it through ``McpClient``; whatever the backend sends back (progress, logs,
sampling, elicitation, roots, list changes, resource updates) goes to the front client."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from functools import partial
from typing import Any

from mcpkit._exceptions import (
    InvalidRequestError,
    McpCallError,
    MissingCapabilityError,
    ProtocolError,
)
from mcpkit.client import McpClient
from mcpkit.protocol._headers import header_annotations
from mcpkit.protocol._tool_version_keys import VERSION_META_KEY
from mcpkit.protocol._uri_template import UriTemplate
from mcpkit.protocol._versions import Era
from mcpkit.proxy._backend import (
    DEFAULT_BACKEND_CONNECT_TIMEOUT,
    DEFAULT_BACKEND_IDLE_TIMEOUT,
    DEFAULT_BACKEND_REQUEST_TIMEOUT,
    DEFAULT_MAX_BACKEND_SESSIONS,
    BackendConnection,
    BackendSpec,
    HttpBackend,
    client_factory,
    describe_backend,
)
from mcpkit.proxy._lists import BackendLists
from mcpkit.proxy._parked import (
    DEFAULT_MAX_PARKED_CALLS,
    DEFAULT_PARKED_CALL_TIMEOUT,
    ParkedCall,
    ParkedCalls,
)
from mcpkit.proxy._pool import BackendPool
from mcpkit.proxy._rounds import relay_rounds
from mcpkit.proxy._routing import (
    STATELESS_DECLARED,
    Owner,
    declared_capabilities,
    front_of,
    is_stateless,
    owner_of,
    principal_of,
    stateless_refusal,
    unowned,
)
from mcpkit.proxy._subscriptions import BackendSubscriptions
from mcpkit.server._app import McpServerApp
from mcpkit.server._context import McpToolContext
from mcpkit.server._entries import (
    CompletionEntry,
    PromptEntry,
    ResourceEntry,
    ResourceTemplateEntry,
    ToolEntry,
)
from mcpkit.server._eras.mrtr import InputRequired

logger = logging.getLogger("mcpkit.proxy")

_CONTEXT = "_mcpkit_context"
#: Front requests whose 2026-07-28 rounds may ask the client for input.
_ROUND_TRIP_METHODS = frozenset({"tools/call", "prompts/get", "resources/read"})
_INJECTED: dict[str, type] = {_CONTEXT: McpToolContext}
#: What a 2026-07-28 backend adds to every result, which the front engine adds anew.
_MODERN_RESULT_KEYS = ("resultType", "ttlMs", "cacheScope")


def _changed(existing: Any, entry: Any) -> bool:
    """Whether ``entry`` differs from the one registered (None: none is). Each registration
    is a list_changed to every front client: only what changed is registered again."""
    return existing is None or existing.to_wire() != entry.to_wire()


class _Verbatim:
    """Arguments passed on as given: the backend checks them against its own schema."""

    @staticmethod
    def validate(arguments: Any) -> dict[str, Any]:
        return dict(arguments or {})


def _request_of(
    method: str, params: dict[str, Any], progress: Any
) -> Callable[[McpClient], Awaitable[Any]]:
    """The backend call of one front request, progress relayed when wanted."""
    return lambda client: client.request(method, params, progress=progress)


def _clean(result: Any) -> Any:
    """A backend result without the 2026-07-28 dressing (the front adds its own)."""
    if not isinstance(result, dict):
        return result
    cleaned = {key: value for key, value in result.items() if key not in _MODERN_RESULT_KEYS}
    meta = cleaned.get("_meta")
    if isinstance(meta, dict):
        meta = {k: v for k, v in meta.items() if not k.startswith("io.modelcontextprotocol/")}
        if meta:
            cleaned["_meta"] = meta
        else:
            cleaned.pop("_meta")
    return cleaned


#: The client capability each request the backend may send to the front client needs.
_CAPABILITY_OF = {
    "sampling/createMessage": "sampling",
    "elicitation/create": "elicitation",
    "roots/list": "roots",
}


class McpProxy:
    """Serve a backend MCP server (a command, a URL, or an ``McpClient`` factory) as an
    ``McpServerApp`` (``proxy.app``), over any transport and in either era.

    ``backend``: ``StdioClientTransportOptions``, a command line (``["python", "srv.py"]``),
    a URL (``http(s)://`` or ``ws(s)://``), an ``HttpBackend`` (URL, headers, transport), or
    a function returning an unconnected ``McpClient`` given the client's keyword arguments.
    A stdio backend starts in a minimal environment (``PATH``, ``HOME``, the locale, ...)
    plus its options' ``environment_variables``; ``inherit_environment=True`` gives it the
    proxy's whole environment instead.

    Backend connections (``_pool``): one per handshake-era front session, one per running
    call of a 2026-07-28 or stateless front client to a handshake-era backend (then kept for
    the same principal's next call), and one shared (the catalog, completions, a 2026-07-28
    backend's calls): at most ``max_backend_sessions`` besides the shared one, closed after
    ``backend_idle_timeout`` seconds unused; each connects within
    ``backend_connect_timeout`` seconds. ``max_parked_calls`` / ``parked_call_timeout``
    bound the backend calls kept running while a 2026-07-28 front client answers an
    ``input_required`` round. ``backend_protocol_mode`` is the era spoken to the backend
    ("auto", "legacy" for the handshake era, "modern" for 2026-07-28).
    """

    def __init__(
        self,
        backend: BackendSpec | HttpBackend,
        *,
        name: str | None = None,
        max_backend_sessions: int = DEFAULT_MAX_BACKEND_SESSIONS,
        backend_idle_timeout: float = DEFAULT_BACKEND_IDLE_TIMEOUT,
        backend_request_timeout: float = DEFAULT_BACKEND_REQUEST_TIMEOUT,
        backend_connect_timeout: float = DEFAULT_BACKEND_CONNECT_TIMEOUT,
        backend_protocol_mode: str = "auto",
        inherit_environment: bool = False,
        max_parked_calls: int = DEFAULT_MAX_PARKED_CALLS,
        parked_call_timeout: float = DEFAULT_PARKED_CALL_TIMEOUT,
        **app_options: Any,
    ) -> None:
        #: 2026-07-28 front calls waiting for the client's next round (bounded, expiring).
        self.parked = ParkedCalls(max_calls=max_parked_calls, timeout=parked_call_timeout)
        self.backend_protocol_mode = backend_protocol_mode
        self._factory = client_factory(backend, inherit_environment=inherit_environment)
        self.request_timeout = backend_request_timeout
        described = describe_backend(backend)
        self.pool = BackendPool(
            self._new_client,
            max_sessions=max_backend_sessions,
            idle_timeout=backend_idle_timeout,
            connect_timeout=backend_connect_timeout,
            label=f"{name}: {described}" if name and described else name or described,
        )
        self._fixed_name = name
        #: The front side: serve it like any app (``serve_stdio(proxy.app)``, HTTP, ...).
        self.app = McpServerApp(name=name or "mcpkit-proxy", **app_options)
        self.app.lifespan(self._lifespan)
        self._background: set[asyncio.Task[Any]] = set()
        #: Calls whose front client could not take a request the backend made, by owner:
        #: the call fails with that refusal, whatever the backend made of it.
        self._refusals: dict[int, ProtocolError] = {}
        #: Front subscriptions mirrored at the backend connections.
        self.subscriptions = BackendSubscriptions(self.app.subscriptions, self.pool, self._spawn)
        #: The backend's lists, read into the front catalog.
        self.lists = BackendLists(self.pool, self._set_kind)

    # backend clients --------------------------------------------------------------------

    def _new_client(self, connection: BackendConnection) -> McpClient:
        async def ask(method: str, params: dict[str, Any] | None) -> dict[str, Any]:
            return await self._ask_front(connection, method, params)

        async def sampling(params: dict[str, Any]) -> dict[str, Any]:
            return await ask("sampling/createMessage", params)

        async def elicitation(params: dict[str, Any]) -> dict[str, Any]:
            return await ask("elicitation/create", params)

        async def roots() -> list[dict[str, Any]]:
            return list((await ask("roots/list", None)).get("roots", []))

        async def log(params: dict[str, Any]) -> None:
            await self._forward_log(connection, params)

        def list_changed(kind: str) -> None:
            # Read from the connection that announced it: a stdio backend is one process
            # per connection, and only that one has changed.
            reread = self.lists.changed(kind, connection)
            if reread is not None:
                self._spawn(reread)

        async def resource_updated(uri: Any) -> None:
            if isinstance(uri, str):
                await self.app.subscriptions.notify_updated(uri)

        handlers: dict[str, Any] = {
            "sampling": ("sampling_handler", sampling),
            "elicitation": ("elicitation_handler", elicitation),
            "roots": ("roots", roots),
        }
        # Declared only where a front client can answer (the shared connection: see
        # SHARED_DECLARED).
        declared = connection.front_capabilities
        return self._factory(
            client_name="mcpkit-proxy",
            **{
                option: handler
                for capability, (option, handler) in handlers.items()
                if capability in declared
            },
            logging_handler=log,
            on_list_changed=list_changed,
            on_resource_updated=resource_updated,
            log_level="debug",  # the front engine filters by each front session's level
            request_timeout=self.request_timeout,
            protocol_mode=self.backend_protocol_mode,
        )

    async def _ask_front(
        self, connection: BackendConnection, method: str, params: dict[str, Any] | None
    ) -> dict[str, Any]:
        """Put the backend's own request to the client of the front call it belongs to
        (``_routing``); refused when no single call can be told. A front client without
        the capability it needs gets -32021 for its call, as from a direct server (the
        backend hears the same refusal, whatever it then makes of it); a stateless one is
        told the server cannot ask it anything."""
        owner = owner_of(connection)
        if owner is None:
            raise unowned(method, connection)
        front = front_of(owner)
        capability = _CAPABILITY_OF.get(method)
        refusal: ProtocolError | None = None
        if capability and is_stateless(front):
            refusal = stateless_refusal(capability)
        elif front is not None and capability and capability not in front.client_capabilities:
            refusal = MissingCapabilityError(capability)
        if refusal is not None:
            self._refusals[id(owner)] = refusal
            raise refusal
        if isinstance(owner, ParkedCall):  # a 2026-07-28 front: asked in its next round
            return await owner.ask(method, params)
        ctx: McpToolContext = owner
        try:
            answers = await ctx.gather_inputs({"proxy": (method, params)})
        except InputRequired:  # a 2026-07-28 round of a call that is not parked
            raise InvalidRequestError(f"{method}: this call cannot be suspended") from None
        if "proxy" not in answers:
            raise InvalidRequestError(f"The client does not support {method}")
        return answers["proxy"]

    @staticmethod
    async def _forward_log(connection: BackendConnection, params: dict[str, Any]) -> None:
        """Send the backend's log message to the client of the call it belongs to; one no
        single call can be told goes to nobody (``_routing``)."""
        owner = owner_of(connection)
        ctx = front_of(owner) if owner is not None else None
        if ctx is None:
            logger.debug("a backend log message no single front call owns was dropped")
            return
        session = ctx.binding.session
        level = params.get("level")
        if session is not None and isinstance(level, str) and not session.should_log(level):
            return
        await ctx.binding.send_notification("notifications/message", params)

    def _spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _backend_is_modern(self) -> bool:
        return (await self.pool.shared.client()).era is Era.MODERN

    @contextlib.asynccontextmanager
    async def _connection(self, ctx: McpToolContext) -> AsyncIterator[BackendConnection]:
        """The backend connection ``ctx``'s call runs on (``_pool``): its handshake-era
        front session's; the shared one for a 2026-07-28 backend; else one leased for this
        call alone, so that what the backend asks or logs during it reaches only its client."""
        session = ctx.binding.session
        if session is not None and not session.modern and not session.ephemeral:
            yield await self.pool.for_session(session.key, declared_capabilities(ctx))
        elif await self._backend_is_modern():
            yield self.pool.shared
        else:
            declared = STATELESS_DECLARED if is_stateless(ctx) else declared_capabilities(ctx)
            async with self.pool.lease(principal_of(ctx), declared) as connection:
                yield connection

    async def forward(
        self,
        ctx: McpToolContext | None,
        method: str,
        params: dict[str, Any],
    ) -> Any:
        """Send ``method`` to the backend connection of ``ctx``'s call, progress and the
        backend's own requests relayed; a backend error is re-raised as is. A 2026-07-28
        front call the backend asks input of stays running between the rounds
        (``ParkedCalls``)."""
        if ctx is None:
            request = _request_of(method, params, None)
            return await self._call_backend(self.pool.shared, None, request)
        front = ctx

        async def progress(value: float, total: float | None, message: str | None) -> None:
            await front.report_progress(value, total, message)

        wanted = progress if ctx.progress_token is not None else None
        if method in _ROUND_TRIP_METHODS and await self._backend_is_modern():
            rounds = partial(relay_rounds, ctx=ctx, method=method, params=params, progress=wanted)
            return await self._call(ctx, ctx, rounds)
        if not ctx.binding.modern or method not in _ROUND_TRIP_METHODS:
            return await self._call(ctx, ctx, _request_of(method, params, wanted))
        state = ctx.request_state
        if state is not None:
            return await self.parked.run_round(self.parked.resume(state), ctx)
        holder: list[ParkedCall] = []

        async def parked_progress(value: float, total: float | None, message: str | None) -> None:
            current = holder[0].ctx
            if current is not None:
                await current.report_progress(value, total, message)

        async def work() -> Any:
            relayed = parked_progress if ctx.progress_token is not None else None
            return await self._call(ctx, holder[0], _request_of(method, params, relayed))

        call = self.parked.start(work())
        holder.append(call)
        return await self.parked.run_round(call, ctx)

    async def _call(
        self, ctx: McpToolContext, owner: Owner, call: Callable[[McpClient], Awaitable[Any]]
    ) -> Any:
        async with self._connection(ctx) as connection:
            return await self._call_backend(connection, owner, call)

    async def _call_backend(
        self,
        connection: BackendConnection,
        owner: Owner | None,
        call: Callable[[McpClient], Awaitable[Any]],
    ) -> Any:
        if owner is not None:  # before connecting: a backend asks for roots at its start
            connection.active.append(owner)
        try:
            raw = await connection.run(call)
        except McpCallError as exc:
            refusal = self._refusals.pop(id(owner), None)
            if refusal is not None:  # the backend failed because the front client could not
                raise refusal from None
            raise ProtocolError(exc.message, exc.data, code=exc.code) from None
        finally:
            if owner is not None:
                connection.active.remove(owner)
                self._refusals.pop(id(owner), None)
        return _clean(raw)

    # the catalog ------------------------------------------------------------------------

    async def _lifespan(self) -> AsyncIterator[None]:
        client = await self.pool.shared.client()
        info = client.server_info
        if info is not None and self._fixed_name is None:
            self.app.name = info.server_info.name
            self.app.version = info.server_info.version
            self.app.instructions = info.instructions
        await self.lists.refresh_all()
        follower = asyncio.ensure_future(self.lists.follow_changes())
        reaper = asyncio.ensure_future(self._close_idle_backends())
        try:
            yield
        finally:
            follower.cancel()
            reaper.cancel()
            await asyncio.gather(follower, reaper, return_exceptions=True)
            self.subscriptions.close()
            for task in list(self._background):
                task.cancel()
            self.parked.drop_all()
            await self.pool.aclose()

    async def _close_idle_backends(self) -> None:
        """Close the backend connections left unused (the pool also does at each use)."""
        while True:
            await asyncio.sleep(self.pool.idle_timeout / 2)
            await self.pool.close_idle()

    def _set_kind(
        self,
        kind: str,
        listed: list[dict[str, Any]],
        templates: list[dict[str, Any]],
        completes: bool,
    ) -> None:
        if kind == "tools":
            self._set_tools(listed)
        elif kind == "prompts":
            self._set_prompts(listed, completes=completes)
        elif kind == "resources":
            self._set_resources(listed, templates, completes=completes)

    def _set_tools(self, tools: list[dict[str, Any]]) -> None:
        catalog = self.app.catalog
        wanted = {tool["name"]: tool for tool in tools if isinstance(tool.get("name"), str)}
        for entry in catalog.list_tools():
            if entry.name not in wanted:
                catalog.unregister_tool(entry.name)
        for name, tool in wanted.items():
            existing = catalog.get_tool(name)
            input_schema = tool.get("inputSchema") or {"type": "object"}
            try:  # the backend's x-mcp-header parameters: the front checks their headers
                header_params = header_annotations(input_schema)
            except ValueError as exc:
                logger.warning("backend tool %r: %s; its headers are not checked", name, exc)
                header_params = []
            entry = ToolEntry(
                name=name,
                fn=self._tool_fn(name),
                input_schema=input_schema,
                header_params=header_params,
                description=tool.get("description"),
                title=tool.get("title"),
                output_schema=tool.get("outputSchema"),
                annotations=tool.get("annotations"),
                icons=tuple(tool.get("icons") or ()),
                meta=tool.get("_meta"),
                injected=dict(_INJECTED),
            )
            if _changed(existing, entry):
                catalog.register_tool(entry)

    def _tool_fn(self, name: str) -> Callable[..., Any]:
        async def call_backend_tool(_mcpkit_context: McpToolContext, **arguments: Any) -> Any:
            params: dict[str, Any] = {"name": name, "arguments": arguments}
            version = _mcpkit_context.meta.get(VERSION_META_KEY)
            if version is not None:  # the backend keeps the versions: it picks
                params["_meta"] = {VERSION_META_KEY: version}
            return await self.forward(_mcpkit_context, "tools/call", params)

        return call_backend_tool

    def _set_prompts(self, prompts: list[dict[str, Any]], *, completes: bool) -> None:
        catalog = self.app.catalog
        wanted = {p["name"]: p for p in prompts if isinstance(p.get("name"), str)}
        for entry in catalog.list_prompts():
            if entry.name not in wanted:
                catalog.unregister_prompt(entry.name)
        for completion in list(catalog.list_completions()):
            if completion.ref_type == "ref/prompt":
                catalog.unregister_completion(completion)
        for name, prompt in wanted.items():

            async def get_backend_prompt(
                _mcpkit_context: McpToolContext, _name: str = name, **arguments: Any
            ) -> Any:
                params: dict[str, Any] = {"name": _name}
                if arguments:
                    params["arguments"] = arguments
                return await self.forward(_mcpkit_context, "prompts/get", params)

            entry = PromptEntry(
                name=name,
                fn=get_backend_prompt,
                arguments=list(prompt.get("arguments") or []),
                title=prompt.get("title"),
                description=prompt.get("description"),
                icons=tuple(prompt.get("icons") or ()),
                meta=prompt.get("_meta"),
                signature=_Verbatim(),
                injected=dict(_INJECTED),
            )
            existing = catalog.get_prompt(name)
            if _changed(existing, entry):
                catalog.register_prompt(entry)
            if completes:  # only a backend offering completions is asked for them
                catalog.register_completion(self._completion("ref/prompt", name, "name"))

    def _completion(self, ref_type: str, ref: str, key: str) -> CompletionEntry:
        async def complete_on_backend(
            value: str, argument: str, context: dict[str, str]
        ) -> dict[str, Any]:
            params: dict[str, Any] = {
                "ref": {"type": ref_type, key: ref},
                "argument": {"name": argument, "value": value},
            }
            if context:
                params["context"] = {"arguments": context}
            result = await self.forward(None, "completion/complete", params)
            completion = result.get("completion")
            return completion if isinstance(completion, dict) else {}

        return CompletionEntry(
            ref_type,
            ref,
            None,
            complete_on_backend,
            accepts=frozenset({"value", "argument", "context"}),
        )

    def _set_resources(
        self, resources: list[dict[str, Any]], templates: list[dict[str, Any]], *, completes: bool
    ) -> None:
        catalog = self.app.catalog
        by_uri = {r["uri"]: r for r in resources if isinstance(r.get("uri"), str)}
        by_template = {
            t["uriTemplate"]: t for t in templates if isinstance(t.get("uriTemplate"), str)
        }
        for entry in catalog.list_resources():
            if entry.uri not in by_uri:
                catalog.unregister_resource(entry.uri)
        for template_entry in catalog.list_resource_templates():
            if template_entry.uri_template not in by_template:
                catalog.unregister_resource(template_entry.uri_template)

        async def read_backend_resource(_mcpkit_context: McpToolContext, uri: str) -> Any:
            result = await self.forward(_mcpkit_context, "resources/read", {"uri": uri})
            return list(result.get("contents") or [])

        async def read_backend_template(
            _mcpkit_context: McpToolContext, uri: str, **_values: Any
        ) -> Any:
            return await read_backend_resource(_mcpkit_context, uri)

        templates_now = {t.uri_template: t for t in catalog.list_resource_templates()}
        for uri, resource in by_uri.items():

            async def read_listed(_mcpkit_context: McpToolContext, _uri: str = uri) -> Any:
                return await read_backend_resource(_mcpkit_context, _uri)

            entry = ResourceEntry(
                uri=uri,
                name=str(resource.get("name") or uri),
                fn=read_listed,
                title=resource.get("title"),
                description=resource.get("description"),
                mime_type=resource.get("mimeType"),
                size=resource.get("size"),
                annotations=resource.get("annotations"),
                icons=tuple(resource.get("icons") or ()),
                meta=resource.get("_meta"),
                injected=dict(_INJECTED),
            )
            existing = catalog.get_resource(uri)
            if _changed(existing, entry):
                catalog.register_resource(entry)
        for uri_template, template in by_template.items():
            try:
                parsed = UriTemplate(uri_template)
            except ValueError:
                logger.warning("backend resource template %r left out", uri_template)
                continue
            placed = ResourceTemplateEntry(
                template=parsed,
                name=str(template.get("name") or uri_template),
                fn=read_backend_template,
                title=template.get("title"),
                description=template.get("description"),
                mime_type=template.get("mimeType"),
                annotations=template.get("annotations"),
                icons=tuple(template.get("icons") or ()),
                meta=template.get("_meta"),
                injected=dict(_INJECTED),
            )
            known = templates_now.get(uri_template)
            if _changed(known, placed):
                catalog.register_resource(placed)
        for completion in list(catalog.list_completions()):
            if completion.ref_type == "ref/resource":
                catalog.unregister_completion(completion)
        for uri_template in by_template if completes else ():
            catalog.register_completion(self._completion("ref/resource", uri_template, "uri"))
