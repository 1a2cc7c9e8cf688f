"""Scale-out: several mcpkit server processes (``mcpkit run examples/everything.py
--transport http --redis-url ...``) behind an imaginary load balancer, one real
redis-server, requests spread round-robin. Any instance serves any request of a session;
notifications reach the client's GET stream wherever it is; a client whose instance dies
resumes on another with nothing lost; answers to server-to-client requests find the
instance that waits; a Redis outage is a clear 503 and the cluster recovers. Also: the
same in one process (shared memory stores, in-process bus), the cap across instances,
and SQLite durability across a restart."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcpkit import McpServerApp
from mcpkit.protocol import SseDecoder
from mcpkit.stores import (
    FileEventStore,
    FileSessionStore,
    InMemoryEventStore,
    InMemorySessionStore,
    InProcessMessageBus,
    RedisHub,
    redis_options,
)
from tests.http_server import serving
from tests.ports import Announced, launch
from tests.redis_server import RedisServer, needs_redis
from tests.wire import SchemaChecker

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "everything.py"
VERSION = "2025-11-25"
ACCEPT_BOTH = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": VERSION,
        "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "scale", "version": "1"},
    },
}

pytestmark = pytest.mark.timeout(120)


# --- the cluster ------------------------------------------------------------------------------


class Instance:
    """One ``mcpkit run`` process, on the port the system gives it."""

    def __init__(self, name: str, redis_url: str) -> None:
        self.name = name
        self.url = ""
        self.redis_url = redis_url
        self.served: Announced | None = None

    def start(self) -> Instance:
        command = [sys.executable, "-m", "mcpkit", "run", str(EXAMPLE), "--transport", "http"]
        command += ["--port", "0", "--redis-url", self.redis_url]
        env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
        self.served = launch(command, stream="both", cwd=ROOT, env=env)
        self.url = self.served.url
        return self

    def kill(self) -> None:
        if self.served is not None and self.served.process.poll() is None:
            self.served.process.kill()
            self.served.stop()


@contextlib.contextmanager
def three_instances(redis_url: str) -> Iterator[list[Instance]]:
    """Instances A, B and C sharing one Redis, started in order and all killed when the
    block ends, whatever happened (a test may kill one itself first)."""
    instances = [Instance(name, redis_url) for name in "ABC"]
    try:
        for instance in instances:
            instance.start()
        yield instances
    finally:
        for instance in instances:
            instance.kill()


@pytest.fixture(scope="module")
def cluster(
    redis_server: RedisServer,
) -> Iterator[dict[str, Instance]]:
    """The module's three instances, by name, for tests that leave them running."""
    with three_instances(redis_server.url) as instances:
        yield {instance.name: instance for instance in instances}


# --- a raw client that picks the instance of every request ------------------------------------


def events_of(body: bytes) -> list[tuple[str | None, dict | None]]:
    return [(e.id, json.loads(e.data) if e.data else None) for e in SseDecoder().feed(body)]


async def messages_as_they_come(response: httpx.Response) -> AsyncIterator[dict]:
    """The JSON-RPC messages of a streamed SSE response, each as soon as it arrives (so a
    test can answer a server-to-client request while the call still waits); events
    without data, such as the priming one, are passed over."""
    decoder = SseDecoder()
    async for chunk in response.aiter_bytes():
        for event in decoder.feed(chunk):
            if event.data:
                yield json.loads(event.data)


