"""``pip install mcpkit`` gives a working SDK: the wheel and the sdist build, the wheel
installs with no extras into a fresh virtual environment, and from there ``import mcpkit``,
the ``mcpkit`` command, stdio and Streamable HTTP serving and the client all work, while the
features of the extras say which extra to install.

Slow (a build and an install from the package index): select it with ``-m packaging``, or
leave it out with ``-m "not packaging"``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.ports import announced_server

pytestmark = [pytest.mark.packaging, pytest.mark.timeout(300)]

ROOT = Path(__file__).resolve().parents[2]
BIN = "Scripts" if os.name == "nt" else "bin"
# Top-level entries of the checkout that are tooling, not the package: never in the sdist.
NOT_IN_SDIST = {".ci", "bench", "dev", "tools", ".tools", ".venv", ".git", "build", "dist"}

SERVER = '''
from mcpkit import McpToolContext, mcp_server, mcp_tool


@mcp_server(name="packaged", version="1.0.0")
class Packaged:
    @mcp_tool()
    async def add(self, a: int, b: int, ctx: McpToolContext = None) -> int:
        """Add two numbers."""
        return a + b
'''

CLIENT = """
import asyncio
import sys

from mcpkit import HttpClientTransportOptions, McpClient, StdioClientTransportOptions


async def main(mode: str, target: str, extra: str) -> None:
    if mode == "stdio":
        client = McpClient.stdio(StdioClientTransportOptions(command=target, arguments=["run", extra]))
    else:
        client = McpClient.http(HttpClientTransportOptions(endpoint=target))
    async with asyncio.timeout(30):
        async with client:
            tools = [tool.name for tool in await client.list_tools()]
            result = await client.call_tool("add", {"a": 2, "b": 3})
    print(tools, result.content[0].text)


asyncio.run(main(*sys.argv[1:4]))
"""


def _env() -> dict[str, str]:
    """The environment for the fresh venv's processes: nothing pointing at the checkout."""
    env = {
        k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV"}
    }
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def _run(*args: str | Path, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [str(a) for a in args], cwd=cwd, env=_env(), capture_output=True, text=True, timeout=timeout
    )
    if done.returncode != 0:
        pytest.fail(
            f"{' '.join(map(str, args))} exited {done.returncode}\n"
            f"--- stdout\n{done.stdout[-4000:]}\n--- stderr\n{done.stderr[-4000:]}"
        )
    return done


@dataclass
class Built:
    wheel: Path
    sdist: Path


