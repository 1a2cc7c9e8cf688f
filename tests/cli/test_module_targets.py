"""``MODULE:OBJECT`` targets (``mypkg.server:app``), imported as ``python -m`` would find them
from the working folder: relative imports inside the package work; a missing module or one
that raises is one error line; ``mcpkit dev`` watches the folder holding the package."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mcpkit.cli._dev import watched_roots
from mcpkit.cli._loader import TargetNotFoundError
from tests.environment import child_environment

SERVER = '''
from mcpkit import McpServerApp, mcp_tool

from .words import GREETING


@mcp_tool
def greet(name: str) -> str:
    """Greet someone."""
    return f"{GREETING}, {name}!"


app = McpServerApp(greet, name="packaged")
'''


@pytest.fixture
def project(tmp_path: Path) -> Path:
    package = tmp_path / "shopkit"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "words.py").write_text('GREETING = "Hello"\n')
    (package / "server.py").write_text(SERVER)
    (package / "broken.py").write_text("SETTINGS = {}\nTOKEN = SETTINGS['token']\n")
    return tmp_path


def mcpkit(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = child_environment()
    return subprocess.run(
        [sys.executable, "-m", "mcpkit", *args],
        cwd=folder,
        input="",
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )


def test_call_and_inspect_a_module_target(project):
    done = mcpkit(project, "call", "shopkit.server:app", "greet", '{"name": "Ada"}')
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Hello, Ada!\n"
    listing = json.loads(mcpkit(project, "inspect", "shopkit.server", "--json").stdout)
    assert listing["server"]["serverInfo"]["name"] == "packaged"


def test_a_missing_module_is_one_error_line(project):
    done = mcpkit(project, "call", "shopkit.nope:app", "greet")
    assert done.returncode == 1
    assert done.stderr.splitlines()[0] == "error: no such file or module: shopkit.nope"
    assert "Traceback" not in done.stderr


def test_a_module_that_raises_points_at_its_line(project):
    done = mcpkit(project, "inspect", "shopkit.broken")
    assert done.returncode == 1
    assert done.stderr.splitlines()[0] == "error: shopkit/broken.py:2: KeyError: 'token'"


def test_dev_watches_the_folder_holding_the_package(project, monkeypatch):
    monkeypatch.chdir(project)
    monkeypatch.syspath_prepend(str(project))
    assert watched_roots("shopkit.server:app") == [project.resolve()]
    assert watched_roots(str(project / "shopkit" / "server.py")) == [
        (project / "shopkit").resolve()
    ]
    with pytest.raises(TargetNotFoundError, match=r"no such file or module: nosuchpkg\.x"):
        watched_roots("nosuchpkg.x:app")
    with pytest.raises(TargetNotFoundError, match=r"no such file: missing\.py"):
        watched_roots("missing.py")
