"""``McpClient``: the typed, high-level client over any ``MessageStream``."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any, AsyncIterator, Awaitable, Callable, TypeVar

import msgspec

from mcpkit._exceptions import InvalidRequestError, MethodNotFoundError
from mcpkit.client._session import DEFAULT_REQUEST_TIMEOUT, ClientSession, ProgressCallback
from mcpkit.protocol import types as t
from mcpkit.protocol._versions import LATEST_HANDSHAKE_VERSION
from mcpkit.transports._base import MessageStream

T = TypeVar("T")

SamplingHandler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
ElicitationHandler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
RootsHandler = Callable[[], Awaitable[list[dict[str, Any]]]]
LoggingHandler = Callable[[dict[str, Any]], Any]
Callback = Callable[..., Any]

#: Pages fetched by one auto-paginating list call before it stops (a server looping its cursor).
DEFAULT_MAX_PAGES = 1000

_LIST_CHANGED = {
    "notifications/tools/list_changed": "tools",
    "notifications/resources/list_changed": "resources",
    "notifications/prompts/list_changed": "prompts",
}


def _convert(data: Any, tp: type[T]) -> T:
    return msgspec.convert(data, tp, strict=False)


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
    ) -> None:
        self.client_info = {"name": client_name, "version": client_version}
        self.protocol_version = protocol_version
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
        self.server_info: t.InitializeResult | None = None
        self._owned: list[Callable[[], Awaitable[None]]] = []

    # construction -----------------------------------------------------------------------

    @classmethod
    def stdio(cls, options: Any, **kwargs: Any) -> McpClient:
        """A client for a server started as a subprocess (``StdioClientTransportOptions``)."""
        from mcpkit.client._stdio import StdioClientTransport

        transport = StdioClientTransport(options)
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
        caps: dict[str, Any] = {}
        if self.sampling_handler is not None:
            caps["sampling"] = {}
        if self.elicitation_handler is not None:
            caps["elicitation"] = {"form": {}, "url": {}}
        if self.roots is not None:
            caps["roots"] = {"listChanged": True}
        return caps

    async def connect(self) -> t.InitializeResult:
        """Start the transport and run the ``initialize`` handshake."""
        starter = getattr(self, "_starter", None)
        if starter is not None:
            await starter()
        self.session.start()
        raw = await self.session.request(
            "initialize",
            {
                "protocolVersion": self.protocol_version,
                "capabilities": self.capabilities(),
                "clientInfo": self.client_info,
            },
        )
        self.server_info = _convert(raw, t.InitializeResult)
        self.protocol_version = self.server_info.protocol_version
        await self.session.notify("notifications/initialized")
        return self.server_info

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
        """Send any request; returns the raw result dict."""
        return await self.session.request(method, params, **options)

    async def ping(self, *, timeout: float | None = None) -> None:
        await self.session.request("ping", timeout=timeout)

    async def _paged(self, method: str, key: str, *, timeout: float | None = None) -> AsyncIterator[Any]:
        cursor: str | None = None
        for _ in range(DEFAULT_MAX_PAGES):
            params = {"cursor": cursor} if cursor else None
            page = await self.session.request(method, params, timeout=timeout)
            for item in page.get(key, []):
                yield item
            cursor = page.get("nextCursor")
            if not cursor:
                return

    async def list_tools(self, *, timeout: float | None = None) -> list[t.Tool]:
        """Every tool, following ``nextCursor`` through all pages."""
        return [_convert(item, t.Tool) async for item in self._paged("tools/list", "tools", timeout=timeout)]

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
        raw = await self.session.request("tools/call", params, timeout=timeout, progress=progress)
        return _convert(raw, t.CallToolResult)

    async def list_resources(self, *, timeout: float | None = None) -> list[t.Resource]:
        return [_convert(item, t.Resource) async for item in self._paged("resources/list", "resources", timeout=timeout)]

    async def list_resource_templates(self, *, timeout: float | None = None) -> list[t.ResourceTemplate]:
        return [
            _convert(item, t.ResourceTemplate)
            async for item in self._paged("resources/templates/list", "resourceTemplates", timeout=timeout)
        ]

    async def read_resource(self, uri: str, *, timeout: float | None = None) -> t.ReadResourceResult:
        raw = await self.session.request("resources/read", {"uri": uri}, timeout=timeout)
        result = _convert(raw, t.ReadResourceResult)
        # The schema's contents union has no tag; pick the member by its distinguishing key.
        result.contents = [
            _convert(item, t.TextResourceContents if "text" in item else t.BlobResourceContents)
            for item in raw.get("contents", [])
        ]
        return result

    async def subscribe_resource(self, uri: str) -> None:
        await self.session.request("resources/subscribe", {"uri": uri})

    async def unsubscribe_resource(self, uri: str) -> None:
        await self.session.request("resources/unsubscribe", {"uri": uri})

    async def list_prompts(self, *, timeout: float | None = None) -> list[t.Prompt]:
        return [_convert(item, t.Prompt) async for item in self._paged("prompts/list", "prompts", timeout=timeout)]

    async def get_prompt(
        self, name: str, arguments: dict[str, str] | None = None, *, timeout: float | None = None
    ) -> t.GetPromptResult:
        params: dict[str, Any] = {"name": name}
        if arguments:
            params["arguments"] = arguments
        raw = await self.session.request("prompts/get", params, timeout=timeout)
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
        raw = await self.session.request("completion/complete", params)
        return _convert(raw, t.CompleteResult)

    async def set_logging_level(self, level: str) -> None:
        await self.session.request("logging/setLevel", {"level": level})

    async def send_roots_list_changed(self) -> None:
        await self.session.notify("notifications/roots/list_changed")

    # what the server sends --------------------------------------------------------------

    async def _server_request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "sampling/createMessage" and self.sampling_handler is not None:
            return await self.sampling_handler(params)
        if method == "elicitation/create" and self.elicitation_handler is not None:
            return await self.elicitation_handler(params)
        if method == "roots/list" and self.roots is not None:
            roots = self.roots if isinstance(self.roots, list) else await self.roots()
            return {"roots": roots}
        if method in ("sampling/createMessage", "elicitation/create", "roots/list"):
            raise InvalidRequestError(f"This client does not support {method}")
        raise MethodNotFoundError(f"Method not found: {method}")

    async def _server_notification(self, method: str, params: dict[str, Any]) -> None:
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
