"""``FILE[:OBJECT]`` targets: what ``mcpkit run`` finds in a user's file."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from mcpkit.cli._loader import AppNotFoundError, load_app

FUNCTIONS_ONLY = """
    from mcpkit import mcp_prompt, mcp_resource, mcp_tool
    from helpers import shout  # a decorated function imported from elsewhere is not served twice

    @mcp_tool
    def add(a: int, b: int) -> int:
        return a + b

    @mcp_resource("note://hello")
    def hello() -> str:
        return "hi"

    @mcp_prompt
    def greet(name: str) -> str:
        return f"Hello {name}"

    def not_served() -> None: ...
"""

HELPERS = """
    from mcpkit import mcp_tool

    @mcp_tool
    def shout(text: str) -> str:
        return text.upper()
"""

CLASS_AND_FUNCTION = """
    from mcpkit import mcp_server, mcp_tool

    @mcp_server(name="mixed")
    class Weather:
        @mcp_tool
        def forecast(self, city: str) -> str:
            return f"sun in {city}"

    @mcp_tool
    def add(a: int, b: int) -> int:
        return a + b
"""


def write(folder: Path, name: str, text: str) -> str:
    path = folder / name
    path.write_text(textwrap.dedent(text))
    return str(path)


async def test_module_level_functions_alone_are_a_server(tmp_path, connect):
    write(tmp_path, "helpers.py", HELPERS)
    app = load_app(write(tmp_path, "functions_only.py", FUNCTIONS_ONLY))
    async with connect(app) as client:
        assert [tool.name for tool in await client.list_tools()] == ["add"]
        assert (await client.call_tool("add", {"a": 2, "b": 3})).structured_content == {"result": 5}
        assert [r.uri for r in await client.list_resources()] == ["note://hello"]
        assert [p.name for p in await client.list_prompts()] == ["greet"]


async def test_functions_are_served_beside_the_files_server_classes(tmp_path, connect):
    app = load_app(write(tmp_path, "mixed.py", CLASS_AND_FUNCTION))
    async with connect(app) as client:
        assert sorted(tool.name for tool in await client.list_tools()) == ["add", "forecast"]


def test_a_file_with_nothing_to_serve_names_every_kind_it_looks_for(tmp_path):
    with pytest.raises(AppNotFoundError) as caught:
        load_app(write(tmp_path, "empty.py", "def plain() -> None: ...\n"))
    assert "@mcp_server class" in caught.value.message
    assert "@mcp_tool" in caught.value.message


ASGI_ONLY = """
    from mcpkit import McpServerApp
    from mcpkit.transports.http import create_asgi_app

    tools = McpServerApp(name="wrapped")
    asgi = create_asgi_app(tools)  # the same server twice: one target
"""
WRAPPED = (
    ASGI_ONLY
    + """
    from mcpkit.proxy import McpProxy

    proxy = McpProxy(["python", "backend.py"], name="proxied")
"""
)

HUB = f"""{WRAPPED}
    hub = McpServerApp(name="hub")
    hub.mount(tools, "tools")
    hub.mount(proxy.app, "remote")
"""


def test_a_proxy_or_an_asgi_app_in_the_file_is_the_app_it_serves(tmp_path):
    """As docs/proxy.md builds them: ``mcpkit run proxy.py:proxy`` said "neither an
    McpServerApp nor an @mcp_server class", and ``:asgi`` called the ASGI app with no
    arguments (a TypeError about ``scope``, ``receive`` and ``send``)."""
    path = write(tmp_path, "wrapped.py", WRAPPED)
    assert load_app(f"{path}:proxy").name == "proxied"
    assert load_app(f"{path}:asgi").name == "wrapped"
    with pytest.raises(AppNotFoundError, match="more than one server") as caught:
        load_app(path)
    assert set(caught.value.candidates) == {"tools", "asgi", "proxy"}
    assert load_app(write(tmp_path, "asgi_only.py", ASGI_ONLY)).name == "wrapped"
    assert load_app(write(tmp_path, "hub.py", HUB)).name == "hub"  # what it mounts is in it


# --------------------------------------------------------------------------- unserved decorated


ORPHAN = """
    from mcpkit import McpServerApp, mcp_server, mcp_tool

    app = McpServerApp(name="orph")

    @mcp_tool
    def hello() -> str:
        return "hi"

    @mcp_server()
    class Forgotten:
        @mcp_tool
        def wave(self) -> str:
            return "o/"
"""

ALL_SERVED = """
    from mcpkit import McpServerApp, mcp_prompt, mcp_resource, mcp_server, mcp_tool

    @mcp_tool
    def passed(a: int) -> int:
        return a

    @mcp_resource("note://hello")
    def note() -> str:
        return "hi"

    @mcp_server()
    class Weather:
        @mcp_tool
        def forecast(self, city: str) -> str:
            return city

    @mcp_prompt
    def elsewhere(name: str) -> str:
        return name

    app = McpServerApp(passed, note, Weather, name="served")
    other = McpServerApp(elsewhere, name="other")  # served by the file's other app

    @app.tool()
    def registered(b: int) -> int:
        return b
"""


def test_decorated_functions_and_classes_the_app_does_not_serve_are_warned_of(tmp_path, capsys):
    path = write(tmp_path, "orphan.py", ORPHAN)
    for target in (path, f"{path}:app"):
        load_app(target)
        assert capsys.readouterr().err.splitlines() == [
            "warning: hello is decorated with @mcp_tool but not served by the app; pass it to"
            " McpServerApp(hello, ...) or decorate it with @app.tool()",
            "warning: Forgotten is decorated with @mcp_server but not served by the app; pass"
            " it to McpServerApp(Forgotten, ...)",
        ]


def test_what_an_app_serves_is_not_warned_of(tmp_path, capsys):
    for target in (write(tmp_path, "served.py", ALL_SERVED), f"{tmp_path / 'served.py'}:app"):
        load_app(target)
        assert capsys.readouterr().err == ""
    load_app(write(tmp_path, "mixed.py", CLASS_AND_FUNCTION))  # the app the loader builds
    assert capsys.readouterr().err == ""


TWO_CLASSES = """
    from mcpkit import mcp_server, mcp_tool

    @mcp_server(name="weather")
    class Weather:
        @mcp_tool
        def forecast(self, city: str) -> str:
            return city

    @mcp_server(name="news")
    class News:
        @mcp_tool
        def headlines(self) -> list[str]:
            return []
"""


def test_a_server_class_named_as_the_target_leaves_the_others_unwarned(tmp_path, capsys):
    load_app(f"{write(tmp_path, 'two_classes.py', TWO_CLASSES)}:Weather")
    assert capsys.readouterr().err == ""
