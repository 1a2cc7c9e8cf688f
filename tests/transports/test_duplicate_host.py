"""A request with more than one Host header is refused 400 (RFC 9112), on every bind and
whatever Host checking is on: the header map keeps the last one, while whatever sits in front
may have judged, or routed by, the first. Raw requests over a real socket (httpx will not
send two Host headers); a header other than Host repeated is still served."""

from __future__ import annotations

import asyncio
import json

import pytest

from mcpkit import McpServerApp, mcp_tool
from mcpkit.transports.http import TransportSecuritySettings
from mcpkit.transports.http._security import TransportSecurityGuard, repeats_host
from tests.http_server import serving
from tests.wire import initialize_request

BODY = json.dumps(initialize_request("2025-11-25")).encode()


@mcp_tool
def add(a: int, b: int) -> int:
    return a + b


async def raw_post(url: str, header_lines: list[str]) -> tuple[int, bytes]:
    """POST an initialize to ``url`` with exactly ``header_lines`` (Host included, or not):
    the answer's status and body."""
    host, port = url.split("//", 1)[1].split("/", 1)[0].split(":")
    head = "\r\n".join(
        [
            "POST /mcp HTTP/1.1",
            *header_lines,
            "Content-Type: application/json",
            "Accept: application/json, text/event-stream",
            f"Content-Length: {len(BODY)}",
            "Connection: close",
        ]
    )
    reader, writer = await asyncio.open_connection(host, int(port))
    try:
        writer.write(head.encode() + b"\r\n\r\n" + BODY)
        await writer.drain()
        async with asyncio.timeout(5):
            answer = await reader.read()
    finally:
        writer.close()
    status_line, _, rest = answer.partition(b"\r\n")
    return int(status_line.split()[1]), rest.partition(b"\r\n\r\n")[2]


@pytest.mark.parametrize(
    "hosts",
    [
        ["127.0.0.1", "evil.example"],
        ["evil.example", "127.0.0.1"],
        ["127.0.0.1", "127.0.0.1"],
    ],
)
@pytest.mark.parametrize("protection", [None, False])
async def test_two_host_headers_are_refused_400(hosts: list[str], protection: bool | None) -> None:
    security = TransportSecuritySettings(enable_dns_rebinding_protection=protection)
    app = McpServerApp(add)
    async with asyncio.timeout(30), serving(app, transport_security=security) as (url, _):
        status, body = await raw_post(url, [f"Host: {host}" for host in hosts])
        assert status == 400
        error = json.loads(body)["error"]
        assert error["code"] == -32600 and "more than one Host header" in error["message"]
        # one Host, another header repeated: served
        status, _ = await raw_post(url, ["Host: 127.0.0.1", "X-Trace: a", "X-Trace: b"])
        assert status == 200


def test_the_check_reads_the_raw_list_only_when_a_header_repeats() -> None:
    guard = TransportSecurityGuard(TransportSecuritySettings(), "127.0.0.1")
    one = [(b"host", b"127.0.0.1")]
    assert guard.check("GET", {"host": "127.0.0.1"}, one) is None

    class Untouchable(list[tuple[bytes, bytes]]):
        def __iter__(self):  # type: ignore[no-untyped-def]
            raise AssertionError("the raw headers were walked with no header repeated")

    assert guard.check("GET", {"host": "127.0.0.1"}, Untouchable(one)) is None
    two = [(b"host", b"127.0.0.1"), (b"host", b"127.0.0.1")]
    assert guard.check("GET", {"host": "127.0.0.1"}, two) == (
        400,
        "Bad Request: more than one Host header",
    )
    assert repeats_host(two) and not repeats_host([(b"accept", b"a"), (b"accept", b"b")])


async def test_a_websocket_upgrade_with_two_host_headers_is_refused() -> None:
    async with asyncio.timeout(30), serving(McpServerApp(add)) as (url, _):
        host, port = url.split("//", 1)[1].split("/", 1)[0].split(":")

        async def upgrade(*hosts: str) -> bytes:
            head = "\r\n".join(
                [
                    "GET /mcp/ws HTTP/1.1",
                    *(f"Host: {h}" for h in hosts),
                    "Upgrade: websocket",
                    "Connection: Upgrade",
                    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
                    "Sec-WebSocket-Version: 13",
                ]
            )
            reader, writer = await asyncio.open_connection(host, int(port))
            try:
                writer.write(head.encode() + b"\r\n\r\n")
                async with asyncio.timeout(5):
                    return await reader.readline()
            finally:
                writer.close()

        assert b" 101 " in await upgrade("127.0.0.1")
        # the last Host (the one the map keeps) is fine: refused all the same, before accept
        assert b" 403 " in await upgrade("evil.example", "127.0.0.1")
