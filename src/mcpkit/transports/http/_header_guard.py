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


def guarded_http_protocol(options: StreamableHttpServerOptions) -> dict[str, Any]:
    """uvicorn ``Config`` keywords that put ``options``' header bounds in force."""
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    except ImportError:  # no httptools: h11 bounds the size, nothing the time
        return {"http": "h11", "h11_max_incomplete_event_size": options.max_header_bytes}
    timeout = options.header_read_timeout
    limit = options.max_header_bytes

    class HeaderGuardedProtocol(HttpToolsProtocol):
        _header_timer: asyncio.TimerHandle | None = None
        _header_bytes = 0
        _reading_headers = True

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            if self._reading_headers:
                end = data.find(_HEADERS_END)
                self._header_bytes += len(data) if end < 0 else end
                if self._header_bytes > limit:
                    self._too_large()
                    return
            super().data_received(data)

        def on_message_begin(self) -> None:
            super().on_message_begin()
            if self._header_timer is None:  # a kept-alive connection's next request
                self._arm()

        def on_headers_complete(self) -> None:
            self._disarm()
            self._reading_headers = False
            super().on_headers_complete()

        def on_message_complete(self) -> None:
            super().on_message_complete()
            self._reading_headers = True
            self._header_bytes = 0

        def _arm(self) -> None:
            if timeout is not None:
                self._header_timer = self.loop.call_later(timeout, self._too_slow)

        def _disarm(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _too_slow(self) -> None:
            self._header_timer = None
            if self._reading_headers and not self.transport.is_closing():
                self.transport.close()

        def _too_large(self) -> None:
            self._disarm()
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
