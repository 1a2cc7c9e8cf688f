"""``EndpointMemory``: what HTTP clients found out about a server (its era, its transport) is
kept by an object, keyed by endpoint and credentials, never by the process.

* By default each client keeps its own: a second client probes again.
* Clients given one memory share it, but only between the same credentials (a different
  ``Authorization`` or auth provider is another key).
* The memory is bounded and forgets the least recently used entry first.

Real sockets on 127.0.0.1: a handshake-only server (404 for ``server/discover``) in front of
mcpkit's, recording which ``Authorization`` each probe carried.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from mcpkit import McpClient, McpServerApp, mcp_server, mcp_tool
from mcpkit.client import EndpointMemory, HttpClientTransportOptions, HttpTransportMode
from mcpkit.client._http_factory import AutoDetectHttpTransport
from mcpkit.protocol import Era
from mcpkit.transports.http import StreamableHttpServerOptions, create_asgi_app
from tests.http_server import serve_asgi
from tests.raw_asgi import NoDiscover

TEST_TIMEOUT = 20.0
HANDSHAKE = (Era.HANDSHAKE, "2025-11-25")


@mcp_server(name="echo")
class Echo:
    @mcp_tool(description="Says the text back")
    def echo(self, text: str) -> str:
        return text


@pytest.fixture
async def server() -> AsyncIterator[tuple[str, NoDiscover]]:
    app = McpServerApp(Echo())
    await app.start()
    wrapped = NoDiscover(create_asgi_app(app, StreamableHttpServerOptions(port=0)))
    try:
        async with serve_asgi(wrapped) as base:
            yield base + "/mcp", wrapped
    finally:
        await app.stop()


def as_user(
    url: str, token: str, memory: EndpointMemory | None = None
) -> HttpClientTransportOptions:
    return HttpClientTransportOptions(
        endpoint=url, additional_headers={"Authorization": token}, endpoint_memory=memory
    )


async def connect_and_echo(options: HttpClientTransportOptions) -> AutoDetectHttpTransport:
    """Connect, call a tool, close; the client's transport."""
    async with asyncio.timeout(TEST_TIMEOUT), McpClient.http(options) as client:
        assert client.era is Era.HANDSHAKE
        result = await client.call_tool("echo", {"text": "hi"})
        assert result.content[0].text == "hi"  # type: ignore[union-attr]
        transport = client.session.stream
        assert isinstance(transport, AutoDetectHttpTransport)
        return transport


async def test_by_default_each_client_keeps_its_own_memory(
    server: tuple[str, NoDiscover],
) -> None:
    url, seen = server
    first = await connect_and_echo(as_user(url, "Bearer alice"))
    second = await connect_and_echo(as_user(url, "Bearer alice"))
    assert first.endpoint_memory is not second.endpoint_memory
    assert first.endpoint_memory.detected_era(first.memory_key) == HANDSHAKE
    assert seen.probes("Bearer alice") == 2  # nothing learned by the first reached the second


async def test_different_authorization_does_not_share_a_shared_memory(
    server: tuple[str, NoDiscover],
) -> None:
    url, seen = server
    memory = EndpointMemory()
    alice, bob = as_user(url, "Bearer alice", memory), as_user(url, "Bearer bob", memory)
    alice_key, bob_key = EndpointMemory.key(alice), EndpointMemory.key(bob)
    assert alice_key != bob_key
    assert "alice" not in alice_key and "Bearer" not in alice_key  # a digest, no secret

    await connect_and_echo(alice)
    assert memory.detected_era(alice_key) == HANDSHAKE
    assert memory.detected_mode(alice_key) is HttpTransportMode.STREAMABLE_HTTP
    assert memory.detected_era(bob_key) is None  # Alice's answer is not Bob's
    assert memory.detected_mode(bob_key) is None

    await connect_and_echo(bob)
    assert seen.probes("Bearer alice") == 1
    assert seen.probes("Bearer bob") == 1  # Bob probed for himself
    assert memory.detected_era(bob_key) == HANDSHAKE


