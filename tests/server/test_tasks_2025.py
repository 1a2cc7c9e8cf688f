"""The 2025-11-25 tasks utility (handshake era, experimental) served by mcpkit's server,
driven by mcpkit's own client in 2025-11-25 mode: in memory (every server frame checked
against the 2025-11-25 schema) and over Streamable HTTP with a session.

The lifecycle (``params.task`` -> ``{task}``, ``tasks/get``, ``tasks/result`` with the
related-task ``_meta``), ``required`` / ``forbidden`` / ``optional`` tools, cancel,
``tasks/list`` pages, two sessions kept apart, unknown ids, failing tools, input during a
task (``input_required``, the elicitation carried by ``tasks/result``, and a clear failure
when nothing carries it), status and progress notifications, the capability, and the
SQLite and Redis stores.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import msgspec
import pytest

from mcpkit import (
    McpCallError,
    McpClient,
    McpServerApp,
    McpToolContext,
    mcp_server,
    mcp_tool,
)
from mcpkit.auth import AuthInfo
from mcpkit.client import HttpClientTransportOptions, HttpTransportMode, TaskState
from mcpkit.server import TransportBinding, serve_stream
from mcpkit.server._engine.session import McpSession
from mcpkit.server._tasks.wire import default_principal
from mcpkit.server._tasks.wire_2025 import owner_of
from mcpkit.stores import RedisTaskStore, SqliteTaskStore
from mcpkit.transports import InMemoryTransport
from tests.http_server import serving
from tests.redis_server import REDIS_SERVER, RedisServer
from tests.server._task_tools import FailingTaskTools
from tests.stores.spoiled_tasks import spoil
from tests.wire import SchemaChecker, ValidatingStream, check

VERSION = "2025-11-25"
RELATED = "io.modelcontextprotocol/related-task"
TEST_TIMEOUT = 20.0
CONFIRM = {"type": "object", "properties": {"confirm": {"type": "boolean"}}}
TASKS_CAPABILITY = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
#: The results of the task requests, by method (tools/call: when it made a task).
TASK_RESULTS = {
    "tasks/get": "GetTaskResult",
    "tasks/cancel": "CancelTaskResult",
    "tasks/list": "ListTasksResult",
    "tasks/result": "CallToolResult",
}


@mcp_server(name="jobs-2025")
class Jobs(FailingTaskTools):
    def __init__(self) -> None:
        self.gate = asyncio.Event()
        self.started = asyncio.Event()
        self.stopped = asyncio.Event()

    @mcp_tool()
    def echo(self, text: str) -> str:
        return f"echo: {text}"

    @mcp_tool(task_support="optional")
    async def sleepy(self, seconds: float = 0.0) -> str:
        await asyncio.sleep(seconds)
        return f"slept {seconds}"

    @mcp_tool(task_support="required")
    async def only_task(self) -> str:
        return "ran as a task"

    @mcp_tool(task_support="optional")
    async def gated(self) -> str:
        self.started.set()
        try:
            await self.gate.wait()
        except asyncio.CancelledError:
            self.stopped.set()
            raise
        return "through the gate"

    @mcp_tool(task_support="optional")
    async def confirm(self, ctx: McpToolContext, timeout: float | None = None) -> str:
        answer = await ctx.elicit("Really?", CONFIRM, timeout=timeout)
        return f"confirmed={bool((answer.content or {}).get('confirm'))}"

    @mcp_tool(task_support="optional")
    async def summarize(self, ctx: McpToolContext) -> str:
        answer = await ctx.sample("Summarize the logs", max_tokens=50)
        return f"summary: {answer['content']['text']}"

    @mcp_tool(task_support="optional")
    async def progressing(self, ctx: McpToolContext) -> str:
        await ctx.report_progress(1, 2, "halfway")
        await ctx.info("half done")
        return "done"


class TaskSchemaChecker(SchemaChecker):
    """``SchemaChecker`` that knows the task results, and keeps every server message."""

    def __init__(self) -> None:
        super().__init__(VERSION)
        self.received: list[dict[str, Any]] = []

    def _check_one(self, message: dict[str, Any]) -> None:
        self.received.append(message)
        method = self.methods.get(message.get("id"))
        result = message.get("result")
        is_task_call = method == "tools/call" and isinstance(result, dict) and "task" in result
        if isinstance(result, dict) and (method in TASK_RESULTS or is_task_call):
            check(VERSION, "JSONRPCResultResponse", message)
            check(VERSION, "CreateTaskResult" if is_task_call else TASK_RESULTS[method], result)
            if method == "tasks/result":
                check(VERSION, "GetTaskPayloadResult", result)
            self.checked += 1
            return
        super()._check_one(message)

    def server_messages(self, method: str) -> list[dict[str, Any]]:
        return [m for m in self.received if m.get("method") == method]


class Recorder:
    """The client's elicitation handler and notification callback: what came, and events."""

    def __init__(self) -> None:
        self.asked: list[dict[str, Any]] = []
        self.notes: list[tuple[str, dict[str, Any]]] = []
        self.changed = asyncio.Event()

    async def elicit(self, params: dict[str, Any]) -> dict[str, Any]:
        self.asked.append(params)
        return {"action": "accept", "content": {"confirm": True}}

    async def sample(self, params: dict[str, Any]) -> dict[str, Any]:
        self.asked.append(params)
        return {"role": "assistant", "content": {"type": "text", "text": "all quiet"}, "model": "m"}

    def note(self, method: str, params: dict[str, Any]) -> None:
        self.notes.append((method, params))
        self.changed.set()

    def statuses(self, task_id: str | None) -> list[str]:
        return [
            p["status"]
            for m, p in self.notes
            if m == "notifications/tasks/status" and p.get("taskId") == task_id
        ]

    async def until(self, predicate: Any) -> None:
        """Wait for the notification that makes ``predicate()`` true."""
        while not predicate():
            self.changed.clear()
            await self.changed.wait()


