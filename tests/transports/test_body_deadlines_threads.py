"""``body_read_timeout`` holds in every event loop serving an app: the deadlines of body reads
belong to the app and are swept per loop, so two loops in two threads (a host running its
own loop beside the server's, or two servers in one process) each answer a trickled body 408.
"""

from __future__ import annotations

import asyncio
import gc
import json
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any

from mcpkit import McpServerApp, mcp_tool
from mcpkit.transports.http import StreamableHttpServerOptions, create_asgi_app
from tests.http_server import serve_asgi, serving, trickled_post
from tests.raw_asgi import post_scope

TIMEOUT = 0.5
ROUNDS = 3
LOOPS = 2


def _echo_app() -> McpServerApp:
    @mcp_tool
    def echo(text: str) -> str:
        return text

    return McpServerApp(echo)


def _in_threads(run: Callable[[int], Awaitable[Any]]) -> list[Any]:
    """``run(i)`` on a loop of its own in each of ``LOOPS`` threads, started together;
    what each gave, or the first exception raised."""
    results: list[Any] = [None] * LOOPS
    errors: list[BaseException] = []
    barrier = threading.Barrier(LOOPS)

    def thread(i: int) -> None:
        async def main() -> Any:
            await asyncio.to_thread(barrier.wait, 10)
            return await run(i)

        try:
            results[i] = asyncio.run(main())
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=thread, args=(i,)) for i in range(LOOPS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(50)
    assert not any(t.is_alive() for t in threads), "a loop's thread did not finish"
    if errors:
        raise errors[0]
    return results


async def _three_trickled_posts(base: str) -> list[float]:
    took = []
    for _ in range(ROUNDS):
        head, body, seconds, _ = await trickled_post(base)
        assert head[0].startswith(b"http/1.1 408"), head
        assert json.loads(body)["error"]["code"] == -32600
        took.append(seconds)
    return took


def _check(took: list[list[float]]) -> None:
    for seconds in took:
        assert len(seconds) == ROUNDS
        assert all(TIMEOUT - 0.1 < s < TIMEOUT + 1.5 for s in seconds), seconds


def test_two_loops_serving_an_app_each_both_answer_408() -> None:
    """Two uvicorn servers on real sockets, each in a thread of its own with its app."""

    async def run(_: int) -> list[float]:
        async with serving(_echo_app(), body_read_timeout=TIMEOUT) as (url, _asgi):
            return await _three_trickled_posts(url.rsplit("/", 1)[0])

    _check(_in_threads(run))


def test_two_loops_serving_one_app_both_answer_408() -> None:
    """One app, served by two uvicorn servers in two threads at once."""
    options = StreamableHttpServerOptions(body_read_timeout=TIMEOUT, enable_legacy_sse=False)
    asgi = create_asgi_app(_echo_app(), options)

    async def run(i: int) -> list[float]:
        # The first server runs the app's lifespan; the other serves it as it is.
        async with serve_asgi(asgi, lifespan="on" if i == 0 else "off") as base:
            return await _three_trickled_posts(base)

    _check(_in_threads(run))


def test_two_loops_calling_one_app_directly() -> None:
    """The app called in process from two loops, bodies that never end: 408 on both, and
    no loop kept by the app once gone."""
    asgi = create_asgi_app(
        _echo_app(),
        StreamableHttpServerOptions(body_read_timeout=TIMEOUT, enable_legacy_sse=False),
    )
    scope = post_scope(
        {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    )

    async def post() -> tuple[int, float]:
        first = True

        async def receive() -> dict[str, Any]:
            nonlocal first
            if first:
                first = False
                return {"type": "http.request", "body": b'{"jsonrpc":', "more_body": True}
            await asyncio.sleep(0.1)  # a byte at a time, for ever
            return {"type": "http.request", "body": b" ", "more_body": True}

        sent: list[dict[str, Any]] = []

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        started = time.monotonic()
        async with asyncio.timeout(10):
            await asgi(dict(scope), receive, send)
        return sent[0]["status"], time.monotonic() - started

    async def run(_: int) -> list[float]:
        took = []
        for _round in range(ROUNDS):
            status, seconds = await post()
            assert status == 408
            took.append(seconds)
        return took

    _check(_in_threads(run))
    gc.collect()
    assert len(asgi.streamable.requests) == 0  # weak: the loops are gone
