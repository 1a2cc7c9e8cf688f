"""What the client does with a reply it cannot read: deep results the server chose to send
are delivered (the client sets no depth bound of its own), and a reply past what the
decoder can take fails its request at once instead of leaving it waiting."""

from __future__ import annotations

import asyncio
import json

import pytest

from mcpkit import ProtocolError
from mcpkit.client import ClientSession
from mcpkit.transports import InMemoryTransport


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


async def answer_with(result_json: str) -> ClientSession:
    client_end, server_end = InMemoryTransport.pair()
    session = ClientSession(client_end, request_timeout=30)
    session.start()

    async def serve() -> None:
        request = json.loads(await server_end.receive())  # type: ignore[arg-type]
        reply = (
            f'{{"jsonrpc":"2.0","id":{json.dumps(request["id"])},"result":{{"x":{result_json}}}}}'
        )
        await server_end.send(reply.encode())

    asyncio.get_running_loop().create_task(serve())
    return session


async def test_a_result_deeper_than_the_servers_bound_reaches_the_client():
    session = await answer_with(nested(200))
    result = await asyncio.wait_for(session.request("ping"), 5)
    depth, value = 0, result["x"]
    while value:
        value, depth = value[0], depth + 1
    assert depth == 199  # the innermost [] is the empty list


async def test_a_reply_too_deep_to_decode_fails_its_request_at_once():
    session = await answer_with(nested(100_000))
    with pytest.raises(ProtocolError, match="nests too deeply"):
        await asyncio.wait_for(session.request("ping"), 5)


async def test_a_line_that_is_not_json_is_shown_in_the_warning_and_the_session_goes_on(caplog):
    """A server's stray print() on stdout: the warning shows the line (its start, when
    long), and the reply after it still reaches its request."""
    client_end, server_end = InMemoryTransport.pair()
    session = ClientSession(client_end, request_timeout=30)
    session.start()

    async def serve() -> None:
        request = json.loads(await server_end.receive())  # type: ignore[arg-type]
        await server_end.send(b"loading the model...")
        await server_end.send(b"x" * 1000)
        await server_end.send(
            json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": {}}).encode()
        )

    asyncio.get_running_loop().create_task(serve())
    with caplog.at_level("WARNING", logger="mcpkit.client"):
        assert await asyncio.wait_for(session.request("ping"), 5) == {}
    warnings = [r.getMessage() for r in caplog.records if "unreadable" in r.getMessage()]
    assert len(warnings) == 2
    assert warnings[0].endswith(": b'loading the model...'")
    assert warnings[1].endswith("x" * 200 + "'...")
