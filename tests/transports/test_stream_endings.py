"""How SSE responses end. Every one ends with its end of body (the terminating 0-length
chunk), whatever ends it: DELETE, the session going away in the shared store, a server
shutdown, a client that leaves or stops reading; and it leaves nothing behind. A client
that never reads never holds up the tool writing to it. A cancelled request's POST still
gets a complete answer. Real uvicorn on 127.0.0.1; the clients read the raw stream (httpx
raises ``RemoteProtocolError`` for a body cut short)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcpkit import McpServerApp, McpToolContext, mcp_server, mcp_tool
from mcpkit.protocol import SseDecoder, SseEvent
from mcpkit.stores import InMemoryEventStore, InMemorySessionStore
from mcpkit.transports.http import StreamableHttpServerOptions, create_asgi_app
from mcpkit.transports.http._streamable.calls import PostCall
from mcpkit.transports.http._streamable.replies import REQUEST_CANCELLED
from mcpkit.transports.http._streamable.streams import SseResponse
from tests.http_server import serving
from tests.ports import launch
from tests.transports._tools import CancellableTools
from tests.waiting import wait_until
from tests.wire import SchemaChecker, initialize_request

pytestmark = pytest.mark.timeout(120)

ROOT = Path(__file__).resolve().parents[2]
VERSION = "2025-11-25"
INIT = initialize_request(VERSION)
ACCEPT_BOTH = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


@mcp_server(name="stream-endings")
class Endings(CancellableTools):
    @mcp_tool()
    async def chatter(self, ctx: McpToolContext, count: int = 10, size: int = 100) -> str:
        """``count`` log notifications of ``size`` characters each."""
        for number in range(count):
            await ctx.info(f"{number} {'x' * size}")
        return f"{count} sent"

    @mcp_tool()
    async def hold(self, ctx: McpToolContext) -> str:
        """Says something (its answer becomes an SSE stream), then runs until cancelled."""
        await ctx.info("holding")
        self.started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        return "never"

    @mcp_tool()
    async def nap(self, seconds: float) -> str:
        """Works ``seconds`` without a word, then answers."""
        await asyncio.sleep(seconds)
        return "rested"

    @mcp_tool()
    async def nap_then_speak(self, ctx: McpToolContext, seconds: float) -> str:
        """Quiet for ``seconds`` (about when its answer is opened from outside), then logs."""
        await asyncio.sleep(seconds)
        await ctx.info("awake")
        return "spoke"


@pytest.fixture
def app() -> McpServerApp:
    return McpServerApp(Endings)


# --- clients ------------------------------------------------------------------------------


class Client:
    """A raw Streamable HTTP client for one session; schema-checks what it sends and gets."""

    def __init__(self, http: httpx.AsyncClient, url: str) -> None:
        self.http = http
        self.url = url
        self.session_id: str | None = None
        self.checker = SchemaChecker(VERSION)

    def headers(self, **extra: str) -> dict[str, str]:
        headers = dict(ACCEPT_BOTH)
        if self.session_id is not None:
            headers["mcp-session-id"] = self.session_id
            headers["mcp-protocol-version"] = VERSION
        headers.update(extra)
        return headers

    async def post(self, message: dict[str, Any], **headers: str) -> httpx.Response:
        self.checker.outgoing_from_client(message)
        response = await self.http.post(self.url, json=message, headers=self.headers(**headers))
        kind = response.headers.get("content-type", "")
        if kind.startswith("application/json") and response.content:
            self.checker.from_server(response.json())
        elif kind.startswith("text/event-stream"):
            for event in SseDecoder().feed(response.content):
                if event.data:
                    self.checker.from_server(json.loads(event.data))
        return response

    async def initialize(self) -> Client:
        response = await self.post(INIT)
        assert response.status_code == 200, response.text
        self.session_id = response.headers["mcp-session-id"]
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert (await self.post(initialized)).status_code == 202
        return self

    async def ping(self, request_id: int = 99) -> httpx.Response:
        return await self.post({"jsonrpc": "2.0", "id": request_id, "method": "ping"})

    def call(self, name: str, request_id: int, **arguments: Any) -> dict[str, Any]:
        return {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments},
        }


class StreamReader:
    """Reads one SSE response to its end in a task of its own. ``result()`` is the events
    read once the body ended properly; a body cut short raises (httpx's
    ``RemoteProtocolError``, "incomplete chunked read")."""

    def __init__(self, http: httpx.AsyncClient, method: str, url: str, **request: Any) -> None:
        self.events: list[SseEvent] = []
        self.status: int | None = None
        self.content_type = ""
        self.opened = asyncio.Event()
        self._task = asyncio.create_task(self._read(http, method, url, request))

    async def _read(
        self, http: httpx.AsyncClient, method: str, url: str, request: dict[str, Any]
    ) -> list[SseEvent]:
        decoder = SseDecoder()
        try:
            async with http.stream(method, url, **request) as response:
                self.status = response.status_code
                self.content_type = response.headers.get("content-type", "")
                self.opened.set()
                async for chunk in response.aiter_raw():
                    self.events.extend(decoder.feed(chunk))
                    self.opened.set()
        finally:
            self.opened.set()
        return self.events

    async def first_event(self, timeout: float = 5.0) -> SseEvent:
        await wait_until(lambda: bool(self.events) or self._task.done(), "a first event", timeout)
        assert self.events, f"the stream ended first (status {self.status})"
        return self.events[0]

    async def result(self, timeout: float = 10.0) -> list[SseEvent]:
        async with asyncio.timeout(timeout):
            return await self._task

    @property
    def done(self) -> bool:
        return self._task.done()

    async def leave(self) -> None:
        """The client hangs up."""
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)


def get_stream(http: httpx.AsyncClient, client: Client, **headers: str) -> StreamReader:
    return StreamReader(
        http, "GET", client.url, headers=client.headers(accept="text/event-stream", **headers)
    )


def messages(events: list[SseEvent]) -> list[dict[str, Any]]:
    return [json.loads(e.data) for e in events if e.event == "message" and e.data]


@contextlib.contextmanager
def uvicorn_errors() -> Iterator[list[logging.LogRecord]]:
    """What uvicorn logs as errors meanwhile, such as "ASGI callable returned without
    completing response". Entered once the server runs (uvicorn sets its loggers up)."""
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    handler = Keep(logging.ERROR)
    uvicorn_logger = logging.getLogger("uvicorn.error")
    uvicorn_logger.addHandler(handler)
    try:
        yield records
    finally:
        uvicorn_logger.removeHandler(handler)


