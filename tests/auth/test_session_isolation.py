"""Sessions under bearer auth belong to the identity that created them.

Alice opens a session; Bob, with a perfectly valid token of his own, names her session id.
On every route of every transport he gets the answer an unknown session gets (404) and
reaches nothing of hers: no tool runs in her session, no notification of hers reaches him,
he cannot end it, nothing he posts lands in her stream, no Last-Event-ID replays her
events. Across instances sharing Redis the owner travels in the stored record, so the
check holds wherever the request lands. And the identity the gate verified is what tools
(``ctx.auth``) and guards see on Streamable HTTP, legacy SSE and WebSocket alike.

Real uvicorn on 127.0.0.1, real signed tokens, a real redis-server when installed.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import connect

from mcpkit import McpServerApp, McpToolContext, mcp_server, mcp_tool
from mcpkit.protocol import SseDecoder
from mcpkit.server import use_guards
from mcpkit.stores import (
    FileSessionStore,
    InMemoryEventStore,
    InMemorySessionStore,
    RedisHub,
    RedisSessionStore,
    SessionRecord,
    redis_options,
)
from tests.auth._support import Signer
from tests.auth.test_server_gate import AUDIENCE, INIT, INIT_LEGACY, INITIALIZED, make_config
from tests.http_server import serving
from tests.redis_server import needs_redis

VERSION = "2025-11-25"
ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
WAIT = 10.0
SECRET = "alice-secret-note"

pytestmark = pytest.mark.timeout(90)


def alice_only(ctx: Any) -> bool:
    """A guard: it sees the verified identity on ``McpExecutionContext.auth``."""
    auth = ctx.auth
    return auth is not None and auth.subject == "alice"


@mcp_server(name="isolation-test")
class Isolation:
    @mcp_tool()
    def whoami(self, ctx: McpToolContext) -> str:
        """Who ``ctx.auth`` says is calling, and in which session."""
        auth = ctx.auth
        return json.dumps(
            {
                "subject": auth.subject if auth is not None else None,
                "client_id": auth.client_id if auth is not None else None,
                "session": ctx.session_id,
            }
        )

    @mcp_tool()
    @use_guards(alice_only)
    def alice_tool(self) -> str:
        return "for alice"

    @mcp_tool()
    async def shout(self, ctx: McpToolContext, text: str) -> str:
        """``text`` as a log on the call's own stream and as a message on the session's
        standalone stream."""
        await ctx.info(text)
        session = ctx.binding.session
        assert session is not None
        await session.send(
            {
                "jsonrpc": "2.0",
                "method": "notifications/message",
                "params": {"level": "info", "data": f"standalone:{text}"},
            }
        )
        return "shouted"


@pytest.fixture
def app() -> McpServerApp:
    return McpServerApp(Isolation)


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


def tokens(signer: Signer) -> dict[str, dict[str, str]]:
    """Alice, Bob, and Alice through another client: three identities."""
    scope = "mcp:read mcp:write"
    return {
        "alice": bearer(signer.token(audience=AUDIENCE, scope=scope, subject="alice")),
        "alice2": bearer(signer.token(audience=AUDIENCE, scope=scope, subject="alice")),
        "bob": bearer(signer.token(audience=AUDIENCE, scope=scope, subject="bob")),
        "alice_other_client": bearer(
            signer.token(audience=AUDIENCE, scope=scope, subject="alice", client_id="client-2")
        ),
    }


def tool_call(request_id: int, name: str, arguments: dict[str, Any] | None = None) -> dict:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments or {}},
    }


def text_of(reply: dict[str, Any]) -> str:
    assert "result" in reply, reply
    return str(reply["result"]["content"][0]["text"])


def sse_messages(body: bytes) -> list[tuple[str | None, dict[str, Any]]]:
    return [(e.id, json.loads(e.data)) for e in SseDecoder().feed(body) if e.data]


class Session:
    """A Streamable HTTP session over raw HTTP; ``auth`` is the token its requests carry."""

    def __init__(self, http: httpx.AsyncClient, url: str, auth: dict[str, str]) -> None:
        self.http = http
        self.url = url
        self.auth = auth
        self.session_id = ""
        self._ids = itertools.count(2)

    def headers(self, auth: dict[str, str] | None = None, **extra: str) -> dict[str, str]:
        return {
            **ACCEPT,
            **(self.auth if auth is None else auth),
            "mcp-session-id": self.session_id,
            "mcp-protocol-version": VERSION,
            **extra,
        }

    async def open(self) -> Session:
        response = await self.http.post(self.url, json=INIT, headers={**ACCEPT, **self.auth})
        assert response.status_code == 200, response.text
        self.session_id = response.headers["mcp-session-id"]
        note = await self.http.post(self.url, json=INITIALIZED, headers=self.headers())
        assert note.status_code == 202, note.text
        return self

    async def post(
        self, message: dict[str, Any], auth: dict[str, str] | None = None, url: str | None = None
    ) -> httpx.Response:
        return await self.http.post(url or self.url, json=message, headers=self.headers(auth))

    async def call(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        auth: dict[str, str] | None = None,
        url: str | None = None,
    ) -> dict[str, Any]:
        response = await self.post(tool_call(next(self._ids), name, arguments), auth, url)
        assert response.status_code == 200, response.text
        if response.headers["content-type"].startswith("text/event-stream"):
            return [m for _, m in sse_messages(response.content) if "id" in m][-1]
        reply: dict[str, Any] = response.json()
        return reply

    async def whoami(self, auth: dict[str, str] | None = None, url: str | None = None) -> dict:
        return json.loads(text_of(await self.call("whoami", auth=auth, url=url)))


class Stream:
    """An SSE response read in the background: every event, as it comes."""

    def __init__(
        self, http: httpx.AsyncClient, method: str, url: str, headers: dict[str, str]
    ) -> None:
        self.events: list[tuple[str | None, str | None, dict[str, Any] | str]] = []
        self.status: int | None = None
        self._opened = asyncio.Event()
        self._arrived = asyncio.Event()
        self._task = asyncio.create_task(self._run(http, method, url, headers))

    async def _run(
        self, http: httpx.AsyncClient, method: str, url: str, headers: dict[str, str]
    ) -> None:
        decoder = SseDecoder()
        try:
            async with http.stream(
                method, url, headers=headers, timeout=httpx.Timeout(WAIT, read=None)
            ) as response:
                self.status = response.status_code
                self._opened.set()
                async for chunk in response.aiter_bytes():
                    for event in decoder.feed(chunk):
                        if not event.data:
                            continue
                        try:
                            data: dict[str, Any] | str = json.loads(event.data)
                        except ValueError:
                            data = event.data
                        self.events.append((event.id, event.event, data))
                        self._arrived.set()
        except httpx.HTTPError:
            pass
        finally:
            self._opened.set()

    async def opened(self) -> Stream:
        async with asyncio.timeout(WAIT):
            await self._opened.wait()
        return self

    async def first(self, kind: str | None = None) -> dict[str, Any] | str:
        """The data of the first event (of ``kind``)."""
        return await self.until(lambda _: True, kind)

    async def until(self, test: Any, kind: str | None = None) -> Any:
        async with asyncio.timeout(WAIT):
            while True:
                for _, event, data in self.events:
                    if (kind is None or event == kind) and test(data):
                        return data
                self._arrived.clear()
                await self._arrived.wait()

    def messages(self) -> list[dict[str, Any]]:
        return [data for _, _, data in self.events if isinstance(data, dict)]

    async def close(self) -> None:
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)


def standalone_with(text: str) -> Any:
    return lambda m: isinstance(m, dict) and m.get("params", {}).get("data") == f"standalone:{text}"


@contextlib.asynccontextmanager
async def protected(
    app: McpServerApp, signer: Signer, **options: Any
) -> AsyncIterator[tuple[str, httpx.AsyncClient]]:
    async with (
        serving(
            app,
            bearer_auth=make_config(signer),
            enable_legacy_sse=True,
            enable_websocket=True,
            **options,
        ) as (url, _),
        httpx.AsyncClient(timeout=WAIT) as http,
    ):
        yield url, http


def unknown_answer(response: httpx.Response) -> tuple[int, int, str]:
    """What a 404 says, but the session id it echoes."""
    body = response.json()
    return response.status_code, body["error"]["code"], body["error"]["message"]


# -- Streamable HTTP --------------------------------------------------------------------


async def test_another_identity_gets_404_on_every_streamable_route(app, signer):
    t = tokens(signer)
    async with asyncio.timeout(60), protected(app, signer) as (url, http):
        alice = await Session(http, url, t["alice"]).open()
        stranger = Session(http, url, t["bob"])
        stranger.session_id = "no-such-session"
        unknown = await stranger.post(tool_call(5, "whoami"))
        assert unknown.status_code == 404

        for intruder in ("bob", "alice_other_client"):
            auth = t[intruder]
            # POST: a request, a notification, an answer to a server request
            for message in (
                tool_call(7, "whoami"),
                {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"},
                {"jsonrpc": "2.0", "id": "x/1", "result": {}},
            ):
                refused = await alice.post(message, auth)
                assert refused.status_code == 404, (intruder, message, refused.text)
                assert unknown_answer(refused) == unknown_answer(unknown)
                assert refused.json()["error"]["data"] == {"sessionId": alice.session_id}
                assert "mcp-session-id" not in refused.headers
            # GET: the standalone stream, and a resumption
            for extra in ({}, {"last-event-id": f"{alice.session_id}:1"}):
                got = await http.get(
                    url, headers=alice.headers(auth, accept="text/event-stream", **extra)
                )
                assert got.status_code == 404, (intruder, extra, got.text)
                assert unknown_answer(got) == unknown_answer(unknown)
            # DELETE
            deleted = await http.delete(url, headers=alice.headers(auth))
            assert deleted.status_code == 404, (intruder, deleted.text)
            assert unknown_answer(deleted) == unknown_answer(unknown)

        # her session is intact, and a refreshed token of hers (same identity) works too
        assert await alice.whoami() == {
            "subject": "alice",
            "client_id": "client-1",
            "session": alice.session_id,
        }
        assert (await alice.whoami(t["alice2"]))["session"] == alice.session_id
        assert (await http.delete(url, headers=alice.headers())).status_code == 200
        assert (await alice.post(tool_call(9, "whoami"))).status_code == 404


async def test_another_identity_cannot_read_her_standalone_stream(app, signer):
    t = tokens(signer)
    async with asyncio.timeout(60), protected(app, signer) as (url, http):
        alice = await Session(http, url, t["alice"]).open()
        mine = await Stream(http, "GET", url, alice.headers(accept="text/event-stream")).opened()
        assert mine.status == 200
        # Her stream is attached: Bob gets 404 (unknown), not 409 (taken), nor a resumption.
        for extra in ({}, {"last-event-id": f"{alice.session_id}:0"}):
            got = await http.get(
                url, headers=alice.headers(t["bob"], accept="text/event-stream", **extra)
            )
            assert got.status_code == 404, got.text
        assert text_of(await alice.call("shout", {"text": SECRET})) == "shouted"
        await mine.until(standalone_with(SECRET))
        await mine.close()


async def test_a_foreign_last_event_id_replays_nothing_of_hers(app, signer):
    t = tokens(signer)
    async with asyncio.timeout(60), protected(app, signer) as (url, http):
        alice = await Session(http, url, t["alice"]).open()
        # Her call answers on an SSE stream whose events are stored for resumption.
        response = await alice.post(tool_call(3, "shout", {"text": SECRET}))
        assert response.headers["content-type"].startswith("text/event-stream")
        her_ids = [event_id for event_id, _ in sse_messages(response.content) if event_id]
        assert her_ids and all(i.startswith(f"{alice.session_id}:") for i in her_ids)

        bob = await Session(http, url, t["bob"]).open()
        for last_event_id in [
            *her_ids,
            f"{alice.session_id}:0",
            "bogus",
            "",
            f"{bob.session_id}:999",
        ]:
            stream = await Stream(
                http,
                "GET",
                url,
                bob.headers(accept="text/event-stream", **{"last-event-id": last_event_id}),
            ).opened()
            assert stream.status == 200, last_event_id
            marker = f"bob-{len(last_event_id)}-{last_event_id[-3:]}"
            assert text_of(await bob.call("shout", {"text": marker})) == "shouted"
            await stream.until(standalone_with(marker))
            seen = json.dumps(stream.messages())
            assert SECRET not in seen and alice.session_id not in seen, last_event_id
            assert all(
                event_id is None or event_id.startswith(f"{bob.session_id}:")
                for event_id, _, _ in stream.events
            )
            await stream.close()


async def test_without_auth_sessions_are_unowned_as_before(app):
    store = InMemorySessionStore()
    async with (
        asyncio.timeout(60),
        serving(app, session_store=store, event_store=InMemoryEventStore()) as (url, _),
        httpx.AsyncClient(timeout=WAIT) as http,
    ):
        session = await Session(http, url, {}).open()
        assert await session.whoami() == {
            "subject": None,
            "client_id": None,
            "session": session.session_id,
        }
        record = await store.get(session.session_id, idle_timeout=60)
        assert record is not None and record.owner is None
        # a record stored before owners existed is adopted and served
        await store.create(
            SessionRecord("old-session", protocol_version=VERSION, initialized=True),
            max_sessions=10,
            idle_timeout=60,
        )
        old = Session(http, url, {})
        old.session_id = "old-session"
        assert (await old.whoami())["session"] == "old-session"
        assert (await http.delete(url, headers=old.headers())).status_code == 200


# -- legacy SSE and WebSocket -----------------------------------------------------------


@contextlib.asynccontextmanager
async def legacy_session(
    http: httpx.AsyncClient, url: str, auth: dict[str, str]
) -> AsyncIterator[tuple[Stream, str]]:
    """An initialized legacy SSE session: its stream and the URL to post to."""
    stream = await Stream(
        http, "GET", f"{url}/sse", {"accept": "text/event-stream", **auth}
    ).opened()
    try:
        assert stream.status == 200
        endpoint = await stream.first("endpoint")
        assert isinstance(endpoint, str)
        post_url = url.rsplit("/mcp", 1)[0] + endpoint
        for message in (INIT_LEGACY, INITIALIZED):
            posted = await http.post(post_url, json=message, headers=auth)
            assert posted.status_code == 202, posted.text
        await stream.until(lambda m: isinstance(m, dict) and m.get("id") == 1, "message")
        yield stream, post_url
    finally:
        await stream.close()


async def legacy_reply(
    http: httpx.AsyncClient, stream: Stream, post_url: str, auth: dict[str, str], message: dict
) -> dict[str, Any]:
    posted = await http.post(post_url, json=message, headers=auth)
    assert posted.status_code == 202, posted.text
    reply: dict[str, Any] = await stream.until(
        lambda m: isinstance(m, dict) and m.get("id") == message["id"] and "method" not in m,
        "message",
    )
    return reply


async def test_legacy_sse_post_of_another_identity_gets_404_and_reaches_nothing(app, signer):
    t = tokens(signer)
    async with (
        asyncio.timeout(60),
        protected(app, signer) as (url, http),
        legacy_session(http, url, t["alice"]) as (stream, post_url),
    ):
        session_id = post_url.rsplit("session_id=", 1)[1]
        unknown = await http.post(
            post_url.replace(session_id, "nope"), json=tool_call(5, "whoami"), headers=t["bob"]
        )
        assert unknown.status_code == 404
        for intruder in ("bob", "alice_other_client"):
            for target, headers in (
                (post_url, t[intruder]),  # the query parameter
                (
                    url.rsplit("/mcp", 1)[0] + "/mcp/messages",
                    {**t[intruder], "mcp-session-id": session_id},
                ),
            ):
                refused = await http.post(target, json=tool_call(7, "whoami"), headers=headers)
                assert refused.status_code == 404, (intruder, refused.text)
                assert unknown_answer(refused) == unknown_answer(unknown)
        # Nothing of theirs reached her stream: the next reply she gets is her own, to her.
        me = await legacy_reply(http, stream, post_url, t["alice"], tool_call(8, "whoami"))
        assert json.loads(text_of(me)) == {
            "subject": "alice",
            "client_id": "client-1",
            "session": session_id,
        }
        assert not [m for m in stream.messages() if m.get("id") == 7]


async def test_ctx_auth_and_guards_see_the_identity_on_every_transport(app, signer):
    t = tokens(signer)
    async with asyncio.timeout(60), protected(app, signer) as (url, http):
        # Streamable HTTP
        for who in ("alice", "bob"):
            session = await Session(http, url, t[who]).open()
            assert (await session.whoami())["subject"] == who
            allowed = await session.call("alice_tool")
            assert ("result" in allowed and text_of(allowed) == "for alice") is (who == "alice")
        # legacy SSE
        for who in ("alice", "bob"):
            async with legacy_session(http, url, t[who]) as (stream, post_url):
                me = await legacy_reply(http, stream, post_url, t[who], tool_call(2, "whoami"))
                assert json.loads(text_of(me))["subject"] == who
                allowed = await legacy_reply(
                    http, stream, post_url, t[who], tool_call(3, "alice_tool")
                )
                assert ("result" in allowed and text_of(allowed) == "for alice") is (who == "alice")
        # WebSocket
        ws_url = url.replace("http://", "ws://") + "/ws"
        for who in ("alice", "bob"):
            async with connect(
                ws_url, additional_headers=t[who], subprotocols=["mcp"], open_timeout=WAIT
            ) as ws:
                await ws.send(json.dumps(INIT_LEGACY))
                assert "result" in json.loads(await asyncio.wait_for(ws.recv(), WAIT))
                await ws.send(json.dumps(INITIALIZED))
                await ws.send(json.dumps(tool_call(2, "whoami")))
                me = json.loads(await asyncio.wait_for(ws.recv(), WAIT))
                assert json.loads(text_of(me))["subject"] == who
                await ws.send(json.dumps(tool_call(3, "alice_tool")))
                allowed = json.loads(await asyncio.wait_for(ws.recv(), WAIT))
                assert ("result" in allowed and text_of(allowed) == "for alice") is (who == "alice")


# -- the owner in the stores ------------------------------------------------------------


async def test_session_records_keep_their_owner_and_old_ones_read_as_unowned(tmp_path):
    record = SessionRecord("s1", protocol_version=VERSION, owner="sha256:abc")
    assert SessionRecord.from_json(record.to_json()).owner == "sha256:abc"
    old = b'{"session_id": "s0", "protocol_version": "2025-11-25", "initialized": true}'
    assert SessionRecord.from_json(old).owner is None
    for store in (InMemorySessionStore(), FileSessionStore(tmp_path / "sessions.db")):
        try:
            await store.create(record, max_sessions=5, idle_timeout=60)
            got = await store.get("s1", idle_timeout=60)
            assert got is not None and got.owner == "sha256:abc"
            got.log_level = "debug"
            assert await store.save(got, idle_timeout=60)
            again = await store.get("s1", idle_timeout=60)
            assert again is not None and again.owner == "sha256:abc"
        finally:
            await store.close()


@contextlib.asynccontextmanager
async def two_instances(
    signer: Signer, redis_url: str, prefix: str
) -> AsyncIterator[tuple[httpx.AsyncClient, list[str], list[RedisHub]]]:
    """Two protected instances of ``Isolation`` sharing Redis under ``prefix``: a client,
    their endpoints, their hubs."""
    hubs = [RedisHub(redis_url, prefix=prefix) for _ in "AB"]
    try:
        async with contextlib.AsyncExitStack() as stack:
            urls = []
            for hub in hubs:
                url, http = await stack.enter_async_context(
                    protected(McpServerApp(Isolation), signer, **redis_options(hub))
                )
                urls.append(url)
            yield http, urls, hubs
    finally:
        for hub in hubs:
            await hub.aclose()


@needs_redis
async def test_the_owner_check_holds_across_instances_sharing_redis(signer, redis_server):
    redis_server.flush()
    t = tokens(signer)
    async with two_instances(signer, redis_server.url, "isolation") as (http, urls, hubs):
        a, b = urls
        alice = await Session(http, a, t["alice"]).open()
        # the record names her, as a digest: no user name in Redis
        store = RedisSessionStore(hubs[0])
        record = await store.get(alice.session_id, idle_timeout=60)
        assert record is not None and (record.owner or "").startswith("sha256:")
        assert "alice" not in record.to_json().decode()

        # on B, which never saw the session: Bob is refused everywhere
        assert (await alice.post(tool_call(7, "whoami"), t["bob"], url=b)).status_code == 404
        got = await http.get(b, headers=alice.headers(t["bob"], accept="text/event-stream"))
        assert got.status_code == 404
        assert (await http.delete(b, headers=alice.headers(t["bob"]))).status_code == 404
        # ... and Alice is served there, in her session
        assert await alice.whoami(url=b) == {
            "subject": "alice",
            "client_id": "client-1",
            "session": alice.session_id,
        }
        # now that B holds a replica, Bob is still refused there, and on A
        for where in (a, b):
            refused = await alice.post(tool_call(8, "whoami"), t["bob"], url=where)
            assert refused.status_code == 404
            deleted = await http.delete(where, headers=alice.headers(t["bob"]))
            assert deleted.status_code == 404
        assert (await alice.whoami(url=a))["session"] == alice.session_id

        # A record stored before owners existed: with auth on, no one's, so refused
        # (its creator cannot be told from anyone else holding a valid token).
        await store.create(
            SessionRecord("pre-owner", protocol_version=VERSION, initialized=True),
            max_sessions=100,
            idle_timeout=60,
        )
        old = Session(http, a, t["alice"])
        old.session_id = "pre-owner"
        for where in (a, b):
            assert (await old.post(tool_call(9, "whoami"), url=where)).status_code == 404

        # legacy SSE: Alice's stream on A, posts landing on B are forwarded with the
        # poster's identity, and the owner refuses Bob's
        async with legacy_session(http, a, t["alice"]) as (stream, post_url):
            on_b = post_url.replace(a.rsplit("/mcp", 1)[0], b.rsplit("/mcp", 1)[0])
            refused = await http.post(on_b, json=tool_call(7, "whoami"), headers=t["bob"])
            assert refused.status_code == 404, refused.text
            me = await legacy_reply(http, stream, on_b, t["alice"], tool_call(8, "whoami"))
            assert json.loads(text_of(me))["subject"] == "alice"
            assert not [m for m in stream.messages() if m.get("id") == 7]

        # she ends her session on B; it is over on A too
        assert (await http.delete(b, headers=alice.headers())).status_code == 200
        assert await store.get(alice.session_id, idle_timeout=60) is None
        async with asyncio.timeout(WAIT):
            while (await alice.post(tool_call(10, "whoami"), url=a)).status_code != 404:
                await asyncio.sleep(0.05)
        await store.close()
