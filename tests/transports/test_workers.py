"""Several worker processes on one port: ``mcpkit run --workers N`` and
``run_http_server(..., workers=N)``, as real processes on 127.0.0.1.

Every call goes on a connection of its own (no keep-alive), so the kernel picks the worker
for each; a tool answering ``os.getpid()`` says which one served it."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcpkit import McpServerApp
from mcpkit.protocol._sse import SseDecoder
from mcpkit.transports.http._options import StreamableHttpServerOptions
from mcpkit.transports.http._server.serve import run_http_server
from mcpkit.transports.http._server.workers import WorkersNeedSharedStateError
from tests.environment import child_environment
from tests.ports import Announced, launch, on_a_free_port, refused_port
from tests.redis_server import needs_redis
from tests.waiting import wait_until
from tests.wire import SchemaChecker, initialize_request

pytestmark = pytest.mark.timeout(60)

ROOT = Path(__file__).resolve().parents[2]
HANDSHAKE = "2025-11-25"
MODERN = "2026-07-28"
#: Calls made, one connection each, before giving up on seeing every worker answer.
MAX_CALLS = 60
STARTUP = 30.0
#: The line serve_pids.py prints once its workers accept connections.
SCRIPT_BANNER = re.compile(r"^serving on (?P<url>http://\S+)")

APP = textwrap.dedent(
    '''
    import asyncio
    import os

    from mcpkit import (
        McpServerApp, McpToolContext, ResourceSubscriptionManager, mcp_resource, mcp_server, mcp_tool
    )

    WATCHED = "pids://watched"


    @mcp_server(name="pids", version="1.0.0")
    class Pids:
        def __init__(self, subs: ResourceSubscriptionManager) -> None:
            self.subs = subs

        @mcp_tool
        def pid(self) -> int:
            """The process id of the worker that runs this call."""
            return os.getpid()

        @mcp_tool
        async def touch(self) -> int:
            """Tell the subscribers of pids://watched it changed; the worker's pid."""
            await self.subs.notify_updated(WATCHED)
            return os.getpid()

        @mcp_tool
        async def slow(self) -> int:
            """Note its start (a line in $PIDS_STARTED), take a second, answer the pid."""
            with open(os.environ["PIDS_STARTED"], "a") as started:
                started.write(f"{os.getpid()}\\n")
            await asyncio.sleep(1.0)
            return os.getpid()

        @mcp_tool
        async def ask(self, ctx: McpToolContext) -> str:
            """Ask for a name (naming the asking worker); who answered, and the name."""
            answer = await ctx.elicit(f"name? asked by {os.getpid()}", str)
            return f"{os.getpid()} {answer.content}"

        @mcp_resource(WATCHED, mime_type="text/plain")
        def watched(self) -> str:
            return "watched"


    app = McpServerApp(Pids)
    '''
)

SCRIPT = textwrap.dedent(
    """
    import sys

    from mcpkit.transports.http._server.serve import run_http_server
    from mcpkit.transports.http._options import StreamableHttpServerOptions
    from pids_app import app


    def announce() -> None:
        print(f"serving on http://127.0.0.1:{sys.argv[1]}/mcp", flush=True)


    if __name__ == "__main__":
        options = StreamableHttpServerOptions(stateless=True, enable_legacy_sse=False)
        run_http_server(
            app, options, host="127.0.0.1", port=int(sys.argv[1]), workers=2, on_started=announce
        )
    """
)


@pytest.fixture(scope="module")
def app_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("workers")
    (folder / "pids_app.py").write_text(APP)
    (folder / "serve_pids.py").write_text(SCRIPT)
    return folder / "pids_app.py"


def environment(**extra: str) -> dict[str, str]:
    return child_environment(PYTHONPATH=str(ROOT / "src"), **extra)


class Served:
    """A ``mcpkit run`` (or script) process and the URL its banner names."""

    def __init__(self, process: subprocess.Popen[Any], url: str) -> None:
        self.process = process
        self.url = url

    def children(self) -> set[int]:
        """The pids of the supervisor's live worker processes (``multiprocessing``'s resource
        tracker, its other child, is not one)."""
        found = set()
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            with contextlib.suppress(OSError, IndexError, ValueError):
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                if int(fields[1]) != self.process.pid or fields[0] == "Z":
                    continue
                if b"spawn_main" in (entry / "cmdline").read_bytes():
                    found.add(int(entry.name))
        return found


@contextlib.contextmanager
def mcpkit_run(app_file: Path, *args: str, env: dict[str, str] | None = None) -> Iterator[Served]:
    """``mcpkit run APP -t http --port 0 --json ARGS``, until its banner; stopped with SIGTERM
    (then killed, should that fail) when the block ends."""
    command = [sys.executable, "-m", "mcpkit", "run", str(app_file), "-t", "http"]
    command += ["--port", "0", "--json", *args]
    process = subprocess.Popen(
        command,
        cwd=app_file.parent,
        env=env or environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = process.stdout.readline()  # type: ignore[union-attr]
        assert line, f"no banner; stderr: {process.stderr.read()}"  # type: ignore[union-attr]
        banner = json.loads(line)
        assert banner["workers"] == int(args[args.index("--workers") + 1])
        yield Served(process, banner["url"])
    finally:
        stop(process)


def stop(process: subprocess.Popen[str]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


@contextlib.asynccontextmanager
async def fresh_connections() -> AsyncIterator[httpx.AsyncClient]:
    """A client that opens a connection for every request: each may reach another worker."""
    limits = httpx.Limits(max_keepalive_connections=0)
    async with httpx.AsyncClient(timeout=20, limits=limits) as http:
        yield http


def modern_call(name: str) -> tuple[dict[str, Any], dict[str, str]]:
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "workers", "version": "1"},
    }
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": name, "arguments": {}, "_meta": meta},
    }
    headers = {
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": MODERN,
        "mcp-method": "tools/call",
        "mcp-name": name,
    }
    return body, headers


def answer_of(response: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC answer of a POST, as JSON or as the last answer of its SSE stream."""
    assert response.status_code == 200, response.text
    if response.headers["content-type"].startswith("text/event-stream"):
        messages = [json.loads(e.data) for e in SseDecoder().feed(response.content) if e.data]
        return [m for m in messages if "id" in m and "method" not in m][-1]
    answer: dict[str, Any] = response.json()
    return answer


async def modern_pid(http: httpx.AsyncClient, url: str) -> int:
    body, headers = modern_call("pid")
    answer = answer_of(await http.post(url, json=body, headers=headers))
    result = answer["result"]
    assert result["resultType"] == "complete", answer
    pid: int = result["structuredContent"]["result"]
    return pid


async def pids_until(http: httpx.AsyncClient, url: str, wanted: set[int] | int) -> list[int]:
    """Call ``pid`` (2026-07-28) until the pids ``wanted`` (or that many distinct ones) all
    answered; every call must succeed."""
    seen: list[int] = []
    for _ in range(MAX_CALLS):
        seen.append(await modern_pid(http, url))
        if isinstance(wanted, int) and len(set(seen)) >= wanted:
            break
        if isinstance(wanted, set) and wanted <= set(seen):
            break
    return seen


# --- stateless and 2026-07-28: nothing shared ----------------------------------------------


async def test_two_workers_answer_on_one_port_and_a_dead_one_is_replaced(app_file):
    # No setting needed: stateless workers serve no legacy SSE, and say so.
    with mcpkit_run(app_file, "--workers", "2", "--stateless") as served:
        workers = served.children()
        assert len(workers) == 2
        async with fresh_connections() as http:
            legacy = await http.get(served.url + "/sse")
            assert legacy.status_code == 404
            seen = await pids_until(http, served.url, workers)
            assert set(seen) == workers, f"{len(seen)} calls reached {set(seen)} of {workers}"
            assert served.process.pid not in seen

            victim = seen[0]
            os.kill(victim, signal.SIGKILL)
            await wait_until(
                lambda: victim not in served.children() and len(served.children()) == 2,
                "the supervisor to start a worker in place of the one killed",
                timeout=STARTUP,
            )
            replacement = (served.children() - workers).pop()
            deadline = time.monotonic() + STARTUP
            while True:  # the replacement answers once it has started
                seen = await pids_until(http, served.url, {replacement})
                if replacement in seen or time.monotonic() > deadline:
                    break
            assert replacement in seen
            assert victim not in seen

        served.process.send_signal(signal.SIGTERM)
        assert served.process.wait(20) == 0
        assert served.children() == set()
        assert "legacy SSE is off" in served.process.stderr.read()  # type: ignore[union-attr]


async def test_a_retry_with_input_is_verified_by_whichever_worker_takes_it(app_file):
    """2026-07-28 multi round-trip input: the retry carries a requestState the asking worker
    signed, and may reach the other worker, which must verify it. The supervisor hands the
    workers one secret (each made its own, and about half the retries failed -32602)."""
    crossed = 0
    env = environment(MCPKIT_ENABLE_LEGACY_SSE="false")
    with mcpkit_run(app_file, "--workers", "2", "--stateless", env=env) as served:
        async with fresh_connections() as http:
            for _ in range(MAX_CALLS):
                body, headers = modern_call("ask")
                body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = {
                    "elicitation": {}
                }
                round_one = answer_of(await http.post(served.url, json=body, headers=headers))
                result = round_one["result"]
                assert result["resultType"] == "input_required", round_one
                [(key, asked)] = result["inputRequests"].items()
                asker = int(asked["params"]["message"].rsplit(" ", 1)[1])
                body["params"]["requestState"] = result["requestState"]
                body["params"]["inputResponses"] = {
                    key: {"action": "accept", "content": {"value": "Ada"}}
                }
                retried = answer_of(await http.post(served.url, json=body, headers=headers))
                assert "result" in retried, retried  # never -32602 "Invalid requestState"
                answerer, name = retried["result"]["content"][0]["text"].split()
                assert name == "Ada"
                crossed += int(answerer) != asker
                if crossed >= 3:
                    break
    assert crossed >= 3  # the retries did reach the other worker


async def test_sigterm_lets_the_calls_running_in_every_worker_finish(app_file, tmp_path):
    started = tmp_path / "started"
    started.touch()
    stateless_env = environment(MCPKIT_ENABLE_LEGACY_SSE="false", PIDS_STARTED=str(started))
    with mcpkit_run(app_file, "--workers", "2", "--stateless", env=stateless_env) as served:
        workers = served.children()
        async with fresh_connections() as http:
            body, headers = modern_call("slow")
            calls = [
                asyncio.create_task(http.post(served.url, json=body, headers=headers))
                for _ in range(12)
            ]
            await wait_until(
                lambda: len(started.read_text().splitlines()) == len(calls),
                "every call to be running",
            )
            served.process.send_signal(signal.SIGTERM)
            answers = [answer_of(response) for response in await asyncio.gather(*calls)]
        pids = {answer["result"]["structuredContent"]["result"] for answer in answers}
        assert pids == workers  # both workers had calls running, and finished them
        assert served.process.wait(20) == 0
        assert served.children() == set()


def test_a_taken_port_fails_and_workers_outlive_no_killed_supervisor(app_file):
    stateless_env = environment(MCPKIT_ENABLE_LEGACY_SSE="false")
    with mcpkit_run(app_file, "--workers", "2", "--stateless", env=stateless_env) as served:
        port = served.url.split(":")[2].split("/")[0]
        command = [sys.executable, "-m", "mcpkit", "run", str(app_file), "-t", "http"]
        command += ["--port", port, "--workers", "2", "--stateless"]
        second = subprocess.run(
            command, cwd=app_file.parent, env=stateless_env, capture_output=True, text=True
        )
        assert second.returncode == 1  # not a second group of workers sharing the port
        assert f"port {port} on 127.0.0.1 is in use" in second.stderr

        workers = served.children()
        assert len(workers) == 2
        served.process.kill()  # no chance to stop them: they notice and shut down
        served.process.wait(5)
        deadline = time.monotonic() + 20
        while any(Path(f"/proc/{pid}").exists() for pid in workers):
            assert time.monotonic() < deadline, "workers still running after their supervisor died"
            time.sleep(0.05)


async def test_run_http_server_with_workers_serves_a_module_level_app(app_file):
    # run_http_server(workers=2) binds the port it is given and names none: a port chosen
    # here, another one should it be taken meanwhile
    def start(port: int) -> Announced:
        return launch(
            [sys.executable, str(app_file.parent / "serve_pids.py"), str(port)],
            banner=SCRIPT_BANNER,
            stream="both",
            cwd=app_file.parent,
            env=environment(),
        )

    started = await asyncio.to_thread(on_a_free_port, start)
    try:
        served = Served(started.process, started.url)
        workers = served.children()
        assert len(workers) == 2
        async with fresh_connections() as http:
            assert set(await pids_until(http, served.url, workers)) == workers
        started.process.send_signal(signal.SIGINT)  # Ctrl-C: one signal, passed on once
        assert started.process.wait(20) == 0
    finally:
        started.stop()


# --- handshake-era sessions across workers: Redis --------------------------------------------


class Session:
    """One handshake-era session over raw HTTP, every request on a new connection."""

    def __init__(self, http: httpx.AsyncClient, url: str) -> None:
        self.http = http
        self.url = url
        self.session_id = ""
        self.checker = SchemaChecker(HANDSHAKE)
        self.ids = iter(range(2, 10_000))

    def headers(self, accept: str = "application/json, text/event-stream") -> dict[str, str]:
        return {
            "accept": accept,
            "mcp-session-id": self.session_id,
            "mcp-protocol-version": HANDSHAKE,
        }

    async def open(self) -> None:
        response = await self.http.post(
            self.url,
            json=initialize_request(HANDSHAKE),
            headers={"accept": "application/json, text/event-stream"},
        )
        self.checker.from_server(answer_of(response))
        self.session_id = response.headers["mcp-session-id"]
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert (
            await self.http.post(self.url, json=note, headers=self.headers())
        ).status_code == 202

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        message = {"jsonrpc": "2.0", "id": next(self.ids), "method": method, "params": params}
        self.checker.outgoing_from_client(message)
        answer = answer_of(await self.http.post(self.url, json=message, headers=self.headers()))
        self.checker.from_server(answer)
        assert "result" in answer, answer
        result: dict[str, Any] = answer["result"]
        return result

    async def call(self, tool: str) -> int:
        result = await self.request("tools/call", {"name": tool, "arguments": {}})
        assert not result.get("isError"), result
        pid: int = result["structuredContent"]["result"]
        return pid


@contextlib.asynccontextmanager
async def listening(session: Session) -> AsyncIterator[list[dict[str, Any]]]:
    """The session's GET stream, open on whichever worker took it, collecting its messages."""
    received: list[dict[str, Any]] = []
    opened = asyncio.Event()

    async def listen() -> None:
        decoder = SseDecoder()
        async with httpx.AsyncClient(timeout=httpx.Timeout(20, read=None)) as http:
            headers = session.headers(accept="text/event-stream")
            async with http.stream("GET", session.url, headers=headers) as response:
                assert response.status_code == 200
                opened.set()
                async for chunk in response.aiter_bytes():
                    for event in decoder.feed(chunk):
                        if event.data:
                            message = json.loads(event.data)
                            session.checker.from_server(message)
                            received.append(message)

    task = asyncio.create_task(listen())
    waiting = asyncio.create_task(opened.wait())
    try:
        async with asyncio.timeout(10):
            await asyncio.wait({task, waiting}, return_when=asyncio.FIRST_COMPLETED)
        if task.done():
            task.result()  # the GET failed: say why
        yield received
    finally:
        for running in (task, waiting):
            running.cancel()
        await asyncio.gather(task, waiting, return_exceptions=True)


@needs_redis
async def test_a_session_made_on_one_worker_is_served_by_the_other(app_file, redis_server):
    with mcpkit_run(app_file, "--workers", "2", "--redis-url", redis_server.url) as served:
        workers = served.children()
        async with fresh_connections() as http:
            session = Session(http, served.url)
            await session.open()
            seen = []
            for _ in range(MAX_CALLS):  # every call of the session answers, on either worker
                seen.append(await session.call("pid"))
                if set(seen) == workers:
                    break
            assert set(seen) == workers, f"{len(seen)} calls reached {set(seen)} of {workers}"

            # The GET stream lives on one worker; a change announced by either reaches it.
            async with listening(session) as received:
                assert await session.request("resources/subscribe", {"uri": "pids://watched"}) == {}
                touched = []
                for _ in range(MAX_CALLS):
                    touched.append(await session.call("touch"))
                    if set(touched) == workers:
                        break
                assert set(touched) == workers

                def updates() -> int:
                    return sum(
                        m.get("method") == "notifications/resources/updated" for m in received
                    )

                await wait_until(
                    lambda: updates() >= len(touched), "an update on the stream for every touch"
                )
                assert updates() == len(touched)


# --- refused: sessions and nothing to share them --------------------------------------------


@pytest.mark.parametrize(
    ("args", "variables", "lost"),
    [
        ((), {}, "Streamable HTTP sessions and legacy SSE sessions"),
        # stateless workers leave legacy SSE off, unless a variable asks for it
        (("--stateless",), {"MCPKIT_ENABLE_LEGACY_SSE": "true"}, "legacy SSE sessions"),
    ],
)
def test_workers_with_sessions_and_no_store_are_refused_before_serving(
    app_file, args, variables, lost
):
    command = [sys.executable, "-m", "mcpkit", "run", str(app_file), "-t", "http"]
    command += ["--port", "0", "--workers", "2", *args]
    done = subprocess.run(
        command,
        cwd=app_file.parent,
        env=environment(**variables),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 2
    assert done.stdout == ""  # no banner: nothing was served
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: --workers 2 would lose sessions: " + lost)
    assert "--redis-url" in lines[0]
    assert "--stateless" in lines[0]


def test_mcpkit_workers_variable_is_refused_too(app_file):
    command = [sys.executable, "-m", "mcpkit", "run", str(app_file), "-t", "http", "--port", "0"]
    done = subprocess.run(
        command,
        cwd=app_file.parent,
        env=environment(MCPKIT_WORKERS="3"),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 2
    assert "--workers 3 would lose sessions" in done.stderr


def test_workers_on_stdio_are_a_usage_error(app_file):
    command = [sys.executable, "-m", "mcpkit", "run", str(app_file), "--workers", "2"]
    done = subprocess.run(
        command, cwd=app_file.parent, env=environment(), capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 2
    assert "several workers need an HTTP transport" in done.stderr


def test_run_http_server_refuses_sessions_across_workers_before_binding():
    app = McpServerApp(name="refused")
    # the port held: binding it would raise OSError, not the refusal
    with refused_port() as port:
        with pytest.raises(WorkersNeedSharedStateError) as refused:
            run_http_server(app, StreamableHttpServerOptions(port=port), workers=2)
        assert refused.value.lost == ("Streamable HTTP sessions", "legacy SSE sessions")
        assert "redis_options" in str(refused.value)
        assert "stateless=True" in str(refused.value)
        stateless = StreamableHttpServerOptions(port=port, stateless=True)
        with pytest.raises(ValueError, match="legacy SSE sessions live in one worker"):
            run_http_server(app, stateless, workers=2)


def test_run_http_server_wants_a_module_level_app_and_no_store_objects():
    from mcpkit.stores import InMemoryEventStore

    options = StreamableHttpServerOptions(stateless=True, enable_legacy_sse=False)
    with pytest.raises(TypeError, match="define it at module level"):
        run_http_server(McpServerApp(name="nowhere"), options, port=0, workers=2)
    with_store = StreamableHttpServerOptions(
        stateless=True, enable_legacy_sse=False, event_store=InMemoryEventStore()
    )
    with pytest.raises(TypeError, match="serve_workers"):
        run_http_server(McpServerApp(name="nowhere"), with_store, port=0, workers=2)


async def test_a_loader_warning_is_given_once_not_once_per_worker(app_file):
    # A decorated function the app does not serve: the supervisor warns; its workers, each
    # loading the same file, do not say it again.
    orphan = app_file.parent / "orphan_app.py"
    orphan.write_text(
        app_file.read_text() + "\n\n@mcp_tool\ndef forgotten() -> str:\n    return 'never served'\n"
    )
    with mcpkit_run(orphan, "--workers", "2", "--stateless") as served:
        async with fresh_connections() as http:
            await pids_until(http, served.url, served.children())
    said = served.process.stderr.read()  # type: ignore[union-attr]
    assert said.count("warning: forgotten is decorated with @mcp_tool") == 1, said