def error_lines(records: list[logging.LogRecord]) -> list[str]:
    return [record.getMessage() for record in records]


# --- what ends a GET stream -----------------------------------------------------------------


async def test_delete_ends_an_open_get_stream_with_its_end_of_body(app):
    async with serving(app) as (url, asgi), httpx.AsyncClient(timeout=10) as http:
        with uvicorn_errors() as errors:
            client = await Client(http, url).initialize()
            stream = get_stream(http, client)
            priming = await stream.first_event()
            assert priming.id and priming.retry == 1000
            deleted = await http.delete(url, headers=client.headers())
            assert deleted.status_code == 200
            await stream.result()  # raises if the body was cut short
            assert stream.status == 200
            assert (await client.ping()).status_code == 404
            await wait_until(lambda: len(asgi.streamable.sessions) == 0, "the session gone")
        assert error_lines(errors) == []


async def test_an_open_get_stream_keeps_its_session_past_the_idle_timeout(app):
    """A session whose client listens on its GET stream is in use: the idle timeout does not
    end it (nor does the session cap evict it). Once the client has left, it expires."""
    async with (
        serving(app, session_idle_timeout=0.3, max_sessions=1) as (url, asgi),
        httpx.AsyncClient(timeout=10) as http,
    ):
        client = await Client(http, url).initialize()
        stream = get_stream(http, client)
        await stream.first_event()
        await asyncio.sleep(1.5)  # past the timeout, and past a pass of the reaper (1 s)
        assert not stream.done
        assert (await Client(http, url).post(INIT)).status_code == 503  # no eviction
        assert (await client.ping()).status_code == 200
        await stream.leave()
        await wait_until(lambda: len(asgi.streamable.sessions) == 0, "the idle session expired")
        assert (await client.ping()).status_code == 404
        assert (await Client(http, url).post(INIT)).status_code == 200


