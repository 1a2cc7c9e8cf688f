"""``McpClient``'s task API: ``call_tool_as_task`` -> ``ToolTask``; ``get_task``,
``get_task_result``, ``cancel_task``, ``list_tasks``, ``wait_for_task``.

* 2026-07-28 (the ``io.modelcontextprotocol/tasks`` extension, SEP-2663) against mcpkit's own
  server (``examples/everything.py``, whose task tools are ``examples/fixtures_tasks.py``),
  in memory and over Streamable HTTP: results inline in ``tasks/get``, input requests
  answered by the handlers through ``tasks/update``, cancellation, tool and JSON-RPC errors,
  a server that answers at once, ``Mcp-Name`` carrying the task id.
* 2025-11-25 (the spec's experimental tasks utility) against ``HandshakeTasks``: a small
  2025-11-25 task receiver grafted onto an mcpkit app here, a second receiver beside
  mcpkit's own (tests/server/test_tasks_2025.py drives that one with this client), whose
  polling interval, notifications and declared capabilities a test sets at will (the
  official ``mcp`` 2.3.0 has no such receiver). In memory and over HTTP:
  ``params.task.ttl``, ``pollInterval`` honoured, a status notification waking the poller,
  ``tasks/result`` (also carrying the elicitation of an ``input_required`` task),
  ``tasks/list`` pages, ``tasks/cancel``, and the capability checks that keep the client
  from sending what the server did not declare.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from mcpkit import (
    InternalError,
    InvalidParamsError,
    McpCallError,
    McpClient,
    McpServerApp,
    McpToolContext,
    ProtocolError,
    mcp_server,
    mcp_tool,
)
from mcpkit.cli._loader import load_app
from mcpkit.client import (
    HttpClientTransportOptions,
    HttpRequestHeaderContext,
    HttpTransportMode,
    ProtocolEraError,
    TaskCancelledError,
    TasksNotSupportedError,
    TaskState,
    ToolTask,
)
from mcpkit.protocol import Era, JsonRpcRequest
from mcpkit.server import TransportBinding
from mcpkit.server._tasks.manager import iso_time
from tests.http_server import serving
from tests.in_memory import serving_in_memory

ROOT = Path(__file__).resolve().parents[2]
EVERYTHING = ROOT / "examples" / "everything.py"
TEST_TIMEOUT = 20.0
CONFIRM = {"type": "object", "properties": {"confirm": {"type": "boolean"}}}


def text_of(result: Any) -> str:
    return result.content[0].text


class Elicit:
    """An elicitation handler that accepts, recording what it was asked."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def __call__(self, params: dict[str, Any]) -> dict[str, Any]:
        self.asked.append(params.get("message", ""))
        properties = (params.get("requestedSchema") or {}).get("properties") or {}
        content = {"name": "Ada"} if "name" in properties else {"confirm": True}
        return {"action": "accept", "content": content}


# =========================================================================================
# 2026-07-28: the tasks extension, against mcpkit's server
# =========================================================================================


def everything(poll_interval_ms: int | None = 50) -> McpServerApp:
    app = load_app(str(EVERYTHING))
    app.tasks.poll_interval_ms = poll_interval_ms
    return app


@contextlib.asynccontextmanager
async def modern_clients(
    app: McpServerApp, transport: str, **kwargs: Any
) -> AsyncIterator[McpClient]:
    """A 2026-07-28 client of ``app``, in memory or over Streamable HTTP."""
    async with asyncio.timeout(TEST_TIMEOUT):
        if transport == "memory":
            async with serving_in_memory(app) as client_end:
                async with McpClient(client_end, protocol_mode="modern", **kwargs) as client:
                    yield client
        else:
            async with serving(app) as (url, _):
                options = HttpClientTransportOptions(endpoint=url, **kwargs.pop("http", {}))
                async with McpClient.http(options, **kwargs) as client:
                    assert client.era is Era.MODERN
                    yield client


