"""One client over the servers of an ``mcpServers`` config (``ServerGroup``): two stdio
servers and one over Streamable HTTP, real processes and sockets on 127.0.0.1, their tools
and prompts under ``{server}_{name}`` and their resources under ``scheme://{server}/``; a
server that cannot start is left out, named in ``unreachable``, and the rest serve; in
both eras between the group's client and its servers."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from mcpkit import McpServerApp
from mcpkit.proxy import ServerGroup
from tests.http_server import serving

pytestmark = pytest.mark.timeout(90)

SERVER = """
import sys
from mcpkit import McpServerApp

app = McpServerApp(sys.argv[1])


@app.tool()
def where() -> str:
    return "served by " + sys.argv[1]


@app.prompt()
def hello() -> str:
    return "Hello from " + sys.argv[1]


@app.resource("notes://today")
def today() -> str:
    return "notes of " + sys.argv[1]


app.run()
"""


def remote() -> McpServerApp:
    app = McpServerApp("remote")

    @app.tool()
    def ping() -> str:
        return "pong"

    return app


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
async def test_one_client_reaches_every_server_and_skips_the_broken(
    tmp_path: Path, version: str
) -> None:
    script = tmp_path / "server.py"
    script.write_text(SERVER)
    root = str(Path(__file__).resolve().parents[2])

    def stdio(name: str) -> dict[str, object]:
        return {
            "command": sys.executable,
            "args": [str(script), name],
            "env": {"PYTHONPATH": root},
            "inheritEnv": True,
        }

    async with asyncio.timeout(60), serving(remote()) as (url, _):
        config = {
            "mcpServers": {
                "alpha": stdio("alpha"),
                "beta": stdio("beta"),
                "web": {"type": "http", "url": url},
                "broken": {"command": sys.executable, "args": ["-c", "raise SystemExit(3)"]},
            }
        }
        async with ServerGroup(config, connect_timeout=10, protocol_version=version) as group:
            client = group.client
            tools = sorted(tool.name for tool in await client.list_tools())
            assert tools == ["alpha_where", "beta_where", "web_ping"]
            beta = await client.call_tool("beta_where", {})
            assert beta.content[0].text == "served by beta"  # type: ignore[union-attr]
            assert (await client.call_tool("web_ping", {})).content[0].text == "pong"  # type: ignore[union-attr]
            prompt = await client.get_prompt("alpha_hello")
            assert prompt.messages[0].content.text == "Hello from alpha"  # type: ignore[union-attr]
            uris = sorted(resource.uri for resource in await client.list_resources())
            assert uris == ["notes://alpha/today", "notes://beta/today"]
            read = await client.read_resource("notes://beta/today")
            assert read.contents[0].text == "notes of beta"  # type: ignore[union-attr]
            assert list(group.unreachable) == ["broken"]
        with pytest.raises(RuntimeError, match="inside `async with group:`"):
            group.client  # noqa: B018