async def test_a_session_ending_in_the_shared_store_ends_its_open_get_stream(app):
    """Shared sessions: the store drops the record (its idle timeout elapsed there, or
    another instance ended it): the next check from this instance ends the open GET
    stream, with its end of body."""
    store = InMemorySessionStore()
    async with (
        serving(app, session_store=store, session_idle_timeout=0.4) as (url, asgi),
        httpx.AsyncClient(timeout=10) as http,
    ):
        with uvicorn_errors() as errors:
            client = await Client(http, url).initialize()
            stream = get_stream(http, client)
            await stream.first_event()
            assert client.session_id is not None
            assert await store.delete(client.session_id)
            await stream.result()
            await wait_until(lambda: len(asgi.streamable.sessions) == 0, "the replica dropped")
            assert (await client.ping()).status_code == 404
        assert error_lines(errors) == []


async def test_handler_close_ends_every_open_stream_with_its_end_of_body(app):
    """Server shutdown: the GET stream, a call's SSE answer in the middle of the call, and
    a legacy SSE stream all end properly; the call is cancelled."""
    async with (
        serving(app, enable_legacy_sse=True) as (url, asgi),
        httpx.AsyncClient(timeout=10) as http,
    ):
        with uvicorn_errors() as errors:
            client = await Client(http, url).initialize()
            get = get_stream(http, client)
            await get.first_event()
            post = StreamReader(
                http, "POST", url, json=client.call("hold", 7), headers=client.headers()
            )
            server = app.instances[0]
            await asyncio.wait_for(server.started.wait(), 5)
            legacy = StreamReader(
                http, "GET", f"{url}/sse", headers={"accept": "text/event-stream"}
            )
            endpoint = await legacy.first_event()
            assert endpoint.event == "endpoint"
            assert len(asgi.legacy) == 1

            asgi.streamable.close()
            asgi.legacy.close()

            await get.result()
            answered = messages(await post.result())
            assert post.content_type.startswith("text/event-stream")
            assert [m.get("method") for m in answered] == ["notifications/message"]  # no answer
            await legacy.result()
            await asyncio.wait_for(server.cancelled.wait(), 5)
            await wait_until(lambda: len(asgi.legacy) == 0, "the legacy session gone")
            await wait_until(lambda: app.dispatcher.in_flight_count() == 0, "no call running")
        assert error_lines(errors) == []


async def test_end_streams_ends_get_streams_and_leaves_sessions_and_calls_running(app):
    """The first step of a server going down: GET streams (which never end by themselves)
    end properly; the sessions and a running call go on (until the lifespan shutdown)."""
    async with serving(app) as (url, asgi), httpx.AsyncClient(timeout=10) as http:
        with uvicorn_errors() as errors:
            client = await Client(http, url).initialize()
            get = get_stream(http, client)
            await get.first_event()
            post = StreamReader(
                http, "POST", url, json=client.call("hold", 3), headers=client.headers()
            )
            server = app.instances[0]
            await asyncio.wait_for(server.started.wait(), 5)
            asgi.end_streams()
            await get.result()
            assert not post.done and not server.cancelled.is_set()
            assert (await client.ping()).status_code == 200
            assert (await client.post(cancel(3))).status_code == 202
            await post.result()
        assert error_lines(errors) == []


