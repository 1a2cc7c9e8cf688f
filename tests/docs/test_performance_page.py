"""docs/performance.md's advice holds: a typed result is encoded twice (``structuredContent``
and its JSON text) and a ``-> str`` once; the defaults it quotes are the defaults; the
benchmark commands it gives name scripts of ``bench/`` and options they take."""

from __future__ import annotations

import inspect
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from mcpkit import McpServerApp, serve_stdio
from mcpkit.cli._settings import BY_FIELD
from mcpkit.server._engine.sync_calls import DEFAULT_MAX_SYNC_WORKERS
from mcpkit.testing import connected
from mcpkit.transports.http import StreamableHttpServerOptions

ROOT = Path(__file__).resolve().parents[2]
PAGE = (ROOT / "docs" / "performance.md").read_text(encoding="utf-8")
TEXT = 'line with a "quote" and a tab\t\n' * 1000


def bench_commands() -> list[list[str]]:
    block = re.search(r"```bash\n(.*?)```", PAGE, re.S)
    assert block is not None
    lines = [line.split("#")[0].split() for line in block.group(1).splitlines()]
    return [words for words in lines if words]


async def test_a_typed_result_is_sent_twice_and_a_str_once():
    app = McpServerApp("sizes")

    @app.tool()
    async def as_text() -> str:
        return TEXT

    @app.tool()
    async def as_value() -> dict[str, str]:
        return {"text": TEXT}

    async with connected(app) as client:
        text = await client.call_tool("as_text", {})
        assert text.structured_content is None
        assert [block.text for block in text.content] == [TEXT]
        value = await client.call_tool("as_value", {})
        assert value.structured_content == {"text": TEXT}
        assert len(value.content) == 1 and json.loads(value.content[0].text) == {"text": TEXT}


def test_the_defaults_it_quotes():
    assert "`max_sync_workers`, 32 by default" in PAGE
    assert DEFAULT_MAX_SYNC_WORKERS == 32
    assert "(`MCPKIT_FREEZE_GC_AT_STARTUP=0` turns it off). No option of the library" in PAGE
    assert BY_FIELD["freeze_gc_at_startup"].default is True
    assert "freeze_gc" not in inspect.signature(serve_stdio).parameters
    assert not hasattr(StreamableHttpServerOptions(), "freeze_gc_at_startup")


@pytest.mark.parametrize("command", bench_commands(), ids=lambda words: words[1])
def test_its_bench_commands_name_scripts_and_options_that_exist(command):
    assert command[0] == "python"
    script = ROOT / command[1]
    assert script.is_file(), command[1]
    shown = subprocess.run(
        [sys.executable, str(script), "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert shown.returncode == 0, shown.stderr
    for option in (word for word in command[2:] if word.startswith("--")):
        assert option in shown.stdout, (command[1], option)
