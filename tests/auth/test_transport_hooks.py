"""The HTTP client transport's auth hooks (``HttpRequester``): ``auth_challenge_handler`` on
every 401 and on 403 ``insufficient_scope`` only, the ``use_dpop_nonce`` retry, one retry per
request shared by both, ``apply_per_request_headers`` before every send (retries included),
``observe_response_challenge`` on every response — against a scripted server."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from mcpkit import TransportError
from mcpkit.client import HttpClientTransportOptions
from mcpkit.client._http_options import HttpRequester
from tests.http_server import serve_asgi
from tests.raw_asgi import read_body, send_json


class Scripted:
    """Answers each request with the next (status, headers, body) of its script."""

    def __init__(self, *script: tuple[int, dict[str, str], Any]) -> None:
        self.script = list(script)
        self.seen: list[dict[str, str]] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        await read_body(receive)
        self.seen.append({k.decode(): v.decode() for k, v in scope["headers"]})
        status, headers, body = self.script.pop(0) if self.script else (200, {}, {"ok": True})
        await send_json(send, status, body, [(k.encode(), v.encode()) for k, v in headers.items()])


async def send_once(server: Scripted, **hooks: Any) -> tuple[int, HttpRequester]:
    async with serve_asgi(server) as base, httpx.AsyncClient() as http:
        options = HttpClientTransportOptions(endpoint=f"{base}/mcp", **hooks)
        requester = HttpRequester(options, http)
        response = await requester.open(
            "POST", f"{base}/mcp", {"content-type": "application/json"}, content=b"{}"
        )
        await response.aread()
        await response.aclose()
        return response.status_code, requester


UNAUTHORIZED = (
    401,
    {"www-authenticate": 'Bearer resource_metadata="https://h/prm"'},
    {"error": "unauthorized"},
)


async def test_401_calls_the_handler_and_retries_once_with_its_answer():
    calls: list[str] = []

    def handler(challenge: str) -> str:
        calls.append(challenge)
        return "Bearer fresh"

    server = Scripted(UNAUTHORIZED)
    async with asyncio.timeout(20):
        status, requester = await send_once(server, auth_challenge_handler=handler)
    assert status == 200
    assert calls == ['Bearer resource_metadata="https://h/prm"']
    assert (
        "authorization" not in server.seen[0] and server.seen[1]["authorization"] == "Bearer fresh"
    )
    assert requester.authorization == "Bearer fresh"  # later requests carry it too


async def test_async_handler_and_one_retry_only():
    async def handler(challenge: str) -> str:
        return "Bearer t"

    server = Scripted(UNAUTHORIZED, UNAUTHORIZED, UNAUTHORIZED)
    async with asyncio.timeout(20):
        status, _ = await send_once(server, auth_challenge_handler=handler)
    assert status == 401 and len(server.seen) == 2


async def test_403_only_with_insufficient_scope():
    calls: list[str] = []
    handler = lambda challenge: calls.append(challenge) or "Bearer t"  # noqa: E731
    async with asyncio.timeout(20):
        status, _ = await send_once(
            Scripted((403, {"www-authenticate": 'Bearer error="invalid_token"'}, {})),
            auth_challenge_handler=handler,
        )
        assert status == 403 and calls == []
        status, _ = await send_once(Scripted((403, {}, {})), auth_challenge_handler=handler)
        assert status == 403 and calls == []
        status, _ = await send_once(
            Scripted(
                (403, {"www-authenticate": 'Bearer error="insufficient_scope", scope="a b"'}, {})
            ),
            auth_challenge_handler=handler,
        )
        assert status == 200 and len(calls) == 1


async def test_empty_answer_means_no_retry_and_errors_become_transport_errors():
    server = Scripted(UNAUTHORIZED)
    async with asyncio.timeout(20):
        status, _ = await send_once(server, auth_challenge_handler=lambda c: "")
        assert status == 401 and len(server.seen) == 1

        def broken(challenge: str) -> str:
            raise RuntimeError("no way")

        with pytest.raises(TransportError, match="authorization failed: no way"):
            await send_once(Scripted(UNAUTHORIZED), auth_challenge_handler=broken)


async def test_dpop_nonce_retry_shares_the_single_budget():
    applied: list[int] = []
    observed: list[tuple[int, str | None]] = []
    calls: list[str] = []

    def apply(context: Any, headers: dict[str, str]) -> None:
        applied.append(context.attempt)
        headers["DPoP"] = f"proof-{len(applied)}"

    def observe(context: Any) -> None:
        observed.append((context.status_code, context.dpop_nonce))

    nonce_in_body = (400, {"dpop-nonce": "n1"}, {"error": "use_dpop_nonce"})
    nonce_in_challenge = (
        401,
        {"dpop-nonce": "n2", "www-authenticate": 'DPoP error="use_dpop_nonce"'},
        {},
    )
    async with asyncio.timeout(20):
        server = Scripted(nonce_in_body)
        status, _ = await send_once(
            server, apply_per_request_headers=apply, observe_response_challenge=observe
        )
        assert status == 200 and [h["dpop"] for h in server.seen] == ["proof-1", "proof-2"]
        assert observed == [(400, "n1"), (200, None)]
        # After the nonce retry, a 401 does not get a second retry through the handler.
        server = Scripted(nonce_in_challenge, UNAUTHORIZED)
        status, _ = await send_once(
            server,
            apply_per_request_headers=apply,
            auth_challenge_handler=lambda c: calls.append(c) or "Bearer t",
        )
        assert status == 401 and calls == [] and len(server.seen) == 2
        # A 400 without the marker is not retried.
        server = Scripted((400, {"dpop-nonce": "n3"}, {"error": "invalid_request"}))
        status, _ = await send_once(server, apply_per_request_headers=apply)
        assert status == 400 and len(server.seen) == 1
