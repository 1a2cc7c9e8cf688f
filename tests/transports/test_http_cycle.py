"""How ``mcpkit run``'s HTTP protocol writes an answer, in process on a recording transport:
a response of known length in one write (its head with its first body message: one system
call, where uvicorn's protocol makes two), a large first body beside the head without a copy,
a large chunk of a streamed (chunked) response beside its framing, and that response's head
at once, before any body, so that a client of an SSE stream sees its headers while the
stream waits for events. And a request leaves no reference cycle behind for the garbage
collector to find."""

from __future__ import annotations

import asyncio
import contextvars
import gc
from typing import Any

import pytest
import uvicorn
from uvicorn.server import ServerState

from mcpkit.transports.http import StreamableHttpServerOptions, uvicorn_http_protocol
from tests.transports._fake_transport import RecordingTransport

REQUEST = b"GET /x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
LARGE = b"z" * (1 << 20)


def connected(app: Any, transport: RecordingTransport) -> Any:
    """mcpkit's protocol serving ``app``, connected to ``transport``."""
    config = uvicorn.Config(app, lifespan="off", log_level="warning", date_header=False)
    config.load()
    cls = uvicorn_http_protocol(StreamableHttpServerOptions(header_read_timeout=None))["http"]
    protocol = cls(config=config, server_state=ServerState(), app_state={})
    protocol.connection_made(transport)
    return protocol


async def serve_one(app: Any, transport: RecordingTransport | None = None) -> RecordingTransport:
    """One request to ``app`` through the protocol; its writes once the app has returned."""
    transport = transport or RecordingTransport()
    protocol = connected(app, transport)
    protocol.data_received(REQUEST)
    await asyncio.wait_for(asyncio.gather(*protocol.tasks), 5)
    protocol.connection_lost(None)
    return transport


@pytest.mark.mcpkit_protocol
async def test_a_response_of_known_length_is_one_write():
    async def app(scope: Any, receive: Any, send: Any) -> None:
        await receive()
        headers = [(b"content-type", b"application/json"), (b"content-length", b"2")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b"{}"})

    transport = await serve_one(app)
    assert transport.writes == [
        (
            "write",
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}",
        )
    ]


@pytest.mark.mcpkit_protocol
async def test_a_large_first_body_is_written_beside_the_head_not_copied():
    async def app(scope: Any, receive: Any, send: Any) -> None:
        await receive()
        headers = [(b"content-length", str(len(LARGE)).encode())]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": LARGE})

    transport = await serve_one(app)
    [(kind, parts)] = transport.writes
    assert kind == "writelines"
    assert parts[0] == b"HTTP/1.1 200 OK\r\ncontent-length: 1048576\r\n\r\n"
    assert parts[1] is LARGE