async def test_sigint_ends_open_streams_and_the_server_exits():
    """``mcpkit run --transport http``, interrupted while a GET stream and a legacy SSE
    stream are open: both end properly and the process exits (uvicorn waits for open
    responses before its lifespan shutdown, so the streams must end first)."""
    command = [sys.executable, "-m", "mcpkit", "run", str(ROOT / "examples" / "everything.py")]
    served = await asyncio.to_thread(
        launch, [*command, "--transport", "http", "--port", "0"], stream="both"
    )
    process, url = served.process, served.url
    try:
        async with httpx.AsyncClient(timeout=10) as http:
            client = Client(http, url)
            await client.initialize()
            get = get_stream(http, client)
            await get.first_event()
            legacy = StreamReader(
                http,
                "GET",
                f"{url}/sse",
                headers={"accept": "text/event-stream"},
            )
            assert (await legacy.first_event()).event == "endpoint"
            process.send_signal(signal.SIGINT)
            await get.result()
            await legacy.result()
        assert await asyncio.to_thread(process.wait, 15) in (0, 130)  # 130: interrupted
    finally:
        if process.poll() is None:
            process.kill()
        await asyncio.to_thread(served.stop)
    output = served.output()
    assert "ASGI callable returned without completing response" not in output, output
    assert "Traceback" not in output, output


# --- a cancelled request's POST ------------------------------------------------------------


def cancel(request_id: int) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": request_id, "reason": "test"},
    }


async def test_a_cancelled_request_gets_an_sse_stream_that_ends_unanswered(app):
    """The server does not answer a cancelled request, but its POST (a request's, which 202
    is not for) gets an SSE stream with no event in it, ended properly."""
    async with serving(app) as (url, _), httpx.AsyncClient(timeout=10) as http:
        with uvicorn_errors() as errors:
            client = await Client(http, url).initialize()
            post = StreamReader(
                http, "POST", url, json=client.call("hang", 5), headers=client.headers()
            )
            server = app.instances[0]
            await asyncio.wait_for(server.started.wait(), 5)
            assert (await client.post(cancel(5))).status_code == 202
            events = await post.result()
            await asyncio.wait_for(server.cancelled.wait(), 5)
            assert post.status == 200
            assert post.content_type.startswith("text/event-stream")
            assert events == []
            assert (await client.ping()).status_code == 200
        assert error_lines(errors) == []


async def test_a_cancelled_request_whose_stream_is_open_ends_it_unanswered(app):
    async with serving(app) as (url, _), httpx.AsyncClient(timeout=10) as http:
        with uvicorn_errors() as errors:
            client = await Client(http, url).initialize()
            post = StreamReader(
                http, "POST", url, json=client.call("hold", 6), headers=client.headers()
            )
            server = app.instances[0]
            await asyncio.wait_for(server.started.wait(), 5)
            assert (await client.post(cancel(6))).status_code == 202
            got = messages(await post.result())
            assert post.content_type.startswith("text/event-stream")
            assert [m.get("method") for m in got] == ["notifications/message"]
            assert all("id" not in m for m in got)
        assert error_lines(errors) == []


async def test_a_cancelled_request_of_a_json_only_client_gets_one_json_error(app):
    """A client that takes only JSON must get one JSON object: an error for the request,
    which it ignores (it cancelled)."""
    async with serving(app) as (url, _), httpx.AsyncClient(timeout=10) as http:
        client = await Client(http, url).initialize()
        task = asyncio.create_task(client.post(client.call("hang", 8), accept="application/json"))
        server = app.instances[0]
        await asyncio.wait_for(server.started.wait(), 5)
        assert (await client.post(cancel(8))).status_code == 202
        response = await asyncio.wait_for(task, 10)
        assert response.status_code == 200
        assert response.headers["content-type"] == "application/json"
        body = response.json()
        assert body["id"] == 8 and body["error"]["code"] == REQUEST_CANCELLED


# --- a client that never reads -------------------------------------------------------------


