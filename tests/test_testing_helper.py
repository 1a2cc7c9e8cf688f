"""mcpkit.testing as a user meets it: ``connected`` in both eras, and a pytest run, in a
subprocess, of a small user test file that imports nothing but mcpkit and pytest."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mcpkit import McpServerApp, mcp_tool
from mcpkit.testing import connected


@mcp_tool
def hello(name: str) -> str:
    """Greet someone."""
    return f"Hello, {name}!"


@pytest.mark.parametrize("era", ["2025-06-18", "2025-11-25", "2026-07-28"])
async def test_connected_serves_the_app_in_each_era(era: str) -> None:
    app = McpServerApp(hello)
    async with connected(app, protocol_version=era) as client:
        assert client.protocol_version == era
        result = await client.call_tool("hello", {"name": "Ada"})
        assert result.content[0].text == "Hello, Ada!"  # type: ignore[union-attr]
    assert not app.started  # it started the app, so it stopped it


async def test_connected_leaves_a_running_app_running() -> None:
    app = McpServerApp(hello)
    async with app.running():
        async with connected(app) as client:
            await client.ping()
        assert app.started


def test_import_mcpkit_imports_no_pytest() -> None:
    code = "import sys, mcpkit, mcpkit.testing; print('pytest' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


USER_TESTS = '''
import pytest
from mcpkit import McpServerApp, mcp_tool

pytest_plugins = ["mcpkit.testing.pytest_plugin"]


@mcp_tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@pytest.fixture
def mcp_app():
    return McpServerApp(add, name="calc")


@pytest.fixture(params=["2025-11-25", "2026-07-28"])
def mcp_client_options(request):
    return {"protocol_version": request.param}


@pytest.mark.asyncio
async def test_add(mcp_client):
    result = await mcp_client.call_tool("add", {"a": 2, "b": 3})
    assert result.structured_content == {"result": 5}


@pytest.mark.asyncio
async def test_lists(mcp_client):
    assert [tool.name for tool in await mcp_client.list_tools()] == ["add"]


@pytest.mark.asyncio
async def test_fails_on_purpose(mcp_client):
    result = await mcp_client.call_tool("add", {"a": 2, "b": 2})
    assert result.structured_content == {"result": 5}
'''


@pytest.mark.parametrize("mode", ["strict", "auto"])
def test_a_user_suite_runs_with_the_plugin(tmp_path: Path, mode: str) -> None:
    (tmp_path / "test_user.py").write_text(textwrap.dedent(USER_TESTS))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:randomly",
            "-p",
            "no:cacheprovider",
            "-o",
            f"asyncio_mode={mode}",
            "--rootdir",
            str(tmp_path),
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    # Four passes (two tests, two eras) and the two planted failures: the plugin really runs.
    assert "2 failed, 4 passed" in done.stdout, done.stdout + done.stderr


def test_a_missing_mcp_app_fixture_says_what_to_define(tmp_path: Path) -> None:
    (tmp_path / "test_user.py").write_text(
        'pytest_plugins = ["mcpkit.testing.pytest_plugin"]\n\n'
        "async def test_x(mcp_client):\n    pass\n"
    )
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-o",
            "asyncio_mode=auto",
            "--rootdir",
            str(tmp_path),
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode != 0
    assert "define a fixture named mcp_app" in done.stdout + done.stderr


def test_the_examples_of_docs_testing_md_pass(tmp_path: Path) -> None:
    """Each Python block of the page, as a user would save it: the first is also the
    ``myserver`` the conftest imports."""
    page = (Path(__file__).resolve().parents[1] / "docs" / "testing.md").read_text()
    blocks = [block.split("```", 1)[0] for block in page.split("```python\n")[1:]]
    first, conftest, tools, failures = blocks
    (tmp_path / "myserver.py").write_text(first)
    (tmp_path / "test_connected.py").write_text(first)
    (tmp_path / "conftest.py").write_text(conftest)
    (tmp_path / "test_tools.py").write_text(tools)
    (tmp_path / "test_failures.py").write_text(failures)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o",
         "asyncio_mode=strict", "--rootdir", str(tmp_path), str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )  # fmt: skip
    # test_add, test_tools in both eras, test_failures
    assert done.returncode == 0 and "4 passed" in done.stdout, done.stdout + done.stderr