def make_app(**options: Any) -> McpServerApp:
    app = McpServerApp(Jobs, **options)
    app.tasks.poll_interval_ms = 50
    return app


@contextlib.asynccontextmanager
async def memory_client(
    app: McpServerApp, recorder: Recorder | None = None
) -> AsyncIterator[tuple[McpClient, TaskSchemaChecker]]:
    """A 2025-11-25 client on an in-memory connection, every server frame schema-checked."""
    checker = TaskSchemaChecker()
    client_end, server_end = InMemoryTransport.pair()
    server = asyncio.create_task(serve_stream(app, server_end))
    recorder = recorder or Recorder()
    try:
        async with McpClient(
            ValidatingStream(client_end, checker),
            elicitation_handler=recorder.elicit,
            sampling_handler=recorder.sample,
            on_notification=recorder.note,
        ) as client:
            assert client.protocol_version == VERSION
            yield client, checker
    finally:
        await server_end.aclose()
        server.cancel()
        await asyncio.gather(server, return_exceptions=True)


@contextlib.asynccontextmanager
async def http_client(url: str, recorder: Recorder | None = None) -> AsyncIterator[McpClient]:
    """A 2025-11-25 client with its own Streamable HTTP session."""
    recorder = recorder or Recorder()
    options = HttpClientTransportOptions(
        endpoint=url, transport_mode=HttpTransportMode.STREAMABLE_HTTP
    )
    async with McpClient.http(
        options,
        protocol_mode="legacy",
        elicitation_handler=recorder.elicit,
        sampling_handler=recorder.sample,
        on_notification=recorder.note,
    ) as client:
        assert client.protocol_version == VERSION
        yield client


@contextlib.asynccontextmanager
async def clients(
    transport: str, app: McpServerApp | None = None, recorder: Recorder | None = None
) -> AsyncIterator[McpClient]:
    app = app or make_app()
    async with asyncio.timeout(TEST_TIMEOUT):
        if transport == "memory":
            await app.start()
            try:
                async with memory_client(app, recorder) as (client, _):
                    yield client
            finally:
                await app.stop()
        else:
            async with serving(app) as (url, _), http_client(url, recorder) as client:
                yield client


TRANSPORTS = ["memory", "http"]