class SilentGet:
    """A raw GET over a socket with a small receive buffer, read only when told: a client
    that stopped reading its stream."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    @classmethod
    async def open(cls, port: int, headers: dict[str, str]) -> SilentGet:
        import socket

        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.setblocking(False)
        await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", port))
        reader, writer = await asyncio.open_connection(sock=sock, limit=1 << 20)
        lines = ["GET /mcp HTTP/1.1", f"host: 127.0.0.1:{port}"]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode())
        await writer.drain()
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
        assert head.startswith(b"HTTP/1.1 200"), head
        assert b"transfer-encoding: chunked" in head.lower(), head
        return cls(reader, writer)

    async def read_body(self, timeout: float = 30.0) -> bytes:
        """Read the chunked body to its terminating 0-length chunk (fails if the connection
        closes first); returns the body."""
        body = bytearray()
        async with asyncio.timeout(timeout):
            while True:
                size_line = await self.reader.readuntil(b"\r\n")
                size = int(size_line.strip().split(b";")[0], 16)
                if size == 0:
                    assert await self.reader.readexactly(2) == b"\r\n"
                    return bytes(body)
                body += await self.reader.readexactly(size)
                assert await self.reader.readexactly(2) == b"\r\n"

    def close(self) -> None:
        self.writer.transport.abort()


async def test_a_get_client_that_never_reads_is_dropped_and_never_holds_up_the_tool(app):
    """A tool floods a GET stream whose client does not read (a listener stuck, a dead
    peer): the tool finishes at once; the response is dropped (its queue bound reached) and
    ends with its end of body once the client reads again; the session works on, and a GET
    resuming from the last event the client got replays the rest, nothing lost."""
    count, size = 2000, 8000  # ~16 MB: far more than the socket buffers hold
    async with (
        serving(
            app, max_queued_messages=16, event_store=InMemoryEventStore(max_events=count + 10)
        ) as (url, asgi),
        httpx.AsyncClient(timeout=10) as http,
    ):
        with uvicorn_errors() as errors:
            client = await Client(http, url).initialize()
            port = int(url.split(":")[2].split("/")[0])
            silent = await SilentGet.open(port, client.headers(accept="text/event-stream"))
            session = asgi.streamable.sessions.local(client.session_id or "")
            assert session is not None
            await wait_until(lambda: session.standalone.attached, "the GET attached")

            # Answered as JSON, the call's notifications go to the session's GET stream.
            called = await asyncio.wait_for(
                client.post(
                    client.call("chatter", 2, count=count, size=size), accept="application/json"
                ),
                10,
            )
            assert called.json()["result"]["content"][0]["text"] == f"{count} sent"
            await wait_until(lambda: not session.standalone.attached, "the stream dropped")
            assert (await client.ping()).status_code == 200

            events = SseDecoder().feed(await silent.read_body())
            silent.close()
            got = [json.loads(e.data) for e in events if e.data]
            assert len(got) < count
            last_id = [e.id for e in events if e.data][-1]

            resumed = get_stream(http, client, **{"last-event-id": last_id})
            await wait_until(
                lambda: len(messages(resumed.events)) == count - len(got), "the replay", 20
            )
            numbers = [int(m["params"]["data"].split()[0]) for m in got + messages(resumed.events)]
            assert numbers == list(range(count))
            assert (await http.delete(url, headers=client.headers())).status_code == 200
            await resumed.result()
        assert error_lines(errors) == []


# --- many clients leaving at once ------------------------------------------------------------


async def open_raw_get(port: int, headers: dict[str, str]) -> tuple[Any, Any]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    lines = ["GET /mcp HTTP/1.1", f"host: 127.0.0.1:{port}"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode())
    head = await reader.readuntil(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200"), head
    await reader.readuntil(b"\n\n")  # the priming event: the stream is attached
    return reader, writer


#: Sweepers that linger a few seconds after the last request and then end on their own
#: (body deadlines, disconnect watch, quiet calls): not a stream's, so left out of the counts.
LINGERING_SWEEPERS = {"_LoopRequests._sweep"}


def request_tasks() -> list[asyncio.Task[Any]]:
    """The loop's tasks but the lingering sweepers."""
    return [
        task
        for task in asyncio.all_tasks()
        if getattr(task.get_coro(), "__qualname__", "") not in LINGERING_SWEEPERS
    ]


