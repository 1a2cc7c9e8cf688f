"""The tasks extension (SEP-2663) end to end: raw 2026-07-28 requests over an in-memory
connection, every server message checked against the 2026-07-28 schema."""

from __future__ import annotations

import asyncio
import itertools
import re
from typing import Any

import msgspec
import pytest

from mcpkit import McpServerApp, McpToolContext, mcp_server, mcp_tool
from mcpkit.server import (
    TASKS_EXTENSION,
    ServerConnection,
    current_task_id,
    deferred_task,
    start_task,
)
from mcpkit.stores import InMemoryTaskStore, SqliteTaskStore
from tests.server._task_tools import FailingTaskTools
from tests.wire import check

VERSION = "2026-07-28"
WITH_TASKS = {"elicitation": {}, "sampling": {}, "extensions": {TASKS_EXTENSION: {}}}
WITHOUT_TASKS = {"elicitation": {}, "sampling": {}}
ISO = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$")
NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
CONFIRM_SCHEMA = {
    "type": "object",
    "properties": {"confirm": {"type": "boolean"}},
    "required": ["confirm"],
}
#: Results the core 2026-07-28 schema describes (task results belong to the extension).
CORE_RESULTS = {"tools/call": "CallToolResult", "server/discover": "DiscoverResult"}


@mcp_server(name="tasks-demo")
class Jobs(FailingTaskTools):
    def __init__(self) -> None:
        self.gate = asyncio.Event()
        self.active = 0
        self.peak = 0
        self.cancelled: list[str] = []
        self.sleeping = asyncio.Event()

    @mcp_tool()
    def echo(self, text: str) -> str:
        return f"echo: {text}"

    async def _sleep_noting_cancellation(self, ctx: McpToolContext, seconds: float) -> None:
        """Sleep, with ``sleeping`` set first; a cancellation is recorded under the task's
        id (``?`` outside a task) so a test can tell which run it reached."""
        self.sleeping.set()
        try:
            await asyncio.sleep(seconds)
        except asyncio.CancelledError:
            self.cancelled.append(current_task_id(ctx) or "?")
            raise

    @mcp_tool(task_support="optional")
    async def sleepy(self, ctx: McpToolContext, seconds: float = 0.0) -> str:
        await self._sleep_noting_cancellation(ctx, seconds)
        return f"slept {seconds}"

    @mcp_tool(task_support="required")
    async def only_task(self) -> str:
        return "ran as a task"

    @mcp_tool(task_support="optional")
    async def gated(self) -> str:
        self.active += 1
        self.peak = max(self.peak, self.active)
        try:
            await self.gate.wait()
        finally:
            self.active -= 1
        return "through the gate"

    @mcp_tool(task_support="optional")
    async def confirm(self, filename: str, ctx: McpToolContext) -> str:
        answer = await ctx.elicit(f"Delete {filename}?", CONFIRM_SCHEMA, key="confirm")
        return (
            f"deleted {filename}" if (answer.content or {}).get("confirm") else f"kept {filename}"
        )

    @mcp_tool(task_support="optional")
    async def two_questions(self, ctx: McpToolContext) -> str:
        answers = await ctx.gather_inputs(
            {
                "name": (
                    "elicitation/create",
                    {"mode": "form", "message": "Name?", "requestedSchema": NAME_SCHEMA},
                ),
                "confirm": (
                    "elicitation/create",
                    {"mode": "form", "message": "Sure?", "requestedSchema": CONFIRM_SCHEMA},
                ),
            }
        )
        return f"name={answers['name']['content']['name']} confirm={answers['confirm']['content']['confirm']}"

    @mcp_tool(task_support="optional")
    async def stateful(self, ctx: McpToolContext) -> str:
        if ctx.request_state is None:
            ctx.request_state = {"runs": 0}
        ctx.request_state = {"runs": ctx.request_state["runs"] + 1}
        first = await ctx.elicit("First?", NAME_SCHEMA, key="first")
        second = await ctx.elicit("Second?", NAME_SCHEMA, key="second")
        return f"{first.content['name']}+{second.content['name']} after {ctx.request_state['runs']} runs"

    @mcp_tool(task_support="required")
    @deferred_task
    async def interview(self, ctx: McpToolContext) -> str:
        name = (await ctx.elicit("Your name?", NAME_SCHEMA, key="user_name")).content["name"]
        as_task = await start_task(ctx)
        await asyncio.sleep(0.05)
        return f"Hello, {name}! task={as_task} id={current_task_id(ctx) is not None}"

    @mcp_tool(task_support="required")
    @deferred_task
    async def interview_more(self, ctx: McpToolContext) -> str:
        name = (await ctx.elicit("Your name?", NAME_SCHEMA, key="user_name")).content["name"]
        await start_task(ctx)
        sure = (await ctx.elicit(f"Go on, {name}?", CONFIRM_SCHEMA, key="go_on")).content["confirm"]
        return f"{name} went on: {sure}"

    @mcp_tool(task_support="optional")
    @deferred_task
    async def maybe_later(self, ctx: McpToolContext, seconds: float = 0.0) -> str:
        await ctx.report_progress(1, 2, "before the task")
        as_task = await start_task(ctx)
        await ctx.report_progress(2, 2, "inside the task: goes nowhere")
        await self._sleep_noting_cancellation(ctx, seconds)
        return f"as_task={as_task}"


