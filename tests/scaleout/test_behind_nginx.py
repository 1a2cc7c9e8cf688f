"""Scale-out behind a real load balancer: two ``mcpkit run -t http --redis-url`` instances of
one server file, one real redis-server, and nginx in front balancing round-robin with no
stickiness (every request may reach either instance).

The official ``mcp`` client keeps one session through nginx: both instances serve its calls,
and it sees what it sees against one instance alone; one instance killed (SIGKILL) and
restarted, the session goes on. The MCP conformance suite (0.1.16) passes through nginx as it
passes against one instance (tests/conformance/test_server_suite.py)."""

from __future__ import annotations

import asyncio
import contextlib
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import ClientSession

from tests.conformance._suite import run_suite, suite_command_or_skip
from tests.conformance.test_server_suite import EXPECTED_SCENARIOS
from tests.interop.test_official_sdk_http import official_http_client
from tests.interop.test_official_sdk_stdio import Recorder, texts
from tests.redis_server import RedisServer, needs_redis
from tests.scaleout._instance import ROOT, Instance
from tests.scaleout._nginx import Nginx, needs_nginx
from tests.waiting import wait_until

pytestmark = [
    pytest.mark.interop,
    needs_redis,
    needs_nginx,
    # The official SDK marks resources/subscribe deprecated as of 2026-07-28; the tests use
    # the 2025-11-25 session it belongs to.
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

#: The conformance server app, as tests/conformance/test_server_suite.py serves it.
EVERYTHING = ROOT / "examples" / "everything.py"
#: Bound of one session's whole exchange, and of waiting for a notification.
SESSION_TIMEOUT = 20.0
NOTIFIED_TIMEOUT = 10.0
#: Long enough for duplicated notifications, if any, to arrive.
QUIET_PERIOD = 0.3

WATCHED = "tally://watched"

# Which process served a call is in every answer; what else a session sees must not depend on
# it. Subscriptions are session state kept in Redis; touch's update crosses instances on the
# bus to whichever holds the client's GET stream.
APP = textwrap.dedent(
    '''
    import os
    from dataclasses import dataclass

    from mcpkit import (
        McpServerApp, McpToolContext, ResourceSubscriptionManager, mcp_resource, mcp_server, mcp_tool
    )

    WATCHED = "tally://watched"


    @dataclass
    class Sum:
        total: int
        pid: int


    @mcp_server(name="tally", version="1.0.0")
    class Tally:
        def __init__(self, subs: ResourceSubscriptionManager) -> None:
            self.subs = subs

        @mcp_tool
        async def add(self, numbers: list[int], ctx: McpToolContext) -> Sum:
            """Sum the numbers, reporting progress after each and logging the total."""
            total = 0
            for done, number in enumerate(numbers, 1):
                total += number
                await ctx.report_progress(done, len(numbers))
            await ctx.info(f"{len(numbers)} numbers add up to {total}")
            return Sum(total, os.getpid())

        @mcp_tool
        async def touch(self) -> int:
            """Tell the subscribers of tally://watched it changed; the serving process id."""
            await self.subs.notify_updated(WATCHED)
            return os.getpid()

        @mcp_resource(WATCHED, mime_type="text/plain")
        def watched(self) -> str:
            return "watched"


    app = McpServerApp(Tally)
    '''
)


# --- the cluster ------------------------------------------------------------------------------


@dataclass
class Cluster:
    nginx: Nginx
    a: Instance
    b: Instance


@contextlib.contextmanager
def behind_nginx(app: Path, directory: Path) -> Iterator[Cluster]:
    """A redis-server of its own, two instances of ``app`` sharing it, and nginx in front;
    all ended when the block ends, whatever happened (a test may have killed one)."""
    redis = RedisServer().start()
    a, b = Instance(app, redis.url), Instance(app, redis.url)
    nginx: Nginx | None = None
    try:
        a.start()
        b.start()
        nginx = Nginx(directory, [a.port, b.port])
        yield Cluster(nginx.start(), a, b)
    finally:
        if nginx is not None:
            nginx.stop()
        a.stop()
        b.stop()
        redis.close()


@pytest.fixture(scope="module")
def tallies(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """The tally app behind nginx, for the module's session tests (a test that kills an
    instance starts it again)."""
    directory = tmp_path_factory.mktemp("tallies")
    (directory / "tally.py").write_text(APP)
    with behind_nginx(directory / "tally.py", directory) as cluster:
        yield cluster


# --- one session's calls ----------------------------------------------------------------------


@dataclass
class Added:
    """One ``add`` call as the client saw it."""

    total: int
    pid: int
    progress: list[float]


async def add(session: ClientSession, numbers: list[int]) -> Added:
    reported: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reported.append(progress)

    result = await session.call_tool("add", {"numbers": numbers}, progress_callback=on_progress)
    assert not result.is_error, texts(result)
    content: dict[str, Any] = result.structured_content or {}
    return Added(content["total"], content["pid"], reported)


async def touch(session: ClientSession) -> int:
    result = await session.call_tool("touch", {})
    assert not result.is_error, texts(result)
    pid: int = (result.structured_content or {})["result"]
    return pid


def updates(recorder: Recorder) -> int:
    return len(recorder.of_type(types.ResourceUpdatedNotification))


async def heard_every_touch(recorder: Recorder, touches: int) -> None:
    """One update on the GET stream for each touch, whichever instance was touched and
    whichever holds the stream; no more."""
    await wait_until(
        lambda: updates(recorder) >= touches, f"{touches} resource updates", NOTIFIED_TIMEOUT
    )
    await asyncio.sleep(QUIET_PERIOD)
    assert updates(recorder) == touches


@dataclass
class Transcript:
    """What one session saw (``seen``: nothing in it may depend on the instance that served
    a call) and the process that served each call, in order."""

    seen: dict[str, Any]
    pids: list[int]


async def tally_session(url: str) -> Transcript:
    """One session at ``url``: list the tools, subscribe, eight adds (each with progress and
    a log message), two touches."""
    async with official_http_client(url) as (session, recorder):
        tools = sorted(tool.name for tool in (await session.list_tools()).tools)
        await session.subscribe_resource(WATCHED)
        sums = [await add(session, list(range(n))) for n in range(1, 9)]
        touched = [await touch(session) for _ in range(2)]
        await heard_every_touch(recorder, len(touched))
        seen = {
            "tools": tools,
            "totals": [s.total for s in sums],
            "progress": [s.progress for s in sums],
            "logs": [(log.level, log.data) for log in recorder.logs],
        }
        return Transcript(seen, [s.pid for s in sums] + touched)


async def until_served_by(session: ClientSession, pid: int) -> list[Added]:
    """Adds until process ``pid`` serves one (nginx tries a failed instance again after its
    fail_timeout, 1 s); every add must succeed."""
    sums: list[Added] = []
    async with asyncio.timeout(NOTIFIED_TIMEOUT):
        while not sums or sums[-1].pid != pid:
            sums.append(await add(session, [len(sums), 1]))
            await asyncio.sleep(0.05)
    return sums


async def stream_holder(cluster: Cluster) -> Instance:
    """The instance holding the session's GET stream: between calls, the one that nginx has
    a connection open to (it keeps none between requests: no upstream keepalive)."""
    holders: list[Instance] = []

    def one_holder() -> bool:
        instances = (cluster.a, cluster.b)
        holders[:] = [i for i in instances for _ in range(i.open_connections())]
        return len(holders) == 1

    await wait_until(one_holder, "one connection open from nginx, the GET stream's")
    return holders[0]


# --- the tests --------------------------------------------------------------------------------


async def test_one_session_through_nginx_is_served_by_both_instances_alike(
    tallies: Cluster,
) -> None:
    a, b = tallies.a, tallies.b
    async with asyncio.timeout(2 * SESSION_TIMEOUT):
        alone = await tally_session(a.url)
        balanced = await tally_session(tallies.nginx.url)
    assert balanced.seen == alone.seen
    assert alone.seen["totals"] == [n * (n - 1) // 2 for n in range(1, 9)]
    assert set(alone.pids) == {a.pid}
    # Round-robin, no stickiness: the calls of the one session take turns (the GET stream,
    # opened with the session, came before them).
    assert set(balanced.pids) == {a.pid, b.pid}
    assert all(one != next_one for one, next_one in zip(balanced.pids, balanced.pids[1:])), (
        balanced.pids
    )


async def test_the_session_goes_on_when_an_instance_is_killed_and_restarted(
    tallies: Cluster,
) -> None:
    async with (
        asyncio.timeout(SESSION_TIMEOUT),
        official_http_client(tallies.nginx.url) as (session, recorder),
    ):
        await session.subscribe_resource(WATCHED)
        before = [await add(session, [n, n]) for n in range(4)]
        assert {s.pid for s in before} == {tallies.a.pid, tallies.b.pid}
        touched = [await touch(session)]

        # The harder case: the one holding the client's GET stream dies mid-session.
        dead = await stream_holder(tallies)
        survivor = tallies.b if dead is tallies.a else tallies.a
        dead.kill()
        during = [await add(session, [n, n]) for n in range(4)]
        assert {s.pid for s in during} == {survivor.pid}  # nginx moved the dead one's turns
        # Touched before the client opens its stream again (mcpkit's retry_ms: 1 s later), the
        # update is replayed from Redis after the Last-Event-ID it resumes from, on the survivor.
        touched.append(await touch(session))
        await heard_every_touch(recorder, len(touched))
        assert await stream_holder(tallies) is survivor

        # The same command, the same port: a new process, which the session is new to.
        await asyncio.to_thread(dead.start)
        after = await until_served_by(session, dead.pid)
        touched += [await touch(session) for _ in range(2)]
        await heard_every_touch(recorder, len(touched))
    assert [s.total for s in before + during] == [2 * n for n in range(4)] * 2
    assert [s.total for s in after] == [n + 1 for n in range(len(after))]


def test_the_conformance_suite_passes_through_nginx(tmp_path: Path) -> None:
    """Every server scenario of the suite, as against one instance; its requests spread over
    both instances."""
    suite_command_or_skip("0.1.16")
    with behind_nginx(EVERYTHING, tmp_path) as cluster:
        results, output = run_suite(
            "0.1.16", ["server", "--url", cluster.nginx.url, "--suite", "all"], timeout=50
        )
        answering = cluster.nginx.answering_ports()
    assert len(results) == EXPECTED_SCENARIOS, output[-3000:]
    failed = {name: counts for name, counts in results.items() if counts[1]}
    assert not failed, f"failed scenarios: {failed}\n{output[-5000:]}"
    assert answering == {cluster.a.port, cluster.b.port}
