"""``McpClient``: the typed, high-level client over any ``MessageStream``, in either era.

Handshake era (2025-11-25 and earlier): ``initialize`` / ``notifications/initialized``, then
requests; the server sends its own requests (sampling, elicitation, roots).

2026-07-28 ("modern"): no handshake. ``connect()`` calls ``server/discover``; every request
then carries the protocol version, the client's capabilities and identity (and the log level,
when one is set) in ``_meta``. A result whose ``resultType`` is ``input_required`` is a multi
round-trip request (SEP-2322): the same sampling / elicitation / roots handlers answer its
``inputRequests`` and the request is sent again (new id) with ``inputResponses`` and the
echoed ``requestState``, up to ``max_input_rounds`` times. An
``UnsupportedProtocolVersionError`` (-32022) makes the client pick a version from the
server's ``supported`` list and retry once. Over Streamable HTTP the transport mirrors the
request into headers (SEP-2243): ``x-mcp-header`` annotations are taken from ``tools/list``
(tools whose annotations are invalid are left out of ``list_tools()``, with a warning), and
a ``HeaderMismatch`` (-32020) on ``tools/call`` refreshes them and retries once. A response
stream that ends before its response is not resumable in this era: the request is sent
again once (new id).

``protocol_mode`` picks the era: ``"legacy"`` (handshake), ``"modern"``, or ``"auto"``: probe
with ``server/discover``; a ``DiscoverResult`` (or a recognized modern error such as -32022)
means modern, anything else (or no answer within ``probe_timeout``) means the handshake era
(versioning, "Backward Compatibility"). ``McpClient.http`` and ``McpClient.stdio`` default to
``"auto"``; ``McpClient(stream)`` and ``McpClient.in_memory`` to ``"legacy"``.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from typing import Any, AsyncIterator, Awaitable, Callable, TypeVar

import msgspec

from mcpkit._codes import ErrorCode
from mcpkit._exceptions import (
    InvalidRequestError,
    McpCallError,
    MethodNotFoundError,
    RequestTimeoutError,
)
from mcpkit.client._eras import detected_era, forget_era, remember_era
from mcpkit.client._errors import InputRequestError, ProtocolEraError
from mcpkit.client._session import DEFAULT_REQUEST_TIMEOUT, ClientSession, ProgressCallback
from mcpkit.client._streamable_http import STREAM_BROKEN
from mcpkit.client._subscriptions import (
    ACKNOWLEDGED,
    Listening,
    ListenStream,
    ServerNotification,
    subscription_id_of,
)
from mcpkit.protocol import types as t
from mcpkit.protocol._headers import header_annotations
from mcpkit.protocol._versions import (
    HANDSHAKE_VERSIONS,
    LATEST_HANDSHAKE_VERSION,
    MODERN_VERSIONS,
    Era,
)
from mcpkit.server._modern import (
    CLIENT_CAPABILITIES_KEY,
    CLIENT_INFO_KEY,
    LOG_LEVEL_KEY,
    PROTOCOL_VERSION_KEY,
    SERVER_INFO_KEY,
)
from mcpkit.transports._base import MessageStream

T = TypeVar("T")

logger = logging.getLogger("mcpkit.client")

SamplingHandler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
ElicitationHandler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
RootsHandler = Callable[[], Awaitable[list[dict[str, Any]]]]
LoggingHandler = Callable[[dict[str, Any]], Any]
Callback = Callable[..., Any]

#: Pages fetched by one auto-paginating list call before it stops (a server looping its cursor).
DEFAULT_MAX_PAGES = 1000
#: Rounds of input one multi round-trip request may ask for before the client gives up.
DEFAULT_MAX_INPUT_ROUNDS = 8
#: Seconds the ``server/discover`` probe of ``protocol_mode="auto"`` waits before deciding
#: the server is of the handshake era (some never answer a request before ``initialize``).
DEFAULT_PROBE_TIMEOUT = 10.0
#: Tool names remembered as "listed once to find its x-mcp-header annotations".
MAX_HEADER_LOOKUPS = 1024

PROTOCOL_MODES = ("auto", "legacy", "modern")
#: Errors only a 2026-07-28 server sends: a probe answered with one found a modern server.
MODERN_ERROR_CODES = frozenset({
    ErrorCode.HEADER_MISMATCH,
    ErrorCode.MISSING_REQUIRED_CAPABILITY,
    ErrorCode.UNSUPPORTED_PROTOCOL_VERSION,
})
#: Input a server may ask for (SEP-2322), and the client capability each needs.
INPUT_CAPABILITY = {
    "sampling/createMessage": "sampling",
    "elicitation/create": "elicitation",
    "roots/list": "roots",
}

_LIST_CHANGED = {
    "notifications/tools/list_changed": "tools",
    "notifications/resources/list_changed": "resources",
    "notifications/prompts/list_changed": "prompts",
}


def _convert(data: Any, tp: type[T]) -> T:
    return msgspec.convert(data, tp, strict=False)


class ServerDiscovery(msgspec.Struct, kw_only=True, omit_defaults=True):
    """What ``server/discover`` told a 2026-07-28 client (``McpClient.discovery``)."""

    #: Protocol versions the server supports.
    supported_versions: list[str]
    capabilities: t.ServerCapabilities
    #: The server's self-reported identity (``_meta`` ``serverInfo``), when it gave one.
    server_info: t.Implementation | None = None
    instructions: str | None = None
    #: Caching hints (SEP-2549): how long the answer stays fresh, and for whom.
    ttl_ms: int | None = None
    cache_scope: str | None = None
    meta: dict[str, Any] | None = None

    @classmethod
    def from_result(cls, raw: dict[str, Any]) -> ServerDiscovery:
        meta = raw.get("_meta") if isinstance(raw.get("_meta"), dict) else None
        info = (meta or {}).get(SERVER_INFO_KEY) or raw.get("serverInfo")
        ttl = raw.get("ttlMs")
        return cls(
            supported_versions=[v for v in raw.get("supportedVersions") or [] if isinstance(v, str)],
            capabilities=_convert(raw.get("capabilities") or {}, t.ServerCapabilities),
            server_info=_convert(info, t.Implementation) if isinstance(info, dict) and "name" in info else None,
            instructions=raw.get("instructions") if isinstance(raw.get("instructions"), str) else None,
            ttl_ms=ttl if isinstance(ttl, int) and not isinstance(ttl, bool) else None,
            cache_scope=raw.get("cacheScope") if isinstance(raw.get("cacheScope"), str) else None,
            meta=meta,
        )


def _supported_versions(data: Any) -> list[str]:
    supported = data.get("supported") if isinstance(data, dict) else None
    return [v for v in supported if isinstance(v, str)] if isinstance(supported, list) else []


def _latest_of(ours: tuple[str, ...], theirs: list[str]) -> str | None:
    common = [v for v in ours if v in theirs]
    return common[-1] if common else None


class McpClient:
    """A client for one MCP server.

    Use ``async with McpClient.stdio(options) as client`` (or ``McpClient.in_memory(app)``,
    or ``McpClient(stream)`` over any ``MessageStream``). Handlers answer the server's
    requests; giving one advertises the matching client capability.
    """

    def __init__(
        self,
        stream: MessageStream,
        *,
        client_name: str = "mcpkit-client",
        client_version: str = "0.1.0",
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
    ) -> None:
        """``protocol_version`` is the version asked for: a handshake one (``initialize``),
        or a modern one (``_meta``) which also makes ``protocol_mode`` default to
        ``"modern"``. ``log_level`` is the lowest level of ``notifications/message`` wanted
        (2026-07-28: sent in every request's ``_meta``; handshake era: ``logging/setLevel``
        after ``initialize``, when the server offers logging)."""
        if protocol_mode is None:
            protocol_mode = "modern" if protocol_version in MODERN_VERSIONS else "legacy"
        if protocol_mode not in PROTOCOL_MODES:
            raise ValueError(f"protocol_mode must be one of {', '.join(PROTOCOL_MODES)}, not {protocol_mode!r}")
        if max_input_rounds < 1:
            raise ValueError("max_input_rounds must be at least 1")
        self.client_info = {"name": client_name, "version": client_version}
        #: The protocol version in use (the one asked for, until ``connect()`` settles it).
        self.protocol_version = protocol_version
        self._handshake_version = protocol_version if protocol_version not in MODERN_VERSIONS else LATEST_HANDSHAKE_VERSION
        self._modern_version = protocol_version if protocol_version in MODERN_VERSIONS else MODERN_VERSIONS[-1]
        self.protocol_mode = protocol_mode
        self.log_level = log_level
        self.max_input_rounds = max_input_rounds
        self.probe_timeout = probe_timeout
        #: The era spoken once connected (``Era.HANDSHAKE`` or ``Era.MODERN``).
        self.era: Era | None = None
        #: The ``server/discover`` answer (2026-07-28 only).
        self.discovery: ServerDiscovery | None = None
        self.sampling_handler = sampling_handler
        self.elicitation_handler = elicitation_handler
        self.roots = roots
        self.logging_handler = logging_handler
        self.on_list_changed = on_list_changed
        self.on_resource_updated = on_resource_updated
        self.on_notification = on_notification
        self.session = ClientSession(
            stream,
            on_request=self._server_request,
            on_notification=self._server_notification,
            request_timeout=request_timeout,
        )
        #: Who the server is and what it offers: the ``initialize`` result, or (2026-07-28)
        #: the same shape made from ``server/discover`` (``protocol_version`` the one chosen).
        self.server_info: t.InitializeResult | None = None
        self._owned: list[Callable[[], Awaitable[None]]] = []
        self._subscriptions: dict[Any, ListenStream] = {}
        self._legacy_listeners: set[ListenStream] = set()
        self._header_lookups: set[str] = set()

    # construction -----------------------------------------------------------------------

    @classmethod
    def stdio(cls, options: Any, **kwargs: Any) -> McpClient:
        """A client for a server started as a subprocess (``StdioClientTransportOptions``)."""
        from mcpkit.client._stdio import StdioClientTransport

        transport = StdioClientTransport(options)
        kwargs.setdefault("protocol_mode", "auto")
        client = cls(transport, **kwargs)
        client._starter = transport.start  # type: ignore[attr-defined]
        return client

    @classmethod
    def in_memory(cls, app: Any, **kwargs: Any) -> McpClient:
        """A client wired in-process to a ``McpServerApp``."""
        from mcpkit.server._connection import serve_stream
        from mcpkit.transports._memory import InMemoryTransport

        client_end, server_end = InMemoryTransport.pair()
        client = cls(client_end, **kwargs)

        async def start() -> None:
            await app.start()
            task = asyncio.create_task(serve_stream(app, server_end))

            async def stop() -> None:
                await server_end.aclose()
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)

            client._owned.append(stop)

        client._starter = start  # type: ignore[attr-defined]
        return client

    def capabilities(self) -> dict[str, Any]:
        """The client capabilities the handlers given amount to."""
        caps: dict[str, Any] = {}
        if self.sampling_handler is not None:
            caps["sampling"] = {}
        if self.elicitation_handler is not None:
            caps["elicitation"] = {"form": {}, "url": {}}
        if self.roots is not None:
            # 2026-07-28 has no notifications/roots/list_changed: roots are asked for afresh.
            caps["roots"] = {} if self.era is Era.MODERN else {"listChanged": True}
        return caps

    # connecting -------------------------------------------------------------------------

    async def connect(self) -> t.InitializeResult:
        """Start the transport and settle the era: ``server/discover`` (2026-07-28) or the
        ``initialize`` handshake, as ``protocol_mode`` says. Returns ``server_info``."""
        starter = getattr(self, "_starter", None)
        if starter is not None:
            await starter()
        self.session.start()
        mode = self.protocol_mode
        stream = self.session.stream
        if mode == "auto" and not getattr(stream, "modern_capable", True):
            mode = "legacy"
        key = getattr(stream, "era_key", None)
        cached = detected_era(key) if mode == "auto" and isinstance(key, str) else None
        if cached is not None and cached[0] is Era.HANDSHAKE:
            try:
                return await self._handshake(cached[1])
            except McpCallError:
                # Remembered as a handshake-era server, but it is not (any more): probe.
                forget_era(key)  # type: ignore[arg-type]
        if mode in ("auto", "modern") and await self._probe(strict=mode == "modern"):
            assert self.server_info is not None
            return self.server_info
        return await self._handshake(self.protocol_version if self.protocol_version in HANDSHAKE_VERSIONS else self._handshake_version)

    async def _handshake(self, version: str) -> t.InitializeResult:
        raw = await self.session.request(
            "initialize",
            {"protocolVersion": version, "capabilities": self.capabilities(), "clientInfo": self.client_info},
        )
        self.server_info = _convert(raw, t.InitializeResult)
        self.protocol_version = self.server_info.protocol_version
        self.era = Era.HANDSHAKE
        await self.session.notify("notifications/initialized")
        self._remember_era()
        if self.log_level is not None and self.server_info.capabilities.logging is not None:
            await self.session.request("logging/setLevel", {"level": self.log_level})
        return self.server_info

    async def _probe(self, *, strict: bool) -> bool:
        """``server/discover``; True when the server speaks a modern version (then adopted).

        Not strict (``auto``): an answer that is not a ``DiscoverResult`` nor a modern error,
        or no answer within ``probe_timeout``, means the handshake era (False). A -32022 is
        followed: a mutually supported modern version is tried once, a handshake one is
        taken to ``initialize``.
        """
        version = self._modern_version
        for attempt in range(2):
            try:
                raw = await self.session.request(
                    "server/discover",
                    {"_meta": self._meta_for(version)},
                    timeout=None if strict else min(self.probe_timeout, self.session.request_timeout),
                )
            except RequestTimeoutError:
                if strict:
                    raise
                logger.debug("server/discover got no answer in time: a handshake-era server")
                return False
            except McpCallError as exc:
                if exc.code == ErrorCode.UNSUPPORTED_PROTOCOL_VERSION:
                    supported = _supported_versions(exc.data)
                    modern = _latest_of(MODERN_VERSIONS, supported)
                    if modern is not None and attempt == 0:
                        version = modern
                        continue
                    handshake = _latest_of(HANDSHAKE_VERSIONS, supported)
                    if handshake is not None and not strict:
                        self.protocol_version = handshake
                        return False
                    raise ProtocolEraError(
                        f"the server supports protocol versions {supported or '(none named)'}; this client "
                        f"speaks {', '.join(MODERN_VERSIONS + (() if strict else HANDSHAKE_VERSIONS))}"
                    ) from exc
                if exc.code in MODERN_ERROR_CODES or strict:
                    raise
                logger.debug("server/discover answered %s: a handshake-era server", exc)
                return False
            if not isinstance(raw, dict) or not isinstance(raw.get("supportedVersions"), list):
                if strict:
                    raise ProtocolEraError(f"server/discover answered something that is not a DiscoverResult: {raw!r}")
                return False
            discovery = ServerDiscovery.from_result(raw)
            chosen = _latest_of(MODERN_VERSIONS, discovery.supported_versions)
            if chosen is None:
                handshake = _latest_of(HANDSHAKE_VERSIONS, discovery.supported_versions)
                if handshake is not None and not strict:
                    self.protocol_version = handshake
                    return False
                raise ProtocolEraError(
                    f"the server supports protocol versions {discovery.supported_versions}; no modern one "
                    f"this client speaks ({', '.join(MODERN_VERSIONS)})"
                )
            self._adopt_modern(chosen, discovery)
            return True
        return False  # pragma: no cover - the loop returns or raises

    def _adopt_modern(self, version: str, discovery: ServerDiscovery) -> None:
        self.era = Era.MODERN
        self.protocol_version = version
        self.discovery = discovery
        self.server_info = t.InitializeResult(
            capabilities=discovery.capabilities,
            protocol_version=version,
            server_info=discovery.server_info or t.Implementation(name="", version=""),
            instructions=discovery.instructions,
            meta=discovery.meta,
        )
        settle = getattr(self.session.stream, "settle_modern", None)
        if settle is not None:
            settle()
        self._remember_era()

    def _remember_era(self) -> None:
        key = getattr(self.session.stream, "era_key", None)
        if isinstance(key, str) and self.era is not None and self.protocol_version:
            remember_era(key, self.era, self.protocol_version)

    async def discover(self, *, timeout: float | None = None) -> ServerDiscovery:
        """``server/discover`` again (2026-07-28): refreshes ``discovery`` and ``server_info``."""
        self._require_modern("server/discover")
        raw = await self._rpc("server/discover", None, timeout=timeout)
        discovery = ServerDiscovery.from_result(raw)
        self._adopt_modern(self.protocol_version, discovery)
        return discovery

    async def aclose(self) -> None:
        await self.session.aclose()
        for stop in reversed(self._owned):
            await stop()
        self._owned.clear()

    async def __aenter__(self) -> McpClient:
        try:
            await self.connect()
        except BaseException:
            await self.aclose()
            raise
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    # requests ---------------------------------------------------------------------------

    async def request(self, method: str, params: dict[str, Any] | None = None, **options: Any) -> Any:
        """Send any request; returns the raw result dict (2026-07-28: with ``_meta`` added,
        multi round-trip requests followed to their final result)."""
        return await self._rpc(method, params, **options)

    async def ping(self, *, timeout: float | None = None) -> None:
        """A round trip to the server. 2026-07-28 has no ``ping``: there it is a
        ``server/discover`` (the one request every server must answer)."""
        if self.era is Era.MODERN:
            await self._rpc("server/discover", None, timeout=timeout)
            return
        await self.session.request("ping", timeout=timeout)

    def _meta_for(self, version: str, extra: dict[str, Any] | None = None) -> dict[str, Any]:
        """A modern request's ``_meta``: ``extra`` plus version, capabilities, identity, log level."""
        meta = dict(extra or {})
        caps = self.capabilities()
        if "roots" in caps:
            caps["roots"] = {}  # no notifications/roots/list_changed in this era (also while probing)
        meta[PROTOCOL_VERSION_KEY] = version
        meta[CLIENT_CAPABILITIES_KEY] = caps
        meta[CLIENT_INFO_KEY] = self.client_info
        if self.log_level is not None:
            meta[LOG_LEVEL_KEY] = self.log_level
        return meta

    async def _rpc(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        progress: ProgressCallback | None = None,
    ) -> Any:
        """One request in the era spoken; 2026-07-28: ``_meta``, MRTR rounds, and one retry
        each for an unsupported version, a (``tools/call``) header mismatch, and a response
        stream that broke before the response (not resumable in this era)."""
        if self.era is not Era.MODERN:
            return await self.session.request(method, params, timeout=timeout, progress=progress)
        base = dict(params or {})
        user_meta = base.pop("_meta", None)
        retry: dict[str, Any] = {}
        rounds = 0
        version_retried = header_retried = reissued = False
        while True:
            body = {**base, **retry, "_meta": self._meta_for(self.protocol_version, user_meta)}
            try:
                result = await self.session.request(method, body, timeout=timeout, progress=progress)
            except McpCallError as exc:
                if exc.code == ErrorCode.UNSUPPORTED_PROTOCOL_VERSION and not version_retried:
                    version = _latest_of(MODERN_VERSIONS, _supported_versions(exc.data))
                    if version is not None:
                        version_retried = True
                        self.protocol_version = version
                        continue
                if (
                    exc.code == ErrorCode.HEADER_MISMATCH
                    and method == "tools/call"
                    and not header_retried
                    and self._mirrors_headers()
                ):
                    # SEP-2243: the tool's x-mcp-header annotations may have changed.
                    header_retried = True
                    await self.list_tools(timeout=timeout)
                    continue
                if isinstance(exc.data, dict) and exc.data.get(STREAM_BROKEN) and not reissued:
                    # A broken 2026-07-28 response stream loses the request: send it again.
                    reissued = True
                    continue
                raise
            if not isinstance(result, dict) or result.get("resultType", "complete") != "input_required":
                return result
            rounds += 1
            if rounds > self.max_input_rounds:
                raise InputRequestError(
                    f"{method}: the server still asked for input after {self.max_input_rounds} rounds "
                    "(max_input_rounds)"
                )
            retry = {}
            requests = result.get("inputRequests")
            if requests is not None:
                retry["inputResponses"] = await self._answer_inputs(method, requests)
            if "requestState" in result:
                retry["requestState"] = result["requestState"]  # echoed exactly, never read

    async def _answer_inputs(self, method: str, requests: Any) -> dict[str, Any]:
        """Answer a multi round-trip request's ``inputRequests`` with the handlers."""
        if not isinstance(requests, dict):
            raise InputRequestError(f"{method}: inputRequests is not an object: {requests!r}")
        answers: dict[str, Any] = {}
        for key, request in requests.items():
            kind = request.get("method") if isinstance(request, dict) else None
            params = request.get("params") if isinstance(request, dict) else None
            if kind not in INPUT_CAPABILITY or not isinstance(params, (dict, type(None))):
                raise InputRequestError(
                    f"{method}: input request {key!r} is not a sampling, elicitation or roots request: {request!r}",
                    method=kind if isinstance(kind, str) else None,
                    key=key,
                )
            if not self._can_serve(kind):
                raise InputRequestError(
                    f"{method}: the server asked for {kind} (input request {key!r}), but this client did "
                    f"not declare the {INPUT_CAPABILITY[kind]} capability, so the server must not ask for "
                    "it (SEP-2322); give the client a handler for it",
                    method=kind,
                    key=key,
                )
            answers[key] = await self._serve(kind, params or {})
        return answers

    def _can_serve(self, method: str) -> bool:
        if method == "sampling/createMessage":
            return self.sampling_handler is not None
        if method == "elicitation/create":
            return self.elicitation_handler is not None
        if method == "roots/list":
            return self.roots is not None
        return False

    async def _serve(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Run the handler for a sampling, elicitation or roots request (either era)."""
        if method == "sampling/createMessage" and self.sampling_handler is not None:
            return await self.sampling_handler(params)
        if method == "elicitation/create" and self.elicitation_handler is not None:
            return await self.elicitation_handler(params)
        if method == "roots/list" and self.roots is not None:
            roots = self.roots if isinstance(self.roots, list) else await self.roots()
            return {"roots": roots}
        raise MethodNotFoundError(f"Method not found: {method}")

    def _require_modern(self, what: str) -> None:
        if self.era is not Era.MODERN:
            raise ProtocolEraError(f"{what} exists only in the 2026-07-28 era (this connection: {self.era})")

    def _tool_header_cache(self) -> dict[str, Any] | None:
        """The transport's ``x-mcp-header`` cache (Streamable HTTP only)."""
        cache = getattr(self.session.stream, "tool_headers", None)
        return cache if isinstance(cache, dict) else None

    def _mirrors_headers(self) -> bool:
        """Whether requests are mirrored into HTTP headers (2026-07-28 Streamable HTTP)."""
        return self.era is Era.MODERN and self._tool_header_cache() is not None

    async def _paged(self, method: str, key: str, *, timeout: float | None = None) -> AsyncIterator[Any]:
        cursor: str | None = None
        for _ in range(DEFAULT_MAX_PAGES):
            params = {"cursor": cursor} if cursor else None
            page = await self._rpc(method, params, timeout=timeout)
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
        cache = self._tool_header_cache() if self._mirrors_headers() else None
        if cache is None:
            return [_convert(item, t.Tool) for item in raw]
        tools: list[t.Tool] = []
        annotations: dict[str, Any] = {}
        for item in raw:
            name = item.get("name") if isinstance(item, dict) else None
            try:
                found = header_annotations(item.get("inputSchema") if isinstance(item, dict) else None)
            except ValueError as exc:
                logger.warning("left out tool %r: invalid x-mcp-header annotation: %s", name, exc)
                continue
            tool = _convert(item, t.Tool)
            annotations[tool.name] = found
            tools.append(tool)
        cache.clear()
        cache.update(annotations)
        return tools

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        progress: ProgressCallback | None = None,
        meta: dict[str, Any] | None = None,
    ) -> t.CallToolResult:
        """Call a tool; a tool failure comes back as ``is_error=True``, not an exception."""
        params: dict[str, Any] = {"name": name, "arguments": arguments or {}}
        if meta:
            params["_meta"] = meta
        if self._mirrors_headers():
            cache = self._tool_header_cache()
            if cache is not None and name not in cache and name not in self._header_lookups:
                # Its x-mcp-header annotations are not known yet: list the tools once.
                if len(self._header_lookups) >= MAX_HEADER_LOOKUPS:
                    self._header_lookups.clear()
                self._header_lookups.add(name)
                await self.list_tools(timeout=timeout)
        raw = await self._rpc("tools/call", params, timeout=timeout, progress=progress)
        return _convert(raw, t.CallToolResult)

    async def list_resources(self, *, timeout: float | None = None) -> list[t.Resource]:
        return [_convert(item, t.Resource) async for item in self._paged("resources/list", "resources", timeout=timeout)]

    async def list_resource_templates(self, *, timeout: float | None = None) -> list[t.ResourceTemplate]:
        return [
            _convert(item, t.ResourceTemplate)
            async for item in self._paged("resources/templates/list", "resourceTemplates", timeout=timeout)
        ]

    async def read_resource(self, uri: str, *, timeout: float | None = None) -> t.ReadResourceResult:
        raw = await self._rpc("resources/read", {"uri": uri}, timeout=timeout)
        result = _convert(raw, t.ReadResourceResult)
        # The schema's contents union has no tag; pick the member by its distinguishing key.
        result.contents = [
            _convert(item, t.TextResourceContents if "text" in item else t.BlobResourceContents)
            for item in raw.get("contents", [])
        ]
        return result

    async def subscribe_resource(self, uri: str) -> None:
        """``resources/subscribe`` (handshake era; 2026-07-28 has ``listen()`` instead)."""
        if self.era is Era.MODERN:
            raise ProtocolEraError(
                "resources/subscribe is not part of 2026-07-28: use "
                f"`async with client.listen(resource_subscriptions=[{uri!r}])`"
            )
        await self.session.request("resources/subscribe", {"uri": uri})

    async def unsubscribe_resource(self, uri: str) -> None:
        if self.era is Era.MODERN:
            raise ProtocolEraError("resources/unsubscribe is not part of 2026-07-28: leave the listen() block")
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
        return Listening(self, notifications)

    async def list_prompts(self, *, timeout: float | None = None) -> list[t.Prompt]:
        return [_convert(item, t.Prompt) async for item in self._paged("prompts/list", "prompts", timeout=timeout)]

    async def get_prompt(
        self, name: str, arguments: dict[str, str] | None = None, *, timeout: float | None = None
    ) -> t.GetPromptResult:
        params: dict[str, Any] = {"name": name}
        if arguments:
            params["arguments"] = arguments
        raw = await self._rpc("prompts/get", params, timeout=timeout)
        return _convert(raw, t.GetPromptResult)

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
        raw = await self._rpc("completion/complete", params)
        return _convert(raw, t.CompleteResult)

    async def set_logging_level(self, level: str) -> None:
        """The lowest log level wanted. 2026-07-28 has no ``logging/setLevel``: the level
        goes in the ``_meta`` of every request from now on."""
        if self.era is not Era.MODERN:
            await self.session.request("logging/setLevel", {"level": level})
        self.log_level = level

    async def send_roots_list_changed(self) -> None:
        """Tell the server the roots changed (handshake era; a no-op in 2026-07-28, where
        the server asks for the roots with each request that needs them)."""
        if self.era is Era.MODERN:
            return
        await self.session.notify("notifications/roots/list_changed")

    # what the server sends --------------------------------------------------------------

    async def _server_request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method in INPUT_CAPABILITY and not self._can_serve(method):
            raise InvalidRequestError(f"This client does not support {method}")
        return await self._serve(method, params)

    async def _server_notification(self, method: str, params: dict[str, Any]) -> None:
        subscription = self._subscriptions.get(subscription_id_of(params)) if self._subscriptions else None
        if subscription is not None:
            if method == ACKNOWLEDGED:
                subscription._acknowledge(params.get("notifications"))
            else:
                subscription._push(ServerNotification(method, params))
        elif self._legacy_listeners:
            for listener in self._legacy_listeners:
                if listener.wants(method, params):
                    listener._push(ServerNotification(method, params))
        if method == "notifications/message" and self.logging_handler is not None:
            await _maybe_await(self.logging_handler(params))
        elif method in _LIST_CHANGED and self.on_list_changed is not None:
            await _maybe_await(self.on_list_changed(_LIST_CHANGED[method]))
        elif method == "notifications/resources/updated" and self.on_resource_updated is not None:
            await _maybe_await(self.on_resource_updated(params.get("uri")))
        if self.on_notification is not None:
            await _maybe_await(self.on_notification(method, params))

    @classmethod
    def http(cls, options: Any, **kwargs: Any) -> McpClient:
        """A client for a server over HTTP (``HttpClientTransportOptions``, or a URL: auto-detect)."""
        from mcpkit.client._http_factory import connect_http

        return connect_http(options, client_cls=cls, **kwargs)

    @classmethod
    def websocket(cls, url: str, **kwargs: Any) -> McpClient:
        """A client for a server at a ``ws://`` or ``wss://`` URL (subprotocol ``mcp``)."""
        from mcpkit.client._http_factory import connect_websocket

        return connect_websocket(url, client_cls=cls, **kwargs)


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value
