"""``HttpClientTransportOptions.known_session_id``: a second ``McpClient`` resumes a session
another one opened, against a real mcpkit Streamable HTTP server on 127.0.0.1.

* No ``initialize``: requests carry the known ``Mcp-Session-Id`` and a protocol version (the
  client's, until the server's answer names the session's own), and see the session's state.
* The GET listen stream opens in the resumed session and carries its notifications.
* Closing does not DELETE a resumed session unless ``delete_session_on_close=True``;
  ``delete_session_on_close=False`` hands a session over without ending it.
* An unknown session fails ``connect()`` with ``SessionExpiredError`` (404), and so does
  every later request; the legacy HTTP+SSE transport and ``protocol_mode="modern"`` refuse.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from mcpkit import (
    ConnectionClosedError,
    McpClient,
    McpServerApp,
    McpToolContext,
    TransportError,
    mcp_server,
    mcp_tool,
)
from mcpkit.client import (
    EndpointMemory,
    HttpClientTransportOptions,
    HttpRequestHeaderContext,
    HttpTransportMode,
    ProtocolEraError,
    SessionExpiredError,
    StreamableHttpClientTransport,
)
from mcpkit.client._http_factory import AutoDetectHttpTransport
from mcpkit.client._streamable_http import ListenStreamState
from tests.http_server import serving
from tests.waiting import wait_until

TEST_TIMEOUT = 20.0


@mcp_server(name="session-counter")
class SessionCounter:
    """Counts calls per session: state only the same session sees."""

    def __init__(self) -> None:
        self.calls: dict[str, int] = {}

    @mcp_tool(description="Counts this session's calls; answers the session id and the count")
    def count(self, ctx: McpToolContext) -> dict[str, Any]:
        session = ctx.session_id or "(none)"
        self.calls[session] = self.calls.get(session, 0) + 1
        return {
            "session": session,
            "calls": self.calls[session],
            "version": ctx.protocol_version,
        }


class SeenHeaders:
    """Records the headers of every HTTP request a client sends."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, str]]] = []

    def __call__(self, context: HttpRequestHeaderContext, headers: dict[str, str]) -> None:
        self.requests.append((context.method, {k.lower(): v for k, v in headers.items()}))

    def methods(self) -> list[str]:
        return [method for method, _ in self.requests]


def options(url: str, **fields: Any) -> HttpClientTransportOptions:
    fields.setdefault("transport_mode", HttpTransportMode.STREAMABLE_HTTP)
    return HttpClientTransportOptions(endpoint=url, **fields)


async def session_answers(url: str, session_id: str) -> int:
    """The status a raw ``ping`` in ``session_id`` gets (200: the session is there)."""
    async with httpx.AsyncClient(timeout=5) as http:
        response = await http.post(
            url,
            headers={
                "Mcp-Session-Id": session_id,
                "MCP-Protocol-Version": "2025-11-25",
                "Accept": "application/json, text/event-stream",
            },
            json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
        )
    return response.status_code


@pytest.mark.parametrize("mode", [HttpTransportMode.STREAMABLE_HTTP, HttpTransportMode.AUTO_DETECT])
async def test_a_second_client_resumes_the_session_without_initialize(
    mode: HttpTransportMode,
) -> None:
    counter = SessionCounter()
    async with serving(McpServerApp(counter)) as (url, _):
        async with asyncio.timeout(TEST_TIMEOUT):
            first = McpClient.http(
                options(url, transport_mode=mode, delete_session_on_close=False),
                protocol_version="2025-06-18",
                protocol_mode="legacy",  # mcpkit also speaks 2026-07-28, which has no sessions
            )
            async with first:
                opened = (await first.call_tool("count")).structured_content
                session_id = first.session_id
            assert opened == {"session": session_id, "calls": 1, "version": "2025-06-18"}
            assert await session_answers(url, session_id) == 200  # handed over, not DELETEd

            seen = SeenHeaders()
            second = McpClient.http(
                options(
                    url,
                    transport_mode=mode,
                    known_session_id=session_id,
                    apply_per_request_headers=seen,
                )
            )
            async with second:
                assert second.server_info is None  # it never saw the initialize result
                # the version the server keeps for the session, not the client's default
                assert second.protocol_version == "2025-06-18"
                resumed = (await second.call_tool("count")).structured_content
                assert resumed == {"session": session_id, "calls": 2, "version": "2025-06-18"}
            posts = [h for m, h in seen.requests if m == "POST"]
            assert "initialize" not in str(seen.requests)
            assert all(h["mcp-session-id"] == session_id for _, h in seen.requests)
            assert posts[0]["mcp-protocol-version"] == "2025-11-25"  # the documented default
            assert posts[-1]["mcp-protocol-version"] == "2025-06-18"  # then the session's
            assert "DELETE" not in seen.methods()  # a resumed session is not ended on close
            assert await session_answers(url, session_id) == 200


