"""One HTTP/1.1 request and its response, as the ASGI app sees them: ``receive`` and
``send`` for the protocol in ``protocol.py``.

It keeps the contract of uvicorn's own request cycle (the same messages, the same errors,
the same bytes on the wire) at a fraction of its cost per request: no ``asyncio.Event``
per request (a future is made only when ``receive`` has to wait), the response's header
names and values each checked in one pass over them all, not two regular-expression
searches per header, and no done-callback per task. The head of a response of known length
goes out with its first body message, in one write: one system call per answer where
uvicorn makes two."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

# uvicorn's own checks of response header names and values, and its status lines
from uvicorn.protocols.http.httptools_impl import HEADER_RE, HEADER_VALUE_RE, STATUS_LINE
from uvicorn.protocols.utils import get_client_addr, get_path_with_query_string

logger = logging.getLogger("uvicorn.error")

#: Response headers that change how the body is framed or the connection kept.
_FRAMING = frozenset((b"content-length", b"transfer-encoding", b"connection"))
_DISCONNECT = {"type": "http.disconnect"}


def _byte_check(pattern: Any) -> bytes:
    """A ``bytes.translate`` table that maps each byte ``pattern`` (a character class)
    matches to 0 and every other byte to a non-zero one: ``0 in data.translate(table)`` is
    ``pattern.search(data)`` at a fraction of its cost (the regular expression engine tests
    a class byte by byte through its opcodes)."""
    return bytes(0 if pattern.match(bytes((i,))) else i or 1 for i in range(256))


#: uvicorn's checks of response header names and values, as translate tables.
_INVALID_NAME_BYTES = _byte_check(HEADER_RE)
_INVALID_VALUE_BYTES = _byte_check(HEADER_VALUE_RE)
#: A first body (or a chunk) shorter than this is copied after the head (or into its chunk
#: framing) for one write; a longer one is written beside it (``writelines``), still one
#: system call, not copied.
_JOINED_BODY = 64 * 1024

_SERVER_ERROR_START = {
    "type": "http.response.start",
    "status": 500,
    "headers": [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"content-length", b"21"),
        (b"connection", b"close"),
    ],
}
_SERVER_ERROR_BODY = {"type": "http.response.body", "body": b"Internal Server Error"}


class RequestCycle:
    """The request's body as it arrives, and the response the app sends."""

    __slots__ = (
        "body",
        "chunked_encoding",
        "disconnected",
        "expected_content_length",
        "flow",
        "keep_alive",
        "loop",
        "more_body",
        "pending",
        "pending_head",
        "protocol",
        "response_complete",
        "response_started",
        "scope",
        "task",
        "transport",
        "waiters",
        "waiting_for_100_continue",
    )

    def __init__(
        self, protocol: Any, scope: Any, keep_alive: bool, expect_100_continue: bool
    ) -> None:
        self.scope = scope
        #: The connection's protocol until the app returns (it is told of the response's end).
        self.protocol = protocol
        self.transport = protocol.transport
        self.flow = protocol.flow
        self.loop = protocol.loop
        self.keep_alive = keep_alive
        self.waiting_for_100_continue = expect_100_continue
        self.body: bytes | bytearray = b""
        self.more_body = True
        #: Something for ``receive`` happened (body, its end, a disconnect, the response's end).
        self.pending = False
        #: The ``receive`` calls waiting for it (made only when one has to wait).
        self.waiters: list[asyncio.Future[None]] | None = None
        self.disconnected = False
        self.response_started = False
        self.response_complete = False
        self.chunked_encoding: bool | None = None
        self.expected_content_length = 0
        #: The response's head, held for the first body message's write (a known length).
        self.pending_head: bytes | None = None
        self.task: asyncio.Task[None] | None = None

    @property
    def message_event(self) -> RequestCycle:
        # uvicorn's connection_lost calls ``cycle.message_event.set()``.
        return self

    def set(self) -> None:
        """Wake ``receive``."""
        self.pending = True
        if self.waiters:
            for waiter in self.waiters:
                if not waiter.done():
                    waiter.set_result(None)

    def add_body(self, chunk: bytes) -> None:
        body = self.body
        if not body:
            self.body = chunk  # the usual whole body in one chunk: kept, not copied
        else:
            if type(body) is bytes:
                body = self.body = bytearray(body)
            body += chunk

    async def run_asgi(self, app: Any) -> None:
        try:
            result = await app(self.scope, self.receive, self.send)
        except BaseException as exc:
            logger.error("Exception in ASGI application\n", exc_info=exc)
            if not self.response_started:
                await self._send_500()
            else:
                self._close()
        else:
            if result is not None:
                logger.error("ASGI callable should return None, but returned '%s'.", result)
                self._close()
            elif not self.response_started and not self.disconnected:
                logger.error("ASGI callable returned without starting response.")
                await self._send_500()
            elif not self.response_complete and not self.disconnected:
                logger.error("ASGI callable returned without completing response.")
                self._close()
        finally:
            # No reference cycle left for the GC to find: the task's context holds what the
            # app set in it (the request's binding, which holds this cycle's ``send``).
            self.protocol.tasks.discard(self.task)
            self.protocol = self.task = None

    def _close(self) -> None:
        """Close the connection, the response's head written first if it still waits."""
        head = self.pending_head
        if head is not None:
            self.pending_head = None
            self.transport.write(head)
        self.transport.close()

    async def _send_500(self) -> None:
        await self.send(_SERVER_ERROR_START)
        await self.send(_SERVER_ERROR_BODY)

    async def send(self, message: Any) -> None:
        if self.flow.write_paused and not self.disconnected:
            await self.flow.drain()
        if self.disconnected:
            return
        if not self.response_started:
            if message["type"] != "http.response.start":
                raise RuntimeError(
                    f"Expected ASGI message 'http.response.start', but got '{message['type']}'."
                )
            self._start(message)
        elif not self.response_complete:
            if message["type"] != "http.response.body":
                raise RuntimeError(
                    f"Expected ASGI message 'http.response.body', but got '{message['type']}'."
                )
            self._body(message.get("body", b""), message.get("more_body", False))
        else:
            raise RuntimeError(
                f"Unexpected ASGI message '{message['type']}' sent, after response already "
                "completed."
            )

    def _start(self, message: Any) -> None:
        self.response_started = True
        self.waiting_for_100_continue = False
        status = message["status"]
        protocol = self.protocol
        if protocol.access_log:
            scope = self.scope
            protocol.access_logger.info(
                '%s - "%s %s HTTP/%s" %d',
                get_client_addr(scope),
                scope["method"],
                get_path_with_query_string(scope),
                scope["http_version"],
                status,
            )
        head = [STATUS_LINE[status]]
        names = []
        values = []
        close = False
        for headers in (protocol.server_state.default_headers, message.get("headers", ())):
            for name, value in headers:
                name = name.lower()
                names.append(name)
                values.append(value)
                if name in _FRAMING:
                    if name == b"content-length":
                        if self.chunked_encoding is None:
                            self.expected_content_length = int(value.decode())
                            self.chunked_encoding = False
                    elif name == b"transfer-encoding":
                        if value.lower() == b"chunked":
                            self.expected_content_length = 0
                            self.chunked_encoding = True
                    elif b"close" in [token.lower().strip() for token in value.split(b",")]:
                        self.keep_alive = False
                        close = True
                head += (name, b": ", value, b"\r\n")
        # one pass over all the names and one over all the values: what a search per
        # header finds, since joining adds no character
        if 0 in b"".join(names).translate(_INVALID_NAME_BYTES):
            raise RuntimeError("Invalid HTTP header name.")
        if 0 in b"".join(values).translate(_INVALID_VALUE_BYTES):
            raise RuntimeError("Invalid HTTP header value.")
        if not self.keep_alive and not close:
            head.append(b"connection: close\r\n")
        if (
            self.chunked_encoding is None
            and self.scope["method"] != "HEAD"
            and status not in (204, 304)
        ):
            self.chunked_encoding = True
            head.append(b"transfer-encoding: chunked\r\n")
        head.append(b"\r\n")
        if self.chunked_encoding:
            self.transport.write(b"".join(head))
        else:
            # a known length: the head goes out with the first body message, in one write
            # and one system call (ASGI servers send nothing before that message anyway)
            self.pending_head = b"".join(head)

    def _body(self, body: bytes, more_body: bool) -> None:
        if self.scope["method"] == "HEAD":
            self.expected_content_length = 0
            data = b""
        elif self.chunked_encoding:
            if len(body) >= _JOINED_BODY:  # framed beside the chunk, which is not copied
                end = b"\r\n" if more_body else b"\r\n0\r\n\r\n"
                self.transport.writelines((b"%x\r\n" % len(body), body, end))
                data = b""
            elif body:
                if more_body:
                    data = b"%x\r\n%b\r\n" % (len(body), body)
                else:
                    data = b"%x\r\n%b\r\n0\r\n\r\n" % (len(body), body)
            else:
                data = b"" if more_body else b"0\r\n\r\n"
        else:
            size = len(body)
            if size > self.expected_content_length:
                raise RuntimeError("Response content longer than Content-Length")
            self.expected_content_length -= size
            data = body
        head = self.pending_head
        if head is not None:
            self.pending_head = None
            if len(data) < _JOINED_BODY:
                self.transport.write(head + data)
            else:  # a large body is not copied to join it
                self.transport.writelines((head, data))
        elif data:
            self.transport.write(data)
        if not more_body:
            if self.expected_content_length != 0:
                raise RuntimeError("Response content shorter than Content-Length")
            self.response_complete = True
            self.set()
            if not self.keep_alive:
                self.transport.close()
            protocol = self.protocol
            if protocol is not None:
                protocol.on_response_complete()

    async def receive(self) -> Any:
        if self.waiting_for_100_continue and not self.transport.is_closing():
            self.transport.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            self.waiting_for_100_continue = False
        if not self.disconnected and not self.response_complete:
            flow = self.flow
            if flow.read_paused:
                flow.resume_reading()
            if not self.pending:
                await self._wait()
            self.pending = False
        if self.disconnected or self.response_complete:
            return dict(_DISCONNECT)
        body = self.body
        self.body = b""
        return {"type": "http.request", "body": bytes(body), "more_body": self.more_body}

    async def _wait(self) -> None:
        # one future per waiting call, as asyncio.Event makes: a call given up (a timeout,
        # a cancellation) cancels its own only
        waiter = self.loop.create_future()
        waiters = self.waiters
        if waiters is None:
            waiters = self.waiters = []
        waiters.append(waiter)
        try:
            await waiter
        finally:
            waiters.remove(waiter)


__all__ = ["RequestCycle"]