class RawClient:
    """Speaks raw JSON-RPC to an app over an in-memory ``ServerConnection``."""

    def __init__(self, app: McpServerApp, *, headers: dict[str, str] | None = None) -> None:
        self.app = app
        self.connection = ServerConnection(app, self._receive, headers=headers)
        self.pending: dict[Any, asyncio.Future[dict[str, Any]]] = {}
        self.methods: dict[Any, str] = {}
        self.notifications: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.ids = itertools.count(1)
        self.modern = True  # validate against the 2026-07-28 schema
        self.errors: list[Exception] = []

    async def _receive(self, frame: bytes) -> None:
        message = msgspec.json.decode(frame)
        if "id" in message and ("result" in message or "error" in message):
            future = self.pending.pop(message["id"], None)
            try:
                self._validate(message)
            except Exception as exc:  # surfaces in the test, not in the connection's log
                self.errors.append(exc)
                if future is not None and not future.done():
                    future.set_exception(exc)
                return
            if future is not None and not future.done():
                future.set_result(message)
        else:
            try:
                if self.modern and not str(message.get("method", "")).startswith(
                    "notifications/tasks"
                ):
                    check(VERSION, "JSONRPCNotification", message)
            except Exception as exc:
                self.errors.append(exc)
            self.notifications.put_nowait(message)

    def _validate(self, message: dict[str, Any]) -> None:
        if not self.modern:
            return
        if "error" in message:
            check(VERSION, "JSONRPCErrorResponse", message)
            return
        check(VERSION, "JSONRPCResultResponse", message)
        result = message["result"]
        assert result.get("resultType") in ("complete", "input_required", "task")
        definition = CORE_RESULTS.get(self.methods.get(message["id"], ""))
        if definition and result["resultType"] == "complete":
            check(VERSION, definition, result)
        elif result["resultType"] == "input_required":
            check(VERSION, "InputRequiredResult", result)

    def send(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        caps: dict[str, Any] | None = None,
    ) -> asyncio.Future[dict[str, Any]]:
        request_id = next(self.ids)
        params = dict(params or {})
        params["_meta"] = {
            "io.modelcontextprotocol/protocolVersion": VERSION,
            "io.modelcontextprotocol/clientCapabilities": WITH_TASKS if caps is None else caps,
            "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
        }
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.pending[request_id] = future
        self.methods[request_id] = method
        self.connection.feed(
            msgspec.json.encode(
                {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
            )
        )
        return future

    async def call(
        self, method: str, params: dict[str, Any] | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        return await asyncio.wait_for(self.send(method, params, **kwargs), 10)

    async def result(
        self, method: str, params: dict[str, Any] | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        response = await self.call(method, params, **kwargs)
        assert "result" in response, response
        return response["result"]

    async def error(
        self, method: str, params: dict[str, Any] | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        response = await self.call(method, params, **kwargs)
        assert "error" in response, response
        return response["error"]

    async def tool(
        self, name: str, arguments: dict[str, Any] | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        return await self.result(
            "tools/call", {"name": name, "arguments": arguments or {}}, **kwargs
        )

    async def tool_again(
        self, name: str, earlier: dict[str, Any], answers: dict[str, Any]
    ) -> dict[str, Any]:
        """Call ``name`` (no arguments) again after its ``input_required`` result ``earlier``,
        with ``answers`` to its input requests and its ``requestState`` handed back."""
        return await self.result(
            "tools/call",
            {
                "name": name,
                "arguments": {},
                "inputResponses": answers,
                "requestState": earlier["requestState"],
            },
        )

    async def get(self, task_id: str) -> dict[str, Any]:
        return await self.result("tasks/get", {"taskId": task_id})

    async def wait_for(self, task_id: str, *statuses: str, timeout: float = 5.0) -> dict[str, Any]:
        wanted = statuses or ("completed", "failed", "cancelled")
        async with asyncio.timeout(timeout):
            while True:
                task = await self.get(task_id)
                if task["status"] in wanted:
                    return task
                await asyncio.sleep(0.01)

    async def next_notification(self, method: str, timeout: float = 5.0) -> dict[str, Any]:
        async with asyncio.timeout(timeout):
            while True:
                message = await self.notifications.get()
                if message.get("method") == method:
                    return message


@pytest.fixture
async def app():
    app = McpServerApp(Jobs)
    await app.start()
    yield app
    await app.stop()


@pytest.fixture
async def client(app):
    raw = RawClient(app)
    yield raw
    await raw.connection.close()
    assert not raw.errors, raw.errors


def jobs(app: McpServerApp) -> Jobs:
    return app.resolve(Jobs)


# --------------------------------------------------------------------------- negotiation


async def test_discover_advertises_the_extension(client):
    result = await client.result("server/discover")
    assert result["capabilities"]["extensions"] == {TASKS_EXTENSION: {}}
    assert "tasks" not in result["capabilities"]


async def test_sync_tool_never_becomes_a_task_even_with_a_legacy_task_param(client):
    result = await client.result(
        "tools/call", {"name": "echo", "arguments": {"text": "hi"}, "task": {"ttl": 1000}}
    )
    assert result["resultType"] == "complete"
    assert result["content"] == [{"type": "text", "text": "echo: hi"}]
    assert "taskId" not in result


async def test_without_the_extension_optional_tools_run_synchronously(client):
    result = await client.tool("sleepy", {"seconds": 0}, caps=WITHOUT_TASKS)
    assert result["resultType"] == "complete"
    assert result["content"][0]["text"] == "slept 0.0"


async def test_without_the_extension_required_tools_fail_with_32021(client):
    error = await client.error("tools/call", {"name": "only_task", "arguments": {}}, caps={})
    assert error["code"] == -32021
    assert error["data"] == {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}}


async def test_without_the_extension_tasks_methods_fail_with_32021(client):
    for method, params in [
        ("tasks/get", {"taskId": "x"}),
        ("tasks/update", {"taskId": "x", "inputResponses": {}}),
        ("tasks/cancel", {"taskId": "x"}),
    ]:
        assert (await client.error(method, params, caps={}))["code"] == -32021


async def test_removed_methods_are_not_found(client):
    assert (await client.error("tasks/result", {"taskId": "x"}))["code"] == -32601
    assert (await client.error("tasks/list", {}))["code"] == -32601


async def test_unknown_task_is_invalid_params(client):
    for method, params in [
        ("tasks/get", {"taskId": "nope"}),
        ("tasks/update", {"taskId": "nope", "inputResponses": {}}),
        ("tasks/cancel", {"taskId": "nope"}),
    ]:
        assert (await client.error(method, params))["code"] == -32602
    assert (await client.error("tasks/get", {"taskId": 12}))["code"] == -32602


# --------------------------------------------------------------------------- lifecycle


async def test_task_is_created_flat_and_completes_with_inlined_result(client):
    created = await client.tool("sleepy", {"seconds": 0.05})
    assert created["resultType"] == "task"
    assert created["status"] == "working"
    assert ISO.match(created["createdAt"]) and ISO.match(created["lastUpdatedAt"])
    assert isinstance(created["ttlMs"], int) and created["ttlMs"] > 0
    assert isinstance(created["pollIntervalMs"], int) and created["pollIntervalMs"] > 0
    for absent in (
        "task",
        "result",
        "error",
        "inputRequests",
        "requestState",
        "ttl",
        "pollInterval",
    ):
        assert absent not in created
    # strongly consistent: reachable at once
    first = await client.get(created["taskId"])
    assert first["taskId"] == created["taskId"] and first["resultType"] == "complete"
    assert first["status"] in ("working", "completed")
    done = await client.wait_for(created["taskId"])
    assert done["status"] == "completed"
    assert done["result"]["content"] == [{"type": "text", "text": "slept 0.05"}]
    assert "io.modelcontextprotocol/related-task" not in (done["result"].get("_meta") or {})
    assert "error" not in done and "inputRequests" not in done


async def test_tool_error_completes_with_is_error_and_protocol_error_fails(client):
    tool_error = await client.tool("tool_error")
    done = await client.wait_for(tool_error["taskId"])
    assert done["status"] == "completed" and done["result"]["isError"] is True
    protocol_error = await client.tool("protocol_error")
    failed = await client.wait_for(protocol_error["taskId"])
    assert failed["status"] == "failed"
    assert failed["error"] == {"code": -32603, "message": "the backend is gone"}
    assert "result" not in failed


async def test_cancel_stops_a_running_task_and_is_idempotent(app, client):
    created = await client.tool("sleepy", {"seconds": 60})
    await asyncio.wait_for(jobs(app).sleeping.wait(), 5)
    ack = await client.result("tasks/cancel", {"taskId": created["taskId"]})
    assert ack["resultType"] == "complete"
    assert not {"taskId", "status", "result", "error", "inputRequests"} & set(ack)
    done = await client.wait_for(created["taskId"])
    assert done["status"] == "cancelled"
    assert jobs(app).cancelled == [created["taskId"]]
    again = await client.result("tasks/cancel", {"taskId": created["taskId"]})
    assert again["resultType"] == "complete"
    assert (await client.get(created["taskId"]))["status"] == "cancelled"


async def test_required_tool_runs_as_a_task(client):
    created = await client.tool("only_task")
    assert created["resultType"] == "task"
    assert (await client.wait_for(created["taskId"]))["result"]["content"][0][
        "text"
    ] == "ran as a task"


# --------------------------------------------------------------------------- input


async def test_task_parks_for_input_and_resumes_on_update(client):
    created = await client.tool("confirm", {"filename": "a.txt"})
    parked = await client.wait_for(created["taskId"], "input_required")
    assert parked["status"] == "input_required"
    assert list(parked["inputRequests"]) == ["confirm"]
    assert parked["inputRequests"]["confirm"]["method"] == "elicitation/create"
    assert "requestState" not in parked
    # unknown keys and malformed answers are ignored; the key stays open
    for responses in ({"unknown": {"ignored": True}}, {"confirm": 12345}):
        ack = await client.result(
            "tasks/update", {"taskId": created["taskId"], "inputResponses": responses}
        )
        assert ack["resultType"] == "complete" and "status" not in ack
        assert (await client.get(created["taskId"]))["status"] == "input_required"
    await client.result(
        "tasks/update",
        {
            "taskId": created["taskId"],
            "inputResponses": {"confirm": {"action": "accept", "content": {"confirm": True}}},
        },
    )
    done = await client.wait_for(created["taskId"])
    assert done["status"] == "completed"
    assert done["result"]["content"][0]["text"] == "deleted a.txt"


async def test_partial_update_keeps_the_other_request_pending(client):
    created = await client.tool("two_questions")
    parked = await client.wait_for(created["taskId"], "input_required")
    assert set(parked["inputRequests"]) == {"name", "confirm"}
    await client.result(
        "tasks/update",
        {
            "taskId": created["taskId"],
            "inputResponses": {"name": {"action": "accept", "content": {"name": "Ada"}}},
        },
    )
    still = await client.get(created["taskId"])
    assert still["status"] == "input_required"
    assert list(still["inputRequests"]) == ["confirm"]
    await client.result(
        "tasks/update",
        {
            "taskId": created["taskId"],
            "inputResponses": {"confirm": {"action": "accept", "content": {"confirm": True}}},
        },
    )
    done = await client.wait_for(created["taskId"])
    assert done["result"]["content"][0]["text"] == "name=Ada confirm=True"


async def test_request_state_and_answers_survive_each_round(client):
    created = await client.tool("stateful")
    parked = await client.wait_for(created["taskId"], "input_required")
    assert list(parked["inputRequests"]) == ["first"]
    await client.result(
        "tasks/update",
        {
            "taskId": created["taskId"],
            "inputResponses": {"first": {"action": "accept", "content": {"name": "a"}}},
        },
    )
    parked = await client.wait_for(created["taskId"], "input_required", "completed")
    # "first" was answered: never asked again; "second" is a new key
    assert list(parked["inputRequests"]) == ["second"]
    await client.result(
        "tasks/update",
        {
            "taskId": created["taskId"],
            "inputResponses": {"second": {"action": "accept", "content": {"name": "b"}}},
        },
    )
    done = await client.wait_for(created["taskId"])
    assert done["result"]["content"][0]["text"] == "a+b after 3 runs"


async def test_cancel_of_a_parked_task_is_immediate(client):
    created = await client.tool("confirm", {"filename": "b.txt"})
    await client.wait_for(created["taskId"], "input_required")
    await client.result("tasks/cancel", {"taskId": created["taskId"]})
    assert (await client.get(created["taskId"]))["status"] == "cancelled"
    await client.result(
        "tasks/update",
        {
            "taskId": created["taskId"],
            "inputResponses": {"confirm": {"action": "accept", "content": {"confirm": True}}},
        },
    )
    assert (await client.get(created["taskId"]))["status"] == "cancelled"


async def test_mrtr_rounds_come_first_then_the_task(client):
    first = await client.tool("interview")
    assert first["resultType"] == "input_required"
    assert "taskId" not in first
    assert list(first["inputRequests"]) == ["user_name"]
    second = await client.tool_again(
        "interview", first, {"user_name": {"action": "accept", "content": {"name": "Alice"}}}
    )
    assert second["resultType"] == "task"
    assert "requestState" not in second and "inputRequests" not in second
    done = await client.wait_for(second["taskId"])
    assert done["status"] == "completed"
    assert done["result"]["content"][0]["text"] == "Hello, Alice! task=True id=True"


async def test_a_deferred_task_asks_again_inside_the_task(client):
    first = await client.tool("interview_more")
    created = await client.tool_again(
        "interview_more", first, {"user_name": {"action": "accept", "content": {"name": "Bo"}}}
    )
    assert created["resultType"] == "task"
    parked = await client.wait_for(created["taskId"], "input_required")
    assert list(parked["inputRequests"]) == ["go_on"]  # the MRTR answer is not asked again
    await client.result(
        "tasks/update",
        {
            "taskId": created["taskId"],
            "inputResponses": {"go_on": {"action": "accept", "content": {"confirm": True}}},
        },
    )
    done = await client.wait_for(created["taskId"])
    assert done["result"]["content"][0]["text"] == "Bo went on: True"


async def test_deferred_tool_without_the_extension_stays_synchronous(client):
    result = await client.tool("maybe_later", caps=WITHOUT_TASKS)
    assert result["resultType"] == "complete"
    assert result["content"][0]["text"] == "as_task=False"
    created = await client.tool("maybe_later")
    assert created["resultType"] == "task"
    assert (await client.wait_for(created["taskId"]))["result"]["content"][0][
        "text"
    ] == "as_task=True"


async def test_cancel_reaches_a_deferred_task(app, client):
    created = await client.tool("maybe_later", {"seconds": 60})
    await asyncio.wait_for(jobs(app).sleeping.wait(), 5)
    assert app.tasks.running == 1
    await client.result("tasks/cancel", {"taskId": created["taskId"]})
    assert (await client.wait_for(created["taskId"]))["status"] == "cancelled"
    assert jobs(app).cancelled == [created["taskId"]]
    assert app.tasks.running == 0


# --------------------------------------------------------------------------- notifications


async def test_listen_streams_status_notifications_for_watched_tasks(client):
    created = await client.tool("confirm", {"filename": "n.txt"})
    task_id = created["taskId"]
    await client.wait_for(task_id, "input_required")
    listen = client.send(
        "subscriptions/listen", {"notifications": {"taskIds": [task_id, "unknown-task"]}}
    )
    ack = await client.next_notification("notifications/subscriptions/acknowledged")
    assert ack["params"]["notifications"] == {"taskIds": [task_id]}
    current = await client.next_notification("notifications/tasks")
    assert (
        current["params"]["taskId"] == task_id and current["params"]["status"] == "input_required"
    )
    assert current["params"]["inputRequests"]["confirm"]["method"] == "elicitation/create"
    subscription_id = ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"]
    assert current["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == subscription_id
    await client.result(
        "tasks/update",
        {
            "taskId": task_id,
            "inputResponses": {"confirm": {"action": "accept", "content": {"confirm": False}}},
        },
    )
    seen = []
    while not seen or seen[-1]["status"] != "completed":
        seen.append((await client.next_notification("notifications/tasks"))["params"])
    assert [note["status"] for note in seen] == ["working", "completed"]
    assert seen[-1]["result"]["content"][0]["text"] == "kept n.txt"
    assert not listen.done()


async def test_listen_for_tasks_needs_the_extension(client):
    error = await client.error(
        "subscriptions/listen", {"notifications": {"taskIds": ["x"]}}, caps={}
    )
    assert error["code"] == -32021
    assert (await client.error("subscriptions/listen", {"notifications": {"taskIds": "x"}}))[
        "code"
    ] == -32602


async def test_listen_without_task_ids_is_unchanged(client):
    client.send("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, caps={})
    ack = await client.next_notification("notifications/subscriptions/acknowledged")
    assert ack["params"]["notifications"] == {"toolsListChanged": True}


# --------------------------------------------------------------------------- bounds, owners, expiry


async def test_running_tasks_are_bounded_and_the_rest_wait_in_working():
    app = McpServerApp(Jobs, max_running_tasks=2)
    await app.start()
    client = RawClient(app)
    try:
        ids = [(await client.tool("gated"))["taskId"] for _ in range(4)]
        async with asyncio.timeout(5):
            while jobs(app).active < 2:
                await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)  # the other two would have started by now, were they allowed
        assert app.tasks.running == 2 and jobs(app).active == 2
        assert [(await client.get(i))["status"] for i in ids] == ["working"] * 4
        jobs(app).gate.set()
        for task_id in ids:
            assert (await client.wait_for(task_id))["status"] == "completed"
        assert jobs(app).peak == 2 and app.tasks.running == 0
    finally:
        await client.connection.close()
        await app.stop()


async def test_tasks_are_visible_only_to_their_owner(app):
    app.tasks.principal = lambda binding: (binding.headers or {}).get("x-user")
    alice, bob = (
        RawClient(app, headers={"x-user": "alice"}),
        RawClient(app, headers={"x-user": "bob"}),
    )
    try:
        created = await alice.tool("confirm", {"filename": "secret"})
        await alice.wait_for(created["taskId"], "input_required")
        for method, params in [
            ("tasks/get", {"taskId": created["taskId"]}),
            ("tasks/update", {"taskId": created["taskId"], "inputResponses": {}}),
            ("tasks/cancel", {"taskId": created["taskId"]}),
        ]:
            assert (await bob.error(method, params))["code"] == -32602
        assert (await alice.get(created["taskId"]))["status"] == "input_required"
    finally:
        await alice.connection.close()
        await bob.connection.close()


async def test_expired_tasks_are_gone_and_swept(app, client):
    app.tasks.ttl_ms = 50
    created = await client.tool("sleepy", {"seconds": 0})
    assert created["ttlMs"] == 50
    await asyncio.sleep(0.08)
    assert (await client.error("tasks/get", {"taskId": created["taskId"]}))["code"] == -32602
    app.tasks.ttl_ms = 200
    jobs(app).sleeping.clear()
    running = await client.tool("sleepy", {"seconds": 60})
    await asyncio.wait_for(jobs(app).sleeping.wait(), 5)
    await asyncio.sleep(0.25)
    assert running["taskId"] in await app.tasks.sweep()
    await asyncio.sleep(0.01)
    assert jobs(app).cancelled == [running["taskId"]]


async def test_a_full_store_refuses_new_tasks():
    app = McpServerApp(Jobs, task_store=InMemoryTaskStore(max_tasks=1))
    await app.start()
    client = RawClient(app)
    try:
        await client.tool("sleepy", {"seconds": 60})
        error = await client.error("tools/call", {"name": "sleepy", "arguments": {"seconds": 60}})
        assert error["code"] == -32603
        assert (await client.tool("echo", {"text": "still fine"}))["resultType"] == "complete"
    finally:
        await client.connection.close()
        await app.stop()


async def test_stopping_the_app_fails_running_tasks():
    store = InMemoryTaskStore()
    app = McpServerApp(Jobs, task_store=store)
    await app.start()
    client = RawClient(app)
    created = await client.tool("sleepy", {"seconds": 60})
    await asyncio.sleep(0.02)
    await app.stop()
    record = await store.get(created["taskId"])
    assert record.status == "failed" and record.error["code"] == -32603
    await client.connection.close()


async def test_a_parked_task_resumes_after_a_restart(tmp_path):
    path = tmp_path / "tasks.db"
    first_store = SqliteTaskStore(path)
    first = McpServerApp(Jobs, task_store=first_store)
    await first.start()
    client = RawClient(first)
    created = await client.tool("confirm", {"filename": "durable.txt"})
    await client.wait_for(created["taskId"], "input_required")
    await client.connection.close()
    await first.stop()
    await first_store.close()

    second_store = SqliteTaskStore(path)
    second = McpServerApp(Jobs, task_store=second_store)
    await second.start()
    client = RawClient(second)
    try:
        parked = await client.get(created["taskId"])
        assert parked["status"] == "input_required" and list(parked["inputRequests"]) == ["confirm"]
        await client.result(
            "tasks/update",
            {
                "taskId": created["taskId"],
                "inputResponses": {"confirm": {"action": "accept", "content": {"confirm": True}}},
            },
        )
        done = await client.wait_for(created["taskId"])
        assert done["result"]["content"][0]["text"] == "deleted durable.txt"
    finally:
        await client.connection.close()
        await second.stop()
        await second_store.close()


async def test_a_running_task_names_the_store_of_its_process(tmp_path):
    """What lets a store fail the tasks of a process that died (tests/stores/
    test_abandoned_tasks*.py): a running task names this process's store; a parked one
    (any process may resume it) and a final one name nobody."""
    store = SqliteTaskStore(tmp_path / "tasks.db")
    app = McpServerApp(Jobs, task_store=store)
    await app.start()
    client = RawClient(app)
    try:
        running = await client.tool("sleepy", {"seconds": 60})
        assert (await store.get(running["taskId"])).runner_id == store.runner_id
        parked = await client.tool("confirm", {"filename": "kept.txt"})
        await client.wait_for(parked["taskId"], "input_required")
        assert (await store.get(parked["taskId"])).runner_id is None
        await client.result(
            "tasks/update",
            {
                "taskId": parked["taskId"],
                "inputResponses": {"confirm": {"action": "accept", "content": {"confirm": False}}},
            },
        )
        assert (await client.wait_for(parked["taskId"]))["status"] == "completed"
        await client.result("tasks/cancel", {"taskId": running["taskId"]})
        assert (await client.wait_for(running["taskId"]))["status"] == "cancelled"
        for task in (parked, running):
            assert (await store.get(task["taskId"])).runner_id is None
    finally:
        await client.connection.close()
        await app.stop()
        await store.close()


# --------------------------------------------------------------------------- the handshake era


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18"])
async def test_handshake_versions_before_2025_11_25_have_no_tasks(app, version):
    """Neither flavour: no extension, no ``tasks`` capability, every call a plain one and
    no tasks/* method. (2025-11-25's tasks: tests/server/test_tasks_2025.py.)"""
    client = RawClient(app)
    client.modern = False

    async def send_raw(message: dict[str, Any]) -> dict[str, Any]:
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        client.pending[message["id"]] = future
        client.connection.feed(msgspec.json.encode({"jsonrpc": "2.0", **message}))
        return await asyncio.wait_for(future, 5)

    try:
        init = await send_raw(
            {
                "id": "i",
                "method": "initialize",
                "params": {
                    "protocolVersion": version,
                    "capabilities": {},
                    "clientInfo": {"name": "old", "version": "1"},
                },
            }
        )
        assert init["result"]["protocolVersion"] == version
        assert "extensions" not in init["result"]["capabilities"]
        assert "tasks" not in init["result"]["capabilities"]
        client.connection.feed(
            msgspec.json.encode({"jsonrpc": "2.0", "method": "notifications/initialized"})
        )
        called = await send_raw(
            {"id": "c", "method": "tools/call", "params": {"name": "only_task", "arguments": {}}}
        )
        assert called["result"]["content"][0]["text"] == "ran as a task"
        augmented = await send_raw(
            {
                "id": "a",
                "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": "x"}, "task": {"ttl": 5000}},
            }
        )
        assert augmented["result"]["content"][0]["text"] == "echo: x"
        for method in ("tasks/get", "tasks/result", "tasks/cancel", "tasks/list"):
            missing = await send_raw({"id": method, "method": method, "params": {"taskId": "x"}})
            assert missing["error"]["code"] == -32601, method
    finally:
        await client.connection.close()


# --------------------------------------------------------------------------- over HTTP


def _http_request(
    method: str, params: dict[str, Any], request_id: int, caps: dict[str, Any] = WITH_TASKS
) -> tuple[dict, dict]:
    body = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": method,
        "params": {
            **params,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": VERSION,
                "io.modelcontextprotocol/clientCapabilities": caps,
            },
        },
    }
    headers = {
        "accept": "application/json, text/event-stream",
        "content-type": "application/json",
        "mcp-protocol-version": VERSION,
        "mcp-method": method,
    }
    name = params.get("taskId") or params.get("name")
    if name is not None:
        headers["mcp-name"] = name
    return body, headers


def _sse_json(text: str) -> list[dict[str, Any]]:
    return [
        msgspec.json.decode(line[5:].strip())
        for line in text.splitlines()
        if line.startswith("data:") and line[5:].strip()
    ]


async def test_tasks_over_streamable_http():
    import httpx

    from tests.http_server import serving

    app = McpServerApp(Jobs)
    async with serving(app) as (url, _), httpx.AsyncClient(timeout=10) as http:

        async def post(
            method: str, params: dict[str, Any], request_id: int, **kwargs: Any
        ) -> httpx.Response:
            body, headers = _http_request(method, params, request_id, **kwargs)
            return await http.post(url, json=body, headers=headers)

        def answer(response: httpx.Response) -> Any:
            if response.headers["content-type"].startswith("text/event-stream"):
                return [m for m in _sse_json(response.text) if "id" in m][-1]
            return response.json()

        # a deferred tool with a progress token: progress before the task streams, after it goes nowhere
        body, headers = _http_request(
            "tools/call", {"name": "maybe_later", "arguments": {"seconds": 0.05}}, 1
        )
        body["params"]["_meta"]["progressToken"] = "p1"
        response = await http.post(url, json=body, headers=headers)
        messages = (
            _sse_json(response.text)
            if response.headers["content-type"].startswith("text/event-stream")
            else [response.json()]
        )
        created = messages[-1]["result"]
        assert created["resultType"] == "task"
        assert [
            m["params"]["message"] for m in messages if m.get("method") == "notifications/progress"
        ] == ["before the task"]
        task_id = created["taskId"]

        # the routing header must match the task id
        body, headers = _http_request("tasks/get", {"taskId": task_id}, 2)
        headers["mcp-name"] = "someone-else"
        mismatch = await http.post(url, json=body, headers=headers)
        assert mismatch.status_code == 400 and mismatch.json()["error"]["code"] == -32020
        refused = await post("tasks/get", {"taskId": task_id}, 3, caps={})
        assert refused.status_code == 400 and refused.json()["error"]["code"] == -32021

        async with asyncio.timeout(5):
            while (task := answer(await post("tasks/get", {"taskId": task_id}, 4))["result"])[
                "status"
            ] != "completed":
                await asyncio.sleep(0.01)
        assert task["result"]["content"][0]["text"] == "as_task=True"

        # status notifications on a subscriptions/listen stream
        parked = answer(
            await post("tools/call", {"name": "confirm", "arguments": {"filename": "h.txt"}}, 5)
        )["result"]
        body, headers = _http_request(
            "subscriptions/listen", {"notifications": {"taskIds": [parked["taskId"]]}}, 6
        )
        seen: list[dict[str, Any]] = []
        async with http.stream("POST", url, json=body, headers=headers) as stream:
            lines = stream.aiter_lines()
            async with asyncio.timeout(5):
                async for line in lines:
                    if line.startswith("data:"):
                        seen.append(msgspec.json.decode(line[5:].strip()))
                        if (
                            seen[-1].get("method") == "notifications/tasks"
                            and seen[-1]["params"]["status"] == "input_required"
                        ):
                            break
                update = await post(
                    "tasks/update",
                    {
                        "taskId": parked["taskId"],
                        "inputResponses": {
                            "confirm": {"action": "accept", "content": {"confirm": True}}
                        },
                    },
                    7,
                )
                assert answer(update)["result"]["resultType"] == "complete"
                async for line in lines:
                    if line.startswith("data:"):
                        seen.append(msgspec.json.decode(line[5:].strip()))
                        if seen[-1].get("params", {}).get("status") == "completed":
                            break
        assert seen[0]["method"] == "notifications/subscriptions/acknowledged"
        assert seen[0]["params"]["notifications"] == {"taskIds": [parked["taskId"]]}
        statuses = [m["params"]["status"] for m in seen if m.get("method") == "notifications/tasks"]
        assert statuses == ["input_required", "working", "completed"]
        assert seen[-1]["params"]["result"]["content"][0]["text"] == "deleted h.txt"
