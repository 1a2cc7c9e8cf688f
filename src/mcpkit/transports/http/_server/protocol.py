"""The HTTP/1.1 protocol ``mcpkit run -t http`` and ``serve_http`` give uvicorn.

uvicorn's httptools protocol with two kinds of change:

* **Bounds uvicorn leaves out.** Its keep-alive timer only runs between requests, so a
  connection that sends nothing, or its headers a byte at a time, stays open for ever, and
  httptools buffers headers of any size. A connection whose headers take longer than
  ``header_read_timeout`` is closed, and one past ``max_header_bytes`` answered 431.
* **Less work per request, the same behaviour.** The request cycle is ``cycle.py``'s;
  the header and keep-alive times are kept by one sweeper per server (``clock.py``),
  not a timer armed and cancelled per request; and whether a connection comes from a
  trusted proxy (``forwarded_allow_ips``) is decided once per connection, where uvicorn's
  ``ProxyHeadersMiddleware`` decides it per request. Serving mcpkit's app, header lines a
  kept-alive client sends again, unchanged, are taken as the request before made them:
  lower-cased, stripped, and decoded into the map the app reads (``header_map``), which the
  scope carries under ``DECODED_HEADERS_KEY``. WebSocket upgrades, lifespan, workers,
  signals and shutdown stay uvicorn's.

Without httptools (PyPy), h11's own size bound is used instead, and nothing else changes."""

from __future__ import annotations

import asyncio
import contextvars
import logging
import urllib.parse
from typing import Any

from mcpkit.transports.http._asgi import DECODED_HEADERS_KEY, known_header_name
from mcpkit.transports.http._options import StreamableHttpServerOptions
from mcpkit.transports.http._server.clock import ConnectionClock

logger = logging.getLogger("mcpkit.http")

_HEADERS_END = b"\r\n\r\n"
_FORWARDED_SCHEMES = frozenset(("http", "https", "ws", "wss"))
#: Request headers ``on_header`` looks at beyond storing them.
_NOTED = frozenset((b"expect", b"x-forwarded-for", b"x-forwarded-proto"))
#: Header lines a connection keeps of its last request, to know them again in the next, and
#: the longest value it keeps (longer ones are made anew each time).
MAX_SEEN_HEADERS = 32
MAX_SEEN_VALUE_BYTES = 4096


#: The uvicorn releases this protocol is tested with: (lowest, first one not tested). It
#: extends uvicorn's httptools protocol through attributes uvicorn does not document, so
#: under any other release uvicorn's own protocol serves. The differential test
#: (tests/transports/test_http_protocol.py) passes on 0.55; on 0.50-0.54 answers differ.
TESTED_UVICORN = ((0, 55), (0, 56))


def protocol_refusal(version: str) -> str | None:
    """Why mcpkit's protocol does not serve under uvicorn ``version`` (None: it does)."""
    try:
        release = tuple(int(part) for part in version.split(".")[:2])
    except ValueError:
        release = ()
    lowest, beyond = TESTED_UVICORN
    if len(release) == 2 and lowest <= release < beyond:
        return None
    tested = ".".join(map(str, lowest)) + ".x"
    if beyond[1] - lowest[1] > 1:
        tested = f"{tested} to {beyond[0]}.{beyond[1] - 1}.x"
    return (
        f"uvicorn {version} is not a release mcpkit's HTTP protocol is tested with ({tested}): "
        "serving on uvicorn's own protocol, without header_read_timeout and max_header_bytes"
    )


