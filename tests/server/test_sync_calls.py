"""Sync functions run in the app's bounded pool of worker threads (context variables
copied in), async ones on the event loop, ``run_in_thread=False`` ones inline: a blocking
sync tool holds up nobody else. No timing assertions: threads are held on
``threading.Event``s the tests release."""

from __future__ import annotations

import asyncio
import contextvars
import functools
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from mcpkit import (
    McpCallError,
    McpServerApp,
    McpToolContext,
    mcp_completion,
    mcp_prompt,
    mcp_resource,
    mcp_server,
    mcp_tool,
    use_middleware,
)
from mcpkit.server import CURRENT_BINDING, DEFAULT_MAX_SYNC_WORKERS
from mcpkit.server._engine.sync_calls import ASYNC, INLINE, THREAD, SyncWorkers, call_mode
from mcpkit.server.middleware import CallNext, Middleware, MiddlewareContext
from tests.waiting import wait_until

HOLD = 10.0  # the longest a worker thread waits for its release (a failing test ends it)

REQUEST_TAG: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "request_tag", default=None
)


class TagRequest(Middleware):
    async def on_call_tool(self, context: MiddlewareContext, call_next: CallNext) -> Any:
        REQUEST_TAG.set(f"tagged {context.name}")
        return await call_next(context)