async def test_a_shared_memory_lets_the_same_credentials_skip_the_probe(
    server: tuple[str, NoDiscover],
) -> None:
    url, seen = server
    memory = EndpointMemory()
    first = await connect_and_echo(as_user(url, "Bearer alice", memory))
    seen.posts.clear()
    second = await connect_and_echo(as_user(url, "Bearer alice", memory))
    assert first.endpoint_memory is second.endpoint_memory is memory
    assert first.memory_key == second.memory_key
    assert seen.probes("Bearer alice") == 0
    assert seen.posts[0] == ("initialize", "Bearer alice")  # straight to the remembered era


class Provider:
    """Stands for an ``OAuthClientProvider``: its bound methods are the hooks installed."""

    def apply(self, context: Any, headers: dict[str, str]) -> None:
        pass


async def test_the_key_follows_the_auth_provider_and_the_http_client() -> None:
    url = "http://127.0.0.1:1/mcp"
    provider = Provider()

    def with_hook(hook: Any) -> HttpClientTransportOptions:
        return HttpClientTransportOptions(endpoint=url, apply_per_request_headers=hook)

    bare = EndpointMemory.key(HttpClientTransportOptions(endpoint=url))
    # The same provider (a fresh bound method each time) is the same identity; another is not.
    assert EndpointMemory.key(with_hook(provider.apply)) == EndpointMemory.key(
        with_hook(provider.apply)
    )
    other = Provider()
    assert EndpointMemory.key(with_hook(provider.apply)) != EndpointMemory.key(
        with_hook(other.apply)
    )
    assert EndpointMemory.key(with_hook(provider.apply)) != bare
    # Header names are case-insensitive; the scheme and host are normalised, not the path.
    assert EndpointMemory.key(
        HttpClientTransportOptions(endpoint=url, additional_headers={"X-Key": "1"})
    ) == EndpointMemory.key(
        HttpClientTransportOptions(
            endpoint="HTTP://127.0.0.1:1/mcp", additional_headers={"x-key": "1"}
        )
    )
    assert EndpointMemory.key(HttpClientTransportOptions(endpoint=url + "/other")) != bare
    # An httpx client handed to the transport may carry credentials of its own.
    async with httpx.AsyncClient() as http_client:
        assert EndpointMemory.key(HttpClientTransportOptions(endpoint=url), http_client) != bare


def test_the_bound_forgets_the_least_recently_used_entry() -> None:
    memory = EndpointMemory(max_eras=2, max_modes=2)
    memory.remember_era("a", *HANDSHAKE)
    memory.remember_era("b", *HANDSHAKE)
    assert memory.detected_era("a") == HANDSHAKE  # a read is a use: "b" is now the oldest
    memory.remember_era("c", Era.MODERN, "2026-07-28")
    assert memory.detected_era("b") is None
    assert memory.detected_era("a") == HANDSHAKE
    assert memory.detected_era("c") == (Era.MODERN, "2026-07-28")

    memory.remember_mode("a", HttpTransportMode.SSE)
    memory.remember_mode("b", HttpTransportMode.STREAMABLE_HTTP)
    memory.remember_mode("a", HttpTransportMode.SSE)  # written again: "b" is the oldest
    memory.remember_mode("c", HttpTransportMode.STREAMABLE_HTTP)
    assert memory.detected_mode("b") is None
    assert memory.detected_mode("a") is HttpTransportMode.SSE

    memory.clear()
    assert memory.detected_era("a") is None and memory.detected_mode("c") is None
    with pytest.raises(ValueError):
        EndpointMemory(max_eras=0)


def test_the_bounds_default_to_the_named_constants() -> None:
    from mcpkit.client._endpoint_memory import MAX_CACHED_ERAS, MAX_CACHED_MODES

    memory = EndpointMemory()
    for n in range(MAX_CACHED_ERAS + 1):
        memory.remember_era(str(n), *HANDSHAKE)
    for n in range(MAX_CACHED_MODES + 1):
        memory.remember_mode(str(n), HttpTransportMode.SSE)
    assert memory.detected_era("0") is None and memory.detected_era("1") == HANDSHAKE
    assert memory.detected_mode("0") is None and memory.detected_mode("1") is not None