TRANSPORTS = ["memory", "http"]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_modern_task_is_polled_to_its_inline_result(transport: str) -> None:
    statuses: list[str] = []
    async with modern_clients(everything(), transport) as client:
        task = await client.call_tool_as_task("slow_compute", {"seconds": 0.3, "label": "x"})
        assert isinstance(task, ToolTask) and task.is_task and task.immediate is None
        assert task.state is not None and task.state.status == "working"
        assert task.state.ttl_ms is not None and task.state.poll_interval_ms == 50
        assert task.task_id is not None
        result = await task.result(on_status=lambda s: statuses.append(s.status))
        assert text_of(result) == "x: done after 0.3 s" and not result.is_error
        assert task.state.status == "completed" and task.state.terminal
        assert statuses[0] == "working" and statuses[-1] == "completed"
        # the same task, by id: state and result
        state = await client.get_task(task.task_id)
        assert state.status == "completed" and state.result is not None
        assert text_of(await client.get_task_result(task.task_id)) == "x: done after 0.3 s"
        # tasks/list is not part of the extension
        with pytest.raises(ProtocolEraError, match="tasks/list"):
            await client.list_tasks()


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_modern_errors_input_and_immediate_answers(transport: str) -> None:
    elicit = Elicit()
    async with modern_clients(everything(), transport, elicitation_handler=elicit) as client:
        # a tool error ends the task completed, with isError (SEP-2663)
        failing = await client.call_tool_as_task("failing_job")
        result = await failing.result()
        assert result.is_error and "failing_job failed" in text_of(result)
        # a JSON-RPC error ends it failed: McpCallError, as call_tool would raise
        broken = await client.call_tool_as_task("protocol_error_job")
        with pytest.raises(McpCallError, match="internal error") as caught:
            await broken.result()
        assert caught.value.code == -32603
        assert broken.state is not None and broken.state.status == "failed"
        # input_required: the handler answers, tasks/update carries it, the task goes on
        confirm = await client.call_tool_as_task("confirm_delete", {"filename": "a.txt"})
        assert text_of(await confirm.result()) == "Deleted a.txt"
        both = await client.call_tool_as_task("multi_input")
        assert text_of(await both.result()) == "name=Ada confirmed=True"
        assert elicit.asked == ["Delete a.txt?", "What is your name?", "Proceed?"]
        # input over MRTR first, then the task (a @deferred_task tool)
        deferred = await client.call_tool_as_task("test_tool_with_task")
        assert deferred.is_task
        assert text_of(await deferred.result()) == "Hello, Ada! (finished as a task)"
        # a tool that never runs as a task: answered at once, and the handle says so
        greeted = await client.call_tool_as_task("greet", {"name": "Bo"})
        assert not greeted.is_task and greeted.task_id is None
        assert await greeted.wait() is None and await greeted.cancel() is None
        assert text_of(await greeted.result()) == "Hello, Bo!"


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_modern_cancel(transport: str) -> None:
    async with modern_clients(everything(), transport) as client:
        task = await client.call_tool_as_task("slow_compute", {"seconds": 30})
        assert await task.cancel() is None  # the extension only acknowledges
        state = await task.wait(timeout=5)
        assert state is not None and state.status == "cancelled"
        with pytest.raises(TaskCancelledError) as caught:
            await task.result()
        assert caught.value.state.task_id == task.task_id
        with pytest.raises(McpCallError) as unknown:
            await client.get_task("no-such-task")
        assert unknown.value.code == -32602


async def test_modern_wait_timeout_and_server_poll_interval() -> None:
    async with modern_clients(everything(poll_interval_ms=200), "memory") as client:
        task = await client.call_tool_as_task("slow_compute", {"seconds": 5})
        assert task.task_id is not None
        began = time.monotonic()
        with pytest.raises(mcpkit_timeout()):
            await client.wait_for_task(task.task_id, timeout=0.5, poll_interval=0.01)
        # the server's 200 ms, not the 10 ms asked for when the server says nothing
        assert 0.45 < time.monotonic() - began < 2
        await client.cancel_task(task.task_id)


def mcpkit_timeout() -> type[BaseException]:
    from mcpkit import RequestTimeoutError

    return RequestTimeoutError