def jobs(app: McpServerApp) -> Jobs:
    return app.resolve(Jobs)


def text_of(result: Any) -> str:
    return result.content[0].text


def server_capabilities(checker: TaskSchemaChecker) -> dict[str, Any]:
    """What the server's ``initialize`` result declared."""
    for message in checker.received:
        if checker.methods.get(message.get("id")) == "initialize":
            return message["result"]["capabilities"]
    raise AssertionError("no initialize result")


async def call_error(client: McpClient, method: str, params: dict[str, Any]) -> McpCallError:
    with pytest.raises(McpCallError) as caught:
        await client.request(method, params)
    return caught.value


# --------------------------------------------------------------------------- negotiation


async def test_the_capability_and_tool_execution_are_declared_at_2025_11_25():
    app = make_app()
    await app.start()
    try:
        async with asyncio.timeout(TEST_TIMEOUT), memory_client(app) as (client, checker):
            assert server_capabilities(checker)["tasks"] == TASKS_CAPABILITY
            tools = {tool.name: tool for tool in await client.list_tools()}
            assert tools["sleepy"].execution is not None
            assert tools["sleepy"].execution.task_support == "optional"
            assert tools["only_task"].execution.task_support == "required"
            assert tools["echo"].execution is None
            assert checker.checked >= 2
    finally:
        await app.stop()
    # no tool that may run as a task: nothing declared, and params.task is ignored
    plain = McpServerApp("plain")

    @plain.tool()
    def hello() -> str:
        return "hello"

    await plain.start()
    try:
        async with asyncio.timeout(TEST_TIMEOUT), memory_client(plain) as (client, checker):
            assert "tasks" not in server_capabilities(checker)
            raw = await client.request(
                "tools/call", {"name": "hello", "arguments": {}, "task": {"ttl": 5000}}
            )
            assert raw["content"] == [{"type": "text", "text": "hello"}]
    finally:
        await plain.stop()
    assert "tasks" not in make_app().capabilities("2025-06-18")
    assert "tasks" not in make_app().capabilities("2026-07-28")


def test_task_true_is_fastmcps_spelling_of_optional():
    app = McpServerApp("fast")

    @app.tool(task=True)
    async def render(scene: str) -> str:
        return scene

    @app.tool(task=False)
    async def quick() -> str:
        return "quick"

    assert app.catalog.get_tool("render").task_support == "optional"
    assert app.catalog.get_tool("quick").task_support == "forbidden"
    assert app.capabilities(VERSION)["tasks"] == TASKS_CAPABILITY
    with pytest.raises(TypeError, match="not both"):
        mcp_tool(task=True, task_support="required")
    with pytest.raises(ValueError, match="task_support must be one of"):
        mcp_tool(task_support="sometimes")


# --------------------------------------------------------------------------- the lifecycle


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_task_is_created_polled_and_its_result_fetched(transport):
    recorder = Recorder()
    async with clients(transport, recorder=recorder) as client:
        task = await client.call_tool_as_task("sleepy", {"seconds": 0.2}, ttl_ms=30_000)
        assert task.is_task and task.state is not None
        assert task.state.status == "working"
        assert task.state.ttl_ms == 30_000 and task.state.poll_interval_ms == 50
        assert task.state.created_at and task.state.last_updated_at
        result = await task.result()
        assert text_of(result) == "slept 0.2" and not result.is_error
        assert result.meta == {RELATED: {"taskId": task.task_id}}
        assert task.state.status == "completed"
        # by id, again: the state, and the result as often as asked
        assert task.task_id is not None
        state = await client.get_task(task.task_id)
        assert state.status == "completed" and state.result is None
        assert text_of(await client.get_task_result(task.task_id)) == "slept 0.2"
        # the status notification of the end came to the session
        await recorder.until(lambda: "completed" in recorder.statuses(task.task_id))
        # no ttl asked for: the server's; one past it: capped
        default = await client.call_tool_as_task("sleepy")
        assert default.state is not None and default.state.ttl_ms == 60 * 60 * 1000
        capped = await client.call_tool_as_task("sleepy", ttl_ms=10**12)
        assert capped.state is not None and capped.state.ttl_ms == 60 * 60 * 1000


