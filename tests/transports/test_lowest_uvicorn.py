"""The lowest uvicorn pyproject allows serves an mcpkit app: ``uvicorn server:app`` and
``mcpkit run -t http``, each in a process of its own on a real socket, answer ``initialize``
with nothing warned, and ``mcpkit run``'s header bound (the watch around uvicorn's protocol)
answers 431 there as on the newest uvicorn.

The floor is read from pyproject; when this environment has another uvicorn (the suite's
venv has the newest), the floor release is installed beside the test (``pip --target``) and
put first on the server's path."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import textwrap
import tomllib
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import uvicorn

from mcpkit.transports.http import StreamableHttpServerOptions
from tests.http_server import POST_HEADERS
from tests.ports import announced_server
from tests.wire import initialize_request

ROOT = Path(__file__).parents[2]
SERVER = """
    from mcpkit import McpServerApp, mcp_tool
    from mcpkit.transports.http import create_asgi_app

    @mcp_tool
    def add(a: int, b: int) -> int:
        return a + b

    server = McpServerApp(add)
    app = create_asgi_app(server)
"""


def uvicorn_floor() -> str:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    for requirement in project["dependencies"]:
        found = re.fullmatch(r"uvicorn>=([0-9.]+)", requirement.replace(" ", ""))
        if found:
            return found.group(1)
    raise AssertionError("pyproject names no uvicorn floor")


@pytest.fixture(scope="module")
def floor_path(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """(the floor release, a PYTHONPATH that makes it the one imported)."""
    floor = uvicorn_floor()
    if uvicorn.__version__.split(".")[:2] == floor.split(".")[:2]:
        yield floor, ""
        return
    target = tmp_path_factory.mktemp("uvicorn-floor")
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps"]
        + ["--disable-pip-version-check", "--target", str(target), f"uvicorn=={floor}"],
        check=True,
        timeout=240,
    )
    yield floor, str(target)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("server")
    (path / "server.py").write_text(textwrap.dedent(SERVER))
    return path


STARTS = {
    "uvicorn server:app": ["-m", "uvicorn", "server:app"],
    "mcpkit run -t http": ["-m", "mcpkit", "run", "server.py:server", "-t", "http"],
}


def too_large_headers(port: int) -> bytes:
    """What the server answers a request whose headers pass the default ``max_header_bytes``."""
    bound = StreamableHttpServerOptions().max_header_bytes
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * (bound + 100))
        try:
            return sock.recv(100)
        except (ConnectionError, TimeoutError):
            return b""


@pytest.mark.parametrize("start", list(STARTS))
def test_the_lowest_allowed_uvicorn_answers_initialize(start, floor_path, folder):
    floor, path = floor_path
    command = [sys.executable, *STARTS[start], "--port", "0"]
    if start.startswith("uvicorn"):
        command += ["--app-dir", str(folder), "--log-level", "info"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (path, str(ROOT)) if p)}
    env.pop("MCPKIT_TRANSPORT", None)
    with announced_server(command, cwd=folder, env=env) as served:
        version = subprocess.run(
            [sys.executable, "-c", "import uvicorn; print(uvicorn.__version__)"],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        assert version.split(".")[:2] == floor.split(".")[:2]
        answer = httpx.post(
            f"http://127.0.0.1:{served.port}/mcp",
            json=initialize_request(),
            headers=POST_HEADERS,
            timeout=10,
        )
        if start.startswith("mcpkit"):
            assert too_large_headers(served.port).startswith(b"HTTP/1.1 431 ")
    assert answer.status_code == 200, answer.text
    assert answer.json()["result"]["serverInfo"]["name"]
    assert "WARNING" not in served.output()
