"""docs/migrating.md's server, the FastMCP quick start in mcpkit's names, runs as the page
says: every tool, the resource template and the prompt answer, and ``python server.py``
serves stdio through ``app.run()``."""

from __future__ import annotations

import json
import re
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

from mcpkit import McpServerApp
from mcpkit.testing import connected
from tests.wire import initialize_request

PAGE = Path(__file__).resolve().parents[2] / "docs" / "migrating.md"


@pytest.fixture
def server_file(tmp_path: Path) -> Path:
    block = re.search(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)
    assert block is not None, "the page shows a server"
    path = tmp_path / "server.py"
    path.write_text(block.group(1), encoding="utf-8")
    return path


async def test_the_page_server_answers_what_it_declares(server_file: Path):
    app = runpy.run_path(str(server_file))["app"]
    async with connected(app) as client:
        assert {tool.name for tool in await client.list_tools()} == {"add", "greet"}
        added = await client.call_tool("add", {"a": 1, "b": 2})
        assert added.structured_content == {"result": 3}
        greeted = await client.call_tool("greet", {"name": "Ada"})
        assert greeted.content[0].text == "Hello, Ada!"
        read = await client.read_resource("greeting://Ada")
        assert read.contents[0].text == "Hello, Ada!"
        prompt = await client.get_prompt("review", {"code": "x = 1"})
        assert "x = 1" in prompt.messages[0].content.text


def test_python_server_py_serves_stdio(server_file: Path):
    done = subprocess.run(
        [sys.executable, str(server_file)],
        input=json.dumps(initialize_request()) + "\n",
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["result"]["serverInfo"]["name"] == "demo"


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("import_server", "import_app(other, prefix)"),
        ("http_app", "create_asgi_app(app)"),
        ("streamable_http_app", "create_asgi_app(app)"),
        ("sse_app", "/mcp/sse"),
        ("as_proxy", "McpProxy(backend).app"),
        ("add_tool", "app.tool()(fn)"),
        ("remove_tool", "app.catalog.unregister_tool(name)"),
    ],
)
def test_fastmcp_names_on_an_app_say_mcpkits(name: str, said: str):
    """They were a bare "no attribute" error; the page's table maps each one."""
    app = McpServerApp("demo")
    with pytest.raises(AttributeError, match=re.escape(said)) as caught:
        getattr(app, name)
    assert caught.value.name == name
    assert f"{name}(" in PAGE.read_text(encoding="utf-8")
    assert getattr(app, "no_such_name", None) is None  # other names: as any object


def test_fastmcp_1s_mount_order_says_the_app_comes_first():
    app, other = McpServerApp("demo"), McpServerApp("other")
    with pytest.raises(TypeError, match=re.escape("the app comes first, mount(app, 'other')")):
        app.mount("other", other)  # type: ignore[arg-type]


async def test_a_lifespan_in_fastmcps_form_gets_the_app_and_its_context_reaches_tools():
    """``McpServerApp(lifespan=...)`` with an ``@asynccontextmanager`` taking the server, as
    FastMCP and the mcp SDK write it; and ``@app.lifespan`` taking the app."""
    from contextlib import asynccontextmanager

    from mcpkit import McpToolContext

    seen: list[str] = []

    @asynccontextmanager
    async def app_lifespan(server: McpServerApp):
        seen.append(f"start {server.name}")
        yield {"db": "connected"}
        seen.append("stop")

    app = McpServerApp("demo", lifespan=app_lifespan)

    @app.tool()
    def db_state(ctx: McpToolContext) -> str:
        return ctx.lifespan_context["db"]

    async with connected(app) as client:
        assert (await client.call_tool("db_state", {})).content[0].text == "connected"
    assert seen == ["start demo", "stop"]

    other = McpServerApp("other")

    @other.lifespan
    async def life(server):
        seen.append(f"generator {server.name}")
        yield

    async with other.running():
        assert seen[-1] == "generator other"


async def test_a_lifespan_that_yields_nothing_usable_says_how_to_write_it():
    def not_a_generator():
        return 42

    app = McpServerApp("demo", lifespan=not_a_generator)
    with pytest.raises(TypeError, match="not an async generator or an async context manager"):
        await app.start()