async def test_every_task_message_matches_the_2025_11_25_schema():
    app = make_app()
    await app.start()
    try:
        async with asyncio.timeout(TEST_TIMEOUT), memory_client(app) as (client, checker):
            task = await client.call_tool_as_task("sleepy", {"seconds": 0})
            await task.result()
            assert task.task_id is not None
            await client.list_tasks()
            gated = await client.call_tool_as_task("gated")
            await client.cancel_task(gated.task_id or "")
            results = {m["id"]: m for m in checker.received if "result" in m}
            methods = {checker.methods[i] for i in results}
            assert {"tools/call", "tasks/get", "tasks/result", "tasks/list"} <= methods
            assert "tasks/cancel" in methods
            assert checker.server_messages("notifications/tasks/status")
            for note in checker.server_messages("notifications/tasks/status"):
                assert RELATED not in (note["params"].get("_meta") or {})
    finally:
        await app.stop()


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_required_forbidden_and_optional_tools(transport):
    async with clients(transport) as client:
        # required, called plainly: -32601, as the spec's tool-level rules say
        with pytest.raises(McpCallError) as required:
            await client.call_tool("only_task")
        assert required.value.code == -32601
        assert "Task augmentation required" in required.value.message
        only = await client.call_tool_as_task("only_task")
        assert only.is_task and text_of(await only.result()) == "ran as a task"
        # forbidden (no taskSupport): -32601 when asked to run as a task
        with pytest.raises(McpCallError) as forbidden:
            await client.call_tool_as_task("echo", {"text": "x"})
        assert forbidden.value.code == -32601
        assert text_of(await client.call_tool("echo", {"text": "x"})) == "echo: x"
        # optional: either way
        assert text_of(await client.call_tool("sleepy")) == "slept 0.0"
        optional = await client.call_tool_as_task("sleepy")
        assert optional.is_task
        # a malformed task field
        error = await call_error(
            client, "tools/call", {"name": "sleepy", "arguments": {}, "task": {"ttl": "soon"}}
        )
        assert error.code == -32602


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_cancel_stops_the_run_and_a_final_task_refuses_it(transport):
    app = make_app()
    recorder = Recorder()
    async with clients(transport, app, recorder) as client:
        task = await client.call_tool_as_task("gated")
        await jobs(app).started.wait()
        cancelled = await task.cancel()
        assert isinstance(cancelled, TaskState) and cancelled.status == "cancelled"
        assert cancelled.status_message
        await jobs(app).stopped.wait()  # the tool's run was stopped
        assert (await client.get_task(task.task_id or "")).status == "cancelled"
        with pytest.raises(McpCallError) as again:
            await task.cancel()
        assert again.value.code == -32602 and "terminal status 'cancelled'" in again.value.message
        # a cancelled task has no result: -32602 at once, never a wait
        with pytest.raises(McpCallError) as no_result:
            await client.get_task_result(task.task_id or "")
        assert no_result.value.code == -32602
        await recorder.until(lambda: "cancelled" in recorder.statuses(task.task_id))
        # a completed task cannot be cancelled either
        done = await client.call_tool_as_task("sleepy")
        await done.result()
        with pytest.raises(McpCallError) as final:
            await done.cancel()
        assert final.value.code == -32602


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_unknown_task_ids_are_invalid_params(transport):
    async with clients(transport) as client:
        for method in ("tasks/get", "tasks/result", "tasks/cancel"):
            error = await call_error(client, method, {"taskId": "no-such-task"})
            assert error.code == -32602, method
            assert "Task not found" in error.message
        error = await call_error(client, "tasks/get", {})
        assert error.code == -32602
        # 2026-07-28's tasks/update is not a 2025-11-25 method
        error = await call_error(client, "tasks/update", {"taskId": "x", "inputResponses": {}})
        assert error.code == -32601


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_failing_tool_fails_its_task(transport):
    async with clients(transport) as client:
        # a tool error: failed, and tasks/result is the isError result the call would give
        broken = await client.call_tool_as_task("tool_error")
        result = await broken.result()
        assert result.is_error and "the job broke" in text_of(result)
        assert result.meta == {RELATED: {"taskId": broken.task_id}}
        assert broken.state is not None and broken.state.status == "failed"
        assert broken.state.status_message == "Tool execution failed: the job broke"
        # a JSON-RPC error: failed, and tasks/result is that error
        gone = await client.call_tool_as_task("protocol_error")
        with pytest.raises(McpCallError) as caught:
            await gone.result()
        assert caught.value.code == -32603 and caught.value.message == "the backend is gone"
        assert gone.state is not None and gone.state.status == "failed"


