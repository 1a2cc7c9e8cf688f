"""Two users of one ``McpProxy`` in front of a handshake-era backend: what the backend asks
and logs during a user's call reaches that user only. The proxy shared one backend
connection among 2026-07-28 (and stateless) front clients and put the backend's requests
and logs to the newest call on it: alice's "enter your PIN" was shown to bob, bob's answer
completed alice's call, and alice's log line went to bob."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from mcpkit.client import McpClient, StdioClientTransportOptions
from mcpkit.proxy import McpProxy
from tests.http_server import serving
from tests.proxy.test_proxy import text_of
from tests.waiting import wait_until

pytestmark = [
    pytest.mark.interop,
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

GATED = str(Path(__file__).with_name("gated_backend.py"))


def gated() -> StdioClientTransportOptions:
    return StdioClientTransportOptions(command=sys.executable, arguments=[GATED])


class User:
    """A front client's own record: what it was asked and what it was logged."""

    def __init__(self, name: str, pin: str) -> None:
        self.name = name
        self.pin = pin
        self.asked: list[str] = []
        self.logs: list[Any] = []

    async def elicit(self, params: dict[str, Any]) -> dict[str, Any]:
        self.asked.append(params["message"])
        return {"action": "accept", "content": {"pin": self.pin}}

    def log(self, params: dict[str, Any]) -> None:
        self.logs.append(params["data"])


async def two_calls(
    proxy: McpProxy, tool: str, tmp_path: Path, **client_options: Any
) -> tuple[User, User, list[str]]:
    """Alice's call starts, then bob's; alice's gate opens first, then bob's. Returns both
    users and the calls' texts (alice's first)."""
    alice, bob = User("alice", "1234"), User("bob", "9999")
    async with serving(proxy.app, **client_options.pop("serve", {})) as (url, _):
        clients = [
            McpClient.http(
                url, elicitation_handler=user.elicit, logging_handler=user.log, **client_options
            )
            for user in (alice, bob)
        ]
        async with clients[0] as alice_client, clients[1] as bob_client:
            calls = []
            for user, client in ((alice, alice_client), (bob, bob_client)):
                gate = tmp_path / user.name
                arguments = {"who": user.name, "gate": str(gate)}
                calls.append(asyncio.ensure_future(client.call_tool(tool, arguments)))
                started = Path(f"{gate}.started")
                await wait_until(started.exists, f"{user.name}'s backend call to start", 15)
            texts = []
            for user, call in zip((alice, bob), calls, strict=True):
                (tmp_path / user.name).write_text("open")
                texts.append(text_of(await call))
    return alice, bob, texts


async def test_a_backends_elicitation_and_log_reach_only_their_own_modern_front_client(tmp_path):
    proxy = McpProxy(gated(), backend_protocol_mode="legacy")
    async with asyncio.timeout(60):
        alice, bob, texts = await two_calls(
            proxy, "pin", tmp_path, protocol_version="2026-07-28", log_level="info"
        )
    assert texts == ["alice pin=1234", "bob pin=9999"]
    assert alice.asked == ["enter your PIN, alice"] and bob.asked == ["enter your PIN, bob"]
    assert alice.logs == ["log for alice"] and bob.logs == ["log for bob"]
    assert len(proxy.parked) == 0


async def test_a_backends_log_reaches_only_its_own_stateless_front_client(tmp_path):
    proxy = McpProxy(gated(), backend_protocol_mode="legacy")
    async with asyncio.timeout(60):
        alice, bob, texts = await two_calls(
            proxy, "announce", tmp_path, protocol_mode="legacy", serve={"stateless": True}
        )
    assert texts == ["announced alice", "announced bob"]
    assert alice.logs == ["log for alice"] and bob.logs == ["log for bob"]
