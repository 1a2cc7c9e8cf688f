"""``McpDispatcher.dispatch``: a request is tracked while it runs (cancellable, counted
against its connection's limit) and forgotten when it ends; refusals are answered without
running a handler; telemetry wraps every request through ``around_dispatch``. And a tool's
plain ``int`` or ``str`` result, made without the structuring step, is the result that step
makes."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mcpkit import McpServerApp, mcp_tool
from mcpkit.protocol import JsonRpcRequest
from mcpkit.server import TransportBinding
from mcpkit.server._engine.session import McpSession
from mcpkit.server._results import structured_tool_result
from mcpkit.server._schema.callables import inspect_callable


def build_app(release: asyncio.Event) -> McpServerApp:
    @mcp_tool
    async def quick(a: int) -> int:
        return a + 1

    @mcp_tool
    async def slow() -> str:
        await release.wait()
        return "released"

    return McpServerApp(quick, slow, max_in_flight_per_connection=1)


def call(request_id: int, name: str, arguments: dict | None = None) -> JsonRpcRequest:
    return JsonRpcRequest(request_id, "tools/call", {"name": name, "arguments": arguments or {}})


def binding() -> TransportBinding:
    session = McpSession.for_request("conn-1", "2025-11-25", {})
    return TransportBinding(session=session, connection_key="conn-1")


async def test_finished_requests_leave_nothing_tracked_and_never_fill_the_limit() -> None:
    app = build_app(asyncio.Event())
    dispatcher, bound = app.dispatcher, binding()
    for request_id in range(5):  # the limit is 1: each frees its slot when it ends
        answer = await dispatcher.dispatch(call(request_id, "quick", {"a": request_id}), bound)
        assert answer["result"]["structuredContent"] == {"result": request_id + 1}
    assert not dispatcher.cancel("conn-1", 0)  # nothing in flight to cancel
    assert dispatcher.in_flight_count() == 0


async def test_refusals_are_answered_without_running_a_handler() -> None:
    dispatcher = build_app(asyncio.Event()).dispatcher
    unknown_tool = await dispatcher.dispatch(call(1, "nope"), binding())
    assert unknown_tool["error"]["code"] == -32602 and unknown_tool["id"] == 1
    missing = await dispatcher.dispatch(JsonRpcRequest(2, "no/such/method", None), binding())
    assert missing["error"]["code"] == -32601
    assert dispatcher.in_flight_count() == 0


async def start_slow(release: asyncio.Event) -> tuple[Any, TransportBinding, asyncio.Task]:
    """The dispatcher, the connection's binding and request 1, waiting in ``slow``."""
    dispatcher, bound = build_app(release).dispatcher, binding()
    slow = asyncio.create_task(dispatcher.dispatch(call(1, "slow"), bound))
    await asyncio.sleep(0.01)
    return dispatcher, bound, slow


async def test_a_waiting_request_is_tracked_counted_and_cancellable() -> None:
    dispatcher, bound, slow = await start_slow(asyncio.Event())
    busy = await dispatcher.dispatch(call(2, "quick", {"a": 1}), bound)
    assert busy["error"]["message"].startswith("Server busy")  # the limit of 1 is taken
    duplicate = await dispatcher.dispatch(call(1, "quick", {"a": 1}), bound)
    assert "already in use" in duplicate["error"]["message"]
    assert dispatcher.cancel("conn-1", 1)
    assert await slow is None  # cancelled by the client: no answer
    again = await dispatcher.dispatch(call(3, "quick", {"a": 1}), bound)
    assert again["result"]["structuredContent"] == {"result": 2}  # its slot came back


async def test_a_waiting_request_is_counted_while_it_waits() -> None:
    release = asyncio.Event()
    dispatcher, _, slow = await start_slow(release)
    assert dispatcher.in_flight_count("conn-1") == 1
    release.set()
    await slow
    assert dispatcher.in_flight_count("conn-1") == 0


async def test_telemetry_wraps_every_request_until_it_is_removed() -> None:
    seen: list[Any] = []

    class Telemetry:
        async def around_dispatch(
            self, run: Any, request: JsonRpcRequest, binding: Any
        ) -> dict[str, Any] | None:
            seen.append(request.id)
            response: dict[str, Any] | None = await run(request, binding)
            return response

    dispatcher, bound = build_app(asyncio.Event()).dispatcher, binding()
    dispatcher.telemetry = Telemetry()
    answer = await dispatcher.dispatch(call(1, "quick", {"a": 1}), bound)
    assert answer["result"]["structuredContent"] == {"result": 2} and seen == [1]
    dispatcher.telemetry = None
    await dispatcher.dispatch(call(2, "quick", {"a": 1}), bound)
    assert seen == [1]


async def test_a_waiting_request_that_finishes_frees_its_slot() -> None:
    release = asyncio.Event()
    dispatcher, bound, slow = await start_slow(release)
    release.set()
    assert (await slow)["result"]["content"] == [{"type": "text", "text": "released"}]
    answer = await dispatcher.dispatch(call(2, "quick", {"a": 1}), bound)
    assert answer["result"]["structuredContent"] == {"result": 2}


@pytest.mark.parametrize(
    "value",
    [0, -7, 2**70, "", "plain", 'quote " and \\ backslash', "line\nbreak", "é ✓ 😀"]
    + [True, 1.5, None, [1]],
)
async def test_a_wrapped_result_is_what_structuring_it_makes(value: object) -> None:
    """An ``int`` or ``str`` skips the structuring step; every value, those included, gets
    the result that structuring it makes."""

    def returns() -> int | str | float | bool | list[int] | None:  # a wrapped output
        return value  # type: ignore[return-value]

    app = McpServerApp(mcp_tool(returns))
    answer = await app.dispatcher.dispatch(call(1, "returns"), binding())
    signature = inspect_callable(returns)
    assert signature.wraps_output
    general = structured_tool_result(signature.structure_output(value), signature.wraps_output)
    assert answer["result"] == general
