"""Building HTTP and WebSocket clients, and finding out which HTTP transport a server speaks.

``connect_http(options)`` and ``connect_websocket(url)`` return an ``McpClient`` that is not
connected yet (``async with`` it, or ``await client.connect()``), like ``McpClient.stdio``.

``AUTO_DETECT`` follows the spec's backwards-compatibility recipe: POST ``initialize``
(Streamable HTTP); on 400, 404 or 405 GET the same URL as a legacy HTTP+SSE stream instead.
The mode found is remembered for the endpoint for the life of the process, so the next
client goes straight to it (and still falls back when the server has changed since).
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from typing import Any, Mapping
from urllib.parse import urlsplit, urlunsplit

import httpx

from mcpkit._exceptions import ConnectionClosedError, TransportError
from mcpkit.client._client import McpClient
from mcpkit.client._http_options import (
    DEFAULT_HTTP_TIMEOUT,
    HttpClientTransportOptions,
    HttpStatusError,
    HttpTransportMode,
    new_http_client,
)
from mcpkit.client._legacy_sse import LegacySseClientTransport
from mcpkit.client._streamable_http import StreamableHttpClientTransport
from mcpkit.client._websocket import WebSocketClientTransport
from mcpkit.protocol._jsonrpc import DEFAULT_MAX_MESSAGE_BYTES

logger = logging.getLogger("mcpkit.client.http")

__all__ = [
    "AutoDetectHttpTransport",
    "connect_http",
    "connect_websocket",
    "create_http_transport",
    "detected_mode",
    "forget_detected_modes",
]

#: Statuses of the initialize POST that mean "not a Streamable HTTP endpoint" (spec,
#: transports, "Backwards Compatibility").
FALLBACK_STATUSES = frozenset({400, 404, 405})
#: Endpoints whose detected mode is remembered.
MAX_CACHED_MODES = 256

_detected: OrderedDict[str, HttpTransportMode] = OrderedDict()


def _cache_key(endpoint: str) -> str:
    # Keyed by the endpoint rather than the bare origin: one origin often hosts both a
    # Streamable HTTP endpoint (/mcp) and a legacy one (/sse).
    parts = urlsplit(endpoint)
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path or "/", parts.query, ""))


def detected_mode(endpoint: str) -> HttpTransportMode | None:
    """The transport AUTO_DETECT found for ``endpoint`` in this process, if any."""
    return _detected.get(_cache_key(endpoint))


def _remember(endpoint: str, mode: HttpTransportMode) -> None:
    key = _cache_key(endpoint)
    _detected[key] = mode
    _detected.move_to_end(key)
    while len(_detected) > MAX_CACHED_MODES:
        _detected.popitem(last=False)


def forget_detected_modes() -> None:
    _detected.clear()


class AutoDetectHttpTransport:
    """A ``MessageStream`` that becomes Streamable HTTP or legacy HTTP+SSE on first use.

    The choice is made when the first frame (``initialize``) is sent; ``receive()`` waits
    for it. ``transport`` and ``mode`` tell what was chosen.
    """

    def __init__(
        self, options: HttpClientTransportOptions, *, http_client: httpx.AsyncClient | None = None
    ) -> None:
        self.options = options
        self._client = http_client
        self._owns_client = http_client is None
        self.transport: StreamableHttpClientTransport | LegacySseClientTransport | None = None
        self.mode: HttpTransportMode | None = None
        self._decided = asyncio.Event()
        self._deciding = asyncio.Lock()
        self._closed = False

    async def start(self) -> None:
        if self._client is None:
            self._client = new_http_client(self.options)
        mode = await self._discover()
        if mode is None and detected_mode(self.options.endpoint) is HttpTransportMode.SSE:
            mode = HttpTransportMode.SSE
        if mode is HttpTransportMode.SSE:
            try:
                await self._use_legacy()
            except HttpStatusError as exc:
                if exc.status_code not in FALLBACK_STATUSES:
                    raise
                # Remembered as legacy, but it is not (any more): detect afresh.
                _detected.pop(_cache_key(self.options.endpoint), None)

    async def _discover(self) -> HttpTransportMode | None:
        """Hook for the 2026-07-28 ``server/discover`` probe: a mode it settles, or None
        to run the 2025 recipe (POST initialize, fall back on 400/404/405)."""
        return None

    async def _use_legacy(self) -> None:
        legacy = LegacySseClientTransport(self.options, http_client=self._client)
        await legacy.start()
        self._choose(legacy, HttpTransportMode.SSE)

    def _choose(
        self, transport: StreamableHttpClientTransport | LegacySseClientTransport, mode: HttpTransportMode
    ) -> None:
        self.transport, self.mode = transport, mode
        _remember(self.options.endpoint, mode)
        self._decided.set()
        logger.debug("%s: using %s", self.options.display_name, mode.value)

    async def send(self, frame: bytes) -> None:
        if self._closed:
            raise ConnectionClosedError("the HTTP transport is closed")
        if self.transport is None:
            async with self._deciding:
                if self.transport is None:
                    await self._detect(frame)
                    return
        assert self.transport is not None
        await self.transport.send(frame)

    async def _detect(self, frame: bytes) -> None:
        if self._client is None:
            await self.start()
        streamable = StreamableHttpClientTransport(self.options, http_client=self._client)
        await streamable.start()
        try:
            await streamable.send(frame)
        except HttpStatusError as exc:
            await streamable.aclose()
            if exc.status_code not in FALLBACK_STATUSES:
                raise
            logger.debug(
                "%s: POST answered %d; trying the legacy HTTP+SSE transport",
                self.options.display_name,
                exc.status_code,
            )
            try:
                await self._use_legacy()
            except TransportError as legacy_exc:
                raise TransportError(
                    f"{self.options.endpoint} is neither a Streamable HTTP endpoint "
                    f"({exc}) nor a legacy SSE one ({legacy_exc})"
                ) from legacy_exc
            assert self.transport is not None
            await self.transport.send(frame)
            return
        except BaseException:
            await streamable.aclose()
            raise
        self._choose(streamable, HttpTransportMode.STREAMABLE_HTTP)

    async def receive(self) -> bytes | None:
        if self.transport is None:
            await self._decided.wait()
        if self.transport is None:
            return None  # closed before anything was chosen
        return await self.transport.receive()

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            if self.transport is not None:
                await self.transport.aclose()
        finally:
            if self._owns_client and self._client is not None:
                await self._client.aclose()
            self._decided.set()


def create_http_transport(
    options: HttpClientTransportOptions, *, http_client: httpx.AsyncClient | None = None
) -> StreamableHttpClientTransport | LegacySseClientTransport | AutoDetectHttpTransport:
    """The transport ``options.transport_mode`` asks for (not started)."""
    if options.transport_mode is HttpTransportMode.STREAMABLE_HTTP:
        return StreamableHttpClientTransport(options, http_client=http_client)
    if options.transport_mode is HttpTransportMode.SSE:
        return LegacySseClientTransport(options, http_client=http_client)
    return AutoDetectHttpTransport(options, http_client=http_client)


def connect_http(
    options: HttpClientTransportOptions | str,
    *,
    client_cls: type[McpClient] = McpClient,
    **client_kwargs: Any,
) -> McpClient:
    """A client for the MCP server at ``options.endpoint`` (a bare URL means AUTO_DETECT).

    ``client_kwargs`` go to ``client_cls`` (handlers, ``request_timeout``...).
    """
    if isinstance(options, str):
        options = HttpClientTransportOptions(endpoint=options)
    transport = create_http_transport(options)
    client = client_cls(transport, **client_kwargs)
    client._starter = transport.start  # type: ignore[attr-defined]
    return client


def connect_websocket(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    max_message_bytes: int | None = DEFAULT_MAX_MESSAGE_BYTES,
    open_timeout: float | None = DEFAULT_HTTP_TIMEOUT,
    client_cls: type[McpClient] = McpClient,
    **client_kwargs: Any,
) -> McpClient:
    """A client for the MCP server at the WebSocket ``url`` (``ws://`` or ``wss://``).

    ``client_kwargs`` go to ``client_cls``.
    """
    transport = WebSocketClientTransport(
        url, headers=headers, max_message_bytes=max_message_bytes, open_timeout=open_timeout
    )
    client = client_cls(transport, **client_kwargs)
    client._starter = transport.start  # type: ignore[attr-defined]
    return client