@pytest.mark.parametrize("shared", [False, True], ids=["memory", "shared-store"])
async def test_500_get_streams_whose_clients_vanish_at_once_are_all_released(app, shared):
    n = 500
    event_store = InMemoryEventStore()
    fields: dict[str, Any] = {"event_store": event_store, "enable_legacy_sse": False}
    if shared:
        fields["session_store"] = InMemorySessionStore()
    async with (
        serving(app, **fields) as (url, asgi),
        httpx.AsyncClient(timeout=30, limits=httpx.Limits(max_connections=20)) as http,
    ):
        port = int(url.split(":")[2].split("/")[0])
        clients = [Client(http, url) for _ in range(n)]
        for start in range(0, n, 50):
            await asyncio.gather(*(c.initialize() for c in clients[start : start + 50]))
        handler = asgi.streamable
        found = [handler.sessions.local(c.session_id or "") for c in clients]
        sessions = [s for s in found if s is not None]
        assert len(sessions) == n

        def released() -> bool:
            return (
                all(not s.busy for s in sessions)
                and not event_store._listeners
                and app.dispatcher.in_flight_count() == 0
            )

        await wait_until(released, "the base state")
        await asyncio.sleep(0.2)
        base_tasks = len(request_tasks())

        opened = []
        for start in range(0, n, 100):
            opened += await asyncio.gather(
                *(
                    open_raw_get(port, c.headers(accept="text/event-stream"))
                    for c in clients[start : start + 100]
                )
            )
        if shared:
            assert all(s.listener is not None for s in sessions)
            assert len(event_store._listeners or {}) == n
        else:
            assert all(s.standalone.attached for s in sessions)
        assert len(request_tasks()) >= base_tasks + n

        for _, writer in opened:  # every client vanishes at once
            writer.transport.abort()

        await wait_until(released, "every stream released", 20)
        await wait_until(lambda: len(request_tasks()) <= base_tasks, "the streams' tasks gone", 20)
        assert all(s.relays in (None, set()) for s in sessions)
        assert all(s.standalone._writer is None for s in sessions)
        assert len(handler.sessions) == n  # the sessions themselves live on
        assert (await clients[0].ping()).status_code == 200


# --- one response, without a server --------------------------------------------------------


class StuckSend:
    """An ASGI ``send`` whose client does not read: every body message after the first
    ``reads`` blocks until ``release``."""

    def __init__(self, reads: int = 0) -> None:
        self.sent: list[dict[str, Any]] = []
        self.reads = reads
        self.released = asyncio.Event()

    async def __call__(self, message: dict[str, Any]) -> None:
        if len(self.sent) >= self.reads:
            await self.released.wait()
        self.sent.append(message)

    def release(self) -> None:
        self.released.set()


async def test_a_write_blocked_past_the_write_timeout_drops_the_response():
    send = StuckSend(reads=1)
    response = SseResponse(send, max_queued=100, write_timeout=0.2, label="t")
    assert response.offer(b"one")
    assert response.offer(b"two")  # blocks: the client stopped reading
    await wait_until(lambda: response.backlog == 0 and response.stalled, "the blocked write")
    assert not response.offer(b"three")  # past the write timeout: dropped, never waits
    assert response.dropped and response.ending
    send.release()  # the client reads again: the end of body follows what was in flight
    await asyncio.wait_for(response.wait(), 5)
    assert [m["body"] for m in send.sent] == [b"one", b"two", b""]
    assert send.sent[-1]["more_body"] is False


async def test_ending_a_response_whose_client_never_reads_gives_up_after_the_timeout():
    send = StuckSend()
    response = SseResponse(send, write_timeout=0.2, label="t")
    response.offer(b"one")
    await wait_until(lambda: response.stalled, "the blocked write")
    response.end()  # the session ended, say: nobody may wait on this client for long
    await asyncio.wait_for(response.wait(), 5)
    assert response.task.cancelled() and send.sent == []


