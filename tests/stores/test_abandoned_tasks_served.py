"""Tasks left unfinished by a server process that died (``kill -9``), black-box: real
``mcpkit run`` processes on one SQLite task file, driven by mcpkit's client.

Restarted on the same file, the server fails the dead process's tasks with a status message
saying why, and ``tasks/result`` answers them with their error at once; a second server
alive on the same file keeps its own task ``working`` throughout, and fails the dead one's
tasks by itself within its heartbeat."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from mcpkit import McpCallError, McpClient
from mcpkit.client import HttpClientTransportOptions, HttpTransportMode
from mcpkit.stores._task_runners import ABANDONED_MESSAGE
from tests.environment import child_environment

pytestmark = pytest.mark.timeout(90)

ROOT = Path(__file__).resolve().parents[2]
#: Seconds a whole check may take (starts, calls, the answers of the failed tasks).
BOUND = 30.0
#: Seconds ``tasks/result`` of a task failed on restart may take to answer.
PROMPT = 5.0
#: The heartbeat of the servers' stores (seconds): a live server notices a dead one within it.
HEARTBEAT = 0.5

SERVER = textwrap.dedent(
    """
    import asyncio
    import os

    from mcpkit import McpServerApp, mcp_tool
    from mcpkit.stores import SqliteTaskStore


    @mcp_tool(task_support="optional")
    async def long_job(seconds: float = 3600.0) -> str:
        \"\"\"Take its time (an hour by default).\"\"\"
        await asyncio.sleep(seconds)
        return "done"


    store = SqliteTaskStore(
        os.environ["TASKS_DB"], heartbeat_interval=float(os.environ["TASKS_HEARTBEAT"])
    )
    app = McpServerApp(long_job, name="long-jobs", task_store=store)
    """
)


@pytest.fixture
def server_file(tmp_path: Path) -> Path:
    path = tmp_path / "long_jobs.py"
    path.write_text(SERVER)
    return path


class Served:
    """One ``mcpkit run`` process and the URL its banner names."""

    def __init__(self, process: subprocess.Popen[str], url: str) -> None:
        self.process = process
        self.url = url

    def kill(self) -> None:
        """``kill -9``, and reap it (a zombie is as dead, but a test should leave none)."""
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(10)


@contextlib.contextmanager
def mcpkit_run(server_file: Path, database: Path) -> Iterator[Served]:
    """``mcpkit run`` over stateless HTTP (a task then belongs to nobody in particular, so a
    client of the next process reaches it by its id) until its banner; killed at the end."""
    env = child_environment(
        PYTHONPATH=str(ROOT / "src"), TASKS_DB=str(database), TASKS_HEARTBEAT=str(HEARTBEAT)
    )
    command = [sys.executable, "-m", "mcpkit", "run", str(server_file), "-t", "http"]
    process = subprocess.Popen(
        [*command, "--port", "0", "--json", "--stateless"],
        cwd=server_file.parent,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = process.stdout.readline()  # type: ignore[union-attr]
        assert line, f"no banner; stderr: {process.stderr.read()}"  # type: ignore[union-attr]
        yield Served(process, json.loads(line)["url"])
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)


@contextlib.asynccontextmanager
async def client(url: str, mode: str) -> AsyncIterator[McpClient]:
    """A 2025-11-25 (``legacy``) or 2026-07-28 (``modern``) client of ``url``."""
    if mode == "legacy":
        options = HttpClientTransportOptions(
            endpoint=url, transport_mode=HttpTransportMode.STREAMABLE_HTTP
        )
        async with McpClient.http(options, protocol_mode="legacy") as connected:
            yield connected
    else:
        async with McpClient.http(url, protocol_mode="modern") as connected:
            yield connected


async def start_long_jobs(url: str, mode: str, count: int) -> list[str]:
    """Start ``count`` tasks of ``long_job``; their ids, once each runs (``working``)."""
    async with client(url, mode) as caller:
        ids = []
        for _ in range(count):
            task = await caller.call_tool_as_task("long_job", ttl_ms=600_000)
            assert task.task_id is not None and task.state is not None
            assert task.state.status == "working"
            ids.append(task.task_id)
        for task_id in ids:
            assert (await caller.get_task(task_id)).status == "working"
        return ids


async def assert_abandoned(url: str, handshake_ids: list[str], modern_ids: list[str]) -> None:
    """Each task is ``failed``, its status message says why, its error says so too, and
    (2025-11-25) ``tasks/result`` answers with that error within ``PROMPT`` seconds."""
    async with client(url, "legacy") as caller:
        for task_id in handshake_ids:
            state = await caller.get_task(task_id)
            assert state.status == "failed", state
            assert state.status_message == ABANDONED_MESSAGE
            async with asyncio.timeout(PROMPT):
                with pytest.raises(McpCallError) as failed:
                    await caller.get_task_result(task_id)
            assert failed.value.code == -32603
            assert failed.value.message == ABANDONED_MESSAGE
    async with client(url, "modern") as caller:
        for task_id in modern_ids:
            state = await caller.get_task(task_id)
            assert state.status == "failed", state
            assert state.status_message == ABANDONED_MESSAGE
            assert state.error == {"code": -32603, "message": ABANDONED_MESSAGE}


async def until_failed(url: str, task_ids: list[str]) -> None:
    """Poll ``tasks/get`` until every task is ``failed`` (the caller bounds the wait)."""
    async with client(url, "legacy") as caller:
        for task_id in task_ids:
            while (await caller.get_task(task_id)).status != "failed":
                await asyncio.sleep(HEARTBEAT / 5)


async def assert_working(url: str, task_ids: list[str]) -> None:
    async with client(url, "legacy") as caller:
        for task_id in task_ids:
            assert (await caller.get_task(task_id)).status == "working"


async def test_a_restart_fails_the_tasks_a_killed_server_left_and_answers_their_results(
    server_file: Path, tmp_path: Path
) -> None:
    database = tmp_path / "tasks.db"
    async with asyncio.timeout(BOUND):
        with mcpkit_run(server_file, database) as first:
            handshake = await start_long_jobs(first.url, "legacy", 3)
            modern = await start_long_jobs(first.url, "modern", 2)
            first.kill()
        with mcpkit_run(server_file, database) as second:
            await assert_abandoned(second.url, handshake, modern)
            # the restarted server runs new tasks as ever
            fresh = await start_long_jobs(second.url, "legacy", 1)
            await assert_working(second.url, fresh)


async def test_a_live_server_on_the_same_file_keeps_its_task_and_fails_the_dead_ones(
    server_file: Path, tmp_path: Path
) -> None:
    database = tmp_path / "tasks.db"
    async with asyncio.timeout(BOUND):
        with mcpkit_run(server_file, database) as alive:
            kept = await start_long_jobs(alive.url, "legacy", 1)
            with mcpkit_run(server_file, database) as doomed:
                lost = await start_long_jobs(doomed.url, "legacy", 2)
                doomed.kill()
            # a server starting on the file while the other one runs
            with mcpkit_run(server_file, database) as restarted:
                await assert_abandoned(restarted.url, lost, [])
                await assert_working(restarted.url, kept)
            await assert_working(alive.url, kept)
            # and with no restart at all, the live one fails a dead one's tasks itself
            with mcpkit_run(server_file, database) as doomed:
                lost = await start_long_jobs(doomed.url, "legacy", 1)
                doomed.kill()
            await until_failed(alive.url, lost)  # within a heartbeat or so
            await assert_abandoned(alive.url, lost, [])
            await assert_working(alive.url, kept)