@pytest.mark.mcpkit_protocol
async def test_a_streamed_response_sends_its_head_before_any_body():
    heads_seen: list[list[tuple[str, Any]]] = []
    transport = RecordingTransport()

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await receive()
        headers = [(b"content-type", b"text/event-stream")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        heads_seen.append(list(transport.writes))
        await send({"type": "http.response.body", "body": b"data: 1\n\n", "more_body": True})
        await send({"type": "http.response.body", "body": b""})

    await serve_one(app, transport)
    head = (
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
    )
    assert heads_seen == [[("write", head)]]  # out before the first event
    assert transport.writes == [
        ("write", head),
        ("write", b"9\r\ndata: 1\n\n\r\n"),
        ("write", b"0\r\n\r\n"),
    ]


@pytest.mark.mcpkit_protocol
async def test_a_large_chunk_is_framed_beside_it_not_copied():
    async def app(scope: Any, receive: Any, send: Any) -> None:
        await receive()
        headers = [(b"content-type", b"text/event-stream")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": LARGE, "more_body": True})
        await send({"type": "http.response.body", "body": LARGE})

    transport = await serve_one(app)
    head, first, last = transport.writes
    assert head[0] == "write" and head[1].endswith(b"transfer-encoding: chunked\r\n\r\n")
    assert first == ("writelines", [b"100000\r\n", LARGE, b"\r\n"])
    assert first[1][1] is LARGE and last[1][1] is LARGE
    assert last == ("writelines", [b"100000\r\n", LARGE, b"\r\n0\r\n\r\n"])


@pytest.mark.mcpkit_protocol
async def test_a_head_still_waiting_is_written_before_the_connection_closes():
    async def app(scope: Any, receive: Any, send: Any) -> None:
        await receive()
        headers = [(b"content-length", b"5")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        raise RuntimeError("the body never comes")

    transport = await serve_one(app)
    assert transport.writes == [("write", b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\n")]
    assert transport.closed


@pytest.mark.mcpkit_protocol
async def test_a_request_leaves_no_reference_cycle():
    """mcpkit keeps each request's binding, which holds the cycle's ``send``, in the task's
    context; a cycle that kept its task would close a loop of references per request, which
    only the garbage collector frees (a collection every few dozen requests)."""
    held: contextvars.ContextVar[Any] = contextvars.ContextVar("held")

    async def app(scope: Any, receive: Any, send: Any) -> None:
        held.set(send)
        await receive()
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    gc.collect()
    gc.disable()
    try:
        await serve_one(app)
        for _ in range(3):  # the loop's callbacks of the finished task run and let it go
            await asyncio.sleep(0)
        gc.set_debug(gc.DEBUG_SAVEALL)  # what a collection finds stays in gc.garbage
        gc.collect()
        left = sorted({type(o).__name__ for o in gc.garbage} & {"RequestCycle", "Task"})
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert left == []


def test_the_header_checks_give_uvicorns_verdict_for_every_byte():
    """The translate tables say of each byte what uvicorn's two regular expressions say: a
    name or value is refused exactly when one of its bytes is (each pattern is a class)."""
    from uvicorn.protocols.http.httptools_impl import HEADER_RE, HEADER_VALUE_RE

    from mcpkit.transports.http._server.cycle import _INVALID_NAME_BYTES, _INVALID_VALUE_BYTES

    for table, pattern in (
        (_INVALID_NAME_BYTES, HEADER_RE),
        (_INVALID_VALUE_BYTES, HEADER_VALUE_RE),
    ):
        for byte in range(256):
            text = b"ok" + bytes((byte,)) + b"ok"
            assert (0 in text.translate(table)) == bool(pattern.search(text)), (pattern, byte)


@pytest.mark.mcpkit_protocol
async def test_header_lines_known_again_give_the_map_header_map_makes():
    """Each request on a kept-alive connection gets, from the protocol, the header map
    ``header_map`` would make of its headers: lines equal to the request before's are taken
    as made then, changed ones (a new length, another case, trailing blanks) made anew."""
    from mcpkit.transports.http import McpAsgiApp
    from mcpkit.transports.http._asgi import DECODED_HEADERS_KEY, header_map

    maps: list[tuple[dict[str, str], dict[str, str], list[Any]]] = []

    class Recording(McpAsgiApp):  # taken for mcpkit's app: the protocol decodes for it
        def __init__(self) -> None:
            pass

        async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
            fresh = {key: value for key, value in scope.items() if key != DECODED_HEADERS_KEY}
            maps.append((header_map(scope), header_map(fresh), list(scope["headers"])))
            await receive()
            await send({"type": "http.response.start", "status": 204, "headers": []})
            await send({"type": "http.response.body", "body": b""})

    app = Recording()

    def request(*lines: bytes) -> bytes:
        return (
            b"POST /x HTTP/1.1\r\nHost: a\r\n"
            + b"".join(line + b"\r\n" for line in lines)
            + b"\r\n"
        )

    first = request(b"Content-Length: 0", b"Mcp-Name: add", b"X-Thing: \xe9t\xe9")
    transport = RecordingTransport()
    protocol = connected(app, transport)
    for data in (
        first,
        first,
        request(b"Content-Length: 0", b"MCP-NAME: add", b"X-Thing: \xe9t\xe9  "),
        request(b"Content-Length: 0", b"Mcp-Name: sub"),
        first,
    ):
        protocol.data_received(data)
        await asyncio.wait_for(asyncio.gather(*protocol.tasks), 5)
        await asyncio.sleep(0)
    for _ in range(2):  # Expect: 100-continue, the second time from a line known again
        protocol.data_received(request(b"Content-Length: 2", b"Expect: 100-continue"))
        await asyncio.sleep(0.01)  # the app waits in receive: the 100 goes out
        protocol.data_received(b"{}")
        await asyncio.wait_for(asyncio.gather(*protocol.tasks), 5)
    protocol.connection_lost(None)
    continues = [data for _, data in transport.writes if b"100 Continue" in data]
    assert len(continues) == 2
    del maps[5:]
    for made, remade, _ in maps:
        assert made == remade
    assert maps[0][0] == {"host": "a", "content-length": "0", "mcp-name": "add", "x-thing": "été"}
    assert maps[2][0] == maps[0][0]  # another case, blanks after the value: the same header
    assert maps[3][0]["mcp-name"] == "sub" and "x-thing" not in maps[3][0]
    assert maps[4][2] == maps[0][2]
    # the second request's lines were known again: taken as made for the first, not remade
    assert all(a is b for a, b in zip(maps[0][2], maps[1][2], strict=True))


def test_header_map_reads_headers_a_middleware_changed():
    """The decoded map is taken only while the scope's headers are those it was made of."""
    from mcpkit.transports.http._asgi import DECODED_HEADERS_KEY, header_map

    headers = [(b"host", b"a"), (b"authorization", b"Bearer one")]
    scope = {"headers": headers, DECODED_HEADERS_KEY: (headers[:], {"host": "a", "x": "stale"})}
    assert header_map(scope) == {"host": "a", "x": "stale"}  # unchanged: the server's map
    headers[1] = (b"authorization", b"Bearer two")  # changed in place
    assert header_map(scope) == {"host": "a", "authorization": "Bearer two"}
    scope["headers"] = [*headers, (b"x-added", b"1")]
    assert header_map(scope)["x-added"] == "1"