async def test_the_queue_bound_drops_a_response_without_waiting():
    send = StuckSend()
    response = SseResponse(send, max_queued=3, label="t")
    assert response.offer(b"x")
    await wait_until(lambda: response.backlog == 0, "the first write in flight")
    assert all(response.offer(b"x") for _ in range(3))  # the queue full
    assert not response.offer(b"x") and response.dropped and response.backlog == 0
    send.release()
    await asyncio.wait_for(response.wait(), 5)
    assert send.sent[-1] == {"type": "http.response.body", "body": b"", "more_body": False}


async def test_a_quiet_posts_sse_answer_carries_keep_alive_comments(app):
    """A call that spoke once (its answer became an SSE stream), then works quietly: a proxy
    in front would drop the silent response (nginx: 60 s), so comments keep it alive."""
    async with (
        serving(app, sse_keep_alive_ms=30) as (url, _),
        httpx.AsyncClient(timeout=10) as http,
    ):
        client = await Client(http, url).initialize()
        raw = bytearray()
        body = client.call("hold", 5)
        async with http.stream("POST", url, json=body, headers=client.headers()) as r:
            assert r.headers["content-type"].startswith("text/event-stream")
            async for chunk in r.aiter_raw():
                raw += chunk
                if raw.count(b": keep-alive\n\n") >= 2:
                    break
        assert b"holding" in raw and raw.count(b": keep-alive\n\n") >= 2
        # the call still runs, its stream resumable: ending the session ends it
        assert (await http.delete(url, headers=client.headers())).status_code == 200


async def test_a_quiet_get_stream_carries_keep_alive_comments(app):
    async with (
        serving(app, sse_keep_alive_ms=30) as (url, _),
        httpx.AsyncClient(timeout=10) as http,
    ):
        client = await Client(http, url).initialize()
        raw = bytearray()
        async with http.stream("GET", url, headers=client.headers(accept="text/event-stream")) as r:
            async for chunk in r.aiter_raw():
                raw += chunk
                if raw.count(b": keep-alive\n\n") >= 2:
                    break
        assert raw.startswith(b"id: ")  # the priming event first


# --- a quiet call's answer opened early (keep-alives before its result) -------------------


async def _raw_answer(
    http: httpx.AsyncClient, url: str, body: Any, headers: Any
) -> tuple[str, bytes]:
    async with http.stream("POST", url, json=body, headers=headers) as r:
        assert r.status_code == 200
        return r.headers["content-type"], b"".join([chunk async for chunk in r.aiter_raw()])


def _messages(raw: bytes) -> list[dict[str, Any]]:
    return [json.loads(e.data) for e in SseDecoder().feed(raw) if e.data]


async def test_a_quiet_call_gets_keep_alives_before_its_result(app):
    """A call that sends nothing for longer than sse_keep_alive_ms has its SSE answer opened,
    so comments cross the connection while it works (a proxy in front drops a response
    silent for its read timeout); the result follows on the same stream."""
    async with (
        serving(app, sse_keep_alive_ms=50) as (url, _),
        httpx.AsyncClient(timeout=10) as http,
    ):
        client = await Client(http, url).initialize()
        kind, raw = await _raw_answer(
            http, url, client.call("nap", 7, seconds=0.6), client.headers()
        )
        assert kind.startswith("text/event-stream")
        assert raw.count(b": keep-alive\n\n") >= 2
        assert raw.index(b": keep-alive") < raw.index(b"rested")
        [answer] = [m for m in _messages(raw) if m.get("id") == 7]
        assert answer["result"]["content"][0]["text"] == "rested"
        client.checker.from_server(answer)
        assert (await http.delete(url, headers=client.headers())).status_code == 200