class Client:
    """One MCP session over raw HTTP; each request names the instance it goes to (or takes
    the next one round-robin). Every JSON-RPC message from the servers is schema-checked."""

    def __init__(self, http: httpx.AsyncClient, instances: list[Instance]) -> None:
        self.http = http
        self.instances = instances
        self._turn = itertools.cycle(instances)
        self.session_id: str | None = None
        self.checker = SchemaChecker(VERSION)
        self._ids = itertools.count(2)

    def headers(self, **extra: str) -> dict[str, str]:
        h = dict(ACCEPT_BOTH)
        if self.session_id:
            h["mcp-session-id"] = self.session_id
            h["mcp-protocol-version"] = VERSION
        h.update(extra)
        return h

    def pick(self, at: Instance | None) -> Instance:
        return at if at is not None else next(self._turn)

    async def post(
        self, message: dict, at: Instance | None = None, **headers: str
    ) -> httpx.Response:
        self.checker.outgoing_from_client(message)
        response = await self.http.post(
            self.pick(at).url, json=message, headers=self.headers(**headers)
        )
        kind = response.headers.get("content-type", "")
        if kind.startswith("application/json") and response.content:
            self.checker.from_server(response.json())
        elif kind.startswith("text/event-stream"):
            for _, data in events_of(response.content):
                if data is not None:
                    self.checker.from_server(data)
        return response

    async def initialize(self, at: Instance | None = None) -> httpx.Response:
        response = await self.post(INIT, at)
        assert response.status_code == 200, response.text
        self.session_id = response.headers["mcp-session-id"]
        note = await self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert note.status_code == 202, note.text
        return response

    async def request(
        self, method: str, params: dict | None = None, at: Instance | None = None, **headers: str
    ) -> dict:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": next(self._ids), "method": method}
        if params is not None:
            message["params"] = params
        response = await self.post(message, at, **headers)
        assert response.status_code == 200, response.text
        if response.headers["content-type"].startswith("text/event-stream"):
            return [
                data
                for _, data in events_of(response.content)
                if data and "id" in data and "method" not in data
            ][-1]
        return response.json()

    async def call(
        self, tool: str, arguments: dict | None = None, at: Instance | None = None
    ) -> dict:
        reply = await self.request("tools/call", {"name": tool, "arguments": arguments or {}}, at)
        assert "result" in reply, reply
        return reply["result"]


class Listener:
    """A GET stream kept open in the background, collecting what arrives."""

    def __init__(self, client: Client, at: Instance, last_event_id: str | None = None) -> None:
        self.client = client
        self.at = at
        self.events: list[tuple[str | None, dict | None]] = []
        self.status: int | None = None
        self._open = asyncio.Event()
        headers = client.headers(accept="text/event-stream")
        if last_event_id is not None:
            headers["last-event-id"] = last_event_id
        self._task = asyncio.create_task(self._run(headers))

    async def _run(self, headers: dict[str, str]) -> None:
        decoder = SseDecoder()
        try:
            async with self.client.http.stream(
                "GET", self.at.url, headers=headers, timeout=httpx.Timeout(60, read=None)
            ) as response:
                self.status = response.status_code
                self._open.set()
                async for chunk in response.aiter_bytes():
                    for event in decoder.feed(chunk):
                        data = json.loads(event.data) if event.data else None
                        if data is not None:
                            self.client.checker.from_server(data)
                        self.events.append((event.id, data))
        except httpx.HTTPError:
            pass
        finally:
            self._open.set()

    async def opened(self) -> Listener:
        async with asyncio.timeout(10):
            await self._open.wait()
        assert self.status == 200
        async with asyncio.timeout(10):  # primed: the stream is attached and relaying
            while not self.events:
                await asyncio.sleep(0.01)
        return self

    def messages(self, method: str | None = None) -> list[dict]:
        return [
            d
            for _, d in self.events
            if d is not None and (method is None or d.get("method") == method)
        ]

    async def wait_for(self, method: str, count: int = 1, timeout: float = 10) -> list[dict]:
        async with asyncio.timeout(timeout):
            while len(self.messages(method)) < count:
                await asyncio.sleep(0.02)
        return self.messages(method)

    @property
    def last_id(self) -> str:
        return [i for i, _ in self.events if i][-1]

    async def close(self) -> None:
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)


@contextlib.asynccontextmanager
async def http_client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=30) as http:
        yield http


async def session_on(
    http: httpx.AsyncClient, instances: list[Instance], at: Instance | None = None
) -> Client:
    """A ``Client`` over ``instances`` with its session set up (``initialize`` sent to ``at``)."""
    client = Client(http, instances)
    await client.initialize(at=at)
    return client


# --- three processes, one Redis ---------------------------------------------------------------


