"""``subscriptions/listen`` where one side does not speak 2026-07-28: every case answers or
fails at once, with an error of the right kind, instead of waiting out the request timeout.

* A handshake-era session that sends ``subscriptions/listen`` to an mcpkit server (in
  memory, over Streamable HTTP) gets -32601 naming the way its era does it; it used to be
  acknowledged and then held open unanswered until the client's request timeout.
* ``client.listen()`` in the handshake era is ``resources/subscribe``: a subscription the
  server refuses fails the block and undoes the ones made before it.
* A 2026-07-28 ``listen()`` that a server refuses (-32601, an HTTP 202 that can carry no
  answer) fails at once; one the server never acknowledges fails after the request timeout.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from mcpkit import McpCallError, McpClient, McpServerApp, RequestTimeoutError
from tests.client.test_modern_client import Scripted, discover_result
from tests.http_server import serve_asgi, serving
from tests.in_memory import serving_in_memory
from tests.raw_asgi import read_body, send_json, send_response

#: What the client would wait without an answer: far longer than any of these tests may take.
LONG_TIMEOUT = 120.0
#: What each case is given to answer or fail.
PROMPT = 5.0
LISTEN = {"notifications": {"toolsListChanged": True}}


def watched_app() -> McpServerApp:
    app = McpServerApp("watched")

    @app.resource("test://watched")
    def watched() -> str:
        return "watched"

    return app


# --------------------------------------------------------------------------- server side


@pytest.mark.parametrize("transport", ["memory", "http"])
async def test_a_handshake_era_listen_is_refused_at_once(transport: str) -> None:
    heard: list[str] = []

    async def check(client: McpClient) -> None:
        with pytest.raises(McpCallError) as refused:
            await asyncio.wait_for(client.request("subscriptions/listen", LISTEN), PROMPT)
        assert refused.value.code == -32601
        assert "2026-07-28" in refused.value.message
        assert "resources/subscribe" in refused.value.message
        # the session still works, and its listen() is served the handshake-era way
        async with client.listen(resource_subscriptions=["test://watched"]) as stream:
            assert stream.acknowledged == {"resourceSubscriptions": ["test://watched"]}

    def note(method: str, params: Any) -> None:
        heard.append(method)

    options: dict[str, Any] = {"request_timeout": LONG_TIMEOUT, "on_notification": note}
    if transport == "memory":
        async with serving_in_memory(watched_app()) as end, McpClient(end, **options) as client:
            await check(client)
    else:
        async with serving(watched_app()) as (url, _):
            async with McpClient.http(url, protocol_mode="legacy", **options) as client:
                await check(client)
    assert "notifications/subscriptions/acknowledged" not in heard


# --------------------------------------------------------------------------- handshake-era client


def handshake_server(refused_uri: str) -> Scripted:
    def answer(message: dict[str, Any]) -> dict[str, Any] | None:
        method = message["method"]
        if method == "initialize":
            return {
                "result": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"resources": {"subscribe": True}},
                    "serverInfo": {"name": "scripted", "version": "1"},
                }
            }
        if method == "resources/subscribe" and message["params"]["uri"] == refused_uri:
            return {"error": {"code": -32602, "message": f"Unknown resource {refused_uri}"}}
        return {"result": {}}

    return Scripted(answer)


async def test_a_refused_subscription_fails_listen_and_undoes_the_others() -> None:
    peer = handshake_server("test://missing")
    async with McpClient(peer, request_timeout=LONG_TIMEOUT) as client:
        with pytest.raises(McpCallError) as refused:
            async with asyncio.timeout(PROMPT):
                async with client.listen(
                    resource_subscriptions=["test://a", "test://missing", "test://b"]
                ):
                    pytest.fail("the block must not start")
        assert refused.value.code == -32602
    sent = [(m["method"], m["params"]["uri"]) for m in peer.requests if "uri" in m["params"]]
    assert sent == [
        ("resources/subscribe", "test://a"),
        ("resources/subscribe", "test://missing"),
        ("resources/unsubscribe", "test://a"),
    ]


# --------------------------------------------------------------------------- 2026-07-28 client


def modern_server(listen_answer: dict[str, Any] | None) -> Scripted:
    def answer(message: dict[str, Any]) -> dict[str, Any] | None:
        if message["method"] == "server/discover":
            return discover_result()
        return listen_answer

    return Scripted(answer)


async def test_a_listen_the_server_does_not_know_fails_at_once() -> None:
    """An older server answers -32601: there is nothing to fall back to in 2026-07-28
    (no ``resources/subscribe``), so the error is the caller's."""
    peer = modern_server({"error": {"code": -32601, "message": "Method not found"}})
    async with McpClient(peer, protocol_mode="modern", request_timeout=LONG_TIMEOUT) as client:
        with pytest.raises(McpCallError) as refused:
            async with asyncio.timeout(PROMPT), client.listen(tools_list_changed=True):
                pytest.fail("the block must not start")
    assert refused.value.code == -32601


async def test_a_listen_never_acknowledged_fails_after_the_request_timeout() -> None:
    peer = modern_server(None)  # takes the request, never acknowledges nor answers it
    async with McpClient(peer, protocol_mode="modern", request_timeout=0.2) as client:
        with pytest.raises(RequestTimeoutError, match=r"not acknowledged within 0\.2 s"):
            async with asyncio.timeout(PROMPT), client.listen(tools_list_changed=True):
                pytest.fail("the block must not start")
    assert peer.methods() == ["server/discover", "subscriptions/listen"]


async def accepts_listen_without_an_answer(scope: Any, receive: Any, send: Any) -> None:
    """A 2026-07-28 endpoint that answers ``subscriptions/listen`` 202 Accepted, as if it
    were a notification: no response can ever come (the era has no other stream)."""
    body = await read_body(receive)
    if scope["method"] != "POST":
        await send_response(send, 405, headers=[(b"allow", b"POST")])
        return
    request = json.loads(body)
    if request.get("method") == "server/discover":
        await send_json(send, 200, {"jsonrpc": "2.0", "id": request["id"], **discover_result()})
        return
    await send_response(send, 202)


async def test_a_2026_request_answered_202_fails_at_once() -> None:
    async with serve_asgi(accepts_listen_without_an_answer) as base:
        async with McpClient.http(base + "/mcp", request_timeout=LONG_TIMEOUT) as client:
            with pytest.raises(McpCallError) as refused:
                async with asyncio.timeout(PROMPT), client.listen(tools_list_changed=True):
                    pytest.fail("the block must not start")
            assert "HTTP 202 Accepted" in refused.value.message
            with pytest.raises(McpCallError):  # any request: none can be answered after a 202
                await asyncio.wait_for(client.call_tool("anything"), PROMPT)
