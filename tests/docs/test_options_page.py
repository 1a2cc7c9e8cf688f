"""docs/options.md lists every parameter of ``McpServerApp`` and ``McpClient`` and every
field of ``StreamableHttpServerOptions``: a new option gets a row."""

from __future__ import annotations

import dataclasses
import inspect
from pathlib import Path

from mcpkit import McpClient, McpServerApp, StreamableHttpServerOptions

PAGE = Path(__file__).resolve().parents[2] / "docs" / "options.md"


def section(title: str) -> str:
    return PAGE.read_text(encoding="utf-8").split(f"## `{title}`")[1].split("\n## ")[0]


def unlisted(names: list[str], title: str) -> list[str]:
    text = section(title)
    return [name for name in names if f"`{name}`" not in text]


def test_every_option_has_a_row():
    app = [
        p
        for p in inspect.signature(McpServerApp.__init__).parameters
        if p not in {"self", "servers"}
    ]
    client = [
        p for p in inspect.signature(McpClient.__init__).parameters if p not in {"self", "stream"}
    ]
    http = [field.name for field in dataclasses.fields(StreamableHttpServerOptions)]
    assert unlisted(app, "McpServerApp") == []
    assert unlisted(client, "McpClient") == []
    assert unlisted(http, "StreamableHttpServerOptions") == []
