"""Redis failing under two in-process instances that share it (``redis_options`` on hubs
with short timeouts, one real redis-server of the test's own): what a client hears when
Redis is down or holds bad data, and that nothing it sent is lost without it being told."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx
import pytest

from mcpkit.stores import RedisHub, redis_options
from tests.http_server import POST_HEADERS, serving
from tests.redis_server import RedisServer, needs_redis
from tests.stores.test_scale_out import EXAMPLE, events_of, messages_as_they_come
from tests.waiting import wait_until
from tests.wire import initialize_request

pytestmark = [pytest.mark.timeout(60), needs_redis]


@pytest.fixture
def redis() -> Any:
    server = RedisServer().start()
    try:
        yield server
    finally:
        server.close()


@contextlib.asynccontextmanager
async def instances(server: RedisServer, prefix: str) -> AsyncIterator[list[tuple[str, RedisHub]]]:
    """Two apps of everything.py, each on a hub of its own (short timeouts) over ``server``:
    (endpoint URL, hub) of each."""
    sys.path.insert(0, str(EXAMPLE.parent))
    from mcpkit.cli._loader import load_app

    async with contextlib.AsyncExitStack() as stack:
        served = []
        for _ in "AB":
            hub = RedisHub(server.url, prefix=prefix, timeout=1.0, connect_timeout=0.5)
            stack.push_async_callback(hub.aclose)
            url, _ = await stack.enter_async_context(
                serving(load_app(str(EXAMPLE)), **redis_options(hub))
            )
            served.append((url, hub))
        yield served


async def open_session(http: httpx.AsyncClient, url: str) -> dict[str, str]:
    """A session whose client can answer elicitations: the headers of its later POSTs."""
    init = await http.post(url, json=initialize_request(elicitation={}), headers=POST_HEADERS)
    assert init.status_code == 200, init.text
    headers = {
        **POST_HEADERS,
        "mcp-session-id": init.headers["mcp-session-id"],
        "mcp-protocol-version": "2025-11-25",
    }
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert (await http.post(url, json=initialized, headers=headers)).status_code == 202
    return headers


def redis_command(server: RedisServer, *words: str) -> bytes:
    """One command on a connection of its own (RESP), its raw reply."""
    command = f"*{len(words)}\r\n" + "".join(f"${len(w)}\r\n{w}\r\n" for w in words)
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
        sock.sendall(command.encode())
        return sock.recv(4096)


def listening(server: RedisServer, channel: str) -> bool:
    """Whether some instance is subscribed to ``channel`` (PUBSUB NUMSUB)."""
    reply = redis_command(server, "PUBSUB", "NUMSUB", channel)
    return not reply.endswith(b":0\r\n")


ELICITING_CALL = {
    "jsonrpc": "2.0",
    "id": 3,
    "method": "tools/call",
    "params": {"name": "test_elicitation", "arguments": {"message": "?"}},
}
#: A call of everything.py that changes a resource (a session may subscribe to it).
SAVE_NOTE = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "tools/call",
    "params": {"name": "save_note", "arguments": {"key": "k", "text": "x"}},
}
#: A call of everything.py that stores events as it goes (its progress), then its answer.
PROGRESS_CALL = {
    "jsonrpc": "2.0",
    "id": 3,
    "method": "tools/call",
    "params": {"name": "test_tool_with_progress", "arguments": {}, "_meta": {"progressToken": "t"}},
}

Cut = Callable[[str], Awaitable[None]]


async def refused_then_taken(
    http: httpx.AsyncClient,
    server: RedisServer,
    prefix: str,
    urls: tuple[str, str],
    cut: Cut,
    restore: Cut,
) -> None:
    """A session held on A and B; a call on A asks its client a question (an elicitation).
    Once ``cut(channel)`` (A's bus channel) keeps the answer from reaching A, the answer
    posted to B is refused 503, retryable; once ``restore(channel)`` and A listens again,
    the same answer posted again is taken, and the call ends with it."""
    a, b = urls
    headers = await open_session(http, a)
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    assert (await http.post(b, json=ping, headers=headers)).status_code == 200  # B holds it
    seen = []
    async with http.stream("POST", a, json=ELICITING_CALL, headers=headers) as response:
        async for message in messages_as_they_come(response):
            seen.append(message)
            if message.get("method") != "elicitation/create":
                continue
            channel = f"{prefix}:bus:instance.{message['id'].split('/')[0]}"
            await cut(channel)
            answer = {"jsonrpc": "2.0", "id": message["id"], "result": {"action": "decline"}}
            refused = await http.post(b, json=answer, headers=headers)
            assert refused.status_code == 503, refused.text
            assert refused.json()["error"]["data"] == {"retryable": True}
            await restore(channel)
            await wait_until(lambda c=channel: listening(server, c), "A to listen again", 20)
            taken = await http.post(b, json=answer, headers=headers)
            assert taken.status_code == 202, taken.text
    assert seen[-1]["result"]["content"][0]["text"].startswith("User response: action=decline")


async def test_an_answer_posted_while_the_bus_is_down_is_refused_then_taken_again(redis):
    """The client answers an elicitation through B while Redis is down: B cannot pass it
    to A, which waits for it, so the client hears 503 (not 202 and the answer dropped);
    posted again once Redis is back, it reaches A and the call ends."""

    async def stop(channel: str) -> None:
        redis.stop(save=True)

    async def start(channel: str) -> None:
        redis.start()

    async with (
        instances(redis, "answer") as [(a, _), (b, _)],
        httpx.AsyncClient(timeout=30) as http,
    ):
        await refused_then_taken(http, redis, "answer", (a, b), stop, start)


async def test_a_corrupt_event_in_redis_is_passed_over_and_the_rest_replayed(redis):
    """An entry of a session's event list that is not an event (written by hand, or cut
    short): a stream resumed on B replays the events around it, and ends with the call's
    answer, where it ended with nothing at all."""
    async with (
        instances(redis, "badevent") as [(a, hub), (b, _)],
        httpx.AsyncClient(timeout=30) as http,
    ):
        headers = await open_session(http, a)
        call = PROGRESS_CALL
        assert (await http.post(a, json=call, headers=headers)).status_code == 200
        session_id = headers["mcp-session-id"]
        events = f"badevent:ev:{{{session_id}}}"
        entries = await hub.client.lrange(events, 0, -1)
        assert len(entries) == 5  # priming, three progress notifications, the answer
        stream = entries[0].split(b" ")[1].decode()
        await hub.client.lset(events, 2, f"3 {stream} {{not json".encode())
        await hub.client.lset(events, 3, b"not an event")
        resumed = await http.get(
            b,
            headers={
                **headers,
                "accept": "text/event-stream",
                "last-event-id": f"{session_id}:1",
            },
        )
        assert resumed.status_code == 200
        replayed = events_of(resumed.content)
        assert [event_id for event_id, _ in replayed] == [f"{session_id}:2", f"{session_id}:5"]
        assert replayed[0][1]["params"]["progress"] == 0
        assert replayed[1][1]["id"] == 3 and "result" in replayed[1][1]
        # and the server goes on serving
        ping = {"jsonrpc": "2.0", "id": 4, "method": "ping"}
        assert (await http.post(b, json=ping, headers=headers)).status_code == 200


@pytest.mark.parametrize("record", [b'{"session_id": "cut sh', b"[1, 2]", b"not json"])
async def test_an_unreadable_session_record_is_an_unknown_session(redis, record):
    """A session's record in Redis that is not one (written by hand, cut short): B, which
    must adopt the session from it, answers 404 as for an expired session, so the client
    starts a new one, where every request of the session failed with a 500 internal error."""
    async with (
        instances(redis, "badrecord") as [(a, hub), (b, _)],
        httpx.AsyncClient(timeout=30) as http,
    ):
        headers = await open_session(http, a)
        session_id = headers["mcp-session-id"]
        await hub.client.set(f"badrecord:session:{session_id}", record, keepttl=True)
        ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
        unknown = await http.post(b, json=ping, headers=headers)
        assert unknown.status_code == 404, unknown.text
        assert unknown.json()["error"]["data"] == {"sessionId": session_id}
        fresh = await open_session(http, b)
        assert (await http.post(b, json=ping, headers=fresh)).status_code == 200


def clients(server: RedisServer) -> int:
    """The connections Redis has open, less the one asking."""
    return redis_command(server, "CLIENT", "LIST").count(b"\nid=") - 1  # a line each


async def test_a_hub_made_from_a_url_closes_its_connections(redis):
    """``RedisHub(url).aclose()`` closes the pool it made: the client it handed the pool
    to would leave its connections open to Redis."""
    hub = RedisHub(redis.url, prefix="close")
    assert await hub.ping()
    assert clients(redis) == 1
    await hub.aclose()
    await wait_until(lambda: clients(redis) == 0, "the hub's connection to close")


async def test_an_app_on_redis_options_of_a_url_leaves_nothing_running_when_it_stops(redis):
    """``redis_options(url)`` makes the hub its stores and bus share: once the app that
    served them stops, its pub/sub reader is gone and its connections to Redis closed
    (the reader went on, reconnecting for ever, in the host's process)."""
    sys.path.insert(0, str(EXAMPLE.parent))
    from mcpkit.cli._loader import load_app

    before = asyncio.all_tasks()
    app = load_app(str(EXAMPLE))
    async with (
        serving(app, **redis_options(redis.url, prefix="stop")) as (url, _),
        httpx.AsyncClient(timeout=30) as http,
    ):
        headers = await open_session(http, url)
        assert (await http.post(url, json=SAVE_NOTE, headers=headers)).status_code == 200
        assert clients(redis) >= 2  # commands, and pub/sub

    def left() -> list[str]:
        names = (t.get_coro().__qualname__ for t in asyncio.all_tasks() - before)
        return [name for name in names if "Redis" in name]

    await wait_until(lambda: not left(), "the Redis tasks to end")
    await wait_until(lambda: clients(redis) == 0, "the connections to Redis to close")


async def test_every_key_the_sessions_write_expires(redis):
    """What a session leaves in Redis (its record, the index of live sessions, its events
    and their counter, its delivery markers) expires: once no session is live, nothing of
    theirs stays for ever (the index did)."""
    async with (
        instances(redis, "ttl") as [(a, hub), (b, _)],
        httpx.AsyncClient(timeout=30) as http,
    ):
        headers = await open_session(http, a)
        assert (await http.post(a, json=SAVE_NOTE, headers=headers)).status_code == 200
        subscribe = {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "resources/subscribe",
            "params": {"uri": "notes://k"},
        }
        assert (await http.post(b, json=subscribe, headers=headers)).status_code == 200
        keys = await hub.client.keys("ttl:*")
        assert {b"ttl:sessions", f"ttl:session:{headers['mcp-session-id']}".encode()} <= set(keys)
        forever = [key for key in keys if await hub.client.pttl(key) < 0]
        assert forever == []


async def test_an_answer_no_instance_takes_is_refused_then_taken_again(redis):
    """Redis is up, but A, which waits for the answer, has lost its pub/sub connection and
    cannot subscribe again yet (here: SUBSCRIBE denied): B's publish reaches no one, so
    the client hears 503 (not 202 and the answer dropped); posted again once A listens
    again, it reaches the call."""

    async def deny_subscribing(channel: str) -> None:
        redis_command(redis, "ACL", "SETUSER", "default", "-subscribe")
        redis_command(redis, "CLIENT", "KILL", "TYPE", "pubsub")
        await wait_until(lambda: not listening(redis, channel), "A to stop listening")

    async def allow_subscribing(channel: str) -> None:
        redis_command(redis, "ACL", "SETUSER", "default", "+subscribe")

    async with (
        instances(redis, "nobody") as [(a, _), (b, _)],
        httpx.AsyncClient(timeout=30) as http,
    ):
        await refused_then_taken(http, redis, "nobody", (a, b), deny_subscribing, allow_subscribing)