async def test_modern_task_requests_carry_the_task_id_in_mcp_name() -> None:
    seen: list[dict[str, str]] = []

    def record(context: HttpRequestHeaderContext, headers: dict[str, str]) -> None:
        seen.append({k.lower(): v for k, v in headers.items()})

    app = everything()
    async with modern_clients(app, "http", http={"apply_per_request_headers": record}) as client:
        task = await client.call_tool_as_task("slow_compute", {"seconds": 0.1})
        await task.result()
        await client.cancel_task(task.task_id or "")
    by_method = {h.get("mcp-method"): h for h in seen}
    assert by_method["tasks/get"]["mcp-name"] == task.task_id
    assert by_method["tasks/cancel"]["mcp-name"] == task.task_id
    assert by_method["tools/call"]["mcp-name"] == "slow_compute"


# =========================================================================================
# 2025-11-25: the experimental tasks utility, against a receiver grafted onto mcpkit
# =========================================================================================


class TaskBinding(TransportBinding):
    """The binding a task's tool runs with: its requests to the client wait for a
    ``tasks/result`` to carry them (the 2025-11-25 way), the task ``input_required``
    meanwhile."""

    receiver: HandshakeTasks | None = None

    async def client_rpc(
        self, method: str, params: dict[str, Any] | None = None, *, timeout: float | None = None
    ) -> Any:
        receiver, task_id = self.receiver, self.task_id
        assert receiver is not None and task_id is not None
        receiver.set_status(task_id, "input_required", "Waiting for input")
        channel = await receiver.channel(task_id)
        meta = {"io.modelcontextprotocol/related-task": {"taskId": task_id}}
        assert self.session is not None
        answer = await self.session.request(
            method, {**(params or {}), "_meta": meta}, send=channel.send, timeout=timeout
        )
        receiver.set_status(task_id, "working", None)
        return answer


