"""A client that stops reading cannot hold a large JSON answer in the server's memory for
ever: the answer goes in pieces, each to be taken within ``sse_write_timeout``, and past it
the answer is dropped and the connection closed. A client that reads gets all of it. An
answer past ``max_answer_bytes`` is replaced by a -32603 error naming the bound."""

from __future__ import annotations

import asyncio
import json
import socket

import httpx

from mcpkit import McpServerApp, mcp_tool
from tests.http_server import serving

SIZE = 4 * 1024 * 1024
ACCEPT = {"accept": "application/json"}


@mcp_tool
def big() -> str:
    return "x" * SIZE


def _call(request_id: int = 1) -> dict:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": "big", "arguments": {}},
    }


async def _post_and_stop_reading(url: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    host, port = url.split("//", 1)[1].split("/", 1)[0].split(":")
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # fills at once
    sock.connect((host, int(port)))
    reader, writer = await asyncio.open_connection(sock=sock, limit=SIZE * 2)
    body = json.dumps(_call()).encode()
    writer.write(
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Accept: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
    )
    await writer.drain()
    # asyncio's transport would read into its own buffer: stop it, as a stalled client.
    writer.transport.pause_reading()
    return reader, writer


async def test_a_client_that_stops_reading_loses_its_answer_and_connection():
    app = McpServerApp(big)
    async with serving(app, stateless=True, sse_write_timeout=0.5) as (url, asgi):
        reader, writer = await _post_and_stop_reading(url)
        try:
            watch = asgi.streamable.requests.of(asyncio.get_running_loop())
            async with asyncio.timeout(10):  # the request is given up, its memory freed
                while not watch._requests:
                    await asyncio.sleep(0.02)
                while watch._requests:
                    await asyncio.sleep(0.05)
            writer.transport.resume_reading()
            async with asyncio.timeout(10):
                head = await reader.readuntil(b"\r\n\r\n")
                length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
                received = await reader.read()  # to the end: the server closed the connection
            assert length > SIZE and len(received) < length
        finally:
            writer.close()
        # The server goes on serving, a reader gets the whole answer.
        async with httpx.AsyncClient(timeout=30) as http:
            answer = await http.post(url, json=_call(2), headers=ACCEPT)
        assert len(answer.json()["result"]["content"][0]["text"]) == SIZE


async def test_an_answer_past_max_answer_bytes_is_an_error_naming_it():
    app = McpServerApp(big)
    async with (
        serving(app, stateless=True, max_answer_bytes=SIZE // 2) as (url, _),
        httpx.AsyncClient(timeout=30) as http,
    ):
        answer = await http.post(url, json=_call(), headers=ACCEPT)
    error = answer.json()["error"]
    assert answer.status_code == 200 and error["code"] == -32603
    assert "max_answer_bytes" in error["message"] and error["data"]["limit"] == SIZE // 2