# --------------------------------------------------------------------------- listing and owners


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_tasks_list_pages_through_the_sessions_tasks(transport):
    app = make_app()
    app.tasks.list_page_size = 2
    async with clients(transport, app) as client:
        made = [await client.call_tool_as_task("sleepy") for _ in range(5)]
        listed = await client.list_tasks()
        assert [s.task_id for s in listed] == [t.task_id for t in made]
        first = await client.request("tasks/list", None)
        assert len(first["tasks"]) == 2 and isinstance(first["nextCursor"], str)
        second = await client.request("tasks/list", {"cursor": first["nextCursor"]})
        assert [t["taskId"] for t in second["tasks"]] == [t.task_id for t in made[2:4]]
        error = await call_error(client, "tasks/list", {"cursor": "not-a-cursor"})
        assert error.code == -32602
    with pytest.raises(ValueError):
        app.tasks.list_page_size = 0


async def test_two_http_sessions_never_see_each_others_tasks():
    app = make_app()
    async with asyncio.timeout(TEST_TIMEOUT), serving(app) as (url, _):
        async with http_client(url) as alice, http_client(url) as bob:
            task = await alice.call_tool_as_task("gated")
            task_id = task.task_id or ""
            for method in ("tasks/get", "tasks/result", "tasks/cancel"):
                error = await call_error(bob, method, {"taskId": task_id})
                assert error.code == -32602, method
            assert await bob.list_tasks() == []
            assert [s.task_id for s in await alice.list_tasks()] == [task_id]
            jobs(app).gate.set()
            assert text_of(await task.result()) == "through the gate"


async def test_two_in_memory_connections_never_see_each_others_tasks():
    app = make_app()
    await app.start()
    try:
        async with asyncio.timeout(TEST_TIMEOUT):
            async with memory_client(app) as (alice, _), memory_client(app) as (bob, _):
                task = await alice.call_tool_as_task("sleepy")
                error = await call_error(bob, "tasks/get", {"taskId": task.task_id})
                assert error.code == -32602
                assert await bob.list_tasks() == []
                assert len(await alice.list_tasks()) == 1
    finally:
        await app.stop()


def test_a_task_belongs_to_the_authenticated_client_else_to_the_session():
    one, two = McpSession(session_id="one"), McpSession(session_id="two")
    ada = AuthInfo(subject="ada", scopes=(), token="t", client_id="app")
    # authenticated: the identity, whichever session asks (the spec's authorization context)
    assert owner_of(default_principal, TransportBinding(session=one, auth=ada)) == owner_of(
        default_principal, TransportBinding(session=two, auth=ada)
    )
    # anonymous: the session
    assert owner_of(default_principal, TransportBinding(session=one)) == "session:one"
    assert owner_of(default_principal, TransportBinding(session=two)) == "session:two"
    # anonymous and stateless: nobody (tasks/list refuses such a requestor)
    stateless = McpSession.for_request("sl1", VERSION, None)
    assert owner_of(default_principal, TransportBinding(session=stateless)) is None


