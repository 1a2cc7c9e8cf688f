"""What an open SSE stream holds: an idle GET stream costs its request's task alone (no
writer task while nothing is queued, no task watching for the disconnect), which is what
keeps 10,000 open streams within a few KiB each (bench/fanout.py measures the bytes).
And ``disconnected_before``, the wait that makes that possible."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from mcpkit import McpServerApp, mcp_tool
from mcpkit.transports.http import StreamableHttpServerOptions, create_asgi_app
from mcpkit.transports.http._asgi import disconnected_before
from mcpkit.transports.http._streamable.streams import SseResponse
from tests.waiting import wait_until
from tests.wire import initialize_request


def _scope(method: str, session_id: str | None = None) -> dict[str, Any]:
    headers = [
        (b"host", b"127.0.0.1"),
        (b"accept", b"application/json, text/event-stream"),
        (b"content-type", b"application/json"),
        (b"mcp-protocol-version", b"2025-11-25"),
    ]
    if session_id:
        headers.append((b"mcp-session-id", session_id.encode()))
    return {
        "type": "http",
        "method": method,
        "path": "/mcp",
        "raw_path": b"/mcp",
        "query_string": b"",
        "headers": headers,
        "scheme": "http",
        "server": ("127.0.0.1", 80),
        "client": ("127.0.0.1", 1234),
        "root_path": "",
        "http_version": "1.1",
        "asgi": {"version": "3.0"},
    }


async def test_an_idle_get_stream_holds_only_its_request_task() -> None:
    @mcp_tool
    def ping_tool() -> str:
        return "pong"

    app = McpServerApp(ping_tool)
    asgi = create_asgi_app(app, StreamableHttpServerOptions(sse_keep_alive_ms=0))
    await asgi.startup()
    try:
        session_ids = []
        for _ in range(20):
            sent: list[dict[str, Any]] = []
            body = json.dumps(initialize_request("2025-11-25"))

            async def receive_body(body: str = body) -> dict[str, Any]:
                return {"type": "http.request", "body": body.encode(), "more_body": False}

            async def keep(message: dict[str, Any], sent: list[dict[str, Any]] = sent) -> None:
                sent.append(message)

            await asgi(_scope("POST"), receive_body, keep)
            session_ids.append(dict(sent[0]["headers"])[b"mcp-session-id"].decode())

        before = set(asyncio.all_tasks())
        gone = asyncio.Event()
        bodies: list[list[dict[str, Any]]] = []

        async def until_gone() -> dict[str, Any]:
            await gone.wait()
            return {"type": "http.disconnect"}

        requests = []
        for session_id in session_ids:
            out: list[dict[str, Any]] = []
            bodies.append(out)

            async def write(message: dict[str, Any], out: list[dict[str, Any]] = out) -> None:
                out.append(message)

            requests.append(asyncio.create_task(asgi(_scope("GET", session_id), until_gone, write)))
        # Each stream has started and written its priming event.
        await wait_until(lambda: all(len(out) >= 2 for out in bodies), "the streams open")
        for _ in range(3):
            await asyncio.sleep(0)
        # Nothing but the requests themselves: no writer, no disconnect watcher per stream.
        assert asyncio.all_tasks() - before - set(requests) == set()

        # A notification wakes a writer per stream, which ends once the event is written.
        await app.connections.broadcast_method("notifications/tools/list_changed")
        await wait_until(
            lambda: all(b"list_changed" in out[-1].get("body", b"") for out in bodies),
            "the notification on every stream",
        )
        await wait_until(
            lambda: not asyncio.all_tasks() - before - set(requests), "the writers done"
        )
        gone.set()  # the clients leave: every request ends, each response with its end
        await asyncio.wait_for(asyncio.gather(*requests), 10)
        assert all(
            out[-1] == {"type": "http.response.body", "body": b"", "more_body": False}
            for out in bodies
        )
    finally:
        await asgi.shutdown()


async def test_disconnected_before_tells_which_came_first() -> None:
    loop = asyncio.get_running_loop()
    left = asyncio.Event()

    async def receive() -> dict[str, Any]:
        await left.wait()
        return {"type": "http.disconnect"}

    done = loop.create_future()
    waiting = asyncio.create_task(disconnected_before(done, receive))
    await asyncio.sleep(0)
    done.set_result(None)
    assert await waiting is False

    done = loop.create_future()
    waiting = asyncio.create_task(disconnected_before(done, receive))
    await asyncio.sleep(0)
    left.set()
    assert await waiting is True
    done.set_result(None)  # later: nothing cancels the task that waited
    await asyncio.sleep(0)

    assert await disconnected_before(done, receive) is False  # already done: no wait


async def test_disconnected_before_lets_an_outside_cancellation_through() -> None:
    never = asyncio.Event()

    async def receive() -> dict[str, Any]:
        await never.wait()
        return {"type": "http.disconnect"}

    done = asyncio.get_running_loop().create_future()
    waiting = asyncio.create_task(disconnected_before(done, receive))
    await asyncio.sleep(0)
    waiting.cancel()
    done.set_result(None)  # both at once: the outside cancellation still wins
    with pytest.raises(asyncio.CancelledError):
        await waiting


async def test_an_idle_response_has_no_writer_and_a_busy_one_ends_its_writer() -> None:
    sent: list[bytes] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message["body"])

    response = SseResponse(send, label="t")
    assert response._writer is None
    assert response.offer(b"one") and response._writer is not None
    await wait_until(lambda: response._writer is None, "the writer done")
    assert sent == [b"one"]
    await response.aclose()
    assert sent == [b"one", b""] and response.task.done() and not response.task.cancelled()