@needs_redis
async def test_every_instance_serves_a_session_created_on_one(cluster):
    a, b, c = cluster["A"], cluster["B"], cluster["C"]
    async with http_client() as http:
        client = await session_on(http, [a, b, c], at=a)  # initialized goes to B
        assert (await client.call("calculate", {"a": 2, "b": 3}, at=c))["structuredContent"] == {
            "result": 5.0
        }
        names = {
            tool["name"] for tool in (await client.request("tools/list", at=a))["result"]["tools"]
        }
        assert "test_tool_with_logging" in names
        assert (await client.request("logging/setLevel", {"level": "error"}, at=b))["result"] == {}
        await asyncio.sleep(
            0.2
        )  # C adopted the session before the change; it hears of it on the bus
        for number, instance in enumerate((a, b, c)):
            call = {
                "jsonrpc": "2.0",
                "id": 90 + number,
                "method": "tools/call",
                "params": {"name": "test_tool_with_logging", "arguments": {}},
            }
            response = await client.post(call, at=instance)
            messages = (
                [d for _, d in events_of(response.content) if d]
                if response.headers["content-type"] == "text/event-stream"
                else [response.json()]
            )
            assert (
                messages[-1]["result"]["content"][0]["text"]
                == "Tool with logging executed successfully"
            )
            assert not [m for m in messages if m.get("method") == "notifications/message"], (
                instance.name
            )
        assert (await http.delete(c.url, headers=client.headers())).status_code == 200
        await asyncio.sleep(0.2)  # the other replicas hear of it on the bus
        for instance in (a, b, c):
            gone = await client.post({"jsonrpc": "2.0", "id": 5, "method": "ping"}, at=instance)
            assert gone.status_code == 404 and gone.json()["error"]["code"] == -32009


@needs_redis
async def test_a_get_stream_on_a_hears_what_c_and_b_trigger_once(cluster):
    a, b, c = cluster["A"], cluster["B"], cluster["C"]
    async with http_client() as http:
        client = await session_on(http, [a, b, c], at=b)
        await client.call("calculate", {"a": 1, "b": 1}, at=c)  # every instance has a replica now
        listener = await Listener(client, a).opened()
        await client.request("resources/subscribe", {"uri": "test://watched-resource"}, at=b)
        await client.call(
            "save_note", {"key": "fanout", "text": "one"}, at=c
        )  # a new resource: list_changed
        await client.call("update_watched_resource", at=c)  # resources/updated for the subscriber
        changed = await listener.wait_for("notifications/resources/list_changed")
        updated = await listener.wait_for("notifications/resources/updated")
        await asyncio.sleep(0.5)  # duplicates, if any, would have arrived by now
        assert len(listener.messages("notifications/resources/list_changed")) == len(changed) == 1
        assert len(listener.messages("notifications/resources/updated")) == len(updated) == 1
        assert updated[0]["params"] == {"uri": "test://watched-resource"}
        ids = [i for i, _ in listener.events if i]
        assert len(ids) == len(set(ids))
        await listener.close()


@needs_redis
async def test_client_resumes_on_b_after_a_dies_mid_stream_with_nothing_lost(redis_server):
    with three_instances(redis_server.url) as (a, b, c):
        async with http_client() as http:
            client = await session_on(http, [a, b, c], at=c)
            listener = await Listener(client, a).opened()
            await client.call("save_note", {"key": "first", "text": "1"}, at=c)
            await listener.wait_for("notifications/resources/list_changed")
            resume_from = listener.last_id
            a.kill()  # mid-stream: the GET breaks, A's replica is gone
            await listener.close()
            await client.call(
                "save_note", {"key": "second", "text": "2"}, at=c
            )  # while the client is away
            await client.call("save_note", {"key": "third", "text": "3"}, at=b)
            resumed = await Listener(client, b, last_event_id=resume_from).opened()
            missed = await resumed.wait_for("notifications/resources/list_changed", 2)
            await client.call("save_note", {"key": "fourth", "text": "4"}, at=c)  # and live again
            await resumed.wait_for("notifications/resources/list_changed", 3)
            await asyncio.sleep(0.3)
            assert (
                len(missed) == 2
                and len(resumed.messages("notifications/resources/list_changed")) == 3
            )
            ids = [i for i, _ in listener.events + resumed.events if i]
            assert len(ids) == len(set(ids))
            await resumed.close()