def uvicorn_http_protocol(options: StreamableHttpServerOptions | None = None) -> dict[str, Any]:
    """uvicorn ``Config`` keywords that serve any ASGI app with mcpkit's HTTP protocol and the
    header bounds of ``options`` (``header_read_timeout``, ``max_header_bytes``), as
    ``serve_http`` does::

        uvicorn.run(starlette_app, host="0.0.0.0", port=8000, **uvicorn_http_protocol())

    Each call makes a protocol class of its own, with its own connection clock. Under a
    uvicorn release outside ``TESTED_UVICORN``, uvicorn's own httptools protocol (and one
    warning that says why); without httptools, h11 with ``max_header_bytes`` as its bound."""
    options = options or StreamableHttpServerOptions()
    # uvicorn's protocol classes (and the cycle built on them) are loaded here, by whoever
    # serves with this protocol, never by importing mcpkit or making an app.
    try:
        import httptools
        from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware
        from uvicorn.protocols.http.flow_control import HIGH_WATER_LIMIT, service_unavailable
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    except ImportError:  # no httptools: h11 bounds the size, nothing the time
        return {"http": "h11", "h11_max_incomplete_event_size": options.max_header_bytes}
    import uvicorn

    refusal = protocol_refusal(uvicorn.__version__)
    if refusal is not None:
        logger.warning("%s", refusal)
        return {"http": "httptools"}
    from mcpkit.transports.http._app import McpAsgiApp
    from mcpkit.transports.http._server.cycle import RequestCycle

    timeout = options.header_read_timeout
    limit = options.max_header_bytes
    clock = ConnectionClock(timeout) if timeout is not None else None

    class McpHttpProtocol(HttpToolsProtocol):
        #: The server's open connections and their sweeper (None: no header_read_timeout).
        connection_clock = clock
        # this protocol's cycle in place of uvicorn's (uvicorn's own methods use the same
        # attributes of it)
        cycle: Any
        pipeline: Any
        scope: Any
        trusted_hosts: Any
        proxy: Any

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            app = self.app
            #: The trusted proxies (None: uvicorn's ``proxy_headers`` is off).
            self.trusted_hosts = None
            if isinstance(app, ProxyHeadersMiddleware):  # done here, per connection
                self.app = app.app
                self.trusted_hosts = app.trusted_hosts
            #: mcpkit's app, which reads the headers decoded: they are decoded as they come.
            self.decode_headers = isinstance(self.app, McpAsgiApp)
            #: The trusted proxies when this connection comes from one, else None.
            self.proxy = None
            self._header_bytes = 0
            #: The last bytes of the read before, where the headers' end may begin.
            self._header_tail = b""
            self._reading_headers = True
            #: The header lines of the last request, as ``on_header`` made them, by place.
            self.seen_headers: list[tuple[Any, ...]] = []
            #: When this connection's wait began (the clock's time); None: not timed.
            self.clock_since: float | None = None
            #: How long that wait may last.
            self.clock_limit = 0.0
            #: The wait is one between requests (keep-alive), not for headers.
            self.clock_idle = False
            if clock is not None:
                self.idle_limit = clock.idle_limit(self.timeout_keep_alive)

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            trusted = self.trusted_hosts
            if trusted is not None:
                host = self.client[0] if self.client else None
                if host in trusted:
                    self.proxy = trusted
            #: What every request's scope on this connection starts from.
            self._scope_base: dict[str, Any] = {
                "type": "http",
                "asgi": None,  # each request's own, set in on_message_begin (kept in order)
                "http_version": "1.1",
                "server": self.server,
                "client": self.client,
                "scheme": self.scheme,
                "root_path": self.root_path,
            }
            if clock is not None:  # a connection that never sends anything is closed too
                clock.add(self, self.loop)
                self.clock_since = clock.now
                self.clock_limit = clock.header_limit

        def connection_lost(self, exc: Exception | None) -> None:
            if clock is not None:
                clock.connections.discard(self)
            super().connection_lost(exc)

        def handle_websocket_upgrade(self) -> None:
            if clock is not None:  # the socket is the WebSocket protocol's from now on
                clock.connections.discard(self)
            super().handle_websocket_upgrade()

        def data_received(self, data: bytes) -> None:
            if self.clock_idle:  # the wait between requests is over
                self.clock_idle = False
                self.clock_since = None
            if self._reading_headers:
                if clock is not None and self.clock_since is None:
                    self.clock_since = clock.now  # a request's headers are coming
                    self.clock_limit = clock.header_limit
                size = self._header_bytes + len(data)
                if size > limit:  # only then is it worth finding where the headers end
                    tail = self._header_tail  # the end may begin in the read before
                    end = (tail + data).find(_HEADERS_END)
                    size = self._header_bytes + (len(data) if end < 0 else end - len(tail))
                    if size > limit:
                        self._too_large()
                        return
                self._header_bytes = size
            if self.timeout_keep_alive_task is not None:
                self._unset_keepalive_if_required()
            try:
                self.parser.feed_data(data)
            except httptools.HttpParserError:
                message = "Invalid HTTP request received."
                self.logger.warning(message)
                self.send_400_response(message)
                return
            except httptools.HttpParserUpgrade:
                if self._should_upgrade():
                    self.handle_websocket_upgrade()
                else:
                    self._unsupported_upgrade_warning()
                return
            if self._reading_headers:
                self._header_tail = data[-3:]

        def on_message_begin(self) -> None:
            self.url = b""
            self.expect_100_continue = False
            headers = self.headers = []
            scope = self.scope = self._scope_base.copy()  # uvicorn's scope, made in C
            scope["asgi"] = {"version": self.asgi_version, "spec_version": "2.3"}
            scope["headers"] = headers
            scope["state"] = self.app_state.copy()
            #: The headers decoded as they come (``header_map``'s map), until they end; None
            #: when the app is not mcpkit's (nothing reads the map).
            self.header_text: dict[str, str] | None = {} if self.decode_headers else None
            self.header_index = 0
            #: The request's ``X-Forwarded-*`` headers, in order (None: there are none).
            self.forwarded: list[tuple[bytes, bytes]] | None = None

        def on_header(self, name: bytes, value: bytes) -> None:
            text = self.header_text
            if text is None:  # an app that reads no decoded map, or a trailer
                pair = (name.lower(), value.rstrip(b" \t"))
                if pair[0] in _NOTED:
                    self._note(pair)
                self.headers.append(pair)
                return
            # A kept-alive client sends the same header lines request after request: one
            # equal to the line at the same place in the request before is taken as it was
            # made then (lower-cased, stripped, decoded), not made again.
            index = self.header_index
            self.header_index = index + 1
            seen = self.seen_headers
            if index < len(seen):
                raw_name, raw_value, pair, text_name, text_value, noted = seen[index]
                if raw_value == value and raw_name == name:
                    self.headers.append(pair)
                    text[text_name] = text_value
                    if noted:
                        self._note(pair)
                    return
            lower = name.lower()
            # llhttp keeps trailing whitespace, which RFC 9110 excludes from the value
            pair = (lower, value.rstrip(b" \t"))
            noted = lower in _NOTED
            if noted:
                self._note(pair)
            self.headers.append(pair)
            text_name = known_header_name(lower) or lower.decode("latin-1")
            text_value = text[text_name] = pair[1].decode("latin-1")
            if len(value) <= MAX_SEEN_VALUE_BYTES:
                made = (name, value, pair, text_name, text_value, noted)
                if index < len(seen):
                    seen[index] = made
                elif index < MAX_SEEN_HEADERS:
                    seen.append(made)

        def _note(self, pair: tuple[bytes, bytes]) -> None:
            """``Expect: 100-continue``, or an ``X-Forwarded-*`` header (noted as they come:
            no search of all the headers later)."""
            name, value = pair
            if name == b"expect":
                if value.lower() == b"100-continue":
                    self.expect_100_continue = True
            elif self.forwarded is None:
                self.forwarded = [pair]
            else:
                self.forwarded.append(pair)

        def on_headers_complete(self) -> None:
            self._reading_headers = False
            self.clock_since = None
            parser = self.parser
            scope = self.scope
            text = self.header_text
            if text is not None:
                scope[DECODED_HEADERS_KEY] = (self.headers[:], text)
                self.header_text = None  # what comes after the headers is a trailer
            http_version = parser.get_http_version()
            scope["method"] = parser.get_method().decode("ascii")
            if http_version != "1.1":
                scope["http_version"] = http_version
            if parser.should_upgrade() and self._should_upgrade():
                return
            url = httptools.parse_url(self.url)
            raw_path = url.path
            path = raw_path.decode("ascii")
            if "%" in path:
                path = urllib.parse.unquote(path)
            root = self.root_path
            scope["path"] = root + path if root else path
            scope["raw_path"] = root.encode("ascii") + raw_path if root else raw_path
            scope["query_string"] = url.query or b""
            if self.forwarded is not None and self.proxy is not None:
                self._forwarded(scope, self.forwarded)
            concurrency = self.limit_concurrency
            if concurrency is not None and (
                len(self.connections) >= concurrency or len(self.tasks) >= concurrency
            ):
                app = service_unavailable
                self.logger.warning("Exceeded concurrency limit.")
            else:
                app = self.app
            existing = self.cycle
            self.cycle = cycle = RequestCycle(
                self,
                scope,
                http_version != "1.0" and parser.should_keep_alive(),
                self.expect_100_continue,
            )
            if existing is None or existing.response_complete:
                self._start_asgi_task(cycle, app)
            else:  # pipelined: it waits for the one before
                self.flow.pause_reading()
                self.pipeline.appendleft((cycle, app))

        def _forwarded(self, scope: dict[str, Any], forwarded: list[tuple[bytes, bytes]]) -> None:
            """``X-Forwarded-Proto`` and ``-For`` of a trusted proxy, as uvicorn reads them."""
            proto = None
            addresses = []
            for name, value in forwarded:
                if name == b"x-forwarded-proto":
                    proto = value
                elif name == b"x-forwarded-for":
                    addresses.append(value)
            if proto is not None:
                scheme = proto.decode("latin1").strip()
                if scheme in _FORWARDED_SCHEMES:
                    scope["scheme"] = scheme
            if addresses:
                host, port = self.proxy.get_trusted_client_address(
                    b", ".join(addresses).decode("latin1")
                )
                if host:
                    scope["client"] = (host, port)

        def _start_asgi_task(self, cycle: Any, app: Any) -> None:
            if self.config.reset_contextvars:
                task = self.loop.create_task(cycle.run_asgi(app), context=contextvars.Context())
            else:
                task = self.loop.create_task(cycle.run_asgi(app))
            cycle.task = task  # the cycle takes it out of ``tasks`` when the app returns
            self.tasks.add(task)

        def on_body(self, body: bytes) -> None:
            if self.parser.should_upgrade() and self._should_upgrade():
                return
            cycle = self.cycle
            if cycle.response_complete:
                return
            cycle.add_body(body)
            if len(cycle.body) > HIGH_WATER_LIMIT:
                self.flow.pause_reading()
            cycle.set()

        def on_message_complete(self) -> None:
            self._reading_headers = True
            self._header_bytes = 0
            if self.parser.should_upgrade() and self._should_upgrade():
                return
            cycle = self.cycle
            if cycle.response_complete:
                return
            cycle.more_body = False
            cycle.set()

        def on_response_complete(self) -> None:
            self.server_state.total_requests += 1
            if self.transport.is_closing():
                return
            flow = self.flow
            if flow.read_paused:
                flow.resume_reading()
            if self.pipeline:
                cycle, app = self.pipeline.pop()
                self._start_asgi_task(cycle, app)
            elif clock is None:
                self._unset_keepalive_if_required()
                self.timeout_keep_alive_task = self.loop.call_later(
                    self.timeout_keep_alive, self.timeout_keep_alive_handler
                )
            elif self.clock_since is None:  # idle until the next request's first bytes
                self.clock_idle = True
                self.clock_since = clock.now
                self.clock_limit = self.idle_limit

        def out_of_time(self) -> None:
            """Past its headers' or its keep-alive time (the sweep's call)."""
            self.clock_since = None
            cycle = self.cycle
            if cycle is not None and not cycle.response_complete:
                # bytes after a request (a stray CRLF, the next request pipelined) while
                # its answer still streams: uvicorn times nothing then, nor does this
                return
            if not self.transport.is_closing():
                self.transport.close()

        def _too_large(self) -> None:
            self.clock_since = None
            message = b"Request headers too large (max_header_bytes)"
            self.transport.write(
                b"HTTP/1.1 431 Request Header Fields Too Large\r\n"
                b"content-type: text/plain; charset=utf-8\r\n"
                b"content-length: " + str(len(message)).encode() + b"\r\n"
                b"connection: close\r\n\r\n" + message
            )
            self.transport.close()

    return {"http": McpHttpProtocol}


def default_http_protocol() -> type[asyncio.Protocol]:
    """The protocol class with the default bounds, for uvicorn's command line
    (``mcpkit.transports.http.protocol``); uvicorn's own (httptools, else h11) outside the
    tested uvicorn releases or without httptools."""
    http = uvicorn_http_protocol()["http"]
    if http == "httptools":
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

        return HttpToolsProtocol
    if isinstance(http, str):
        from uvicorn.protocols.http.h11_impl import H11Protocol

        return H11Protocol
    return http  # type: ignore[no-any-return]


__all__ = [
    "TESTED_UVICORN",
    "default_http_protocol",
    "protocol_refusal",
    "uvicorn_http_protocol",
]
