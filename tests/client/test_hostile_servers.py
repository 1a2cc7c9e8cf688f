"""The client against servers that misbehave on purpose: small scripted peers (a Python
subprocess speaking stdio) that flood it, and what the client does about it."""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from pathlib import Path
from typing import Any

import pytest

from mcpkit import McpClient, McpServerApp, StdioClientTransportOptions, mcp_server, mcp_tool
from mcpkit.client import (
    ClientSession,
    HttpClientTransportOptions,
    HttpStatusError,
    HttpTransportMode,
)
from mcpkit.client._inbound import DEFAULT_MAX_SERVER_REQUESTS
from tests.client._peers import StuckPeer
from tests.http_server import serve_asgi, serving
from tests.raw_asgi import read_body
from tests.waiting import wait_until

#: Upper bound for one test's client work (a client that would read forever fails).
TEST_TIMEOUT = 20.0

#: Requests the flooding server sends past what the client runs at once.
EXCESS = 8

#: A stdio server that answers ``initialize``, and answers ``tools/call`` by sending the
#: client ``FLOOD`` sampling requests at once; it answers the call (with how many of them
#: the client refused) once ``EXPECTED`` refusals came back.
FLOODER = """
import json, sys

FLOOD, EXPECTED = int(sys.argv[1]), int(sys.argv[2])

def send(message):
    sys.stdout.write(json.dumps(message) + "\\n")
    sys.stdout.flush()

call_id, refused = None, []
for line in sys.stdin:
    message = json.loads(line)
    method, request_id = message.get("method"), message.get("id")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": request_id, "result": {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}}, "serverInfo": {"name": "flooder", "version": "0"}}})
    elif method == "ping":
        send({"jsonrpc": "2.0", "id": request_id, "result": {}})
    elif method == "tools/call":
        call_id = request_id
        for n in range(FLOOD):
            send({"jsonrpc": "2.0", "id": f"s{n}", "method": "sampling/createMessage",
                  "params": {"messages": [], "maxTokens": 1}})
    elif method is not None and request_id is not None:  # server/discover, say
        send({"jsonrpc": "2.0", "id": request_id,
              "error": {"code": -32601, "message": "Method not found"}})
    elif method is None and "error" in message:
        refused.append(message["error"]["code"])
        if len(refused) == EXPECTED:
            send({"jsonrpc": "2.0", "id": call_id, "result": {
                "content": [{"type": "text", "text": json.dumps(refused)}]}})
"""


#: A stdio server that answers ``initialize`` and then will not go: it ignores SIGTERM
#: and the end of its input.
STUBBORN = """
import json, signal, sys, time

signal.signal(signal.SIGTERM, signal.SIG_IGN)
for line in sys.stdin:
    message = json.loads(line)
    if message.get("method") == "initialize":
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {
            "protocolVersion": message["params"]["protocolVersion"], "capabilities": {},
            "serverInfo": {"name": "stubborn", "version": "0"}}}) + "\\n")
    elif "id" in message and "method" in message:
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"],
            "error": {"code": -32601, "message": "Method not found"}}) + "\\n")
    sys.stdout.flush()
while True:
    time.sleep(1)
"""


#: A stdio server that answers ``initialize`` and ``ping``, and every other request with
#: a line of ``sys.argv[1]`` bytes or more.
LONG_LINES = """
import json, sys

for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message or "method" not in message:
        continue
    if message["method"] == "initialize":
        result = {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {},
                  "serverInfo": {"name": "long", "version": "0"}}
    elif message["method"] == "ping":
        result = {}
    else:
        result = {"content": [{"type": "text", "text": "x" * int(sys.argv[1])}]}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}) + "\\n")
    sys.stdout.flush()
"""