@dataclass
class Venv:
    root: Path
    python: Path
    mcpkit: Path
    work: Path  # a directory outside the checkout to run in

    def run_python(self, code: str, *args: str, timeout: float = 60) -> str:
        return _run(
            self.python, "-c", textwrap.dedent(code), *args, cwd=self.work, timeout=timeout
        ).stdout


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    """The sdist, and the wheel built from it (so the sdist is known to be complete)."""
    out = tmp_path_factory.mktemp("dist")
    _run(sys.executable, "-m", "build", "--outdir", out, ROOT, cwd=out, timeout=180)
    wheels, sdists = list(out.glob("mcpkit-*.whl")), list(out.glob("mcpkit-*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1, sorted(p.name for p in out.iterdir())
    return Built(wheels[0], sdists[0])


@pytest.fixture(scope="module")
def venv(built: Built, tmp_path_factory: pytest.TempPathFactory) -> Venv:
    """A fresh venv holding the wheel and its core dependencies, no extra."""
    root = tmp_path_factory.mktemp("venv")
    work = tmp_path_factory.mktemp("work")
    # No pip of its own (ensurepip is slow): this interpreter's pip installs into it.
    _run(sys.executable, "-m", "venv", "--without-pip", root, cwd=work)
    python = root / BIN / ("python.exe" if os.name == "nt" else "python")
    _run(
        sys.executable,
        "-m",
        "pip",
        "--python",
        python,
        "install",
        "--quiet",
        built.wheel,
        cwd=work,
        timeout=240,
    )
    return Venv(root, python, root / BIN / ("mcpkit.exe" if os.name == "nt" else "mcpkit"), work)


def _version_in_checkout() -> str:
    namespace: dict[str, str] = {}
    exec((ROOT / "src" / "mcpkit" / "_version.py").read_text(), namespace)
    return namespace["__version__"]


def test_import_with_core_only(venv: Venv, built: Built) -> None:
    version = _version_in_checkout()
    assert built.wheel.name.startswith(f"mcpkit-{version}-")
    out = venv.run_python(
        """
        import importlib.util, sys
        import mcpkit
        print(mcpkit.__file__)
        print(mcpkit.__version__)
        heavy = {"httpx", "joserfc", "uvicorn", "websockets", "redis", "pydantic"}
        print(sorted(heavy & {name.split(".")[0] for name in sys.modules}))
        print([name for name in ("websockets", "redis") if importlib.util.find_spec(name)])
        print(importlib.util.find_spec("httptools") is not None)
        import mcpkit.auth, mcpkit.client, mcpkit.server, mcpkit.stores, mcpkit.transports.http
        from mcpkit import McpClient, StreamableHttpServerOptions, create_asgi_app, mcp_server
        print("ok")
        """
    )
    location, installed_version, imported, extras, httptools, ok = out.split("\n")[:6]
    assert Path(location).is_relative_to(venv.root), location  # the wheel, not the checkout
    assert installed_version == version
    assert imported == "[]", "import mcpkit should load no HTTP, JOSE or optional library"
    # (pydantic is not checked: recent typer releases depend on it themselves)
    assert extras == "[]", "the fresh venv must hold neither websockets nor redis"
    if sys.implementation.name == "cpython":
        assert httptools == "True", "uvicorn's fast parser is a core dependency on CPython"
    assert ok == "ok"


def test_command_and_typing_marker(venv: Venv) -> None:
    done = _run(venv.mcpkit, "--help", cwd=venv.work)
    assert "run" in done.stdout
    version = venv.run_python("import mcpkit; print(mcpkit.__version__)").strip()
    assert _run(venv.mcpkit, "--version", cwd=venv.work).stdout.strip() == f"mcpkit {version}"
    assert (
        venv.run_python(
            "import importlib.resources; print(importlib.resources.files('mcpkit').joinpath('py.typed').is_file())"
        ).strip()
        == "True"
    )


def test_empty_extras_still_install(venv: Venv, built: Built) -> None:
    """``mcpkit[http]`` and ``mcpkit[auth]`` predate the core holding both: they stay valid."""
    done = _run(
        sys.executable,
        "-m",
        "pip",
        "--python",
        venv.python,
        "install",
        "--dry-run",
        f"{built.wheel}[http,auth]",
        cwd=venv.work,
    )
    assert "does not provide the extra" not in done.stdout + done.stderr


def test_stdio(venv: Venv) -> None:
    (venv.work / "server.py").write_text(SERVER)
    (venv.work / "client.py").write_text(CLIENT)
    out = _run(venv.python, "client.py", "stdio", venv.mcpkit, "server.py", cwd=venv.work).stdout
    assert out.strip() == "['add'] 5"


def test_streamable_http(venv: Venv) -> None:
    (venv.work / "server.py").write_text(SERVER)
    (venv.work / "client.py").write_text(CLIENT)
    command = [str(venv.mcpkit), "run", "server.py", "-t", "http", "--host", "127.0.0.1"]
    with announced_server(
        [*command, "--port", "0"], cwd=venv.work, env=_env(), stdout=subprocess.DEVNULL
    ) as served:
        out = _run(venv.python, "client.py", "http", served.url, "", cwd=venv.work).stdout
        assert out.strip() == "['add'] 5"


def test_extras_name_themselves(venv: Venv) -> None:
    out = venv.run_python(
        """
        import asyncio
        from mcpkit import McpClient
        from mcpkit.stores import RedisHub

        def extra_error(use):
            try:
                use()
            except ImportError as exc:
                assert isinstance(exc.__cause__, ImportError), repr(exc.__cause__)
                return str(exc)
            return "no ImportError"

        async def websocket():
            async with McpClient.websocket("ws://127.0.0.1:9/mcp"):
                pass

        print(extra_error(lambda: RedisHub("redis://127.0.0.1:9/0")))
        print(extra_error(lambda: asyncio.run(websocket())))
        print(extra_error(lambda: __import__("mcpkit.otel")))
        """
    )
    redis, websocket, otel = out.strip().split("\n")
    assert "pip install 'mcpkit[redis]'" in redis, redis
    assert "pip install 'mcpkit[ws]'" in websocket, websocket
    assert "pip install 'mcpkit[otel]'" in otel, otel


def test_sdist_holds_the_sources_only(built: Built) -> None:
    with tarfile.open(built.sdist) as sdist:
        names = sdist.getnames()
    top = {name.split("/")[1] for name in names if name.count("/") >= 1}
    assert not top & NOT_IN_SDIST, sorted(top & NOT_IN_SDIST)
    assert {"src", "tests", "README.md", "LICENSE", "CHANGELOG.md", "pyproject.toml"} <= top, (
        sorted(top)
    )
    assert not [name for name in names if "__pycache__" in name or name.endswith(".pyc")]
    assert any(name.endswith("src/mcpkit/py.typed") for name in names)
