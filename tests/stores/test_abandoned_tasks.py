"""The tasks a dead process left unfinished, store by store (SQLite, Redis): real processes
make the tasks and are killed (``kill -9``); a store opening afterwards fails the tasks they
ran, a live process's tasks stay as they are, and a runner this process cannot check is
dead once its lease lapses. (``test_abandoned_tasks_served.py`` does it with servers.)"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from mcpkit.stores import InMemoryTaskStore, RedisTaskStore, SqliteTaskStore, TaskRecord
from mcpkit.stores._task_runners import ABANDONED_MESSAGE, RunnerIdentity, process_alive
from tests.redis_server import REDIS_SERVER

pytestmark = pytest.mark.timeout(60)

ROOT = Path(__file__).resolve().parents[2]
#: Seconds a store may take to notice a death its heartbeat can see.
NOTICE = 5.0
#: The lease test's grace: wide enough for a late heartbeat on a loaded machine.
LEASE_GRACE = 1.0

#: A process that makes tasks in a store, says who it is, and waits to be killed.
CHILD = textwrap.dedent(
    """
    import asyncio
    import sys
    import time

    from mcpkit.stores import RedisTaskStore, SqliteTaskStore, TaskRecord


    async def main() -> None:
        backend, where, tag = sys.argv[1:4]
        store = SqliteTaskStore(where) if backend == "sqlite" else RedisTaskStore(where)
        now = time.time()
        mine = store.runner_id
        asking = {"q": {"method": "elicitation/create", "params": {}}}
        for name, status, runner, inputs in (
            ("run-1", "working", mine, {}),
            ("run-2", "working", mine, {}),
            ("asking", "input_required", mine, asking),  # its run waits here (2025-11-25)
            ("parked", "input_required", None, asking),  # nobody runs it (SEP-2663)
            ("done", "completed", None, {}),
        ):
            await store.create(
                TaskRecord(
                    task_id=f"{tag}-{name}",
                    status=status,
                    created_at=now,
                    last_updated_at=now,
                    ttl_ms=600_000,
                    input_requests=inputs,
                    runner_id=runner,
                )
            )
        print(store._runners.identity.to_json().decode(), flush=True)
        await asyncio.to_thread(sys.stdin.read)  # until killed


    asyncio.run(main())
    """
)


class Child:
    """A ``CHILD`` process, once its tasks are made."""

    def __init__(self, backend: str, where: str, tag: str) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
        self.process = subprocess.Popen(
            [sys.executable, "-c", CHILD, backend, where, tag],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        line = self.process.stdout.readline()  # type: ignore[union-attr]
        assert line, self.process.stderr.read()  # type: ignore[union-attr]
        self.identity = RunnerIdentity.from_json(line)

    def kill(self, *, reap: bool = True) -> None:
        """``kill -9``; unless ``reap``, left a zombie (as dead, to a store)."""
        os.kill(self.process.pid, signal.SIGKILL)
        if reap:
            self.process.wait(10)

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(10)


@dataclasses.dataclass
class Backend:
    name: str
    where: str
    stores: list[Any]
    children: list[Child]

    def store(self, **options: Any) -> Any:
        made = (
            SqliteTaskStore(self.where, **options)
            if self.name == "sqlite"
            else RedisTaskStore(self.where, **options)
        )
        self.stores.append(made)
        return made

    def child(self, tag: str) -> Child:
        made = Child(self.name, self.where, tag)
        self.children.append(made)
        return made


@pytest.fixture(params=["sqlite", "redis"])
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Backend]:
    if request.param == "sqlite":
        where = str(tmp_path / "tasks.db")
    else:
        if REDIS_SERVER is None:
            pytest.skip("redis-server is not installed (apt-get install redis-server)")
        server = request.getfixturevalue("redis_server")
        server.flush()
        where = server.url
    made = Backend(request.param, where, [], [])
    try:
        yield made
    finally:
        for child in made.children:
            child.close()
        for store in made.stores:
            await store.close()


def record(task_id: str, **changes: Any) -> TaskRecord:
    now = time.time()
    return TaskRecord(
        task_id=task_id, created_at=now, last_updated_at=now, ttl_ms=600_000, **changes
    )


def assert_abandoned(found: TaskRecord | None) -> None:
    assert found is not None and found.status == "failed", found
    assert found.status_message == ABANDONED_MESSAGE
    assert found.error == {"code": -32603, "message": ABANDONED_MESSAGE}
    assert found.input_requests == {} and found.runner_id is None


async def until(check: Callable[[], Any], what: str, timeout: float = NOTICE) -> None:
    """Wait (bounded) for the awaitable ``check()`` to be true."""
    try:
        async with asyncio.timeout(timeout):
            while not await check():
                await asyncio.sleep(0.05)
    except TimeoutError:
        pytest.fail(f"timed out after {timeout} s waiting for {what}")


async def test_a_store_opening_fails_what_a_killed_process_ran(backend: Backend) -> None:
    backend.child("gone").kill()
    store = backend.store()
    for name in ("run-1", "run-2", "asking"):
        assert_abandoned(await store.get(f"gone-{name}"))
    parked = await store.get("gone-parked")  # waits for tasks/update, on any process
    assert parked is not None and parked.status == "input_required" and parked.input_requests
    done = await store.get("gone-done")
    assert done is not None and done.status == "completed"
    assert await store.fail_abandoned() == []  # nothing more to fail


async def test_a_live_process_keeps_its_tasks_until_it_dies(backend: Backend) -> None:
    alive = backend.child("alive")
    store = backend.store(heartbeat_interval=0.1)
    assert await store.fail_abandoned() == []
    await asyncio.sleep(0.5)  # several heartbeats of this store
    for name in ("run-1", "run-2"):
        found = await store.get(f"alive-{name}")
        assert found is not None and found.status == "working"
        assert found.runner_id == alive.identity.runner_id
    alive.kill(reap=False)  # a zombie is as dead

    async def failed() -> bool:
        found = await store.get("alive-run-1")
        return found is not None and found.status == "failed"

    await until(failed, "the heartbeat to fail the dead process's task")
    for name in ("run-1", "run-2", "asking"):
        assert_abandoned(await store.get(f"alive-{name}"))


async def test_a_runner_out_of_sight_is_dead_once_its_lease_lapses(backend: Backend) -> None:
    far = backend.store(heartbeat_interval=0.2, heartbeat_grace=LEASE_GRACE)
    # Another machine's (or container's) runner: no process this one can look at.
    far._runners.identity = RunnerIdentity(uuid.uuid4().hex, None, 1, None)
    await far.create(record("far-1", runner_id=far.runner_id))
    near = backend.store()
    await asyncio.sleep(0.2 + LEASE_GRACE)  # its heartbeat keeps its lease
    assert await near.fail_abandoned() == []
    assert (await near.get("far-1")).status == "working"
    stopped = far._heartbeat.stop()  # silent from now on, and its tasks with it
    if asyncio.iscoroutine(stopped):
        await stopped
    await asyncio.sleep(0.2 + LEASE_GRACE + 0.3)
    assert await near.fail_abandoned() == ["far-1"]
    assert_abandoned(await near.get("far-1"))


async def test_closing_a_store_fails_the_tasks_it_still_ran(backend: Backend) -> None:
    store = backend.store()
    await store.create(record("mine", runner_id=store.runner_id))
    await store.create(record("parked", status="input_required"))
    await store.create(record("nobodys"))  # no runner named: left as it is
    await store.close()
    again = backend.store()
    assert_abandoned(await again.get("mine"))
    assert (await again.get("parked")).status == "input_required"
    assert (await again.get("nobodys")).status == "working"


def test_heartbeat_settings_are_checked() -> None:
    with pytest.raises(ValueError, match="heartbeat_interval"):
        SqliteTaskStore(":memory:", heartbeat_interval=0)
    store = SqliteTaskStore(":memory:", heartbeat_interval=2.5, heartbeat_grace=4.0)
    assert (store.heartbeat_interval, store.heartbeat_grace) == (2.5, 4.0)


async def test_memory_has_no_runners() -> None:
    store = InMemoryTaskStore()
    assert store.runner_id is None
    assert await store.fail_abandoned() == []


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE
    )
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(10)


async def test_a_process_is_dead_once_gone_a_zombie_or_its_pid_reused(sleeper) -> None:
    here = RunnerIdentity.of_this_process()
    assert here.host is not None and here.started is not None  # Linux: /proc
    started = RunnerIdentity(here.runner_id, here.host, sleeper.pid, None)
    probe = dataclasses.replace(started, started=_start_time(sleeper.pid))
    assert process_alive(probe, here) is True
    assert process_alive(dataclasses.replace(probe, started=probe.started + 1), here) is False
    assert process_alive(dataclasses.replace(probe, host="another boot/pid:[1]"), here) is None
    assert process_alive(started, here) is None  # no start time: the lease decides
    os.kill(sleeper.pid, signal.SIGKILL)

    async def zombie() -> bool:
        return process_alive(probe, here) is False

    await until(zombie, "the killed process to be a zombie")
    sleeper.wait(10)
    assert process_alive(probe, here) is False


def _start_time(pid: int) -> int:
    from mcpkit.stores._task_runners import _start_time as start_time

    found = start_time(pid)
    assert found is not None
    return found


@pytest.mark.skipif(REDIS_SERVER is None, reason="redis-server is not installed")
async def test_redis_keeps_only_unfinished_tasks_among_the_runs(redis_server) -> None:
    redis_server.flush()
    store = RedisTaskStore(redis_server.url)
    try:
        runs = store._runners.runs_key
        running = record("running", runner_id=store.runner_id)
        await store.create(running)
        await store.create(record("unowned"))
        await store.create(record("gone", runner_id=store.runner_id))
        assert set(await store.hub.client.hkeys(runs)) == {b"running", b"gone"}
        running.status = "completed"
        assert await store.update(running)
        assert await store.delete("gone")
        assert await store.hub.client.hlen(runs) == 0
    finally:
        await store.close()
