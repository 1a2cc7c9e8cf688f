"""What the commands print: ``inspect``'s tables by default (parameters with required marks,
resources, templates, prompts), machine output with ``--json`` on every command, and errors
as one JSON line on stderr with ``--json``."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.environment import child_environment

SERVER = '''
from mcpkit import McpServerApp, mcp_prompt, mcp_resource, mcp_server, mcp_tool


@mcp_server(name="shop", version="2.1.0")
class Shop:
    @mcp_tool()
    def order(self, item: str, count: int, gift: bool = False) -> str:
        """Order an item."""
        return f"ordered {count} x {item}"

    @mcp_resource("shop://catalog", mime_type="application/json")
    def catalog(self) -> dict:
        """The catalog."""
        return {"items": ["tea"]}

    @mcp_resource("shop://items/{sku}")
    def item(self, sku: str) -> str:
        """One item."""
        return sku

    @mcp_prompt()
    def recommend(self, taste: str, budget: str = "any") -> str:
        """Recommend something."""
        return f"Recommend a {taste} tea under {budget}."


app = McpServerApp(Shop)
'''


#: Parameters described the two ways a tool can: its docstring's Args: section and
#: ``Annotated[..., Field(description=...)]``; one description longer than a cell shows.
WEATHER = '''
from typing import Annotated

from pydantic import Field

from mcpkit import McpServerApp, mcp_prompt, mcp_tool


@mcp_tool
def forecast(
    city: str,
    days: Annotated[int, Field(description="How many days ahead")] = 1,
    detail: str = "short",
    units: str = "metric",
) -> str:
    """Forecast the weather.

    Args:
        city: The city's name.
        detail: How much to say about each day of the forecast, from a single word up to a
            paragraph with wind, humidity and the chance of rain hour by hour.
    """
    return city


@mcp_prompt
def packing(trip: str, season: str = "summer") -> str:
    """What to pack.

    Args:
        trip: Where the trip goes.
    """
    return trip


app = McpServerApp(forecast, packing)
'''


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("output")
    (path / "shop.py").write_text(SERVER)
    (path / "weather.py").write_text(WEATHER)
    return path


def mcpkit(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = child_environment(HOME=str(folder), XDG_CONFIG_HOME=str(folder / ".config"))
    return subprocess.run(
        [sys.executable, "-m", "mcpkit", *args],
        cwd=folder,
        input="",
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )


def test_inspect_prints_tables_by_default(folder):
    done = mcpkit(folder, "inspect", "shop.py")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "shop 2.1.0 (protocol 2025-11-25)"
    text = done.stdout
    for title in ("Tools (1)", "Resources (1)", "Resource templates (1)", "Prompts (1)"):
        assert title in text
    order = next(line for line in lines if " order " in line)
    assert "item*: string" in order and "Order an item." in order
    assert any("count*: integer" in line for line in lines)
    assert any("gift: boolean" in line and "gift*" not in line for line in lines)
    assert any("shop://catalog" in line and "application/json" in line for line in lines)
    assert any("shop://items/{sku}" in line for line in lines)
    recommend = next(line for line in lines if "recommend" in line)
    assert "taste*" in recommend
    assert any("budget" in line and "budget*" not in line for line in lines)


def test_inspect_shows_parameter_descriptions_one_line_each(folder):
    done = mcpkit(folder, "inspect", "weather.py")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    city = next(line for line in lines if "city*" in line)
    assert "city*: string — The city's name." in city and "Forecast the weather." in city
    assert any("days: integer — How many days ahead" in line for line in lines)
    assert any("units: string" in line and "—" not in line for line in lines)
    # a long description is cut at a word, with "…", and stays on the parameter's line
    detail = next(line for line in lines if "detail: string" in line)
    assert "— How much to say about each day of the forecast, from a…" in detail
    assert "humidity" not in done.stdout
    packing = next(line for line in lines if "packing" in line)
    assert "trip* — Where the trip goes." in packing
    assert any("season" in line and "—" not in line for line in lines)


def test_inspect_json_keeps_the_whole_descriptions(folder):
    listing = json.loads(mcpkit(folder, "inspect", "weather.py", "--json").stdout)
    properties = listing["tools"][0]["inputSchema"]["properties"]
    assert properties["city"]["description"] == "The city's name."
    assert "hour by hour" in properties["detail"]["description"]
    assert listing["prompts"][0]["arguments"][0]["description"] == "Where the trip goes."


def test_descriptions_are_shortened_at_a_word():
    from mcpkit.cli._output import PARAMETER_DESCRIPTION_CHARS, arguments_of, parameters_of

    words = "word " * 40
    [line] = parameters_of(
        {"properties": {"q": {"type": "string", "description": words}}, "required": ["q"]}
    )
    label, _, text = line.partition(" — ")
    assert label == "q*: string"
    assert len(text) <= PARAMETER_DESCRIPTION_CHARS and text.endswith("d…")
    [unbroken] = parameters_of({"properties": {"q": {"description": "x" * 200}}})
    assert unbroken == f"q: any — {'x' * (PARAMETER_DESCRIPTION_CHARS - 1)}…"
    first_paragraph = {"type": "string", "description": "Short.\n\nMore after a blank line."}
    assert parameters_of({"properties": {"q": first_paragraph}}) == ["q: string — Short."]
    assert arguments_of([{"name": "a", "required": True}, {"name": "b", "description": ""}]) == [
        "a*",
        "b",
    ]


def test_inspect_json(folder):
    listing = json.loads(mcpkit(folder, "inspect", "shop.py", "--json").stdout)
    assert listing["server"]["serverInfo"] == {"name": "shop", "version": "2.1.0"}
    tool = listing["tools"][0]
    assert tool["name"] == "order" and tool["inputSchema"]["required"] == ["item", "count"]
    assert [item["uri"] for item in listing["resources"]] == ["shop://catalog"]
    assert listing["prompts"][0]["name"] == "recommend"


def test_call_json_is_the_raw_result(folder):
    done = mcpkit(folder, "call", "shop.py", "order", '{"item": "tea", "count": 2}', "--json")
    assert json.loads(done.stdout) == {"content": [{"type": "text", "text": "ordered 2 x tea"}]}
    assert mcpkit(folder, "call", "shop.py", "order", '{"item": "tea", "count": 2}').stdout == (
        "ordered 2 x tea\n"
    )


def test_run_json_announces_the_server_as_one_line(folder):
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcpkit", "run", "shop.py", "-t", "http", "--port", "0", "--json"],
        cwd=folder,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        banner = json.loads(proc.stdout.readline())  # type: ignore[union-attr]
        assert banner["event"] == "serving" and banner["server"] == "shop"
        assert banner["url"].startswith("http://127.0.0.1:") and banner["url"].endswith("/mcp")
        listing = json.loads(mcpkit(folder, "inspect", banner["url"], "--json").stdout)
        assert listing["tools"][0]["name"] == "order"
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=20)
    assert proc.returncode == 0 and err == ""


def test_config_and_install_json(folder):
    entry = json.loads(mcpkit(folder, "config", "shop.py", "--json").stdout)
    assert list(entry["mcpServers"]) == ["shop"]
    done = mcpkit(
        folder, "install", "cursor", "shop.py", "--scope", "project", "--dry-run", "--json"
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["action"] == "dry-run" and summary["name"] == "shop"
    assert summary["path"] == str(folder / ".cursor" / "mcp.json")
    assert not (folder / ".cursor").exists()
    done = mcpkit(folder, "install", "cursor", "shop.py", "--scope", "project", "--json")
    summary = json.loads(done.stdout)
    assert summary["action"] == "added" and summary["backup"] is None
    assert "shop" in json.loads((folder / ".cursor" / "mcp.json").read_text())["mcpServers"]
    done = mcpkit(folder, "install", "cursor", "shop.py", "--scope", "project", "--json")
    assert json.loads(done.stdout)["action"] == "unchanged"


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (("inspect", "nosuch.py", "--json"), 1, "no such file: nosuch.py"),
        (("call", "shop.py", "ordr", "--json"), 1, "no tool named 'ordr'"),
        (("call", "shop.py", "order", "[1]", "--json"), 2, "must be a JSON object"),
        (("run", "shop.py", "--json", "--port", "x"), 2, "--port"),
    ],
)
def test_errors_with_json_are_one_json_line_on_stderr(folder, args, code, message):
    done = mcpkit(folder, *args)
    assert done.returncode == code
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    error = json.loads(lines[0])
    assert message in error["error"] and error["exit_code"] == code
    assert "hint" in error