class Gate:
    """Holds sync calls in their threads until released; counts who got in."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.lock = threading.Lock()
        self.entered = 0
        self.threads: set[str] = set()

    def hold(self) -> None:
        with self.lock:
            self.entered += 1
            self.threads.add(threading.current_thread().name)
        if not self.release.wait(HOLD):
            raise TimeoutError("the test never released the gate")


@mcp_server(name="sync")
class Sync:
    def __init__(self) -> None:
        self.gate = Gate()
        self.where: dict[str, str] = {}
        self.finished = threading.Event()

    def _here(self, what: str) -> None:
        self.where[what] = threading.current_thread().name

    @mcp_tool()
    def blocking(self) -> str:
        self.gate.hold()
        self.finished.set()
        return "unblocked"

    @mcp_tool()
    async def fast(self) -> str:
        self._here("fast")
        return "fast"

    @mcp_tool()
    def sync_tool(self) -> str:
        self._here("sync_tool")
        return "sync"

    @mcp_tool(run_in_thread=False)
    def inline_tool(self) -> str:
        self._here("inline_tool")
        return "inline"

    @mcp_tool()
    def with_context(self, ctx: McpToolContext) -> str:
        binding = CURRENT_BINDING.get()
        return f"{ctx.request_id is not None} {binding is not None and binding.session is not None}"

    @use_middleware(TagRequest())
    @mcp_tool()
    def reads_context_var(self) -> str:
        return f"{REQUEST_TAG.get()} in {threading.current_thread().name.split('_')[0]}"

    @mcp_tool()
    def returns_awaitable(self):
        async def later() -> str:
            return "awaited"

        return later()

    @mcp_tool(timeout=0.1)
    def times_out(self) -> str:
        self.gate.hold()
        return "too late"

    @mcp_resource("sync://r")
    def resource(self) -> str:
        self._here("resource")
        return "r"

    @mcp_prompt()
    def prompt(self) -> str:
        self._here("prompt")
        return "p"

    @mcp_completion(prompt="prompt")
    def complete(self, value: str) -> list[str]:
        self._here("completion")
        return [value + "!"]


@pytest.fixture
def app() -> Iterator[McpServerApp]:
    app = McpServerApp(Sync)
    yield app
    app.instances[0].gate.release.set()  # never leave a worker thread behind


def server(app: McpServerApp) -> Sync:
    return app.instances[0]


async def test_a_blocked_sync_tool_does_not_delay_an_async_call(app, connect):
    gate = server(app).gate
    async with connect(app) as client:
        blocked = asyncio.create_task(client.call_tool("blocking"))
        await wait_until(lambda: gate.entered == 1, "the sync tool to block in its thread")
        assert (await client.call_tool("fast")).content[0].text == "fast"
        # the answer came while the sync tool is still held in its thread
        assert not gate.release.is_set() and not blocked.done()
        assert (await client.call_tool("sync_tool")).content[0].text == "sync"  # another thread
        gate.release.set()
        assert (await blocked).content[0].text == "unblocked"


async def test_the_thread_bound_holds(connect):
    app = McpServerApp(Sync, max_sync_workers=2)
    gate = server(app).gate
    try:
        async with connect(app) as client:
            calls = [asyncio.create_task(client.call_tool("blocking")) for _ in range(3)]
            await wait_until(lambda: gate.entered == 2, "two calls in the two threads")
            # the third waits for a thread: the async call goes through meanwhile
            assert (await client.call_tool("fast")).content[0].text == "fast"
            assert gate.entered == 2 and not any(call.done() for call in calls)
            gate.release.set()
            results = await asyncio.gather(*calls)
            assert [r.content[0].text for r in results] == ["unblocked"] * 3
            assert gate.entered == 3 and len(gate.threads) == 2
    finally:
        gate.release.set()


def test_the_default_bound_is_named():
    assert DEFAULT_MAX_SYNC_WORKERS == 32
    assert McpServerApp(Sync).sync_workers.max_workers == DEFAULT_MAX_SYNC_WORKERS
    with pytest.raises(ValueError):
        McpServerApp(Sync, max_sync_workers=0)


async def test_where_each_kind_of_function_runs(app, connect):
    loop_thread = threading.current_thread().name
    async with connect(app) as client:
        await client.call_tool("fast")
        await client.call_tool("sync_tool")
        await client.call_tool("inline_tool")
        await client.read_resource("sync://r")
        await client.get_prompt("prompt")
        completion = await client.complete({"type": "ref/prompt", "name": "prompt"}, "x", "a")
        assert completion.completion.values == ["a!"]
    where = server(app).where
    assert where["fast"] == loop_thread and where["inline_tool"] == loop_thread
    for what in ("sync_tool", "resource", "prompt", "completion"):
        assert where[what].startswith("mcpkit-sync"), (what, where[what])


async def test_context_variables_reach_the_thread(app, connect):
    async with connect(app) as client:
        tagged = await client.call_tool("reads_context_var")
        assert tagged.content[0].text == "tagged reads_context_var in mcpkit-sync"
        assert (await client.call_tool("with_context")).content[0].text == "True True"
    assert REQUEST_TAG.get() is None  # set in the request's context, not the test's


async def test_a_sync_function_returning_an_awaitable_is_awaited(app, connect):
    async with connect(app) as client:
        assert (await client.call_tool("returns_awaitable")).content[0].text == "awaited"


async def test_a_cancelled_call_ends_at_once_and_its_thread_finishes_alone(app, connect):
    sync = server(app)
    async with connect(app) as client:
        call = asyncio.create_task(client.call_tool("blocking"))
        await wait_until(lambda: sync.gate.entered == 1, "the sync tool to block")
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        await wait_until(lambda: app.dispatcher.in_flight_count() == 0, "the request to end")
        assert not sync.finished.is_set()  # the thread is still in the tool
        sync.gate.release.set()
        await asyncio.to_thread(sync.finished.wait, HOLD)
        assert (await client.call_tool("fast")).content[0].text == "fast"


async def test_a_timeout_ends_a_sync_call(app, connect):
    async with connect(app) as client:
        result = await client.call_tool("times_out")
        assert result.is_error and "timed out" in result.content[0].text


async def test_the_pool_is_made_on_first_use_and_closed_when_the_app_stops(app, connect):
    assert not app.sync_workers.open
    async with connect(app) as client:
        await client.call_tool("fast")
        assert not app.sync_workers.open  # async calls need no thread
        await client.call_tool("sync_tool")
        assert app.sync_workers.open
    assert not app.sync_workers.open
    async with connect(app) as client:  # and made again after a restart
        assert (await client.call_tool("sync_tool")).content[0].text == "sync"


async def test_an_app_stopped_leaves_no_idle_worker_thread_behind(connect):
    """Its host's process is left without a thread of the app's (the pool's threads end
    once it is shut down, and stopping waits for them)."""
    app = McpServerApp()
    ran_in: list[threading.Thread] = []

    @app.tool
    def record() -> str:
        ran_in.append(threading.current_thread())
        return "ok"

    async with connect(app) as client:
        await client.call_tool("record")
        await client.call_tool("record")
    assert ran_in and not any(thread.is_alive() for thread in ran_in)


async def test_a_thread_still_running_a_sync_function_is_left_to_finish(caplog):
    """Python cannot stop it: closing the pool waits a bounded time, says so, and leaves it."""
    workers = SyncWorkers(max_workers=1)
    gate = Gate()
    ran_in: list[threading.Thread] = []

    def held() -> None:
        ran_in.append(threading.current_thread())
        gate.hold()

    call = asyncio.create_task(workers.run(held, {}))
    await wait_until(lambda: gate.entered == 1, "the call holding its thread")
    try:
        await workers.aclose(wait=0.05)
        assert ran_in[0].is_alive()
        assert "1 worker thread(s) still running a sync function" in caplog.text
    finally:
        gate.release.set()
    await call  # its result still reaches the caller that waits for it
    await asyncio.to_thread(ran_in[0].join, HOLD)  # and the thread ends once it returns
    assert not ran_in[0].is_alive()


async def test_a_sync_tool_changing_the_catalog_from_its_thread_is_announced(connect):
    app = McpServerApp()

    @app.tool
    def add_tool(name: str) -> str:
        assert threading.current_thread().name.startswith("mcpkit-sync")
        app.tool(name)(lambda: f"I am {name}")
        return "added"

    changed: list[str] = []
    async with connect(app, on_list_changed=changed.append) as client:
        await client.call_tool("add_tool", {"name": "made_in_a_thread"})
        await wait_until(lambda: changed == ["tools"], "tools/list_changed from the worker thread")
        assert (await client.call_tool("made_in_a_thread")).content[
            0
        ].text == "I am made_in_a_thread"


async def test_a_missing_tool_is_still_invalid_params(app, connect):
    async with connect(app) as client:
        with pytest.raises(McpCallError) as err:
            await client.call_tool("nope")
        assert err.value.code == -32602


# ----------------------------------------------------------------------------- decided once


async def _coro(x: int) -> int:
    return x


class AsyncCallable:
    async def __call__(self) -> None: ...


class SyncCallable:
    def __call__(self) -> None: ...


class Methods:
    async def a(self) -> None: ...

    def s(self) -> None: ...


def test_call_mode_is_decided_from_the_function():
    methods = Methods()
    assert call_mode(_coro) == ASYNC
    assert call_mode(functools.partial(_coro, 1)) == ASYNC
    assert call_mode(functools.partial(functools.partial(_coro), 1)) == ASYNC
    assert call_mode(AsyncCallable()) == ASYNC
    assert call_mode(methods.a) == ASYNC
    assert call_mode(methods.s) == THREAD
    assert call_mode(SyncCallable()) == THREAD
    assert call_mode(len) == THREAD
    assert call_mode(methods.s, run_in_thread=False) == INLINE
    assert call_mode(_coro, run_in_thread=False) == ASYNC


def test_entries_carry_their_call_mode(app):
    tools = {entry.name: entry for entry in app.catalog.list_tools()}
    assert tools["fast"].call_mode == ASYNC
    assert tools["sync_tool"].call_mode == THREAD
    assert tools["inline_tool"].call_mode == INLINE
    assert app.catalog.get_resource("sync://r").call_mode == THREAD
    assert app.catalog.get_prompt("prompt").call_mode == THREAD
    assert app.catalog.find_completion("ref/prompt", "prompt", "x").call_mode == THREAD
