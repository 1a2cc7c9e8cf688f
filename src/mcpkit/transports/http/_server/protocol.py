"""Request headers bounded in time and size, around uvicorn's own HTTP protocol, where
mcpkit is the program (``mcpkit run``, ``mcpkit proxy``; ``AsTheProgram``). A program of the
user's keeps the protocol uvicorn picks: choosing it is the program's, not a library's.

uvicorn's keep-alive timer runs only between requests, so a connection that sends nothing,
or its headers a byte at a time, stays open for ever, and httptools buffers headers of any
size. ``uvicorn_http_protocol(options)`` gives uvicorn a protocol that holds uvicorn's
httptools protocol (the class uvicorn itself loads for ``http="httptools"``), not extends
it: the bytes pass through a second httptools parser, told
only where each request begins and where its headers end, on their way to uvicorn's. That
times the headers against ``header_read_timeout`` and counts them against
``max_header_bytes``. Parsing, the ASGI cycle, keep-alive, WebSocket upgrades and shutdown
stay uvicorn's, reached through the asyncio protocol interface alone, so any uvicorn release
mcpkit allows serves the same way.

Without httptools (PyPy), h11's own size bound is used instead, and nothing is timed."""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

from mcpkit.transports.http._options import DEFAULT_MAX_HEADER_BYTES, StreamableHttpServerOptions
from mcpkit.transports.http._server.clock import ConnectionClock

_HEADERS_END = b"\r\n\r\n"
_TOO_LARGE = b"Request headers too large (max_header_bytes)"
_TOO_LARGE_ANSWER = (
    b"HTTP/1.1 431 Request Header Fields Too Large\r\n"
    b"content-type: text/plain; charset=utf-8\r\n"
    b"content-length: " + str(len(_TOO_LARGE)).encode() + b"\r\n"
    b"connection: close\r\n\r\n" + _TOO_LARGE
)


class BoundedHeadersProtocol(asyncio.Protocol):
    """One connection: uvicorn's protocol (``served``) behind a watch on its request headers.

    A subclass made by ``uvicorn_http_protocol`` names the bounds; uvicorn makes one per
    connection with the keywords it gives any HTTP protocol class, passed on unread."""

    #: The server's open connections and their sweeper (None: nothing timed).
    clock: ClassVar[ConnectionClock | None] = None
    #: Bytes of a request's line and headers before it is answered 431.
    limit: ClassVar[int] = DEFAULT_MAX_HEADER_BYTES
    #: The protocol class that serves (uvicorn's httptools protocol).
    serving: ClassVar[type[asyncio.Protocol]]
    #: httptools' parser class and what its ``feed_data`` raises.
    parser: ClassVar[Any]
    upgrade: ClassVar[type[Exception]]
    parse_error: ClassVar[type[Exception]]

    def __init__(self, **uvicorn_keywords: Any) -> None:
        self.served = self.serving(**uvicorn_keywords)
        #: Parses only to learn where a request begins and where its headers end.
        self.watch = self.parser(self)
        #: False once the connection is no longer plain HTTP (an upgrade) or its bytes are
        #: not (a parse error, which uvicorn's protocol answers itself).
        self.watching = True
        self.transport: asyncio.Transport | None = None
        self.reading_headers = True
        self.header_bytes = 0
        #: The last bytes of the read before, where the headers' end may begin.
        self.header_tail = b""
        #: When the wait for headers began (the clock's time); None: not waiting.
        self.clock_since: float | None = None
        #: How long that wait may last.
        self.clock_limit = 0.0

    # -- the asyncio protocol: watched, then passed on ----------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        clock = self.clock
        if clock is not None:  # a connection that never sends anything is closed too
            clock.add(self, asyncio.get_running_loop())
            self.clock_since = clock.now
            self.clock_limit = clock.header_limit
        self.served.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        if self.watching and not self._watch(data):
            return
        self.served.data_received(data)

    def eof_received(self) -> bool | None:
        return self.served.eof_received()

    def connection_lost(self, exc: Exception | None) -> None:
        self._unwatch()
        self.served.connection_lost(exc)

    def pause_writing(self) -> None:
        self.served.pause_writing()

    def resume_writing(self) -> None:
        self.served.resume_writing()

    # -- the watch ------------------------------------------------------------------------------

    def _watch(self, data: bytes) -> bool:
        """Whether ``data`` goes on to uvicorn's protocol (False: the connection is closed)."""
        if self.reading_headers:
            size = self.header_bytes + len(data)
            if size > self.limit:  # only then is it worth finding where the headers end
                end = (self.header_tail + data).find(_HEADERS_END)
                size = self.header_bytes + (len(data) if end < 0 else end - len(self.header_tail))
                if size > self.limit:
                    self._too_large()
                    return False
            self.header_bytes = size
        try:
            self.watch.feed_data(data)
        except self.upgrade:
            self._unwatch()  # the socket may become a WebSocket protocol's: not ours to time
        except self.parse_error:
            self._unwatch()  # uvicorn's parser finds the same fault and answers 400
        if self.reading_headers:
            self.header_tail = data[-3:]
        return True

    def _unwatch(self) -> None:
        self.watching = False
        self.clock_since = None
        clock = self.clock
        if clock is not None:
            clock.connections.discard(self)

    def _too_large(self) -> None:
        self._unwatch()
        transport = self.transport
        if transport is not None and not transport.is_closing():
            transport.write(_TOO_LARGE_ANSWER)
            transport.close()

    def out_of_time(self) -> None:
        """Past its headers' time (the clock's sweep calls it)."""
        self._unwatch()
        transport = self.transport
        if transport is not None and not transport.is_closing():
            transport.close()

    # -- what the watch's parser reports ---------------------------------------------------------

    def on_message_begin(self) -> None:
        clock = self.clock
        if clock is not None and self.clock_since is None:  # a request's headers are coming
            self.clock_since = clock.now
            self.clock_limit = clock.header_limit

    def on_headers_complete(self) -> None:
        self.reading_headers = False
        self.clock_since = None

    def on_message_complete(self) -> None:
        self.reading_headers = True
        self.header_bytes = 0
        self.header_tail = b""


def uvicorn_http_protocol(options: StreamableHttpServerOptions | None = None) -> dict[str, Any]:
    """uvicorn ``Config`` keywords that bound request headers in time and size as ``options``
    say (``header_read_timeout``, ``max_header_bytes``), for any ASGI app: what ``mcpkit
    run`` and ``mcpkit proxy`` serve with.

    Each call makes a protocol class of its own, with its own connection clock. Without
    httptools, h11 with ``max_header_bytes`` as its bound and no time bound."""
    options = options or StreamableHttpServerOptions()
    try:
        import httptools
    except ImportError:  # no httptools: h11 bounds the size, nothing the time
        return {"http": "h11", "h11_max_incomplete_event_size": options.max_header_bytes}
    from uvicorn.config import HTTP_PROTOCOLS
    from uvicorn.importer import import_from_string

    # The class uvicorn's Config loads for http="httptools", found the way it finds it.
    serving = import_from_string(HTTP_PROTOCOLS["httptools"])
    timeout = options.header_read_timeout
    bounds = {
        "clock": ConnectionClock(timeout) if timeout is not None else None,
        "limit": options.max_header_bytes,
        "serving": serving,
        "parser": httptools.HttpRequestParser,
        "upgrade": httptools.HttpParserUpgrade,
        "parse_error": httptools.HttpParserError,
    }
    return {"http": type("BoundedHeadersProtocol", (BoundedHeadersProtocol,), bounds)}


__all__ = ["BoundedHeadersProtocol", "uvicorn_http_protocol"]
