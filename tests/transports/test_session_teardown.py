"""A session's life at its two ends, over a real socket: the id it is given, the empty
answers of a notification and of DELETE, and what DELETE tears down (a call of the session
still running is cancelled; the id is unknown afterwards). The stream a session keeps for
its GET makes its event and lock only when something uses them, and one closed before is
seen as finished."""

from __future__ import annotations

import asyncio
import re

import httpx

from mcpkit.transports.http._streamable.streams import SseStream
from tests.http_server import serving
from tests.transports.test_call_costs import _app  # its tool `hang` runs until cancelled
from tests.wire import initialize_request

HEADERS = {
    "accept": "application/json, text/event-stream",
    "content-type": "application/json",
    "mcp-protocol-version": "2025-11-25",
}


async def _open(http: httpx.AsyncClient, url: str) -> dict[str, str]:
    """initialize + initialized: the headers of the new session's requests."""
    answer = await http.post(url, json=initialize_request(), headers=HEADERS)
    assert answer.status_code == 200
    session = {**HEADERS, "mcp-session-id": answer.headers["mcp-session-id"]}
    note = await http.post(
        url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session
    )
    assert note.status_code == 202
    assert note.content == b"" and note.headers["content-length"] == "0"
    assert note.headers["mcp-session-id"] == session["mcp-session-id"]
    assert note.headers["mcp-protocol-version"] == "2025-11-25"
    return session


async def test_session_ids_are_unguessable_and_distinct():
    app, _, _ = _app()
    async with serving(app) as (url, _asgi), httpx.AsyncClient(timeout=10) as http:
        ids = [(await _open(http, url))["mcp-session-id"] for _ in range(5)]
    assert all(re.fullmatch(r"[0-9a-f]{48}", session_id) for session_id in ids)  # 192 bits
    assert len(set(ids)) == 5


async def test_delete_ends_the_session_with_an_empty_answer():
    app, _, _ = _app()
    async with serving(app) as (url, asgi), httpx.AsyncClient(timeout=10) as http:
        session = await _open(http, url)
        ended = await http.delete(url, headers=session)
        assert ended.status_code == 200
        assert ended.content == b"" and ended.headers["content-length"] == "0"
        assert len(asgi.streamable.sessions) == 0
        again = await http.delete(url, headers=session)
        assert again.status_code == 404
        ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        assert (await http.post(url, json=ping, headers=session)).status_code == 404


async def test_delete_cancels_a_call_of_the_session_still_running():
    app, started, cancelled = _app()
    async with (
        asyncio.timeout(60),
        serving(app) as (url, _asgi),
        httpx.AsyncClient(timeout=60) as http,  # the client never gives up first
    ):
        session = await _open(http, url)
        call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "hang"}}
        waiting = asyncio.create_task(
            http.post(url, json=call, headers={**session, "accept": "application/json"})
        )
        await started.wait()
        assert (await http.delete(url, headers=session)).status_code == 200
        async with asyncio.timeout(5):  # DELETE itself cancels it, not a hang-up later
            await cancelled.wait()
        waiting.cancel()
        await asyncio.gather(waiting, return_exceptions=True)


async def test_a_stream_closed_before_anyone_waited_is_finished():
    stream = SseStream("_get", "s", None, 1000)
    assert stream._finished is None and stream._lock is None  # nothing made up front
    stream.close()
    assert stream._finished is None
    assert stream.finished.is_set()
    open_stream = SseStream("_get", "t", None, 1000)
    assert not open_stream.finished.is_set()
    open_stream.close()
    assert open_stream.finished.is_set()


async def test_a_stream_makes_its_lock_once():
    stream = SseStream("_get", "s", None, 1000)
    lock = stream.lock
    assert stream.lock is lock
    async with stream.lock:
        assert lock.locked()
