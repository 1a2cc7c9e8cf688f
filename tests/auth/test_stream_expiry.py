"""A Streamable HTTP GET stream lasts as long as the token it came with: at the token's
``exp`` the server ends the response (as it closes a WebSocket then), and nothing sent to
the session after that reaches the holder of the expired token. The client comes back with
a fresh token and ``Last-Event-ID``, and what was sent meanwhile is replayed to it.

In one process (the session's own stream) and across two instances sharing a real
redis-server (the relayed stream), over raw HTTP; and with mcpkit's client, which comes
back by itself with the token its challenge handler gives. Real uvicorn on 127.0.0.1, real
signed tokens.
"""

from __future__ import annotations

import asyncio
import base64
import json
import time
from typing import Any

import httpx
import pytest

from mcpkit import McpClient, McpServerApp
from mcpkit.auth import JwtVerifier
from mcpkit.client import HttpClientTransportOptions, HttpTransportMode
from mcpkit.protocol import SseDecoder
from tests.auth._support import ISSUER, Signer
from tests.auth.test_server_gate import AUDIENCE, make_config
from tests.auth.test_session_isolation import (
    Isolation,
    Session,
    bearer,
    protected,
    text_of,
    two_instances,
)
from tests.http_server import serving
from tests.redis_server import needs_redis

WAIT = 10.0
SCOPE = "mcp:read mcp:write"

pytestmark = pytest.mark.timeout(90)


def expiry_of(token: str) -> int:
    return int(json.loads(base64.urlsafe_b64decode(token.split(".")[1] + "=="))["exp"])


async def read_until_ended(
    http: httpx.AsyncClient, url: str, headers: dict[str, str]
) -> tuple[str | None, list[dict[str, Any]]]:
    """A GET stream read to its end: the last event id it gave (the priming event's
    included) and the messages it carried."""
    last_id: str | None = None
    messages: list[dict[str, Any]] = []
    decoder = SseDecoder()
    async with http.stream("GET", url, headers=headers, timeout=httpx.Timeout(WAIT)) as response:
        assert response.status_code == 200, await response.aread()
        async for chunk in response.aiter_bytes():
            for event in decoder.feed(chunk):
                if event.id:
                    last_id = event.id
                if event.data:
                    messages.append(json.loads(event.data))
    return last_id, messages


async def replayed_after(
    http: httpx.AsyncClient, url: str, headers: dict[str, str], text: str
) -> dict[str, Any]:
    """The message of the resumed GET stream whose data is ``standalone:text``."""
    decoder = SseDecoder()
    async with http.stream("GET", url, headers=headers, timeout=httpx.Timeout(WAIT)) as response:
        assert response.status_code == 200, await response.aread()
        async for chunk in response.aiter_bytes():
            for event in decoder.feed(chunk):
                message = json.loads(event.data) if event.data else None
                if message and message.get("params", {}).get("data") == f"standalone:{text}":
                    return dict(message)
    raise AssertionError(f"the stream ended without {text!r}")


async def check_the_stream_ends_at_expiry(
    http: httpx.AsyncClient, signer: Signer, listen_url: str, call_url: str
) -> None:
    short = signer.token(audience=AUDIENCE, scope=SCOPE, lifetime=2)
    fresh = bearer(signer.token(audience=AUDIENCE, scope=SCOPE))
    alice = await Session(http, call_url, fresh).open()
    get_headers = alice.headers(bearer(short), accept="text/event-stream")
    async with asyncio.timeout(WAIT):
        last_id, seen = await read_until_ended(http, listen_url, get_headers)
    # Ended by the server (the read above returned), not before the token's exp.
    assert time.time() >= expiry_of(short) - 0.1
    assert seen == []
    assert last_id is not None  # 2025-11-25: primed, so resumable

    # Sent to her session while no stream is open, then replayed to her fresh token.
    assert text_of(await alice.call("shout", {"text": "later"})) == "shouted"
    resumed = alice.headers(accept="text/event-stream", **{"last-event-id": last_id})
    async with asyncio.timeout(WAIT):
        message = await replayed_after(http, listen_url, resumed, "later")
    assert message["method"] == "notifications/message"
    # The session itself is served on.
    assert (await alice.whoami())["session"] == alice.session_id


async def test_a_get_stream_ends_when_its_token_expires(signer):
    async with asyncio.timeout(60), protected(McpServerApp(Isolation), signer) as (url, http):
        await check_the_stream_ends_at_expiry(http, signer, url, url)


@needs_redis
async def test_a_relayed_get_stream_ends_when_its_token_expires(signer, redis_server):
    redis_server.flush()
    async with (
        asyncio.timeout(60),
        two_instances(signer, redis_server.url, "stream-expiry") as (http, (a, b), _),
    ):
        # The stream is read on B, the session's calls made on A.
        await check_the_stream_ends_at_expiry(http, signer, b, a)


async def test_mcpkit_client_listens_on_with_a_fresh_token(signer):
    # No leeway: past its exp the short token is refused, so the stream's reconnection
    # meets the 401 whose challenge hands the client the fresh one. Nothing else asks.
    verifier = JwtVerifier(jwks=signer.jwks(), issuer=ISSUER, audience=None, leeway=0)
    config = make_config(signer, verify=verifier.verify)
    short = signer.token(audience=AUDIENCE, scope=SCOPE, lifetime=2)
    fresh = signer.token(audience=AUDIENCE, scope=SCOPE)
    challenged = asyncio.Event()

    def renew(challenge: str) -> str:
        assert "invalid_token" in challenge
        challenged.set()
        return f"Bearer {fresh}"

    changed = asyncio.Event()
    app = McpServerApp(Isolation)
    async with asyncio.timeout(60), serving(app, bearer_auth=config) as (url, _):
        options = HttpClientTransportOptions(
            endpoint=url,
            transport_mode=HttpTransportMode.STREAMABLE_HTTP,
            additional_headers=bearer(short),
            auth_challenge_handler=renew,
        )
        async with McpClient.http(
            options, protocol_mode="legacy", on_list_changed=lambda *_: changed.set()
        ) as client:
            async with asyncio.timeout(WAIT):
                await challenged.wait()  # the stream ended at exp and came back
            assert time.time() >= expiry_of(short) - 0.1

            @app.tool()
            def added() -> str:
                return "added"

            async with asyncio.timeout(WAIT):
                await changed.wait()  # heard on the stream the fresh token opened
            assert [tool.name for tool in await client.list_tools()].count("added") == 1