# --------------------------------------------------------------------------- input and notifications


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_input_during_a_task_travels_on_tasks_result(transport):
    recorder = Recorder()
    async with clients(transport, recorder=recorder) as client:
        task = await client.call_tool_as_task("confirm")
        seen: list[str] = []
        result = await task.result(on_status=lambda s: seen.append(s.status))
        assert text_of(result) == "confirmed=True"
        assert "input_required" in seen and seen[-1] == "completed"
        # the elicitation named its task
        assert len(recorder.asked) == 1
        assert recorder.asked[0]["_meta"][RELATED] == {"taskId": task.task_id}
        assert recorder.asked[0]["message"] == "Really?"
        statuses = recorder.statuses(task.task_id)
        assert "input_required" in statuses and statuses[-1] == "completed"
        # sampling goes the same way
        sampled = await client.call_tool_as_task("summarize")
        assert text_of(await sampled.result()) == "summary: all quiet"
        assert recorder.asked[1]["_meta"][RELATED] == {"taskId": sampled.task_id}
        assert recorder.asked[1]["maxTokens"] == 50


async def test_input_that_nothing_carries_fails_the_task_clearly():
    """A client that polls ``tasks/get`` and never calls ``tasks/result``: the tool's
    request fails after its timeout, and so does the task, saying why."""
    recorder = Recorder()
    async with clients("memory", recorder=recorder) as client:
        raw = await client.request(
            "tools/call", {"name": "confirm", "arguments": {"timeout": 0.3}, "task": {}}
        )
        task_id = raw["task"]["taskId"]
        await recorder.until(lambda: "failed" in recorder.statuses(task_id))
        assert recorder.statuses(task_id)[0] == "input_required"
        state = await client.get_task(task_id)
        assert state.status == "failed"
        assert "no tasks/result request came" in (state.status_message or "")
        result = await client.get_task_result(task_id)
        assert result.is_error and "tasks/result" in text_of(result)
        assert recorder.asked == []


async def test_progress_and_logs_of_a_task_name_it():
    recorder = Recorder()
    app = make_app()
    await app.start()
    try:
        async with asyncio.timeout(TEST_TIMEOUT), memory_client(app, recorder) as (client, _):
            raw = await client.request(
                "tools/call",
                {
                    "name": "progressing",
                    "arguments": {},
                    "task": {},
                    "_meta": {"progressToken": "p-1"},
                },
            )
            task_id = raw["task"]["taskId"]
            await recorder.until(lambda: "completed" in recorder.statuses(task_id))
            notes = dict((m, p) for m, p in recorder.notes if m != "notifications/tasks/status")
            progress = notes["notifications/progress"]
            assert progress["progressToken"] == "p-1" and progress["progress"] == 1
            assert progress["_meta"][RELATED] == {"taskId": task_id}
            assert notes["notifications/message"]["_meta"][RELATED] == {"taskId": task_id}
    finally:
        await app.stop()


async def test_running_tasks_are_bounded():
    app = make_app(max_running_tasks=1)
    async with clients("memory", app) as client:
        first = await client.call_tool_as_task("gated")
        await jobs(app).started.wait()
        second = await client.call_tool_as_task("sleepy")
        assert (await client.get_task(second.task_id or "")).status == "working"
        assert app.tasks.running == 1
        jobs(app).gate.set()
        assert text_of(await first.result()) == "through the gate"
        assert text_of(await second.result()) == "slept 0.0"


# --------------------------------------------------------------------------- the stores


@pytest.fixture(params=["sqlite", "redis"])
async def durable_store(request, tmp_path) -> AsyncIterator[Any]:
    if request.param == "sqlite":
        store = SqliteTaskStore(tmp_path / "tasks.db")
        yield store
        await store.close()
        return
    if REDIS_SERVER is None:
        pytest.skip("redis-server is not installed")
    server = RedisServer().start()
    store = RedisTaskStore(server.url)
    try:
        yield store
    finally:
        await store.close()
        server.close()


async def test_the_lifecycle_on_sqlite_and_redis(durable_store):
    app = make_app(task_store=durable_store)
    app.tasks.list_page_size = 2
    recorder = Recorder()
    async with clients("memory", app, recorder) as client:
        made = [await client.call_tool_as_task("sleepy") for _ in range(3)]
        for task in made:
            assert text_of(await task.result()) == "slept 0.0"
        confirm = await client.call_tool_as_task("confirm")
        assert text_of(await confirm.result()) == "confirmed=True"
        gated = await client.call_tool_as_task("gated")
        cancelled = await gated.cancel()
        assert cancelled is not None and cancelled.status == "cancelled"
        listed = await client.list_tasks()
        assert [s.task_id for s in listed] == [t.task_id for t in [*made, confirm, gated]]
        assert [s.status for s in listed] == ["completed"] * 4 + ["cancelled"]


