"""What one session's resource subscriptions may hold: at most
``DEFAULT_MAX_SUBSCRIPTIONS_PER_SESSION`` of them, each naming a URI of at most
``MAX_SUBSCRIBED_URI_LENGTH`` characters (past either: -32602, and the session serves on),
in both eras: ``resources/subscribe`` over Streamable HTTP, ``subscriptions/listen``."""

from __future__ import annotations

import httpx
import pytest

from mcpkit import McpCallError, McpServerApp, mcp_tool
from mcpkit.server._engine.subscriptions import (
    DEFAULT_MAX_SUBSCRIPTIONS_PER_SESSION,
    MAX_SUBSCRIBED_URI_LENGTH,
)
from mcpkit.testing import connected
from tests.http_server import open_session, serving


@mcp_tool
def echo(text: str) -> str:
    """Echo."""
    return text


def subscribe(request_id: int, uri: str) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "resources/subscribe",
            "params": {"uri": uri}}  # fmt: skip


async def test_a_subscribed_uri_is_bounded_in_length_over_http() -> None:
    """A 4 MiB URI was kept as it came, a thousand times over in one session."""
    app = McpServerApp(echo)
    longest = "notes://" + "a" * (MAX_SUBSCRIBED_URI_LENGTH - len("notes://"))
    async with serving(app) as (url, _), httpx.AsyncClient(timeout=10) as http:
        headers = await open_session(http, url)
        refused = await http.post(url, json=subscribe(1, longest + "a"), headers=headers)
        error = refused.json()["error"]
        assert error["code"] == -32602 and str(MAX_SUBSCRIBED_URI_LENGTH) in error["message"]
        taken = await http.post(url, json=subscribe(2, longest), headers=headers)
        assert taken.json()["result"] == {}
        assert app.subscriptions.get_subscribers(longest)
        assert not app.subscriptions.get_subscribers(longest + "a")


async def test_a_session_holds_a_bounded_number_of_subscriptions() -> None:
    app = McpServerApp(echo)
    async with connected(app) as client:
        for index in range(DEFAULT_MAX_SUBSCRIPTIONS_PER_SESSION):
            await client.request("resources/subscribe", {"uri": f"notes://{index}"})
        with pytest.raises(McpCallError) as refused:
            await client.request("resources/subscribe", {"uri": "notes://one-more"})
        assert refused.value.code == -32602
        await client.request("resources/subscribe", {"uri": "notes://0"})  # held already
        assert (await client.call_tool("echo", {"text": "on"})).content[0].text == "on"  # type: ignore[union-attr]


async def test_a_listen_naming_too_long_a_uri_is_invalid_params() -> None:
    app = McpServerApp(echo)
    too_long = "notes://" + "a" * MAX_SUBSCRIBED_URI_LENGTH
    async with connected(app, protocol_version="2026-07-28") as client:
        with pytest.raises(McpCallError) as refused:
            async with client.listen(resource_subscriptions=[too_long]):
                pass
        assert refused.value.code == -32602
        assert "resourceSubscriptions" in str(refused.value.data)
        assert (await client.call_tool("echo", {"text": "on"})).content[0].text == "on"  # type: ignore[union-attr]