@needs_redis
async def test_elicitation_sent_by_b_is_answered_through_c(cluster):
    a, b, c = cluster["A"], cluster["B"], cluster["C"]
    async with http_client() as http:
        client = await session_on(http, [a, b, c], at=a)
        call = {
            "jsonrpc": "2.0",
            "id": 41,
            "method": "tools/call",
            "params": {"name": "test_elicitation", "arguments": {"message": "Who?"}},
        }
        seen: list[dict] = []
        async with http.stream("POST", b.url, json=call, headers=client.headers()) as response:
            assert response.headers["content-type"] == "text/event-stream"
            async for data in messages_as_they_come(response):
                client.checker.from_server(data)
                seen.append(data)
                if data.get("method") == "elicitation/create":
                    answer = {
                        "jsonrpc": "2.0",
                        "id": data["id"],
                        "result": {
                            "action": "accept",
                            "content": {"username": "ada", "email": "ada@example.com"},
                        },
                    }
                    assert (await client.post(answer, at=c)).status_code == 202
        request = next(d for d in seen if d.get("method") == "elicitation/create")
        assert "/" in request["id"]  # the id names the instance that waits
        result = seen[-1]
        assert result["id"] == 41
        assert result["result"]["content"][0]["text"] == (
            'User response: action=accept, content={"username": "ada", "email": "ada@example.com"}'
        )


@needs_redis
async def test_a_question_on_the_get_stream_is_answered_anywhere(cluster):
    """A JSON-only call on B asks the user through the standalone stream held by A; the
    answer goes to C; B answers the call."""
    a, b, c = cluster["A"], cluster["B"], cluster["C"]
    async with http_client() as http:
        client = await session_on(http, [a, b, c], at=c)
        listener = await Listener(client, a).opened()
        call = {
            "jsonrpc": "2.0",
            "id": 51,
            "method": "tools/call",
            "params": {"name": "test_elicitation", "arguments": {"message": "Name?"}},
        }
        pending = asyncio.create_task(
            http.post(b.url, json=call, headers=client.headers(accept="application/json"))
        )
        asked = (await listener.wait_for("elicitation/create"))[0]
        answer = {
            "jsonrpc": "2.0",
            "id": asked["id"],
            "result": {
                "action": "accept",
                "content": {"username": "bo", "email": "bo@example.com"},
            },
        }
        assert (await client.post(answer, at=c)).status_code == 202
        response = await asyncio.wait_for(pending, 10)
        assert response.json()["result"]["content"][0]["text"].startswith(
            'User response: action=accept, content={"username": "bo"'
        )
        await listener.close()


@needs_redis
async def test_a_task_started_on_a_is_polled_on_b_and_c(cluster):
    """2026-07-28 tasks: no session, the task lives in Redis; any instance reports it."""
    a, b, c = cluster["A"], cluster["B"], cluster["C"]
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {
            "extensions": {"io.modelcontextprotocol/tasks": {}}
        },
    }

    def modern(method: str, name: str) -> dict[str, str]:
        return dict(
            ACCEPT_BOTH,
            **{"mcp-protocol-version": "2026-07-28", "mcp-method": method, "mcp-name": name},
        )

    async with http_client() as http:
        call = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {
                "name": "slow_compute",
                "arguments": {"seconds": 0.3, "label": "spread"},
                "_meta": meta,
            },
        }
        created = (
            await http.post(a.url, json=call, headers=modern("tools/call", "slow_compute"))
        ).json()["result"]
        assert created["resultType"] == "task"
        task_id = created["taskId"]
        seen = []
        async with asyncio.timeout(10):
            for instance in itertools.cycle([b, c]):
                get = {
                    "jsonrpc": "2.0",
                    "id": 2,
                    "method": "tasks/get",
                    "params": {"taskId": task_id, "_meta": meta},
                }
                reply = (
                    await http.post(instance.url, json=get, headers=modern("tasks/get", task_id))
                ).json()
                seen.append(reply["result"]["status"])
                if reply["result"]["status"] == "completed":
                    break
                await asyncio.sleep(0.05)
        assert reply["result"]["result"]["content"][0]["text"] == "spread: done after 0.3 s"
        assert set(seen) <= {"working", "completed"}


@needs_redis
async def test_a_post_stream_closed_mid_call_resumes_on_another_instance(cluster):
    a, b, c = cluster["A"], cluster["B"], cluster["C"]
    async with http_client() as http:
        client = await session_on(http, [a, b, c], at=b)
        response = await client.post(
            {
                "jsonrpc": "2.0",
                "id": 8,
                "method": "tools/call",
                "params": {"name": "test_reconnection", "arguments": {}},
            },
            at=a,
        )
        events = events_of(response.content)
        assert events and events[-1][1] is None  # SEP-1699: only the priming event, then closed
        resumed = await http.get(
            c.url,
            headers=client.headers(accept="text/event-stream", **{"last-event-id": events[-1][0]}),
        )
        rest = [d for _, d in events_of(resumed.content) if d]
        assert rest[-1]["id"] == 8
        assert (
            rest[-1]["result"]["content"][0]["text"] == "Reconnection test completed successfully"
        )