def test_cursors_are_opaque_but_checked():
    from mcpkit.server._tasks.wire_2025 import decode_list_cursor, encode_list_cursor

    position = (1764000000.123456, "a-task")
    assert decode_list_cursor(encode_list_cursor(position)) == position
    for bad in ("x", "", msgspec.json.encode(["a", 1]).decode(), 5):
        with pytest.raises(Exception) as caught:
            decode_list_cursor(bad)
        assert getattr(caught.value, "code", None) == -32602
    assert decode_list_cursor(None) is None


async def test_an_unreadable_task_record_is_an_unknown_task_over_http(durable_store):
    """One task's stored record spoiled (by hand, a cut-short write), over Streamable HTTP:
    requests naming it are answered -32602 as for an unknown task, and the session's other
    tasks are still got and listed, where tasks/get of it and every tasks/list of the
    session failed with an internal error."""
    app = make_app(task_store=durable_store)
    app.tasks.list_page_size = 1
    async with clients("http", app) as client:
        made = [await client.call_tool_as_task("sleepy") for _ in range(3)]
        for task in made:
            await task.result()
        bad = made[1].task_id or ""
        await spoil(durable_store, bad, "a time that is text")
        for method in ("tasks/get", "tasks/result", "tasks/cancel"):
            error = await call_error(client, method, {"taskId": bad})
            assert error.code == -32602 and "Task not found" in error.message, method
        listed = await client.list_tasks()
        assert [s.task_id for s in listed] == [made[0].task_id, made[2].task_id]
        assert (await client.get_task(made[2].task_id or "")).status == "completed"


async def test_a_task_that_expires_while_its_client_waits_has_its_run_stopped():
    """A task whose TTL runs out while its client waits on tasks/result, over Streamable
    HTTP: the wait ends -32602, and the next sweep stops the run and frees its slot, where
    the memory store forgot the task as the wait read it, so no sweep ever found it and
    the tool ran on, holding a running slot, for as long as it liked."""
    app = make_app()
    async with clients("http", app) as client:
        task = await client.call_tool_as_task("gated", ttl_ms=1000)  # the shortest TTL
        await jobs(app).started.wait()
        error = await call_error(client, "tasks/result", {"taskId": task.task_id})
        assert error.code == -32602 and "expired" in error.message
        assert await app.tasks.sweep() == [task.task_id]
        await jobs(app).stopped.wait()
        assert app.tasks.running == 0


@pytest.mark.parametrize(
    "position", [b'[1e999, "t"]', b"[" + b"9" * 400 + b', "t"]', b'["1", "t"]', b"[1]"]
)
async def test_a_tampered_list_cursor_is_invalid_params_over_http(position):
    """A tasks/list cursor edited by the client (a number too large for a time among
    them) is -32602 "Invalid cursor", and the listing goes on serving, where the too-large
    number was an internal error."""
    async with clients("http") as client:
        made = await client.call_tool_as_task("sleepy")
        cursor = base64.urlsafe_b64encode(position).decode()
        error = await call_error(client, "tasks/list", {"cursor": cursor})
        assert error.code == -32602 and error.message == "Invalid cursor"
        assert [s.task_id for s in await client.list_tasks()] == [made.task_id]


async def test_a_task_ttl_too_large_for_a_float_is_invalid_params_over_http():
    """``params.task.ttl`` an integer of a few hundred digits: -32602 naming ``task``, as
    for any other ttl that is not a number of milliseconds, where it was an internal
    error; the next call is served."""
    async with clients("http") as client:
        error = await call_error(
            client, "tools/call", {"name": "sleepy", "arguments": {}, "task": {"ttl": 10**400}}
        )
        assert error.code == -32602 and error.data == {"param": "task"}
        assert text_of(await (await client.call_tool_as_task("sleepy")).result()) == "slept 0.0"
