"""What an authorization server answers the client is read only as far as its bound: a
token endpoint, a registration endpoint that answers without end gets an ``OAuthError``,
and no more than ``MAX_AUTH_RESPONSE_BYTES`` of it is read. The server is a raw socket on
127.0.0.1 that counts what it manages to write."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from mcpkit.auth import OAuthError
from mcpkit.auth.client import OAuthClientProvider
from mcpkit.auth.client._responses import MAX_AUTH_RESPONSE_BYTES

#: What the flooding endpoint would send in all; a client that reads it all fails the test.
FLOOD_BYTES = 128 * 1024 * 1024
CHUNK = b" " * 65536


class Flooder:
    """Serves the resource and authorization server metadata, and answers a POST to
    ``flooded`` with 200 and ``FLOOD_BYTES`` of body, as fast as the client reads it."""

    def __init__(self, flooded: str) -> None:
        self.flooded = flooded
        self.base = ""
        self.written = 0
        self.flood_over = asyncio.Event()

    def metadata(self, path: str) -> dict[str, Any] | None:
        if path.startswith("/.well-known/oauth-protected-resource"):
            return {"resource": f"{self.base}/mcp", "authorization_servers": [self.base]}
        if path == "/.well-known/oauth-authorization-server":
            return {
                "issuer": self.base,
                "token_endpoint": f"{self.base}/token",
                "registration_endpoint": f"{self.base}/register",
            }
        return None

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
                method, path, _ = head.split("\r\n", 1)[0].split(" ")
                length = 0
                for line in head.split("\r\n")[1:]:
                    name, _, value = line.partition(":")
                    if name.strip().lower() == "content-length":
                        length = int(value)
                await reader.readexactly(length)
                if method == "POST" and path == self.flooded:
                    await self.flood(writer)
                    return
                doc = self.metadata(path) if method == "GET" else None
                body = json.dumps(doc).encode() if doc is not None else b"{}"
                status = "200 OK" if doc is not None else "404 Not Found"
                writer.write(
                    f"HTTP/1.1 {status}\r\ncontent-type: application/json\r\n"
                    f"content-length: {len(body)}\r\n\r\n".encode()
                    + body
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def flood(self, writer: asyncio.StreamWriter) -> None:
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
            + f"content-length: {FLOOD_BYTES}\r\n\r\n".encode()
        )
        try:
            while self.written < FLOOD_BYTES:
                writer.write(CHUNK)
                await writer.drain()
                self.written += len(CHUNK)
        except ConnectionError:
            pass  # the client hung up: what it read is counted
        finally:
            self.flood_over.set()


@contextlib.asynccontextmanager
async def flooding(flooded: str) -> AsyncIterator[Flooder]:
    flooder = Flooder(flooded)
    server = await asyncio.start_server(flooder.serve, "127.0.0.1", 0)
    flooder.base = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    async with server:
        yield flooder


@pytest.mark.parametrize(
    ("flooded", "credentials"),
    [
        ("/token", {"client_id": "reporting", "client_secret": "s3cret"}),
        ("/register", {}),
    ],
)
async def test_an_endless_answer_is_refused_after_its_bound(flooded, credentials):
    async with asyncio.timeout(60), flooding(flooded) as flooder:
        provider = OAuthClientProvider(
            f"{flooder.base}/mcp", grant_type="client_credentials", **credentials
        )
        async with provider:
            with pytest.raises(OAuthError, match="larger than"):
                await provider.ensure_token()
        await flooder.flood_over.wait()
    # the socket buffers hold a few MiB more than the client read; the rest was never sent
    assert MAX_AUTH_RESPONSE_BYTES < flooder.written < FLOOD_BYTES // 4