@needs_redis
async def test_a_modern_listen_stream_on_a_hears_a_change_made_on_c(cluster):
    """2026-07-28: no session, no affinity; subscriptions/listen still hears every instance."""
    a, c = cluster["A"], cluster["C"]
    listen = {
        "jsonrpc": "2.0",
        "id": "sub-1",
        "method": "subscriptions/listen",
        "params": {
            "notifications": {"resourcesListChanged": True},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
    headers = dict(
        ACCEPT_BOTH, **{"mcp-protocol-version": "2026-07-28", "mcp-method": "subscriptions/listen"}
    )
    got: list[dict] = []
    async with http_client() as http:
        client = await session_on(http, [c])

        async def listen_on_a() -> None:
            async with http.stream(
                "POST", a.url, json=listen, headers=headers, timeout=httpx.Timeout(30, read=None)
            ) as response:
                assert response.status_code == 200
                async for message in messages_as_they_come(response):
                    got.append(message)

        task = asyncio.create_task(listen_on_a())
        try:
            async with asyncio.timeout(10):
                while not any(
                    m.get("method") == "notifications/subscriptions/acknowledged" for m in got
                ):
                    await asyncio.sleep(0.02)
            await client.call("save_note", {"key": "modern", "text": "x"}, at=c)
            async with asyncio.timeout(10):
                while not any(
                    m.get("method") == "notifications/resources/list_changed" for m in got
                ):
                    await asyncio.sleep(0.02)
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        changed = next(m for m in got if m.get("method") == "notifications/resources/list_changed")
        assert changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "sub-1"


@needs_redis
async def test_redis_outage_is_a_clear_503_and_the_session_works_after(redis_server):
    with three_instances(redis_server.url) as (a, b, c):
        async with http_client() as http:
            client = await session_on(http, [a, b, c], at=a)
            await client.call("calculate", {"a": 1, "b": 2}, at=a)
            survivor = await Listener(client, a).opened()  # open across the outage
            redis_server.stop(save=True)
            fresh = await http.post(b.url, json=INIT, headers=ACCEPT_BOTH)
            assert fresh.status_code == 503
            body = fresh.json()
            assert body["error"]["code"] == -32603 and "unavailable" in body["error"]["message"]
            adopt = await client.post(
                {"jsonrpc": "2.0", "id": 3, "method": "ping"}, at=c
            )  # C never saw it
            assert adopt.status_code == 503 and adopt.json()["id"] == 3
            stream = await http.get(c.url, headers=client.headers(accept="text/event-stream"))
            assert stream.status_code == 503
            redis_server.start()
            async with asyncio.timeout(20):
                while (
                    await client.post({"jsonrpc": "2.0", "id": 4, "method": "ping"}, at=c)
                ).status_code != 200:
                    await asyncio.sleep(0.2)
            progress = await client.request(
                "tools/call",
                {
                    "name": "test_tool_with_progress",
                    "arguments": {},
                    "_meta": {"progressToken": "t"},
                },
                at=b,
            )
            assert (
                progress["result"]["content"][0]["text"]
                == "Tool with progress executed successfully"
            )
            await client.call("save_note", {"key": "after", "text": "x"}, at=c)
            await survivor.wait_for("notifications/resources/list_changed")  # A resubscribed
            await survivor.close()
            await session_on(http, [a, b, c], at=b)  # and a new session can start


# --- in one process ---------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def two_instances(**shared: Any) -> AsyncIterator[list[Instance]]:
    """Two apps of everything.py in this process, each with its own handler, sharing the
    given stores; ``message_bus`` is a factory (one bus per instance)."""
    sys.path.insert(0, str(EXAMPLE.parent))
    from mcpkit.cli._loader import load_app

    bus_factory = shared.pop("message_bus", None)
    async with contextlib.AsyncExitStack() as stack:
        instances = []
        for name in "AB":
            app: McpServerApp = load_app(str(EXAMPLE))
            options = dict(shared)
            if bus_factory is not None:
                options["message_bus"] = bus_factory()
            url, _ = await stack.enter_async_context(serving(app, **options))
            instance = Instance(name, "")
            instance.url = url
            instances.append(instance)
        yield instances


async def test_apps_sharing_memory_stores_and_an_in_process_bus_act_as_one():
    hub: list[InProcessMessageBus] = []
    async with (
        two_instances(
            session_store=InMemorySessionStore(),
            event_store=InMemoryEventStore(),
            message_bus=lambda: InProcessMessageBus(hub),
        ) as (a, b),
        http_client() as http,
    ):
        client = await session_on(http, [a, b], at=a)
        listener = await Listener(client, b).opened()
        await client.call("save_note", {"key": "local", "text": "x"}, at=a)
        await listener.wait_for("notifications/resources/list_changed")

        async def elicit_on_a(
            request_id: int, reply_through_b: Callable[[dict], dict]
        ) -> list[dict]:
            """Call ``test_elicitation`` on A; post ``reply_through_b(question)`` to B when it asks."""
            seen: list[dict] = []
            call = {
                "jsonrpc": "2.0",
                "id": request_id,
                "method": "tools/call",
                "params": {"name": "test_elicitation", "arguments": {"message": "?"}},
            }
            async with http.stream("POST", a.url, json=call, headers=client.headers()) as response:
                async for data in messages_as_they_come(response):
                    seen.append(data)
                    if data.get("method") == "elicitation/create":
                        assert (await client.post(reply_through_b(data), at=b)).status_code == 202
            return seen

        seen = await elicit_on_a(
            9, lambda asked: {"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "decline"}}
        )
        assert seen[-1]["result"]["content"][0]["text"].startswith("User response: action=decline")
        await asyncio.sleep(0.2)
        assert len(listener.messages("notifications/resources/list_changed")) == 1
        # a cancellation posted to B reaches the call running on A
        cancel = {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": 10},
        }
        async with asyncio.timeout(10):
            seen = await elicit_on_a(10, lambda asked: cancel)
        assert [m.get("method") for m in seen] == ["elicitation/create"]  # no answer: cancelled
        await listener.close()


@needs_redis
async def test_the_session_cap_holds_across_instances(redis_server):
    redis_server.flush()
    hub = RedisHub(redis_server.url, prefix="cap-test")
    try:
        stores = redis_options(hub)
        async with (
            two_instances(
                max_sessions=2,
                message_bus=lambda: stores["message_bus"],
                **{k: v for k, v in stores.items() if k != "message_bus"},
            ) as (a, b),
            http_client() as http,
        ):
            first = await session_on(http, [a], at=a)
            await session_on(http, [b], at=b)  # the second session: the cap is reached
            for instance in (a, b):
                full = await http.post(instance.url, json=INIT, headers=ACCEPT_BOTH)
                assert full.status_code == 503 and full.json()["error"]["code"] == -32603
            assert (await http.delete(b.url, headers=first.headers())).status_code == 200
            assert (await http.post(a.url, json=INIT, headers=ACCEPT_BOTH)).status_code == 200
    finally:
        await hub.aclose()


async def test_sqlite_stores_resume_a_session_after_a_restart(tmp_path):
    sys.path.insert(0, str(EXAMPLE.parent))
    from mcpkit.cli._loader import load_app

    def stores() -> dict[str, Any]:
        return {
            "session_store": FileSessionStore(tmp_path / "sessions.db"),
            "event_store": FileEventStore(tmp_path / "events.db"),
        }

    async with http_client() as http:
        first = stores()
        async with serving(load_app(str(EXAMPLE)), **first) as (url, _):
            instance = Instance("before", "")
            instance.url = url
            client = await session_on(http, [instance])
            listener = await Listener(client, instance).opened()
            await client.call("save_note", {"key": "one", "text": "1"})
            await listener.wait_for("notifications/resources/list_changed")
            resume_from = listener.last_id
            await client.call("save_note", {"key": "two", "text": "2"})
            await listener.wait_for("notifications/resources/list_changed", 2)
            await listener.close()
        for store in first.values():
            await store.close()
        second = stores()
        async with serving(load_app(str(EXAMPLE)), **second) as (url, _):
            instance.url = url
            resumed = await Listener(client, instance, last_event_id=resume_from).opened()
            replayed = await resumed.wait_for("notifications/resources/list_changed")
            assert len(replayed) == 1 and resumed.events[0][0] != resume_from
            assert (await client.call("calculate", {"a": 20, "b": 22}))["structuredContent"] == {
                "result": 42.0
            }
            await resumed.close()
        for store in second.values():
            await store.close()
