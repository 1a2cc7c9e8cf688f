"""Bounds on the part of a request uvicorn does not bound: its headers.

uvicorn's keep-alive timer only runs between requests, so a connection that sends nothing,
or its headers a byte at a time, stays open for ever, and httptools buffers headers of any
size. ``guarded_http_protocol`` gives uvicorn a protocol class that closes a connection
whose headers take longer than ``header_read_timeout`` and answers 431 past
``max_header_bytes``. Without httptools (PyPy), h11's own size bound is used instead."""

from __future__ import annotations

import asyncio
from typing import Any

from mcpkit.transports.http._options import StreamableHttpServerOptions

_HEADERS_END = b"\r\n\r\n"


class _HeaderClock:
    """The open connections of one server and a sweeper, alive while there are any, that
    closes those whose request headers have taken longer than ``timeout``. It keeps a
    coarse time (``now``, the last sweep's), so a request pays for no timer and no clock
    read: only attribute stores on its connection."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        #: Seconds between sweeps: a quarter of the timeout, at most 1 s.
        self.interval = min(1.0, max(0.01, timeout / 4))
        self.now = 0.0
        self.connections: set[Any] = set()
        self._sweeper: asyncio.Task[None] | None = None

    def add(self, protocol: Any, loop: asyncio.AbstractEventLoop) -> None:
        self.connections.add(protocol)
        if self._sweeper is None or self._sweeper.done():
            self.now = loop.time()
            self._sweeper = loop.create_task(self._sweep(loop))

    async def _sweep(self, loop: asyncio.AbstractEventLoop) -> None:
        # A start read from ``now`` is up to one sweep early: a connection is closed after
        # more than ``timeout``, at most two sweeps past it.
        allowed = self.timeout + self.interval
        connections = self.connections
        while connections:
            await asyncio.sleep(self.interval)
            now = self.now = loop.time()
            for protocol in list(connections):
                since = protocol.header_since
                if since is not None and now - since > allowed:
                    protocol.too_slow()


def guarded_http_protocol(options: StreamableHttpServerOptions) -> dict[str, Any]:
    """uvicorn ``Config`` keywords that put ``options``' header bounds in force."""
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    except ImportError:  # no httptools: h11 bounds the size, nothing the time
        return {"http": "h11", "h11_max_incomplete_event_size": options.max_header_bytes}
    timeout = options.header_read_timeout
    limit = options.max_header_bytes
    clock = _HeaderClock(timeout) if timeout is not None else None

    class HeaderGuardedProtocol(HttpToolsProtocol):
        # Each request passes data_received, on_headers_complete and on_message_complete,
        # which only read and set attributes here (made in __init__, as uvicorn's own are).

        #: The server's open connections and their sweeper (None: no header_read_timeout).
        header_clock = clock

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._header_bytes = 0
            self._reading_headers = True
            #: When the headers being read began to come (the clock's time); None: not timed.
            self.header_since: float | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            if clock is not None:  # a connection that never sends anything is closed too
                clock.add(self, self.loop)
                self.header_since = clock.now

        def connection_lost(self, exc: Exception | None) -> None:
            if clock is not None:
                clock.connections.discard(self)
            super().connection_lost(exc)

        def handle_websocket_upgrade(self) -> None:
            if clock is not None:  # the socket is the WebSocket protocol's from now on
                clock.connections.discard(self)
            super().handle_websocket_upgrade()

        def data_received(self, data: bytes) -> None:
            if self._reading_headers:
                if self.header_since is None and clock is not None:  # a kept-alive
                    self.header_since = clock.now  # connection's next request
                size = self._header_bytes + len(data)
                if size > limit:  # only then is it worth finding where the headers end
                    end = data.find(_HEADERS_END)
                    size = self._header_bytes + (len(data) if end < 0 else end)
                    if size > limit:
                        self._too_large()
                        return
                self._header_bytes = size
            super().data_received(data)

        def on_headers_complete(self) -> None:
            self._reading_headers = False
            self.header_since = None
            super().on_headers_complete()

        def on_message_complete(self) -> None:
            super().on_message_complete()
            self._reading_headers = True
            self._header_bytes = 0

        def too_slow(self) -> None:
            """Past ``header_read_timeout`` with its headers not all read (the sweep's call)."""
            self.header_since = None
            if self._reading_headers and not self.transport.is_closing():
                self.transport.close()

        def _too_large(self) -> None:
            self.header_since = None
            message = b"Request headers too large (max_header_bytes)"
            self.transport.write(
                b"HTTP/1.1 431 Request Header Fields Too Large\r\n"
                b"content-type: text/plain; charset=utf-8\r\n"
                b"content-length: " + str(len(message)).encode() + b"\r\n"
                b"connection: close\r\n\r\n" + message
            )
            self.transport.close()

    return {"http": HeaderGuardedProtocol}


__all__ = ["guarded_http_protocol"]
