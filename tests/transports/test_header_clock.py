"""The header bounds ``mcpkit run`` and ``serve_http`` put around uvicorn's HTTP protocol, in
process: a connection is timed against ``header_read_timeout`` from its opening and from the
first bytes of each kept-alive request until its headers end (idle between requests, uvicorn's
keep-alive times it); it leaves the server's clock when it closes, becomes a WebSocket or
sends what is not HTTP (uvicorn answers that); the sweep closes one past its time and spares
the rest; headers past ``max_header_bytes`` are answered 431, a body never counts. And
``serve_http``
turns uvicorn's access log off unless its log level shows it, and sends no ``server``
header unless asked."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import uvicorn
from uvicorn.server import ServerState

from mcpkit.transports.http import StreamableHttpServerOptions
from mcpkit.transports.http._server.protocol import uvicorn_http_protocol
from tests.transports._fake_transport import RecordingTransport

REQUEST = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-length: 2\r\n\r\n{}"


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    await receive()
    if scope["type"] == "websocket":
        await send({"type": "websocket.close"})
        return
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"ok"})


def protocol_class(timeout: float | None, limit: int = 8192) -> Any:
    options = StreamableHttpServerOptions(header_read_timeout=timeout, max_header_bytes=limit)
    return uvicorn_http_protocol(options)["http"]


def connect(cls: Any, keep_alive: float = 5) -> tuple[Any, RecordingTransport]:
    config = uvicorn.Config(app, lifespan="off", log_level="warning", timeout_keep_alive=keep_alive)
    config.load()
    protocol = cls(config=config, server_state=ServerState(), app_state={})
    transport = RecordingTransport()
    protocol.connection_made(transport)
    return protocol, transport


async def answered(transport: RecordingTransport) -> bytes:
    for _ in range(50):
        if transport.written:
            break
        await asyncio.sleep(0)
    return transport.written


async def test_timed_while_headers_come_not_after_and_forgotten_when_closed():
    cls = protocol_class(10)
    clock = cls.clock
    protocol, transport = connect(cls)
    assert protocol in clock.connections and protocol.clock_since is not None  # silent: timed
    protocol.data_received(REQUEST)
    assert protocol.clock_since is None  # headers complete
    assert (await answered(transport)).startswith(b"HTTP/1.1 200")
    assert protocol.clock_since is None  # idle between requests: uvicorn's keep-alive times it
    protocol.data_received(b"POST /mcp HTTP/1.1\r\nHost: ")
    # the next request's headers are coming: timed against the header time
    assert protocol.clock_since is not None and protocol.clock_limit == clock.header_limit
    protocol.connection_lost(None)
    assert protocol not in clock.connections


async def test_the_sweep_closes_only_a_connection_past_its_time():
    cls = protocol_class(0.08)
    slow, slow_transport = connect(cls)
    done, done_transport = connect(cls)
    done.data_received(REQUEST)
    trickling, trickling_transport = connect(cls)
    trickling.data_received(b"POST /mcp HTTP/1.1\r\n")
    await asyncio.sleep(0.3)
    assert slow_transport.closed and trickling_transport.closed and not done_transport.closed
    assert (await answered(done_transport)).startswith(b"HTTP/1.1 200")
    for protocol in (slow, done, trickling):
        protocol.connection_lost(None)
    assert not cls.clock.connections


async def test_uvicorn_times_the_idle_connection_with_its_keep_alive():
    cls = protocol_class(0.04)
    idle, idle_transport = connect(cls, keep_alive=0.05)
    kept, kept_transport = connect(cls, keep_alive=30)
    idle.data_received(REQUEST)
    kept.data_received(REQUEST)
    await asyncio.sleep(0.3)
    assert idle_transport.written.startswith(b"HTTP/1.1 200") and idle_transport.closed
    assert kept_transport.written.startswith(b"HTTP/1.1 200") and not kept_transport.closed
    idle.connection_lost(None)
    kept.connection_lost(None)


@pytest.mark.parametrize("pieces", [1, 7])
async def test_headers_past_the_bound_get_431_and_the_app_is_not_called(pieces):
    cls = protocol_class(10, limit=200)
    protocol, transport = connect(cls)
    request = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * 300 + b"\r\n\r\n"
    size = -(-len(request) // pieces)
    for at in range(0, len(request), size):
        if transport.closed:
            break
        protocol.data_received(request[at : at + size])
    assert transport.written.startswith(b"HTTP/1.1 431 ") and transport.closed
    assert protocol not in cls.clock.connections
    protocol.connection_lost(None)


async def test_a_body_past_the_header_bound_is_no_header():
    cls = protocol_class(10, limit=200)
    protocol, transport = connect(cls)
    body = b"x" * 1000
    head = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-length: 1000\r\n\r\n"
    protocol.data_received(head + body[:500])
    protocol.data_received(body[500:])
    assert (await answered(transport)).startswith(b"HTTP/1.1 200")
    protocol.data_received(REQUEST)  # kept alive: the next request's headers count from 0
    assert not transport.closed
    protocol.connection_lost(None)


async def test_a_websocket_upgrade_leaves_the_clock():
    cls = protocol_class(10)
    protocol, transport = connect(cls)
    protocol.data_received(
        b"GET /mcp/ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    )
    assert transport.protocol is not None and transport.protocol is not protocol
    assert protocol not in cls.clock.connections


async def test_a_malformed_request_is_uvicorns_to_answer():
    cls = protocol_class(10)
    protocol, transport = connect(cls)
    protocol.data_received(b"NOT HTTP AT ALL\r\n\r\n")
    assert transport.written.startswith(b"HTTP/1.1 400 ") and transport.closed
    assert protocol not in cls.clock.connections
    protocol.connection_lost(None)


async def test_without_a_timeout_nothing_is_timed():
    cls = protocol_class(None)
    assert cls.clock is None
    protocol, _ = connect(cls)
    protocol.data_received(b"POST /mcp HTTP/1.1\r\nHost: ")
    assert protocol.clock_since is None


def served_config(monkeypatch: pytest.MonkeyPatch, given: dict[str, Any]) -> Any:
    """The uvicorn ``Config`` that ``run_http_server`` serves with, given ``given``."""
    from mcpkit import McpServerApp
    from mcpkit.transports.http._server.serve import run_http_server

    seen: dict[str, Any] = {}

    def run(server: Any, sockets: Any = None) -> None:
        seen["config"] = server.config
        server.started = True

    monkeypatch.setattr(uvicorn.Server, "run", run)
    run_http_server(McpServerApp("quiet"), StreamableHttpServerOptions(port=0), **given)
    return seen["config"]


@pytest.mark.parametrize(
    ("given", "access_log"),
    [
        ({}, False),
        ({"log_level": "info"}, True),
        ({"log_level": "trace"}, True),
        ({"log_level": "debug", "access_log": False}, False),
        ({"access_log": True}, True),
    ],
)
def test_serve_http_keeps_the_access_log_only_where_its_level_shows_it(
    monkeypatch, given, access_log
):
    assert served_config(monkeypatch, given).access_log is access_log


@pytest.mark.parametrize(("given", "sent"), [({}, False), ({"server_header": True}, True)])
def test_serve_http_names_no_server_unless_asked(monkeypatch, given, sent):
    assert served_config(monkeypatch, given).server_header is sent
