"""docs/migrating.md's HTTP pairs, each tried: both programs serve on port 0 (``python
program.py`` with ``PORT`` set, as the page says; or ``uvicorn program:asgi`` for the ASGI
pair) and one client drives both, the official SDK's ``ClientSession`` over Streamable HTTP
(``streamable_http_client``), with the token in an ``Authorization`` header where the pair
checks tokens. What the page says differs is asserted as it says; the rest must match."""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx2
import pytest
from joserfc import jwt
from joserfc.jwk import KeySet, RSAKey
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.docs._migrating_pairs import (
    PAIR_TIMEOUT,
    Seen,
    call,
    page_pairs,
    quiet_env,
    tool_shape,
    write_program,
)
from tests.http_server import POST_HEADERS
from tests.ports import announced_server

pytestmark = pytest.mark.interop

ISSUER = "https://auth.example.com"
AUDIENCE = "https://mcp.example.com/mcp"


class Issuer:
    """The authorization server of the auth pair: a signing key, its JWKS served over HTTP
    on 127.0.0.1, and tokens minted with it."""

    def __init__(self) -> None:
        self.key = RSAKey.generate_key(2048, parameters={"kid": uuid.uuid4().hex[:8]})
        body = json.dumps(KeySet([self.key]).as_dict(private=False)).encode()

        class Jwks(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass  # a test's output is the test's

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Jwks)

    @property
    def jwks_uri(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}/jwks.json"

    def token(self, audience: str = AUDIENCE) -> str:
        now = int(time.time())
        claims = {
            "iss": ISSUER,
            "aud": audience,
            "sub": "alice",
            "client_id": "client-1",
            "scope": "mcp",
            "iat": now,
            "exp": now + 300,
        }
        return jwt.encode({"alg": "RS256", "kid": self.key.kid}, claims, self.key)


@pytest.fixture
def issuer() -> Iterator[Issuer]:
    issuer = Issuer()
    thread = threading.Thread(target=issuer.server.serve_forever, daemon=True)
    thread.start()
    yield issuer
    issuer.server.shutdown()
    issuer.server.server_close()
    thread.join()


@dataclass(frozen=True)
class Served:
    """One side of a pair, serving: its endpoint and the issuer of its tokens."""

    url: str
    issuer: Issuer


async def session_answers(
    served: Served,
    driver: Callable[[ClientSession, Seen], Awaitable[dict[str, Any]]],
    token: str = "",
) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        httpx2.AsyncClient(headers=headers) as http,
        streamable_http_client(served.url, http_client=http) as (read, write, *_),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        return await driver(session, Seen())


async def forecast(session: ClientSession, seen: Seen) -> dict[str, Any]:
    tools = [tool_shape(tool) for tool in (await session.list_tools()).tools]
    assert [tool["name"] for tool in tools] == ["forecast"]
    return {"tools": tools, "forecast": await call(session, seen, "forecast", {"city": "Oslo"})}


async def whoami(session: ClientSession, seen: Seen) -> dict[str, Any]:
    return {
        "tools": [tool.name for tool in (await session.list_tools()).tools],
        "whoami": await call(session, seen, "whoami", {}),
    }


async def http(served: Served) -> dict[str, Any]:
    return await session_answers(served, forecast)


async def auth(served: Served) -> dict[str, Any]:
    async with httpx2.AsyncClient() as raw:
        bare = await raw.post(served.url, json={}, headers=POST_HEADERS)
        foreign = served.issuer.token(audience="https://other.example.com/mcp")
        refused = await raw.post(
            served.url, json={}, headers={**POST_HEADERS, "Authorization": f"Bearer {foreign}"}
        )
    challenge = bare.headers.get("www-authenticate", "")
    answered = await session_answers(served, whoami, served.issuer.token())
    assert answered["whoami"] == "client-1"
    return {
        "without a token": (bare.status_code, challenge.split(" ")[0]),
        "challenge names metadata": "resource_metadata=" in challenge,
        "foreign token": (refused.status_code, refused.json()["error"]),
        **answered,
    }


@dataclass(frozen=True)
class HttpPair:
    """How the page says a pair's programs are started, and what the client does."""

    drive: Callable[[Served], Awaitable[dict[str, Any]]]
    asgi: bool = False  # served as ``uvicorn program:asgi``, else ``python program.py``
    official_sdk: bool = False  # their side is mcp 2.x's MCPServer, not FastMCP
    #: What the page says differs: each answer's key, and (theirs, mcpkit's).
    differs: tuple[tuple[str, tuple[Any, Any]], ...] = ()


HTTP_PAIRS = {
    "http": HttpPair(http),
    "asgi": HttpPair(http, asgi=True),
    "auth": HttpPair(auth, differs=(("challenge names metadata", (False, True)),)),
    "mcpserver-http": HttpPair(http, official_sdk=True),
}


@contextmanager
def serving(program: Path, pair: HttpPair, issuer: Issuer) -> Iterator[Served]:
    if pair.asgi:
        command = [sys.executable, "-m", "uvicorn", "program:asgi", "--port", "0"]
    else:
        command = [sys.executable, str(program)]
    env = quiet_env(PORT="0", JWKS_URI=issuer.jwks_uri)
    # each side names the port it was given: mcpkit's banner, or uvicorn's under the others
    with announced_server(command, stream="both", cwd=program.parent, env=env) as served:
        yield Served(f"http://127.0.0.1:{served.port}/mcp", issuer)


@pytest.mark.parametrize("name", sorted(HTTP_PAIRS))
async def test_both_http_servers_of_a_pair_answer_one_client_alike(
    name: str, tmp_path: Path, issuer: Issuer
):
    pair = HTTP_PAIRS[name]
    if not pair.official_sdk:
        pytest.importorskip("fastmcp")
    answers = []
    for side, source in zip(("theirs", "ours"), page_pairs()[name], strict=True):
        with serving(write_program(tmp_path / side, source), pair, issuer) as served:
            async with asyncio.timeout(PAIR_TIMEOUT):
                answers.append(await pair.drive(served))
    theirs, ours = answers
    for key, (expected_theirs, expected_ours) in pair.differs:
        assert (theirs.pop(key), ours.pop(key)) == (expected_theirs, expected_ours), key
    assert ours == theirs