async def test_a_quiet_stateless_call_gets_keep_alives_too(app):
    async with (
        serving(app, sse_keep_alive_ms=50, stateless=True) as (url, _),
        httpx.AsyncClient(timeout=10) as http,
    ):
        body = Client(http, url).call("nap", 3, seconds=0.4)
        kind, raw = await _raw_answer(
            http, url, body, {**ACCEPT_BOTH, "mcp-protocol-version": VERSION}
        )
        assert kind.startswith("text/event-stream") and b": keep-alive\n\n" in raw
        assert [m["result"]["content"][0]["text"] for m in _messages(raw)] == ["rested"]


async def test_a_quiet_call_whose_client_takes_only_json_is_answered_as_json(app):
    async with (
        serving(app, sse_keep_alive_ms=50) as (url, _),
        httpx.AsyncClient(timeout=10) as http,
    ):
        client = await Client(http, url).initialize()
        headers = client.headers(accept="application/json")
        kind, raw = await _raw_answer(http, url, client.call("nap", 4, seconds=0.3), headers)
        assert kind.startswith("application/json")
        assert json.loads(raw)["result"]["content"][0]["text"] == "rested"


async def test_a_call_speaking_as_its_answer_is_opened_loses_nothing(app):
    """The call's own first message may come while the answer is being opened from outside:
    it waits until the stream is attached, then goes out, once, before the result."""
    async with (
        serving(app, sse_keep_alive_ms=40) as (url, _),
        httpx.AsyncClient(timeout=10) as http,
    ):
        client = await Client(http, url).initialize()
        for request_id, seconds in enumerate((0.03, 0.04, 0.05, 0.06, 0.08, 0.1), start=10):
            body = client.call("nap_then_speak", request_id, seconds=seconds)
            kind, raw = await _raw_answer(http, url, body, client.headers())
            assert kind.startswith("text/event-stream")
            messages = _messages(raw)
            logs = [m for m in messages if m.get("method") == "notifications/message"]
            results = [m for m in messages if m.get("id") == request_id]
            assert [m["params"]["data"] for m in logs] == ["awake"], raw
            assert [m["result"]["content"][0]["text"] for m in results] == ["spoke"], raw
            assert messages.index(logs[0]) < messages.index(results[0])


async def test_a_quick_call_stays_a_json_answer_with_keep_alives_on(app):
    async with (
        serving(app, sse_keep_alive_ms=50) as (url, _),
        httpx.AsyncClient(timeout=10) as http,
    ):
        client = await Client(http, url).initialize()
        response = await client.post(client.call("add", 5, a=1, b=2))
        assert response.headers["content-type"].startswith("application/json")
        assert response.json()["result"]["structuredContent"] == {"result": 3}


async def test_a_write_while_the_answer_is_being_opened_waits_until_it_is_open(app):
    """The opening from outside is under way (its start line not yet out) when the call
    writes: the write waits, then goes out after the start, and nothing is lost."""
    asgi = create_asgi_app(app, StreamableHttpServerOptions(sse_keep_alive_ms=0))
    sent: list[dict[str, Any]] = []
    gate = asyncio.Event()

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            await gate.wait()  # the client's side is slow to take the start line
        sent.append(message)

    call = PostCall(asgi.streamable, send, [], None, True, "k", 1)
    opener = asyncio.create_task(call.open_quietly())
    await wait_until(lambda: call.opening is not None, "the opening under way")
    note = {
        "jsonrpc": "2.0",
        "method": "notifications/message",
        "params": {"level": "info", "data": "hi"},
    }
    writer = asyncio.create_task(call(note))
    await asyncio.sleep(0.05)
    assert not writer.done() and sent == []  # waiting for the stream, not written into the void
    gate.set()
    await asyncio.wait_for(asyncio.gather(opener, writer), 5)
    await wait_until(lambda: any(b"hi" in m.get("body", b"") for m in sent), "the message out")
    assert sent[0]["type"] == "http.response.start"
    assert sum(b'"hi"' in m.get("body", b"") for m in sent) == 1
    call.end()
    call.stream.close()  # type: ignore[union-attr]
