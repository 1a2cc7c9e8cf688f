"""What changes while a front client is connected through ``McpProxy``: list_changed,
resource subscriptions, and pagination and completion over the backend's catalog."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mcpkit.client import McpClient
from mcpkit.proxy import McpProxy
from tests.http_server import serving
from tests.proxy.test_proxy import everything
from tests.waiting import wait_until

pytestmark = pytest.mark.interop


async def test_backend_changes_reach_front_clients_and_pages_are_the_fronts_own():
    proxy = McpProxy(everything(), backend_protocol_mode="legacy", page_size=5)
    changed: list[str] = []
    updated: list[Any] = []
    async with asyncio.timeout(30), serving(proxy.app) as (url, _):
        async with McpClient.http(
            url,
            protocol_mode="legacy",
            on_list_changed=changed.append,
            on_resource_updated=updated.append,
        ) as client:
            page = await client.request("tools/list", {})
            assert len(page["tools"]) == 5 and page["nextCursor"]
            before = {tool.name for tool in await client.list_tools()}
            assert len(before) > 30  # every backend page read, served five at a time
            added = await client.call_tool("test_trigger_tool_change", {})
            assert not added.is_error
            await wait_until(
                lambda: "dynamic_tool_1" in {e.name for e in proxy.app.catalog.list_tools()},
                "the proxy to refresh its catalog",
            )
            await wait_until(lambda: "tools" in changed, "tools list_changed at the front")
            after = {tool.name for tool in await client.list_tools()}
            assert after - before == {"dynamic_tool_1"}
            assert (await client.call_tool("dynamic_tool_1", {})).content[0].text == "dynamic"

            await client.subscribe_resource("test://watched-resource")
            await wait_until(
                lambda: any(
                    "test://watched-resource" in uris
                    for uris in proxy.subscriptions.by_connection.values()
                ),
                "the backend subscription",
            )
            await client.call_tool("update_watched_resource", {})
            await wait_until(lambda: updated == ["test://watched-resource"], "resources/updated")
            await client.unsubscribe_resource("test://watched-resource")
            await wait_until(
                lambda: not proxy.subscriptions.by_connection and not proxy._background,
                "the backend unsubscribed",
            )

            completion = await client.complete(
                {"type": "ref/resource", "uri": "test://template/{id}/data"}, "id", ""
            )
            assert completion.completion.values
            await client.ping()
            await client.set_logging_level("warning")
