"""docs/frameworks.md works as written: each recipe's code (the shared part, then the host's
section) is run as it stands in the page, the host it builds served by uvicorn, and called
with and without the page's API keys by mcpkit's client."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcpkit import HttpClientTransportOptions, McpCallError, McpClient
from tests.http_server import serve_asgi

PAGE = Path(__file__).resolve().parents[2] / "docs" / "frameworks.md"
#: The page's section for each host, and the name its code gives the host app.
RECIPES = {"FastAPI": "api", "Starlette": "app", "Lauren": "app", "Lauren, with modules": "app"}
ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}


def section_code(title: str) -> str:
    """The Python blocks of the page's ``## title`` section, joined."""
    text = PAGE.read_text(encoding="utf-8")
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    section = text[start : end if end != -1 else None]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL)
    assert blocks, f"no Python code in the section {title!r}"
    return "\n".join(blocks)


def build(host: str) -> Any:
    """Run the shared part and the host's recipe; returns the host app."""
    namespace: dict[str, Any] = {"__name__": f"recipe_{host.lower()}"}
    exec(compile(section_code("The shared part"), str(PAGE), "exec"), namespace)
    exec(compile(section_code(host), str(PAGE), "exec"), namespace)
    return namespace[RECIPES[host]]


@pytest.mark.parametrize("host", sorted(RECIPES))
async def test_the_recipe_as_written_serves_behind_the_hosts_check(host):
    asgi = build(host)
    async with asyncio.timeout(30), serve_asgi(asgi, lifespan="on") as base:
        endpoint = f"{base}/tools/mcp"
        async with httpx.AsyncClient(timeout=10) as http:
            refused = await http.post(endpoint, json=INIT, headers=ACCEPT)
            assert refused.status_code == 401
        for key, purge in (("key-ada", "purged"), ("key-bob", None)):
            options = HttpClientTransportOptions(
                endpoint=endpoint, additional_headers={"x-api-key": key}
            )
            async with McpClient.http(options) as client:
                whoami = await client.call_tool("whoami", {})
                # "connected" comes from the lifespan context: the host ran the MCP app's
                assert whoami.content[0].text == f"{key.removeprefix('key-')} connected"
                if purge is None:
                    with pytest.raises(McpCallError):
                        await client.call_tool("purge", {})
                else:
                    assert (await client.call_tool("purge", {})).content[0].text == purge
