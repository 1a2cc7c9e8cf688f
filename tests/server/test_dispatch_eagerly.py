"""``McpDispatcher.dispatch_eagerly``: a request run in the caller's task up to its
handler's first suspension. One that never waits is answered at once, ``(True,
response)``, exactly as ``dispatch`` answers it; one that waits hands back the rest, which
is tracked (cancellable, counted) only once it is awaited, and answers as ``dispatch``
would."""

from __future__ import annotations

import asyncio

from mcpkit import McpServerApp, mcp_tool
from mcpkit._exceptions import InvalidParamsError
from mcpkit.protocol import JsonRpcRequest
from mcpkit.server import TransportBinding
from mcpkit.server._session import McpSession


def build_app(release: asyncio.Event) -> McpServerApp:
    @mcp_tool
    async def quick(a: int) -> int:
        return a * 2

    @mcp_tool
    async def slow() -> str:
        await release.wait()
        return "released"

    @mcp_tool
    async def refuses() -> str:
        raise InvalidParamsError("not like that")

    return McpServerApp(quick, slow, refuses)


def call(request_id: int, name: str, arguments: dict | None = None) -> JsonRpcRequest:
    return JsonRpcRequest(request_id, "tools/call", {"name": name, "arguments": arguments or {}})


def binding() -> TransportBinding:
    return TransportBinding(McpSession.for_request("c1", "2025-11-25", {}), connection_key="c1")


async def test_a_request_that_never_waits_is_answered_at_once_as_dispatch_answers_it() -> None:
    dispatcher = build_app(asyncio.Event()).dispatcher
    finished, response = dispatcher.dispatch_eagerly(call(1, "quick", {"a": 21}), binding())
    assert finished
    assert response == await dispatcher.dispatch(call(1, "quick", {"a": 21}), binding())
    assert response["result"]["structuredContent"] == {"result": 42}


async def test_refusals_and_protocol_errors_before_any_wait_are_answered_at_once() -> None:
    dispatcher = build_app(asyncio.Event()).dispatcher
    finished, unknown = dispatcher.dispatch_eagerly(call(1, "nope"), binding())
    assert finished and unknown["error"]["code"] == -32602 and unknown["id"] == 1
    finished, refused = dispatcher.dispatch_eagerly(call(2, "refuses"), binding())
    assert finished and refused["error"] == {"code": -32602, "message": "not like that"}
    finished, missing = dispatcher.dispatch_eagerly(
        JsonRpcRequest(3, "no/such/method", None), binding()
    )
    assert finished and missing["error"]["code"] == -32601


async def test_a_waiting_request_is_tracked_only_once_its_rest_is_awaited() -> None:
    release = asyncio.Event()
    dispatcher = build_app(release).dispatcher
    finished, rest = dispatcher.dispatch_eagerly(call(7, "slow"), binding())
    assert not finished
    assert dispatcher.in_flight_count("c1") == 0  # nothing can reach it before it is awaited
    running = asyncio.create_task(rest)
    await asyncio.sleep(0.01)
    assert dispatcher.in_flight_count("c1") == 1
    release.set()
    assert (await running)["result"]["content"] == [{"type": "text", "text": "released"}]
    assert dispatcher.in_flight_count("c1") == 0


async def test_a_waiting_request_cancelled_by_the_client_answers_nothing() -> None:
    dispatcher = build_app(asyncio.Event()).dispatcher
    finished, rest = dispatcher.dispatch_eagerly(call(8, "slow"), binding())
    running = asyncio.create_task(rest)
    await asyncio.sleep(0.01)
    assert dispatcher.cancel("c1", 8)
    assert await running is None
    assert dispatcher.in_flight_count("c1") == 0
