"""The sockets mcpkit's HTTP servers listen on (``serve_http``, ``app.run("http")``, ``mcpkit
run``, each worker of ``--workers``) hand out connections with Nagle's algorithm off.

asyncio sets ``TCP_NODELAY`` only on connections accepted from a socket whose protocol is
``IPPROTO_TCP``; a socket made as ``socket.socket(family, SOCK_STREAM)`` says 0, and on the
asyncio loop (Windows, PyPy, ``loop="asyncio"``) every answer written in two pieces then
waited for the client's delayed ACK, ~40 ms a request. uvloop sets it on any socket. Checked
here as uvicorn uses the socket: ``loop.create_server(sock=...)``, a real connection."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable, Coroutine
from typing import Any

import pytest

from mcpkit.transports.http._server.process import bind_http_socket
from mcpkit.transports.http._server.workers import bind_worker_sockets


def _loops() -> list[Any]:
    loops: list[Any] = [pytest.param(asyncio.run, id="asyncio")]
    try:
        import uvloop
    except ImportError:  # Windows, PyPy: the asyncio loop alone
        return loops
    return [*loops, pytest.param(uvloop.run, id="uvloop")]


def _accepted_nodelay(sock: socket.socket, run: Callable[[Coroutine[Any, Any, int]], int]) -> int:
    """``TCP_NODELAY`` of a connection the event loop accepted from ``sock``."""

    async def accept_one() -> int:
        loop = asyncio.get_running_loop()
        accepted: asyncio.Future[int] = loop.create_future()

        class Recorder(asyncio.Protocol):
            def connection_made(self, transport: asyncio.BaseTransport) -> None:
                raw = transport.get_extra_info("socket")
                accepted.set_result(raw.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))

        server = await loop.create_server(Recorder, sock=sock)
        try:
            _, writer = await asyncio.open_connection(*sock.getsockname()[:2])
            try:
                return await asyncio.wait_for(accepted, 5)
            finally:
                writer.close()
        finally:
            server.close()
            await server.wait_closed()

    return run(accept_one())


@pytest.mark.parametrize("run", _loops())
def test_a_served_socket_turns_nagle_off_on_its_connections(run: Any) -> None:
    sock = bind_http_socket("127.0.0.1", 0)
    assert sock.proto == socket.IPPROTO_TCP
    assert _accepted_nodelay(sock, run) != 0


@pytest.mark.parametrize("run", _loops())
def test_every_workers_socket_turns_nagle_off_on_its_connections(run: Any) -> None:
    sockets = bind_worker_sockets("127.0.0.1", 0, 2)
    try:
        for sock in sockets:
            assert sock.proto == socket.IPPROTO_TCP
            assert _accepted_nodelay(sock, run) != 0
    finally:
        for sock in sockets:
            sock.close()
