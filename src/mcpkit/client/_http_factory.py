"""Building HTTP and WebSocket transports, and finding out which HTTP transport a server
speaks. ``connect_http`` and ``connect_websocket`` (``mcpkit.client._client``) make a client
over them.

``AUTO_DETECT`` follows the spec's backwards-compatibility recipe: the client first probes
with a 2026-07-28 ``server/discover`` POST (see ``McpClient``, ``protocol_mode="auto"``); a
server that is not modern gets POST ``initialize`` (Streamable HTTP); on 400, 404 or 405 GET
the same URL as a legacy HTTP+SSE stream instead. The mode and era found are remembered in
the transport's ``EndpointMemory``, keyed by endpoint and credentials: its own unless
``HttpClientTransportOptions.endpoint_memory`` shares one, in which case the next client
with the same credentials goes straight to them (and still falls back when the server has
changed since). A ``known_session_id`` settles it at once: resuming a session is Streamable
HTTP.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from typing import Any

import httpx

from mcpkit._exceptions import ConnectionClosedError, TransportError
from mcpkit.client._endpoint_memory import EndpointMemory
from mcpkit.client._frames import peek
from mcpkit.client._http_options import (
    HttpClientTransportOptions,
    HttpStatusError,
    HttpTransportMode,
    new_http_client,
)
from mcpkit.client._inbox import InboxTransport
from mcpkit.client._legacy_sse import LegacySseClientTransport
from mcpkit.client._streamable_http import StreamableHttpClientTransport
from mcpkit.client._websocket import WebSocketClientTransport, WebSocketClientTransportOptions

logger = logging.getLogger("mcpkit.client.http")

__all__ = ["AutoDetectHttpTransport", "create_http_transport", "create_websocket_transport"]

#: Statuses of the initialize POST that mean "not a Streamable HTTP endpoint" (spec,
#: transports, "Backwards Compatibility").
FALLBACK_STATUSES = frozenset({400, 404, 405})


class AutoDetectHttpTransport(InboxTransport):
    """A ``MessageStream`` that becomes Streamable HTTP or legacy HTTP+SSE on first use.

    Requests sent before the choice (the client's ``server/discover`` probe) go out over
    Streamable HTTP; a client that finds the server modern calls ``settle_modern()``. The
    handshake-era choice is made when ``initialize`` is sent: POST it; on 400, 404 or 405
    use the legacy HTTP+SSE transport instead. Frames of whichever transport is in use are
    forwarded to this one's ``receive()``. ``transport`` and ``mode`` tell what was chosen;
    ``endpoint_memory`` holds it (and the era) for the next client that shares the memory.
    """

    def __init__(
        self, options: HttpClientTransportOptions, *, http_client: httpx.AsyncClient | None = None
    ) -> None:
        super().__init__(options.max_queued_frames)
        self.options = options
        self._client = http_client
        self._owns_client = http_client is None
        self.transport: StreamableHttpClientTransport | LegacySseClientTransport | None = None
        self.mode: HttpTransportMode | None = None
        #: ``x-mcp-header`` annotations by tool name, shared with the Streamable HTTP transport.
        self.tool_headers: dict[str, Any] = {}
        self._streamable: StreamableHttpClientTransport | None = None
        self._forwarder: asyncio.Task[None] | None = None
        self._deciding = asyncio.Lock()
        #: Where the mode and era found are remembered: the options' shared one, else this
        #: transport's (so nothing is shared with another client unless asked).
        self.endpoint_memory = (
            options.endpoint_memory if options.endpoint_memory is not None else EndpointMemory()
        )

    @property
    def memory_key(self) -> str:
        """The key this endpoint and its credentials are remembered under in
        ``endpoint_memory``: the endpoint, not the bare origin (one origin often hosts both
        a Streamable HTTP endpoint, /mcp, and a legacy one, /sse)."""
        return EndpointMemory.key(self.options, None if self._owns_client else self._client)

    @property
    def modern_capable(self) -> bool:
        """False once the legacy HTTP+SSE transport was chosen (it has no modern era)."""
        return not isinstance(self.transport, LegacySseClientTransport)

    async def start(self) -> None:
        if self._client is None:
            self._client = new_http_client(self.options)
        mode = await self._discover()
        if self.known_session_id is not None:
            return  # a session to resume: Streamable HTTP, chosen in resume_session()
        memory, key = self.endpoint_memory, self.memory_key
        if mode is None and memory.detected_mode(key) is HttpTransportMode.SSE:
            mode = HttpTransportMode.SSE
        if mode is HttpTransportMode.SSE:
            try:
                await self._use_legacy()
            except HttpStatusError as exc:
                if exc.status_code not in FALLBACK_STATUSES:
                    raise
                # Remembered as legacy, but it is not (any more): detect afresh.
                memory.forget_mode(key)

    async def _discover(self) -> HttpTransportMode | None:
        """A mode settled before anything is sent, or None to find out. (The 2026-07-28
        ``server/discover`` probe is the client's: it needs the client's ``_meta``.)"""
        return None

    async def _use_legacy(self) -> None:
        legacy = LegacySseClientTransport(self.options, http_client=self._client)
        await legacy.start()
        self._choose(legacy, HttpTransportMode.SSE)

    def _choose(
        self,
        transport: StreamableHttpClientTransport | LegacySseClientTransport,
        mode: HttpTransportMode,
    ) -> None:
        self.transport, self.mode = transport, mode
        self.endpoint_memory.remember_mode(self.memory_key, mode)
        if transport is not self._streamable or self._forwarder is None:
            self._forward(transport)
        logger.debug("%s: using %s", self.options.display_name, mode.value)

    def _forward(self, transport: StreamableHttpClientTransport | LegacySseClientTransport) -> None:
        """Deliver ``transport``'s frames through this transport's ``receive()``."""
        if self._forwarder is not None:
            self._forwarder.cancel()
        self._forwarder = asyncio.ensure_future(self._pump_from(transport))

    async def _pump_from(
        self, transport: StreamableHttpClientTransport | LegacySseClientTransport
    ) -> None:
        try:
            while True:
                frame = await transport.receive()
                if frame is None:
                    break
                await self._inbox.put(frame)
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            self._inbox.close(exc)
            return
        self._inbox.close()

    async def _tentative(self) -> StreamableHttpClientTransport:
        """The Streamable HTTP transport tried before the choice (created once)."""
        if self._client is None:
            await self.start()
        if self._streamable is None:
            self._streamable = StreamableHttpClientTransport(self.options, http_client=self._client)
            self._streamable.tool_headers = self.tool_headers
            self._streamable.endpoint_memory = self.endpoint_memory
            await self._streamable.start()
            self._forward(self._streamable)
        return self._streamable

    async def _drop_tentative(self) -> None:
        streamable, self._streamable = self._streamable, None
        if self._forwarder is not None:
            self._forwarder.cancel()
            await asyncio.gather(self._forwarder, return_exceptions=True)
            self._forwarder = None
        if streamable is not None:
            await streamable.aclose()

    @property
    def known_session_id(self) -> str | None:
        """The session to resume instead of initializing (None: initialize as usual)."""
        if self.transport is not None:
            return getattr(self.transport, "known_session_id", None)
        opts = self.options
        return opts.known_session_id if opts.known_session_id and not opts.stateless else None

    @property
    def session_id(self) -> str | None:
        """The Streamable HTTP session in use (None: none, or not Streamable HTTP)."""
        return getattr(self.transport or self._streamable, "session_id", None)

    @property
    def protocol_version(self) -> str | None:
        """The Streamable HTTP transport's version (None before one is known)."""
        streamable = self._streamable
        return streamable.protocol_version if streamable is not None else None

    async def resume_session(self, protocol_version: str) -> None:
        """Resume ``known_session_id`` over Streamable HTTP (see the transport's)."""
        streamable = await self._tentative()
        await streamable.resume_session(protocol_version)
        self._choose(streamable, HttpTransportMode.STREAMABLE_HTTP)

    def settle_modern(self) -> None:
        """The client found a 2026-07-28 server: stay on Streamable HTTP."""
        if self.transport is None and self._streamable is not None:
            self._choose(self._streamable, HttpTransportMode.STREAMABLE_HTTP)

    async def send(self, frame: bytes) -> None:
        if self._closed:
            raise ConnectionClosedError("the HTTP transport is closed")
        target: StreamableHttpClientTransport | LegacySseClientTransport | None = self.transport
        if target is None:
            async with self._deciding:
                if self.transport is None:
                    if _is_initialize(frame):
                        await self._detect(frame)
                        return
                    target = await self._tentative()
                else:
                    target = self.transport
        await target.send(frame)

    async def _detect(self, frame: bytes) -> None:
        streamable = await self._tentative()
        try:
            await streamable.send(frame)
        except HttpStatusError as exc:
            await self._drop_tentative()
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
            await self._drop_tentative()
            raise
        self._choose(streamable, HttpTransportMode.STREAMABLE_HTTP)

    async def aclose(self) -> None:
        if not self._begin_close():
            return
        try:
            if self._forwarder is not None:
                self._forwarder.cancel()
                await asyncio.gather(self._forwarder, return_exceptions=True)
            for transport in {
                id(t): t for t in (self.transport, self._streamable) if t is not None
            }.values():
                await transport.aclose()
        finally:
            if self._owns_client and self._client is not None:
                await self._client.aclose()
            self._inbox.close()


def _is_initialize(frame: bytes) -> bool:
    return any(p.method == "initialize" and p.is_request for p in peek(frame))


def create_http_transport(
    options: HttpClientTransportOptions | str, *, http_client: httpx.AsyncClient | None = None
) -> StreamableHttpClientTransport | LegacySseClientTransport | AutoDetectHttpTransport:
    """The transport ``options.transport_mode`` asks for (not started); a bare URL means
    AUTO_DETECT."""
    if isinstance(options, str):
        options = HttpClientTransportOptions(endpoint=options)
    if options.transport_mode is HttpTransportMode.STREAMABLE_HTTP:
        return StreamableHttpClientTransport(options, http_client=http_client)
    if options.transport_mode is HttpTransportMode.SSE:
        return LegacySseClientTransport(options, http_client=http_client)
    return AutoDetectHttpTransport(options, http_client=http_client)


#: Keywords of ``connect_websocket`` that configure the transport, not the client
#: (``headers`` is the older name of ``additional_headers``).
_WEBSOCKET_OPTION_NAMES = frozenset(
    {f.name for f in dataclasses.fields(WebSocketClientTransportOptions)} - {"url"} | {"headers"}
)


def create_websocket_transport(
    url: str | WebSocketClientTransportOptions, keywords: dict[str, Any]
) -> WebSocketClientTransport:
    """The transport for ``url`` (not started), configured by the ``keywords`` named like an
    options field, which are taken out of ``keywords`` (the rest are the client's)."""
    fields = {name: keywords.pop(name) for name in _WEBSOCKET_OPTION_NAMES & keywords.keys()}
    return WebSocketClientTransport(url, **fields)