def script(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


async def test_a_flood_of_server_requests_runs_a_bounded_number_and_refuses_the_rest(tmp_path):
    """Each server request runs its handler in a task: a server sending thousands of
    sampling requests at once must not make thousands of tasks. Past the bound the client
    answers at once with an error (as a busy server does), and the rest keep running."""
    running = 0
    most = 0
    release = asyncio.Event()

    async def sampling(params: dict[str, Any]) -> dict[str, Any]:
        nonlocal running, most
        running += 1
        most = max(most, running)
        try:
            await release.wait()
        finally:
            running -= 1
        return {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"}

    flood = DEFAULT_MAX_SERVER_REQUESTS + EXCESS
    path = script(tmp_path, "flooder.py", FLOODER)
    options = StdioClientTransportOptions(
        command=sys.executable, arguments=[str(path), str(flood), str(EXCESS)]
    )
    async with McpClient.stdio(options, sampling_handler=sampling, request_timeout=15) as client:
        result = await client.call_tool("flood", {})
        assert result.content[0].text == str([-32603] * EXCESS)  # type: ignore[union-attr]
        assert most == running == DEFAULT_MAX_SERVER_REQUESTS
        release.set()
        await client.ping()  # the session goes on


async def test_refusals_are_bounded_too_and_past_them_a_request_is_dropped(caplog):
    """A server that floods requests and reads no answers: one handler runs, one refusal
    waits to be sent, and the next request is dropped with a warning, not queued."""
    hold = asyncio.Event()

    async def on_request(method: str, params: dict[str, Any]) -> dict[str, Any]:
        await hold.wait()
        return {}

    asks = [{"jsonrpc": "2.0", "id": n, "method": f"roots/list#{n}"} for n in range(3)]
    peer = StuckPeer(asks)
    session = ClientSession(peer, on_request=on_request, max_server_requests=1)  # type: ignore[arg-type]
    with caplog.at_level(logging.WARNING, logger="mcpkit.client"):
        session.start()
        await wait_until(lambda: "roots/list#2" in caplog.text, "the dropped request's warning")
    assert [(m["id"], m["error"]["code"]) for m in peer.sent] == [(1, -32603)]
    assert "Client busy" in peer.sent[0]["error"]["message"]
    await session.aclose()


async def test_notification_callbacks_are_bounded_and_past_them_notifications_dropped(caplog):
    """A server flooding notifications at a callback that is slow: two callbacks run, the
    rest of the flood is dropped with one warning (and a count once a callback ends), and
    the next notification after it runs its callback again."""
    hold = asyncio.Event()
    heard: list[int] = []

    async def on_notification(method: str, params: dict[str, Any]) -> None:
        heard.append(params["n"])
        await hold.wait()

    def note(n: int) -> dict[str, Any]:
        params = {"level": "info", "data": "x", "n": n}
        return {"jsonrpc": "2.0", "method": "notifications/message", "params": params}

    peer = StuckPeer([note(n) for n in range(5)])
    session = ClientSession(peer, on_notification=on_notification, max_notification_callbacks=2)  # type: ignore[arg-type]
    with caplog.at_level(logging.WARNING, logger="mcpkit.client"):
        session.start()
        await wait_until(lambda: peer.inbound.empty() and len(heard) == 2, "the flood read")
        await asyncio.sleep(0)  # the last one taken is routed in the same step
        assert caplog.text.count("dropping server notifications") == 1
        hold.set()
        await wait_until(lambda: "dropped 3 server notifications" in caplog.text, "the count")
    assert heard == [0, 1]
    peer.inbound.put_nowait(json.dumps(note(9)).encode())
    await wait_until(lambda: heard[-1:] == [9], "the next notification's callback")
    await session.aclose()


#: The body of the refusal below: far more than a client needs to read of it, and more
#: than the socket buffers between it and the client hold.
REFUSAL_BODY = 64 * 1024 * 1024


class LongRefusal:
    """Every request: 400 with a ``DPoP-Nonce`` (no ``use_dpop_nonce`` in the challenge)
    and a chunked body of ``REFUSAL_BODY`` bytes, written while the client is there."""

    def __init__(self) -> None:
        self.sent = 0
        self.done = asyncio.Event()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        await read_body(receive)
        headers = [(b"content-type", b"text/plain"), (b"dpop-nonce", b"n-1")]
        await send({"type": "http.response.start", "status": 400, "headers": headers})
        gone = asyncio.ensure_future(receive())  # http.disconnect, once the client is gone
        chunk = b"x" * 65536
        try:
            while self.sent < REFUSAL_BODY and not gone.done():
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
                self.sent += len(chunk)
                await asyncio.sleep(0)  # a send after the client left returns at once
            await send({"type": "http.response.body", "body": b""})
        finally:
            gone.cancel()
            self.done.set()


async def test_a_refusal_naming_a_nonce_is_read_no_further_than_its_start():
    """Whether a 400 naming a DPoP nonce asks to be sent again is looked for in the start
    of its body: only that start is read, however long the body (chunked, no length)."""
    refusal = LongRefusal()
    async with serve_asgi(refusal) as base:
        options = HttpClientTransportOptions(
            endpoint=base + "/mcp", transport_mode=HttpTransportMode.STREAMABLE_HTTP
        )
        async with asyncio.timeout(TEST_TIMEOUT):
            with pytest.raises(HttpStatusError) as refused:
                async with McpClient.http(options, protocol_mode="legacy"):
                    pass
            await refusal.done.wait()
    assert refused.value.status_code == 400
    assert refused.value.body == b"x" * 4096  # its start, for the error to show
    assert refusal.sent < REFUSAL_BODY


async def test_a_server_that_will_not_exit_is_gone_once_the_client_closed(tmp_path):
    """Closing the stdin, SIGTERM, then SIGKILL: when ``async with`` ends, the process
    has ended and been waited for, not left running or a zombie for a while after."""
    path = script(tmp_path, "stubborn.py", STUBBORN)
    options = StdioClientTransportOptions(
        command=sys.executable, arguments=[str(path)], shutdown_timeout=0.2
    )
    async with asyncio.timeout(TEST_TIMEOUT):
        async with McpClient.stdio(options, protocol_mode="legacy") as client:
            pid = client.session.stream.pid  # type: ignore[attr-defined]
            assert pid is not None
        assert not Path(f"/proc/{pid}").exists()


async def test_a_line_past_the_bound_is_dropped_with_a_warning(tmp_path, caplog):
    """An answer past ``max_message_bytes`` cannot be read, and its request waits for its
    timeout: the log says why (it said nothing), as it does on the other transports."""
    path = script(tmp_path, "long.py", LONG_LINES)
    options = StdioClientTransportOptions(
        command=sys.executable, arguments=[str(path), "5000"], max_message_bytes=1000
    )
    with caplog.at_level(logging.WARNING, logger="mcpkit.client"):
        async with McpClient.stdio(options, protocol_mode="legacy") as client:
            call = asyncio.ensure_future(client.request("anything", {}))
            await wait_until(lambda: "max_message_bytes" in caplog.text, "the warning")
            call.cancel()
            await asyncio.gather(call, return_exceptions=True)
            await client.ping()  # the lines after it are read as ever
    assert "(1000 bytes)" in caplog.text


@mcp_server(name="gate")
class Gate:
    """A tool that waits for the test to open it."""

    def __init__(self) -> None:
        self.opened = asyncio.Event()
        self.waiting = 0

    @mcp_tool()
    async def wait(self) -> str:
        self.waiting += 1
        await self.opened.wait()
        return "through"


@pytest.mark.parametrize("mode", ["legacy", "modern"])
async def test_cancelling_one_call_leaves_the_others_and_closing_leaves_no_task(mode):
    """The client's own tasks: those of the server serving it are not its to end."""
    gate = Gate()
    async with asyncio.timeout(TEST_TIMEOUT), serving(McpServerApp(gate)) as (url, _):
        await asyncio.sleep(0)  # the serving started what it starts
        before = asyncio.all_tasks()
        async with McpClient.http(url, protocol_mode=mode) as client:
            calls = [asyncio.ensure_future(client.call_tool("wait", {})) for _ in range(3)]
            await wait_until(lambda: gate.waiting == 3, "three calls waiting")
            calls[1].cancel()
            await asyncio.gather(calls[1], return_exceptions=True)
            gate.opened.set()
            for call in (calls[0], calls[2]):
                assert (await call).content[0].text == "through"  # type: ignore[union-attr]
            await client.ping()
        left = [t.get_coro() for t in asyncio.all_tasks() - before]
        files = {c.cr_code.co_filename for c in left}  # type: ignore[union-attr]
        client_side = ("/mcpkit/client/", "/httpx/", "/httpcore/")
        assert not [f for f in files if any(part in f for part in client_side)], files
