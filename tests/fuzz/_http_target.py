"""The fuzzer over Streamable HTTP (``mcpkit run ... --transport http``), in both eras.

Handshake era: a session per protocol version in turn (initialize, ``Mcp-Session-Id``,
``MCP-Protocol-Version``), rotated every ``rotate_every`` inputs, the old one ended by DELETE
or simply abandoned. 2026-07-28: stateless POSTs carrying ``_meta`` and the SEP-2243 headers
(``Mcp-Method``, ``Mcp-Name``, ``Mcp-Param-*`` from the tools' ``x-mcp-header``).

Each frame is one POST; its answer (JSON or an SSE stream) holds its replies. A stream that
ends before its reply is resumed with GET and ``Last-Event-ID`` (SEP-1699). Some inputs are
also tweaked at the HTTP level (Accept, Content-Type, session and version headers, SEP-2243
headers, other HTTP methods): those are owed at most one reply per request, as the server
may refuse the POST before reading the body.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import httpx

from mcpkit.protocol import SseDecoder
from mcpkit.protocol._headers import header_annotations, request_headers
from tests.fuzz._inputs import Catalog, Input, Inputs
from tests.fuzz._oracle import Expect, classify, encode, expect_frame, strict_json
from tests.fuzz._server import ServerProcess
from tests.fuzz._targets import REPLY_TIMEOUT, ServerDown, Target, request_methods, sample_of

HANDSHAKE_VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]
_ACCEPT = "application/json, text/event-stream"
#: What a header value may be (RFC 9110 field-value without obs-text).
#: Longest header value sent (uvicorn drops the connection past a few hundred kB): more
#: than the 100 KiB httpx reads of a response's headers, so that an answer echoing one
#: whole (Mcp-Method) is caught being more than such clients can read.
_MAX_HEADER = 128 * 1024
_FIELD_VALUE = re.compile(r"(?:[\x21-\x7e](?:[\x20-\x7e\t]*[\x21-\x7e])?)?")


class HttpTarget(Target):
    http = True

    def __init__(self, version: str, seed: int = 0, *, rotate_every: int = 80) -> None:
        self.name = "http-modern" if version == "2026-07-28" else "http"
        super().__init__(version, seed)
        self.rotate_every = rotate_every
        self.client: httpx.AsyncClient | None = None
        self.session: str | None = None
        self.catalog = Catalog()
        self.annotations: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
        self.sessions_opened = 0
        self._sent = 0

    # -- lifecycle ------------------------------------------------------------------------

    async def start(self) -> None:
        self.server = ServerProcess.everything("http")
        await self.server.start()
        timeout = httpx.Timeout(REPLY_TIMEOUT, connect=5.0)
        self.client = httpx.AsyncClient(timeout=timeout, limits=httpx.Limits(max_connections=8))
        if not self.modern:
            await self.open_session(self.version)

    async def stop(self) -> None:
        await self.settle_tasks()
        if self.client is not None:
            await self.client.aclose()
        if self.server is not None:
            await self.server.stop()

    async def open_session(self, version: str) -> None:
        self.version = version
        self.session = None
        reply = await self.call(
            "initialize",
            {
                "protocolVersion": version,
                "capabilities": {"sampling": {}, "elicitation": {}, "roots": {}},
                "clientInfo": {"name": "mcpkit-fuzzer", "version": "1"},
            },
        )
        assert reply["result"]["protocolVersion"] == version, reply
        assert self.session, "initialize gave no Mcp-Session-Id"
        await self._post(encode({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        self.sessions_opened += 1

    async def rotate(self) -> None:
        """A new session with the next protocol version; the old one ended or abandoned."""
        old = self.session
        version = HANDSHAKE_VERSIONS[self.sessions_opened % len(HANDSHAKE_VERSIONS)]
        await self.open_session(version)
        if old is not None and self.rng.random() < 0.5:
            assert self.client is not None
            response = await self.client.delete(self.server_url, headers={"mcp-session-id": old})
            self.stats.statuses[response.status_code] += 1
        first = self.inputs._ids if self.inputs is not None else 0
        self.inputs = Inputs(version, self.catalog, self.rng, first_id=first)

    async def read_catalog(self) -> Catalog:
        self.catalog = await super().read_catalog()
        for tool in self.catalog.tools:
            try:
                self.annotations[tool["name"]] = header_annotations(tool.get("inputSchema"))
            except ValueError:
                continue
        return self.catalog

    @property
    def server_url(self) -> str:
        assert self.server is not None
        return self.server.url

    # -- requests -------------------------------------------------------------------------

    def headers_for(self, frame: bytes) -> dict[str, str]:
        headers = {"accept": _ACCEPT, "content-type": "application/json"}
        if self.modern:
            headers["mcp-protocol-version"] = self.version
            ok, value = strict_json(frame)
            message = value if ok and isinstance(value, dict) else {}
            method = message.get("method")
            params = message.get("params") if isinstance(message.get("params"), dict) else None
            if isinstance(method, str):
                name = (params or {}).get("name")
                found = self.annotations.get(name, []) if isinstance(name, str) else []
                try:
                    headers.update(request_headers(method, params, found))
                except (TypeError, ValueError, AttributeError):
                    headers["mcp-method"] = method
            # A mutated method can hold what no header can carry, or more than HTTP servers
            # take in one header (uvicorn closes the connection): then it goes without.
            return {
                k: v
                for k, v in headers.items()
                if len(v) <= _MAX_HEADER and _FIELD_VALUE.fullmatch(v)
            }
        if self.version >= "2025-06-18":
            headers["mcp-protocol-version"] = self.version
        if self.session is not None:
            headers["mcp-session-id"] = self.session
        return headers

    async def call(self, method: str, params: dict[str, Any] | None) -> dict[str, Any]:
        rid = self.next_health_id()
        waiter = asyncio.get_running_loop().create_future()
        key = ("str", rid)
        self._waiters[key] = waiter
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            message["params"] = params
        await self._post(encode(message))
        if not waiter.done():
            self._waiters.pop(key, None)
            return {"error": {"message": "no reply in the HTTP answer"}}
        reply: dict[str, Any] = waiter.result()
        return reply

    async def answer(self, message: dict[str, Any]) -> None:
        await self._post(encode(message))

    async def _post(
        self,
        frame: bytes,
        made: Input | None = None,
        *,
        listen: bool = False,
    ) -> None:
        """POST one frame and feed every message of the answer to ``received``."""
        assert self.client is not None
        headers = self.headers_for(frame)
        method = "POST"
        if made is not None:
            method = made.http_method
            for name, value in made.headers.items():
                headers.pop(name, None)
                if value is not None:
                    headers[name] = value
        request = self.client.build_request(method, self.server_url, content=frame, headers=headers)
        response = await self.client.send(request, stream=True)
        try:
            status = response.status_code
            self.stats.statuses[status] += 1
            if status == 200 and "mcp-session-id" in response.headers and self.session is None:
                self.session = response.headers["mcp-session-id"]
            label = made.label if made else "fuzzer call"
            if status >= 500 and status != 503:
                self.defect("http-5xx", label, f"HTTP {status}", repr(frame[:300]))
            if 200 <= status < 300 and status != 202 and method == "POST" and _answers_none(frame):
                # A notification or response is accepted with 202 and no body, or refused.
                self.defect("invalid", label, f"HTTP {status} for a message owed no reply")
            if "text/event-stream" in response.headers.get("content-type", ""):
                last = await self._read_sse(response, short=listen or method == "GET")
                if made is not None and last and self.session and not self.settled(made):
                    await self._resume(last, made)  # the stream closed early on purpose (SEP-1699)
            else:
                body = await response.aread()
                self._read_json(status, body, made)
        finally:
            await response.aclose()

    def _read_json(self, status: int, body: bytes, made: Input | None) -> None:
        label = made.label if made else "fuzzer call"
        if status == 202 and body:
            self.defect("invalid", label, f"HTTP 202 with a body: {body[:200]!r}")
        if not body:
            return
        try:
            value = json.loads(body)
        except ValueError:
            if status < 400:
                self.defect("invalid", label, f"HTTP {status} answer is not JSON: {body[:200]!r}")
            else:  # an HTTP-level refusal may be plain text (uvicorn's own 400s are)
                self.stats.replies[f"HTTP {status} text: {body[:60].decode(errors='replace')}"] += 1
                if status == 431 and made is not None:
                    # Headers past max_header_bytes (a mutated Mcp-Method can be 128 KiB):
                    # refused before the body, whose id nothing can answer.
                    self.excuse(made)
            return
        self.received(value)

    async def _read_sse(
        self, response: httpx.Response, *, short: bool, done: Input | None = None
    ) -> str | None:
        """Feed the stream's messages to ``received`` until it ends (or, with ``done``, until
        that input is settled); returns the last event id. ``short``: a stream that never
        ends by itself (GET, subscriptions/listen), read briefly."""
        decoder = SseDecoder(max_event_bytes=None)
        try:
            async with asyncio.timeout(0.15 if short else REPLY_TIMEOUT):
                async for chunk in response.aiter_raw():
                    for event in decoder.feed(chunk):
                        if event.data:
                            try:
                                self.received(json.loads(event.data))
                            except ValueError:
                                self.defect("invalid", "sse", f"event data {event.data[:200]!r}")
                    if done is not None and self.settled(done):
                        break
        except TimeoutError:
            if not short:
                self.defect("lost", "sse", "an SSE answer did not end within the timeout")
        except httpx.HTTPError:
            pass  # the stream was cut: the caller resumes it
        return decoder.last_event_id

    async def _resume(self, last_event_id: str, made: Input) -> None:
        """GET the stream again from ``last_event_id``, until ``made`` has its replies."""
        assert self.client is not None and self.session is not None
        headers = {**self.headers_for(b""), "last-event-id": last_event_id}
        headers.pop("content-type", None)
        async with self.client.stream("GET", self.server_url, headers=headers) as response:
            self.stats.statuses[response.status_code] += 1
            if "text/event-stream" in response.headers.get("content-type", ""):
                await self._read_sse(response, short=False, done=made)

    # -- inputs ---------------------------------------------------------------------------

    async def send_input(self, made: Input) -> None:
        if self.rng.random() < 0.1:
            self._tweak(made)
        self.owe(made, stdio=False)
        low, high = made.expect.anon
        # Over HTTP a notification or response the server cannot accept is refused with an
        # error status, whose body "MAY comprise a JSON-RPC error response that has no id".
        made.expect.anon = (low, max(high, len(made.frames)))
        since = self.anon_mark()
        # A subscriptions/listen stream never ends by itself: read it briefly, then drop it.
        listen = "subscriptions/listen" in request_methods(made.frames).values()
        posts = [self._post(frame, made, listen=listen) for frame in made.frames]
        if made.cancel_after:
            assert self.inputs is not None
            cancels = [self.inputs.cancel_frame(rid) for rid in made.cancel_after]
            posts.append(self._later(0.05, cancels))
        try:
            await asyncio.gather(*posts)
        except httpx.HTTPError as exc:
            if made.kind == "http" and isinstance(exc, (httpx.ReadError, httpx.WriteError)):
                # A header the HTTP server itself refuses: it answers 400 and closes, maybe
                # before the whole body is sent, and the client sees the connection cut.
                self.stats.replies[f"HTTP connection cut ({type(exc).__name__})"] += 1
            else:
                sample = f"{sample_of(made.frames[0])} headers {made.headers} {made.http_method}"
                self.defect("lost", made.label, f"the POST failed: {exc!r}", sample)
        await self.settle_tasks()
        await self.wait_settled(made, timeout=1.0)
        self.check_anon(made, since)
        self._sent += 1
        if not await self.health():
            raise ServerDown("the health call failed")
        if not self.modern and self._sent % self.rotate_every == 0:
            await self.rotate()

    async def _later(self, delay: float, frames: list[bytes]) -> None:
        await asyncio.sleep(delay)
        for frame in frames:
            await self._post(frame)

    def _tweak(self, made: Input) -> None:
        """Break the request at the HTTP level; it is then owed at most one reply."""
        choices: list[tuple[str, dict[str, str | None], str]] = [
            ("no accept", {"accept": None}, "POST"),
            ("html accept", {"accept": "text/html"}, "POST"),
            ("json-only accept", {"accept": "application/json"}, "POST"),
            ("text content-type", {"content-type": "text/plain"}, "POST"),
            ("unknown version header", {"mcp-protocol-version": "1999-01-01"}, "POST"),
            ("garbage version header", {"mcp-protocol-version": "\x7f;,"}, "POST"),
            ("no version header", {"mcp-protocol-version": None}, "POST"),
            ("PUT", {}, "PUT"),
            ("GET", {"accept": "text/event-stream"}, "GET"),
        ]
        if self.modern:
            choices += [
                ("no Mcp-Method", {"mcp-method": None}, "POST"),
                ("wrong Mcp-Method", {"mcp-method": "tools/list"}, "POST"),
                ("wrong Mcp-Name", {"mcp-name": "not-the-name"}, "POST"),
                ("bad base64 Mcp-Name", {"mcp-name": "=?base64?!!!?="}, "POST"),
                ("Mcp-Param-Region", {"mcp-param-region": "=?base64?AA?="}, "POST"),
            ]
        else:
            choices += [
                ("no session", {"mcp-session-id": None}, "POST"),
                ("unknown session", {"mcp-session-id": "not-a-session"}, "POST"),
                ("garbage session", {"mcp-session-id": "\x01\x02"}, "POST"),
                ("DELETE unknown session", {"mcp-session-id": "gone"}, "DELETE"),
                ("GET replay", {"accept": "text/event-stream", "last-event-id": "x:1"}, "GET"),
            ]
        label, headers, method = self.rng.choice(choices)
        made.kind, made.label = "http", f"http {label} ({made.label})"
        made.headers, made.http_method = headers, method
        made.relaxed = True
        expect = Expect()
        for frame in made.frames:
            ok, value = strict_json(frame)
            for item in (value if isinstance(value, list) else [value]) if ok else []:
                kind, rid = classify(item)
                if rid is not None and kind in ("request", "invalid"):
                    expect.add_id(rid, 0, 1)
        expect.anon = (0, len(made.frames))
        made.expect = expect


def _answers_none(frame: bytes) -> bool:
    """Whether ``frame`` is a notification or a response (nothing in it is owed a reply)."""
    expect = Expect()
    expect_frame(frame, expect, batches=True)
    return not expect.ids and expect.anon == (0, 0) and bool(frame.strip())