async def test_the_resumed_session_listens_and_deletes_only_when_asked() -> None:
    app = McpServerApp(SessionCounter())
    async with serving(app) as (url, _):
        async with asyncio.timeout(TEST_TIMEOUT):
            # The opener holds no GET stream (the server allows one per session).
            first = McpClient.http(options(url, enable_listen_stream=False), protocol_mode="legacy")
            await first.connect()
            session_id = first.session_id

            changed: list[str] = []
            seen = SeenHeaders()
            second = McpClient.http(
                options(
                    url,
                    known_session_id=session_id,
                    delete_session_on_close=True,
                    apply_per_request_headers=seen,
                ),
                on_list_changed=changed.append,
            )
            async with second:
                transport = second.session.stream
                assert isinstance(transport, StreamableHttpClientTransport)
                await wait_until(
                    lambda: transport.listen_state == ListenStreamState.OPEN, "the listen stream"
                )
                app.catalog.register_tool(lambda: "new", name="added", description="Added")
                await wait_until(lambda: changed == ["tools"], "tools/list_changed on GET")
                assert (await first.call_tool("count")).structured_content["calls"] == 1
                assert (await second.call_tool("count")).structured_content["calls"] == 2
            gets = [h for m, h in seen.requests if m == "GET"]
            assert gets and gets[0]["mcp-session-id"] == session_id
            assert gets[0]["mcp-protocol-version"] == "2025-11-25"
            assert seen.methods()[-1] == "DELETE"  # asked for: the session is ended
            assert await session_answers(url, session_id) == 404
            # The opener initialized its session: it starts a new one (state begins afresh).
            assert (await first.call_tool("count")).structured_content["calls"] == 1
            assert first.session_id not in (None, session_id)
            await first.aclose()


async def test_an_unknown_known_session_id_fails_connect_as_an_expired_session() -> None:
    async with serving(McpServerApp(SessionCounter())) as (url, _):
        async with asyncio.timeout(TEST_TIMEOUT):
            seen = SeenHeaders()
            client = McpClient.http(
                options(url, known_session_id="no-such-session", apply_per_request_headers=seen)
            )
            with pytest.raises(SessionExpiredError, match="no-such-session") as caught:
                await client.connect()
            assert isinstance(caught.value, ConnectionClosedError)  # the older catch still works
            assert caught.value.session_id == "no-such-session"
            with pytest.raises(SessionExpiredError):
                await client.call_tool("count")
            await client.aclose()
            assert seen.methods() == ["POST"]  # the ping; no GET, and no DELETE of it

            # ``async with`` fails the same way (and closes the client)
            with pytest.raises(SessionExpiredError):
                async with McpClient.http(url_options := options(url, known_session_id="gone")):
                    pass
            assert url_options.known_session_id == "gone"


async def test_known_session_id_is_refused_where_it_cannot_work() -> None:
    async with serving(McpServerApp(SessionCounter())) as (url, _):
        async with asyncio.timeout(TEST_TIMEOUT):
            modern = McpClient.http(options(url, known_session_id="abc"), protocol_mode="modern")
            with pytest.raises(ProtocolEraError, match="2026-07-28 has no sessions"):
                await modern.connect()
            await modern.aclose()
            legacy = McpClient.http(
                options(url, known_session_id="abc", transport_mode=HttpTransportMode.SSE)
            )
            with pytest.raises(TransportError, match="cannot resume"):
                await legacy.connect()
            await legacy.aclose()


async def test_a_new_initialize_replaces_the_known_session() -> None:
    """The transport alone (no ``McpClient``): an ``initialize`` sent anyway opens a new
    session, which is then this transport's own (DELETEd on close)."""
    async with serving(McpServerApp(SessionCounter())) as (url, _):
        async with asyncio.timeout(TEST_TIMEOUT):
            transport = StreamableHttpClientTransport(options(url, known_session_id="old"))
            assert transport.known_session_id == "old"
            client = McpClient(transport)
            client._starter = transport.start  # type: ignore[attr-defined]
            client.session.start()
            await transport.start()
            await client._era.handshake("2025-11-25")
            assert transport.session_id not in (None, "old")
            assert transport.known_session_id is None and not transport.resumed
            assert transport._deletes_on_close()
            await client.aclose()


async def test_auto_detect_resumes_over_streamable_http_even_when_legacy_was_remembered() -> None:
    async with serving(McpServerApp(SessionCounter())) as (url, _):
        async with asyncio.timeout(TEST_TIMEOUT):
            async with McpClient.http(
                options(url, delete_session_on_close=False), protocol_mode="legacy"
            ) as first:
                session_id = first.session_id
            memory = EndpointMemory()
            resuming = options(
                url,
                transport_mode=HttpTransportMode.AUTO_DETECT,
                known_session_id=session_id,
                endpoint_memory=memory,
            )
            memory.remember_mode(EndpointMemory.key(resuming), HttpTransportMode.SSE)
            client = McpClient.http(resuming)
            async with client:
                stream = client.session.stream
                assert isinstance(stream, AutoDetectHttpTransport)
                assert stream.mode is HttpTransportMode.STREAMABLE_HTTP
                assert (await client.call_tool("count")).structured_content["session"] == session_id
