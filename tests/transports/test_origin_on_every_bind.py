"""Origin is checked on every bind, not only on loopback: a web page the user opens must not
call a server bound to 0.0.0.0 (a container, the docs' uvicorn and gunicorn examples, ``mcpkit
proxy --host 0.0.0.0`` in front of a filesystem server). A present Origin must be the
server's own, a page on a loopback name, or one of ``allowed_origins``; ``null`` only where
listed; a client that sends no Origin (not a browser) is served. Host is checked wherever
``allowed_hosts`` names the server; bound beyond loopback without it, start-up says so."""

from __future__ import annotations

import asyncio
import logging
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from mcpkit import McpServerApp, mcp_tool
from mcpkit.transports.http import TransportSecuritySettings
from tests.http_server import serving
from tests.websocket_client import NO_PROXY
from tests.wire import initialize_request

ROOT = Path(__file__).resolve().parents[2]
ACCEPT = {"accept": "application/json, text/event-stream"}


@mcp_tool
def add(a: int, b: int) -> int:
    return a + b


def _app() -> McpServerApp:
    return McpServerApp(add)


@pytest.mark.parametrize(
    ("origin", "status"),
    [
        ("http://evil.example", 403),
        ("null", 403),
        ("https://127.0.0.1.evil.example", 403),
        ("http://localhost:6274", 200),  # a page the user runs locally (an inspector)
        (None, 200),  # not a browser
    ],
)
async def test_a_server_bound_to_every_address_checks_origin(origin, status):
    async with (
        serving(_app(), host="0.0.0.0", enable_websocket=True) as (url, _),
        httpx.AsyncClient(timeout=10) as http,
    ):
        headers = ACCEPT if origin is None else ACCEPT | {"origin": origin}
        answer = await http.post(url, json=initialize_request(), headers=headers)
        assert answer.status_code == status, answer.text
        if status == 403:
            assert answer.json()["error"]["code"] == -32600
            assert "allowed_origins" in answer.json()["error"]["message"]


async def test_the_servers_own_origin_is_admitted_beyond_loopback():
    async with (
        serving(_app(), host="0.0.0.0") as (url, _),
        httpx.AsyncClient(timeout=10) as http,
    ):
        base = url.rsplit("/", 1)[0]
        host = base.split("//", 1)[1]
        same = await http.post(url, json=initialize_request(), headers=ACCEPT | {"origin": base})
        assert same.status_code == 200
        # The page's own origin is judged by the Host it asked, not the socket's address.
        other = await http.post(
            url,
            json=initialize_request(),
            headers=ACCEPT | {"origin": "http://mcp.example.com", "host": "mcp.example.com"},
        )
        assert other.status_code == 200, host
        refused = await http.post(
            url,
            json=initialize_request(),
            headers=ACCEPT | {"origin": "http://evil.example", "host": "mcp.example.com"},
        )
        assert refused.status_code == 403


async def test_a_cross_origin_websocket_and_legacy_sse_get_are_refused():
    async with (
        serving(_app(), host="0.0.0.0", enable_websocket=True, enable_legacy_sse=True) as (url, _),
        httpx.AsyncClient(timeout=10) as http,
    ):
        sse = await http.get(
            f"{url}/sse", headers={"accept": "text/event-stream", "origin": "http://evil.example"}
        )
        assert sse.status_code == 403
        ws_url = url.replace("http://", "ws://") + "/ws"
        with pytest.raises(InvalidStatus) as refused:
            async with connect(
                ws_url, subprotocols=["mcp"], origin="http://evil.example", **NO_PROXY
            ):
                pass
        assert refused.value.response.status_code == 403
        async with connect(ws_url, subprotocols=["mcp"], **NO_PROXY) as ws:
            await ws.send('{"jsonrpc":"2.0","id":1,"method":"ping"}')
            assert '"result"' in await asyncio.wait_for(ws.recv(), 10)


async def test_allowed_origins_and_hosts_beyond_loopback():
    settings = TransportSecuritySettings(
        allowed_hosts=("mcp.example.com",), allowed_origins=("https://app.example.com", "null")
    )
    async with (
        serving(_app(), host="0.0.0.0", transport_security=settings) as (url, _),
        httpx.AsyncClient(timeout=10) as http,
    ):

        async def status(**headers: str) -> int:
            answer = await http.post(url, json=initialize_request(), headers=ACCEPT | headers)
            return answer.status_code

        assert await status(host="evil.example") == 421  # named hosts: Host is checked
        assert await status(host="mcp.example.com", origin="https://app.example.com") == 200
        assert await status(host="mcp.example.com", origin="null") == 200
        # Listed origins replace the loopback default.
        assert await status(host="mcp.example.com", origin="http://localhost:6274") == 403


async def test_start_up_names_allowed_hosts_when_host_goes_unchecked(caplog):
    caplog.set_level(logging.WARNING, logger="mcpkit.http")
    async with serving(_app(), host="0.0.0.0"):
        pass
    said = [r.getMessage() for r in caplog.records if r.name == "mcpkit.http"]
    assert any("allowed_hosts" in line and "0.0.0.0" in line for line in said), said
    caplog.clear()
    named = TransportSecuritySettings(allowed_hosts=("mcp.example.com",))
    async with serving(_app(), host="0.0.0.0", transport_security=named):
        pass
    async with serving(_app()):  # loopback
        pass
    assert not [r for r in caplog.records if "allowed_hosts" in r.getMessage()]


SERVER = """
from mcpkit import McpServerApp, mcp_tool

@mcp_tool
def add(a: int, b: int) -> int:
    return a + b

app = McpServerApp(add)
"""


def test_mcpkit_run_on_every_address_refuses_a_web_page(tmp_path):
    """What the reviewer tried: ``mcpkit run --host 0.0.0.0``, a POST from another origin."""
    server = tmp_path / "server.py"
    server.write_text(SERVER)
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcpkit", "run", str(server), "-t", "http"]
        + ["--host", "0.0.0.0", "--port", "0"],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        lines = [proc.stderr.readline()]
        while not lines[-1].startswith("mcpkit: serving"):
            lines.append(proc.stderr.readline())
            assert lines[-1], lines
        port = int(lines[-1].rsplit(":", 1)[1].split("/", 1)[0])
        assert any("allowed_hosts" in line for line in lines), lines
        url = f"http://127.0.0.1:{port}/mcp"
        evil = httpx.post(
            url,
            json=initialize_request(),
            headers=ACCEPT | {"origin": "http://evil.example"},
            timeout=10,
        )
        assert evil.status_code == 403
        plain = httpx.post(url, json=initialize_request(), headers=ACCEPT, timeout=10)
        assert plain.status_code == 200
    finally:
        proc.terminate()
        proc.communicate(timeout=20)