class HandshakeTasks:
    """A 2025-11-25 task receiver on top of an mcpkit app (test double): ``tools/call`` with
    ``params.task`` answers ``{"task": ...}`` and runs the tool in the background; serves
    ``tasks/get``, ``tasks/result`` (held until the task ends), ``tasks/list`` (two per
    page) and ``tasks/cancel``; sends ``notifications/tasks/status`` on status changes."""

    def __init__(self, app: McpServerApp, *, poll_interval_ms: int | None = 50) -> None:
        self.app = app
        self.poll_interval_ms = poll_interval_ms
        self.tasks: dict[str, dict[str, Any]] = {}
        self.done: dict[str, asyncio.Event] = {}
        self.outcomes: dict[str, tuple[str, dict[str, Any]]] = {}
        self.runners: dict[str, asyncio.Task[Any]] = {}
        self.sessions: dict[str, Any] = {}
        self.channels: dict[str, asyncio.Queue[TransportBinding]] = {}
        self.polls: list[float] = []
        self.requested_ttls: list[Any] = []
        self.notes: set[asyncio.Future[Any]] = set()
        self._original = app.dispatcher._handlers["tools/call"]
        dispatcher = app.dispatcher
        dispatcher.register("tools/call", self.tools_call)
        dispatcher.register("tasks/get", self.get)
        dispatcher.register("tasks/result", self.result)
        dispatcher.register("tasks/list", self.list)
        dispatcher.register("tasks/cancel", self.cancel)

    # the task engine --------------------------------------------------------------------

    def set_status(self, task_id: str, status: str, message: str | None) -> None:
        task = self.tasks[task_id]
        if task["status"] in ("completed", "failed", "cancelled"):
            return
        task["status"] = status
        task["lastUpdatedAt"] = iso_time(time.time())
        if message:
            task["statusMessage"] = message
        else:
            task.pop("statusMessage", None)
        session = self.sessions.get(task_id)
        if session is not None and session.send is not None:
            note = {"jsonrpc": "2.0", "method": "notifications/tasks/status", "params": dict(task)}
            self.notes.add(sent := asyncio.ensure_future(session.send(note)))
            sent.add_done_callback(self.notes.discard)
        if status in ("completed", "failed", "cancelled"):
            self.done[task_id].set()

    async def channel(self, task_id: str) -> TransportBinding:
        return await self.channels[task_id].get()

    async def tools_call(
        self, request: JsonRpcRequest, binding: TransportBinding
    ) -> dict[str, Any]:
        params = request.params or {}
        if "task" not in params:
            return await self._original(request, binding)
        self.requested_ttls.append(params["task"].get("ttl"))
        task_id = str(uuid.uuid4())
        now = iso_time(time.time())
        task: dict[str, Any] = {
            "taskId": task_id,
            "status": "working",
            "createdAt": now,
            "lastUpdatedAt": now,
            "ttl": params["task"].get("ttl", 60_000),
        }
        if self.poll_interval_ms is not None:
            task["pollInterval"] = self.poll_interval_ms
        self.tasks[task_id] = task
        self.done[task_id] = asyncio.Event()
        self.channels[task_id] = asyncio.Queue()
        self.sessions[task_id] = binding.session
        runner_binding = TaskBinding(
            session=binding.session,
            headers=binding.headers,
            connection_key=f"{binding.connection_key}/task",
            modern=binding.modern,
            round_inputs=binding.round_inputs,
        )
        runner_binding.receiver, runner_binding.task_id = self, task_id
        inner = JsonRpcRequest(
            id=f"task-{task_id}",
            method="tools/call",
            params={k: v for k, v in params.items() if k != "task"},
        )
        self.runners[task_id] = asyncio.ensure_future(self._run(task_id, inner, runner_binding))
        return {"task": dict(task)}

    async def _run(self, task_id: str, request: JsonRpcRequest, binding: TransportBinding) -> None:
        try:
            result = await self._original(request, binding)
        except ProtocolError as exc:
            self.outcomes[task_id] = ("error", exc.to_error())
            self.set_status(task_id, "failed", exc.message)
            return
        meta = {"io.modelcontextprotocol/related-task": {"taskId": task_id}}
        self.outcomes[task_id] = ("result", {**result, "_meta": meta})
        self.set_status(task_id, "failed" if result.get("isError") else "completed", None)

    def _task(self, request: JsonRpcRequest) -> str:
        task_id = (request.params or {}).get("taskId")
        if task_id not in self.tasks:
            raise InvalidParamsError("Failed to retrieve task: Task not found")
        return task_id  # type: ignore[return-value]

    # tasks/* ---------------------------------------------------------------------------

    async def get(self, request: JsonRpcRequest, binding: TransportBinding) -> dict[str, Any]:
        self.polls.append(time.monotonic())
        return dict(self.tasks[self._task(request)])

    async def result(self, request: JsonRpcRequest, binding: TransportBinding) -> dict[str, Any]:
        task_id = self._task(request)
        while not self.done[task_id].is_set():
            # offer this request's stream to the task's requests until the task ends
            self.channels[task_id].put_nowait(binding)
            finished = asyncio.ensure_future(self.done[task_id].wait())
            await asyncio.wait({finished}, timeout=0.05)
            self._drain(task_id)
        kind, value = self.outcomes[task_id]
        if kind == "error":
            raise ProtocolError(value["message"], value.get("data"), code=value["code"])
        return value

    def _drain(self, task_id: str) -> None:
        queue = self.channels[task_id]
        while not queue.empty():
            queue.get_nowait()

    async def list(self, request: JsonRpcRequest, binding: TransportBinding) -> dict[str, Any]:
        ids = list(self.tasks)
        start = int((request.params or {}).get("cursor") or 0)
        page: dict[str, Any] = {"tasks": [dict(self.tasks[i]) for i in ids[start : start + 2]]}
        if start + 2 < len(ids):
            page["nextCursor"] = str(start + 2)
        return page

    async def cancel(self, request: JsonRpcRequest, binding: TransportBinding) -> dict[str, Any]:
        task_id = self._task(request)
        if self.tasks[task_id]["status"] in ("completed", "failed", "cancelled"):
            raise InvalidParamsError(
                f"Cannot cancel task: already in terminal status '{self.tasks[task_id]['status']}'"
            )
        self.runners[task_id].cancel()
        self.outcomes[task_id] = ("error", {"code": -32603, "message": "The task was cancelled"})
        self.set_status(task_id, "cancelled", "The task was cancelled by request.")
        return dict(self.tasks[task_id])


@mcp_server(name="handshake-tasks")
class Jobs:
    @mcp_tool(description="Sleeps, then reports")
    async def slow(self, seconds: float = 0.2) -> str:
        await asyncio.sleep(seconds)
        return f"slept {seconds}"

    @mcp_tool(description="Fails as a tool")
    def broken_tool(self) -> str:
        raise RuntimeError("broken as a tool")

    @mcp_tool(description="Fails with a JSON-RPC error")
    def broken_call(self) -> str:
        raise InternalError("broken as a call")

    @mcp_tool(description="Asks to confirm, then answers")
    async def confirm(self, ctx: McpToolContext) -> str:
        answer = await ctx.elicit("Really?", CONFIRM)
        return f"confirmed={bool((answer.content or {}).get('confirm'))}"


