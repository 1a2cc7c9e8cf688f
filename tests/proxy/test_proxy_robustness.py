"""The proxy in front of a backend that misbehaves (``raw_backend.py``): slow, silent, or
flooding the proxy with notifications."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from mcpkit import McpCallError
from mcpkit.client import McpClient, StdioClientTransportOptions
from mcpkit.proxy import McpProxy
from tests.http_server import serving
from tests.waiting import wait_until

BACKEND = str(Path(__file__).with_name("raw_backend.py"))


def raw_backend(record: Path) -> StdioClientTransportOptions:
    return StdioClientTransportOptions(
        command=sys.executable, arguments=[BACKEND], environment_variables={"RECORD": str(record)}
    )


def received(record: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in record.read_text().splitlines()]


def text_of(result: Any) -> str:
    return str(result.content[0].text)


async def test_a_backend_too_slow_to_answer_keeps_its_connection(tmp_path):
    record = tmp_path / "received.jsonl"
    proxy = McpProxy(raw_backend(record), backend_request_timeout=0.5)
    async with asyncio.timeout(30), serving(proxy.app) as (url, _):
        async with McpClient.http(url, protocol_mode="legacy") as client:
            pid = text_of(await client.call_tool("pid", {}))
            with pytest.raises(McpCallError) as failure:
                await client.call_tool("silent", {})
            assert failure.value.code == -32603
            assert "did not answer within 0.5 s (backend_request_timeout)" in failure.value.message
            assert "unavailable" not in failure.value.message
            # The backend was told, and its process (this session's state) lives on.
            silent = next(
                m["id"] for m in received(record) if (m.get("params") or {}).get("name") == "silent"
            )
            await wait_until(
                lambda: any(
                    m.get("method") == "notifications/cancelled"
                    and m["params"]["requestId"] == silent
                    for m in received(record)
                ),
                "the backend to be told the call was abandoned",
            )
            assert text_of(await client.call_tool("pid", {})) == pid


async def test_a_flood_of_list_changed_is_read_once_more_not_once_each(tmp_path):
    record = tmp_path / "received.jsonl"
    proxy = McpProxy(raw_backend(record))
    async with asyncio.timeout(30), serving(proxy.app) as (url, _):
        async with McpClient.http(url, protocol_mode="legacy") as client:
            assert text_of(await client.call_tool("flood_changed", {"n": 500})) == "flooded"
            await wait_until(lambda: not proxy._background, "the proxy to re-read the tools")
            assert "added" in {tool.name for tool in await client.list_tools()}
            lists = [m for m in received(record) if m.get("method") == "tools/list"]
            # the shared connection's first read, then the session's: one, and once more
            assert len(lists) <= 3


def _waiting_for_a_backend_question() -> list[asyncio.Task[Any]]:
    return [
        task
        for task in asyncio.all_tasks()
        if not task.done() and task.get_coro().__qualname__ == "Queue.get"  # type: ignore[union-attr]
    ]


async def test_a_modern_front_call_cancelled_mid_call_leaves_nothing_running(tmp_path):
    record = tmp_path / "received.jsonl"
    proxy = McpProxy(raw_backend(record))
    async with asyncio.timeout(30), serving(proxy.app) as (url, _):
        async with McpClient.http(url, protocol_mode="modern") as client:
            call = asyncio.ensure_future(client.call_tool("silent", {}))
            await wait_until(
                lambda: any(
                    (m.get("params") or {}).get("name") == "silent" for m in received(record)
                ),
                "the backend to get the call",
            )
            assert len(proxy.parked) == 1
            call.cancel()
            await wait_until(
                lambda: any(m.get("method") == "notifications/cancelled" for m in received(record)),
                "the backend to be told",
            )
            await wait_until(lambda: len(proxy.parked) == 0, "the parked call to go")
            assert _waiting_for_a_backend_question() == []
            # its leased connection is idle again, for the next call
            assert text_of(await client.call_tool("pid", {}))


async def test_a_parked_call_dropped_answers_every_question_the_backend_asked(tmp_path):
    record = tmp_path / "received.jsonl"
    proxy = McpProxy(raw_backend(record), parked_call_timeout=0.5)
    asked = asyncio.Event()
    never = asyncio.Event()

    async def elicit(params: dict[str, Any]) -> dict[str, Any]:
        asked.set()
        await never.wait()  # the front client never answers: the parked call expires
        return {"action": "decline"}

    async with asyncio.timeout(30), serving(proxy.app) as (url, _):
        async with McpClient.http(
            url, protocol_mode="modern", elicitation_handler=elicit
        ) as client:
            call = asyncio.ensure_future(client.call_tool("ask_twice", {}))
            await asyncio.wait_for(asked.wait(), 10)
            await wait_until(lambda: len(proxy.parked) == 0, "the parked call to expire")

            def answered() -> set[str]:
                return {m["id"] for m in received(record) if "method" not in m}

            # a backend request is answered, here with an error, never left waiting
            await wait_until(lambda: {"q1", "q2"} <= answered(), "the backend's questions")
            errors = [m for m in received(record) if m.get("id") in ("q1", "q2")]
            assert all(m["error"]["code"] == -32603 for m in errors)
            call.cancel()
