"""``CURRENT_BINDING`` is the binding of the call being served on every kind of POST: a
tool that reads it (rather than its ``ctx``) sees its own request's headers and session,
in a stateless handshake-era POST, in a session, and in a 2026-07-28 POST."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx

from mcpkit import McpServerApp, mcp_tool
from mcpkit.server import CURRENT_BINDING
from tests.http_server import POST_HEADERS, open_session, serving

MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
}


@mcp_tool
async def whose() -> dict:
    binding = CURRENT_BINDING.get()
    assert binding is not None, "no binding for this call"
    session = binding.session
    assert session is not None
    return {
        "tag": (binding.headers or {}).get("x-tag"),
        "version": session.protocol_version,
        "modern": binding.modern,
    }


def call(request_id: int, meta: dict[str, Any] | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"name": "whose", "arguments": {}}
    if meta is not None:
        params["_meta"] = meta
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def structured(answer: httpx.Response) -> dict[str, Any]:
    assert answer.status_code == 200, answer.text
    result = answer.json()["result"]
    assert not result.get("isError"), result
    return json.loads(result["content"][0]["text"])  # type: ignore[no-any-return]


async def test_a_tool_reads_its_own_binding_on_every_kind_of_post() -> None:
    async with asyncio.timeout(30), serving(McpServerApp(whose), stateless=True) as (url, _):
        async with httpx.AsyncClient() as http:
            handshake = await http.post(
                url,
                json=call(1),
                headers={**POST_HEADERS, "mcp-protocol-version": "2025-06-18", "x-tag": "old"},
            )
            assert structured(handshake) == {
                "tag": "old",
                "version": "2025-06-18",
                "modern": False,
            }
            modern = await http.post(
                url,
                json=call(2, MODERN_META),
                headers={
                    **POST_HEADERS,
                    "mcp-protocol-version": "2026-07-28",
                    "mcp-method": "tools/call",
                    "mcp-name": "whose",
                    "x-tag": "new",
                },
            )
            assert structured(modern) == {"tag": "new", "version": "2026-07-28", "modern": True}


async def test_a_tool_reads_its_session_s_binding() -> None:
    async with asyncio.timeout(30), serving(McpServerApp(whose)) as (url, _):
        async with httpx.AsyncClient() as http:
            session = await open_session(http, url)
            answer = await http.post(url, json=call(1), headers={**session, "x-tag": "s"})
            assert structured(answer) == {"tag": "s", "version": "2025-11-25", "modern": False}


async def test_each_stateless_post_has_a_session_of_its_own() -> None:
    """Made by copying one per version: what one request changes stays in it."""
    seen: list[Any] = []

    @mcp_tool
    async def mark() -> str:
        session = CURRENT_BINDING.get().session  # type: ignore[union-attr]
        seen.append((session, session.key, session.log_level, session.protocol_version))
        session.log_level = "debug"  # as logging/setLevel would, in this request only
        return "ok"

    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "mark"}}
    async with asyncio.timeout(30), serving(McpServerApp(mark), stateless=True) as (url, _):
        async with httpx.AsyncClient() as http:
            for version in ("2025-06-18", "2025-06-18", "2025-11-25"):
                headers = {**POST_HEADERS, "mcp-protocol-version": version}
                answer = await http.post(url, json=body, headers=headers)
                assert answer.status_code == 200, answer.text
    sessions, keys, levels, versions = zip(*seen, strict=True)
    assert len({id(session) for session in sessions}) == 3
    assert len(set(keys)) == 3
    assert levels == (None, None, None)
    assert versions == ("2025-06-18", "2025-06-18", "2025-11-25")
    assert all(session.initialize_seen and session.ephemeral for session in sessions)