class TaskServerApp(McpServerApp):
    """Declares the 2025-11-25 ``tasks`` capability (``declared`` says which parts)."""

    declared: dict[str, Any] = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}

    def capabilities(self, version: str | None = None) -> dict[str, Any]:
        caps = super().capabilities(version)
        if version == "2025-11-25" and self.declared:
            caps["tasks"] = self.declared
        return caps


@contextlib.asynccontextmanager
async def handshake_clients(
    transport: str, *, declared: dict[str, Any] | None = None, **kwargs: Any
) -> AsyncIterator[tuple[McpClient, HandshakeTasks]]:
    app = TaskServerApp(Jobs)
    if declared is not None:
        app.declared = declared
    receiver = HandshakeTasks(app, poll_interval_ms=kwargs.pop("poll_interval_ms", 50))
    async with asyncio.timeout(TEST_TIMEOUT):
        if transport == "memory":
            async with serving_in_memory(app) as client_end:
                async with McpClient(client_end, **kwargs) as client:
                    yield client, receiver
        else:
            async with serving(app) as (url, _):
                options = HttpClientTransportOptions(
                    endpoint=url, transport_mode=HttpTransportMode.STREAMABLE_HTTP
                )
                async with McpClient.http(options, protocol_mode="legacy", **kwargs) as client:
                    yield client, receiver


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_handshake_task_with_ttl_polled_and_fetched_with_tasks_result(
    transport: str,
) -> None:
    async with handshake_clients(transport) as (client, receiver):
        assert client.era is Era.HANDSHAKE and client.protocol_version == "2025-11-25"
        task = await client.call_tool_as_task("slow", {"seconds": 0.3}, ttl_ms=30_000)
        assert receiver.requested_ttls == [30_000]
        assert task.state is not None
        assert task.state.status == "working" and task.state.ttl_ms == 30_000
        assert task.state.poll_interval_ms == 50
        result = await task.result()
        assert text_of(result) == "slept 0.3"
        assert result.meta == {"io.modelcontextprotocol/related-task": {"taskId": task.task_id}}
        assert task.state.status == "completed"
        # by id
        assert task.task_id is not None
        state = await client.get_task(task.task_id)
        assert isinstance(state, TaskState) and state.status == "completed"
        assert state.result is None  # 2025-11-25 keeps it for tasks/result
        assert text_of(await client.get_task_result(task.task_id)) == "slept 0.3"
        # no ttl: an empty task object
        await client.call_tool_as_task("slow", {"seconds": 0})
        assert receiver.requested_ttls == [30_000, None]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_handshake_failures_input_list_and_cancel(transport: str) -> None:
    elicit = Elicit()
    async with handshake_clients(transport, elicitation_handler=elicit) as (client, _):
        tool_error = await client.call_tool_as_task("broken_tool")
        result = await tool_error.result()
        assert result.is_error and tool_error.state is not None
        assert tool_error.state.status == "failed"  # isError: failed, in 2025-11-25
        call_error = await client.call_tool_as_task("broken_call")
        with pytest.raises(McpCallError, match="broken as a call"):
            await call_error.result()
        # input_required: tasks/result carries the elicitation, the handler answers it
        confirm = await client.call_tool_as_task("confirm")
        statuses: list[str] = []
        assert text_of(await confirm.result(on_status=lambda s: statuses.append(s.status))) == (
            "confirmed=True"
        )
        assert "input_required" in statuses and statuses[-1] == "completed"
        assert elicit.asked == ["Really?"]
        # cancel: the new state comes back; a second cancel is the server's -32602
        slow = await client.call_tool_as_task("slow", {"seconds": 30})
        cancelled = await slow.cancel()
        assert cancelled is not None and cancelled.status == "cancelled"
        assert cancelled.status_message == "The task was cancelled by request."
        with pytest.raises(McpCallError) as again:
            await slow.cancel()
        assert again.value.code == -32602
        # every task, through the pages (two per page)
        listed = await client.list_tasks()
        assert [s.task_id for s in listed] == [
            t.task_id for t in (tool_error, call_error, confirm, slow)
        ]
        assert [s.status for s in listed] == ["failed", "failed", "completed", "cancelled"]


