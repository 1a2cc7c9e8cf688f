"""The official ``mcp`` client (2.3.0) against mcpkit's Streamable HTTP server, stateful and
stateless, with JSON answers (quick calls) and SSE answers (calls that stream)."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from mcpkit.cli._loader import load_app
from tests.http_server import serving
from tests.interop.test_official_sdk_stdio import Recorder, texts

pytestmark = [
    pytest.mark.interop,
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

ROOT = Path(__file__).resolve().parents[2]


@contextlib.asynccontextmanager
async def official_http_client(url: str) -> AsyncIterator[tuple[ClientSession, Recorder]]:
    recorder = Recorder()
    async with streamable_http_client(url) as (read, write):
        async with ClientSession(
            read,
            write,
            read_timeout_seconds=10,
            sampling_callback=recorder.on_sampling,
            elicitation_callback=recorder.on_elicitation,
            logging_callback=recorder.on_log,
            message_handler=recorder.on_message,
        ) as session:
            await session.initialize()
            yield session, recorder


def everything() -> Any:
    sys.path.insert(0, str(ROOT))
    return load_app(str(ROOT / "examples" / "everything.py"))


@pytest.mark.parametrize("stateless", [False, True], ids=["stateful", "stateless"])
async def test_official_client_calls_tools_over_streamable_http(stateless):
    async with asyncio.timeout(30), serving(everything(), stateless=stateless) as (url, _):
        async with official_http_client(url) as (session, recorder):
            tools = {tool.name for tool in (await session.list_tools()).tools}
            assert {"test_simple_text", "test_tool_with_progress"} <= tools
            simple = await session.call_tool("test_simple_text", {})
            assert texts(simple) == ["This is a simple text response for testing."]
            progress: list[float] = []

            async def on_progress(value: float, total: float | None, message: str | None) -> None:
                progress.append(value)

            streamed = await session.call_tool(
                "test_tool_with_progress", {}, progress_callback=on_progress
            )
            assert not streamed.is_error and progress == [0, 50, 100]
            logged = await session.call_tool("test_tool_with_logging", {})
            assert not logged.is_error and len(recorder.logs) == 3
            text = await session.read_resource("test://static-text")
            assert isinstance(text.contents[0], types.TextResourceContents)


async def test_official_client_answers_sampling_and_elicitation_on_the_post_stream():
    async with asyncio.timeout(30), serving(everything()) as (url, _):
        async with official_http_client(url) as (session, recorder):
            sampled = await session.call_tool("test_sampling", {"prompt": "over http"})
            assert "test response" in texts(sampled)[0] and recorder.sampling_requests
            elicited = await session.call_tool("test_elicitation", {"message": "who?"})
            assert not elicited.is_error and recorder.elicitation_requests


async def test_official_client_gets_resource_updates_on_the_get_stream():
    async with asyncio.timeout(30), serving(everything()) as (url, _):
        async with official_http_client(url) as (session, recorder):
            await session.subscribe_resource("test://watched-resource")
            await session.call_tool("update_watched_resource", {})
            for _ in range(300):
                updates = [
                    n
                    for n in recorder.notifications
                    if isinstance(n, types.ResourceUpdatedNotification)
                ]
                if updates:
                    break
                await asyncio.sleep(0.01)
            assert updates and str(updates[0].params.uri) == "test://watched-resource"