async def test_handshake_poll_interval_is_honoured_and_a_notification_wakes_the_poller() -> None:
    async with handshake_clients("memory", poll_interval_ms=150) as (client, receiver):
        task = await client.call_tool_as_task("slow", {"seconds": 0.5})
        await task.wait(poll_interval=0.01)  # the server's 150 ms wins
        gaps = [b - a for a, b in itertools.pairwise(receiver.polls)]
        # every wait lasts the server's interval, but the last, which the "completed"
        # status notification may cut short
        assert len(gaps) >= 2 and min(gaps[:-1]) >= 0.12
        assert len(receiver.polls) <= 6
    # a server suggesting a long interval: its status notification ends the wait early
    async with handshake_clients("memory", poll_interval_ms=60_000) as (client, receiver):
        task = await client.call_tool_as_task("slow", {"seconds": 0.2})
        began = time.monotonic()
        state = await task.wait()
        assert state is not None and state.status == "completed"
        assert time.monotonic() - began < 5
        assert len(receiver.polls) == 2  # the first poll, and the one the notification woke
    # no interval from the server: the one asked for
    async with handshake_clients("memory", poll_interval_ms=None) as (client, receiver):
        task = await client.call_tool_as_task("slow", {"seconds": 0.3})
        assert task.state is not None and task.state.poll_interval_ms is None
        assert task.task_id is not None
        await client.wait_for_task(task.task_id, poll_interval=0.05)
        assert len(receiver.polls) >= 3


async def test_handshake_client_sends_nothing_the_server_did_not_declare() -> None:
    async with handshake_clients("memory", declared={}) as (client, receiver):
        with pytest.raises(TasksNotSupportedError, match=r"requests\.tools\.call"):
            await client.call_tool_as_task("slow")
        assert receiver.requested_ttls == []
        with pytest.raises(TasksNotSupportedError, match=r"tasks\.list"):
            await client.list_tasks()
        with pytest.raises(TasksNotSupportedError, match=r"tasks\.cancel"):
            await client.cancel_task("any")
    only_calls = {"requests": {"tools": {"call": {}}}}
    async with handshake_clients("memory", declared=only_calls) as (client, _):
        task = await client.call_tool_as_task("slow", {"seconds": 0})
        assert text_of(await task.result()) == "slept 0.0"
        with pytest.raises(TasksNotSupportedError):
            await client.list_tasks()


async def test_a_server_ignoring_the_task_field_answers_at_once() -> None:
    """2025-11-25: a server may process a task-augmented request normally."""

    @mcp_server(name="plain")
    class Plain:
        @mcp_tool(description="Answers")
        def hello(self) -> str:
            return "hello"

    app = TaskServerApp(Plain)  # declares tasks, but nothing serves them
    async with serving_in_memory(app) as client_end:
        async with asyncio.timeout(TEST_TIMEOUT), McpClient(client_end) as client:
            task = await client.call_tool_as_task("hello")
            assert not task.is_task and text_of(await task.result()) == "hello"


def test_task_state_reads_both_eras() -> None:
    old = TaskState.from_wire(
        {
            "taskId": "a",
            "status": "working",
            "createdAt": "2025-11-25T10:30:00Z",
            "lastUpdatedAt": "2025-11-25T10:40:00Z",
            "ttl": 60000,
            "pollInterval": 5000,
        }
    )
    new = TaskState.from_wire(
        {
            "taskId": "a",
            "status": "completed",
            "createdAt": "2025-11-25T10:30:00Z",
            "lastUpdatedAt": "2025-11-25T10:40:00Z",
            "ttlMs": None,
            "pollIntervalMs": 5000,
            "result": {"content": []},
        }
    )
    assert (old.ttl_ms, old.poll_interval_ms, old.terminal) == (60000, 5000, False)
    assert (new.ttl_ms, new.poll_interval_ms, new.terminal) == (None, 5000, True)
    assert new.result == {"content": []}
    import msgspec

    with pytest.raises(msgspec.ValidationError):
        TaskState.from_wire({"status": "working"})
