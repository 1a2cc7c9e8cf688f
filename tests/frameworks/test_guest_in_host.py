"""An mcpkit app is a guest in its host's process: mounted in FastAPI and started through the
host's lifespan, or served as the top-level app by the host's uvicorn, it answers calls and
leaves the host's garbage collector unfrozen and uvicorn's HTTP protocol as uvicorn chose it.
A program of the user's serving an app (``serve_stdio``, ``run_http_server``, ``serve_http``,
``app.run()``) keeps its collector unfrozen and uvicorn's protocol, and no option of the
library's lets it ask otherwise; ``mcpkit run`` and ``mcpkit proxy``, which are the program,
freeze the collector after start-up unless ``MCPKIT_FREEZE_GC_AT_STARTUP`` is false, and
bound request headers. The rest of what a host owns in its process, item by item, is
checked by ``tests/transports/test_host_process_state.py``."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import inspect
import re
import shlex
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
import uvicorn
from fastapi import FastAPI

import mcpkit.transports.http
from mcpkit import McpClient, McpServerApp, StdioClientTransportOptions, mcp_tool, serve_stdio
from mcpkit.transports.http import McpAsgiApp, StreamableHttpServerOptions, create_asgi_app
from tests.environment import child_environment
from tests.http_server import POST_HEADERS, bound_socket
from tests.ports import Announced, launch, on_a_free_port
from tests.wire import initialize_request


@mcp_tool
def add(a: int, b: int) -> int:
    return a + b


def freeze_count() -> int:
    """The collector's freeze count once it has collected: CPython 3.12 moves objects of its
    own there as it collects (375 of them on 3.12.1), so a count is compared with the one
    the test began with, never with 0."""
    gc.collect()
    return gc.get_freeze_count()


@pytest.fixture(autouse=True)
def at_start() -> Iterator[int]:
    """The freeze count the test begins with, nothing of an earlier test's left frozen."""
    gc.unfreeze()
    yield freeze_count()
    gc.unfreeze()


@contextlib.asynccontextmanager
async def served(asgi: object) -> AsyncIterator[tuple[str, uvicorn.Server]]:
    """``asgi`` served by uvicorn as a host serves it (its defaults: ``--http auto``, the
    lifespan on), on 127.0.0.1."""
    sock = bound_socket()
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(asgi, host="127.0.0.1", port=port, log_level="warning"))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        async with asyncio.timeout(10):
            while not server.started:
                await asyncio.sleep(0.01)
        yield f"http://127.0.0.1:{port}", server
    finally:
        server.should_exit = True
        async with asyncio.timeout(10):
            await asyncio.gather(task, return_exceptions=True)


async def initialize(url: str) -> None:
    async with httpx.AsyncClient(timeout=10) as http:
        answer = await http.post(url, json=initialize_request(), headers=POST_HEADERS)
    assert answer.status_code == 200, answer.text
    assert answer.json()["result"]["serverInfo"]["name"]


async def test_a_fastapi_host_keeps_its_collector_and_its_protocol(at_start):
    mcp = create_asgi_app(McpServerApp(add))
    api = FastAPI(lifespan=mcp.lifespan)
    api.mount("/tools", mcp)
    async with served(api) as (base, server):
        protocol = server.config.http_protocol_class
        await initialize(f"{base}/tools/mcp")
        assert freeze_count() == at_start
        assert server.config.http_protocol_class is protocol
        assert protocol.__module__.startswith("uvicorn.")


async def test_served_by_the_hosts_uvicorn_it_changes_nothing(at_start):
    async with served(create_asgi_app(McpServerApp(add))) as (base, server):
        await initialize(f"{base}/mcp")
        assert freeze_count() == at_start
        assert server.config.http_protocol_class.__module__.startswith("uvicorn.")


async def test_an_app_a_host_starts_never_freezes_the_collector(at_start):
    asgi = McpAsgiApp(McpServerApp(add), StreamableHttpServerOptions())
    await asgi.startup()
    try:
        assert freeze_count() == at_start
    finally:
        await asgi.shutdown()


def test_no_option_of_the_library_freezes_the_collector():
    """The freeze is the program's to choose: neither ``serve_stdio`` nor the HTTP options
    take it (``mcpkit run`` hands it to the serving code by a way of its own)."""
    assert "freeze_gc" not in inspect.signature(serve_stdio).parameters
    with pytest.raises(TypeError):
        StreamableHttpServerOptions(freeze_gc_at_startup=True)  # type: ignore[call-arg]
    assert not hasattr(mcpkit.transports.http, "uvicorn_http_protocol")


def test_importing_and_making_the_app_loads_nothing_of_uvicorns_internals():
    """The header watch holds uvicorn's protocol classes: only ``mcpkit run`` and ``mcpkit
    proxy`` load it, never an app a host serves."""
    code = (
        "import sys\n"
        "from mcpkit import McpServerApp\n"
        "from mcpkit.transports.http import create_asgi_app\n"
        "create_asgi_app(McpServerApp('x'))\n"
        "print([m for m in sys.modules if m.startswith('uvicorn.protocols')"
        " or m.endswith('._http_cycle')])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


#: A program of the user's serving an app with a ``frozen`` tool (what the collector's freeze
#: count grew by since the program began, read while serving: CPython 3.12 starts some objects
#: frozen already): ``python host.py HOW [PORT]``; ``mcpkit run host.py`` serves ``app``.
#: Over HTTP it says where it serves once it does (``app.run`` as mcpkit words it).
HOST_PROGRAM = """
import gc
AT_START = gc.get_freeze_count()
import asyncio, sys
from mcpkit import McpServerApp, mcp_tool, serve_stdio
from mcpkit.transports.http import StreamableHttpServerOptions, run_http_server, serve_http

@mcp_tool
def frozen() -> int:
    return gc.get_freeze_count() - AT_START

app = McpServerApp(frozen)

if __name__ == "__main__":
    how = sys.argv[1]
    port = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    options = StreamableHttpServerOptions(host="127.0.0.1", port=port, stateless=True)

    def started():
        print(f"host: serving on http://127.0.0.1:{port}/mcp", file=sys.stderr, flush=True)

    if how == "serve_stdio":
        asyncio.run(serve_stdio(app))
    elif how == "app.run":
        app.run()
    elif how == "app.run-http":
        app.run("http", host="127.0.0.1", port=port, stateless=True)
    elif how == "serve_http":
        serve_http(app, options, on_started=started)
    else:
        run_http_server(app, options, on_started=started)
"""
#: The line of HOST_PROGRAM (or of app.run in it) once it serves over HTTP.
HOST_BANNER = re.compile(r"serving .*on (?P<url>http://\S+)")
TOOLS_CALL = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "tools/call",
    "params": {"name": "frozen", "arguments": {}},
}


@pytest.fixture
def host_program(tmp_path):
    path = tmp_path / "host.py"
    path.write_text(HOST_PROGRAM)
    return path


def environment(freeze_setting: str = "") -> dict[str, str]:
    """This process's environment without ``MCPKIT_*`` variables, and with
    ``MCPKIT_FREEZE_GC_AT_STARTUP=freeze_setting`` when it is given."""
    env = child_environment()
    if freeze_setting:
        env["MCPKIT_FREEZE_GC_AT_STARTUP"] = freeze_setting
    return env


def frozen_over_http(url: str) -> int:
    """The ``frozen`` tool's answer from the stateless server at ``url``."""
    with httpx.Client(timeout=10) as http:
        answer = http.post(url, json=TOOLS_CALL, headers=POST_HEADERS)
    assert answer.status_code == 200, answer.text
    return answer.json()["result"]["structuredContent"]["result"]


async def frozen_over_stdio(arguments: list[str], env: dict[str, str], **client: Any) -> int:
    """The ``frozen`` tool's answer from ``python ARGUMENTS``, a stdio server (or proxy)."""
    options = StdioClientTransportOptions(
        command=sys.executable,
        arguments=arguments,
        inherit_environment_variables=False,
        environment_variables=env,
    )
    async with asyncio.timeout(30), McpClient.stdio(options, **client) as connected:
        return (await connected.call_tool("frozen")).structured_content["result"]


@pytest.mark.parametrize("how", ["serve_stdio", "app.run"])
async def test_a_program_of_the_users_serving_stdio_keeps_its_collector(host_program, how):
    """``serve_stdio(app)`` and ``app.run()`` live in the user's program: they leave its
    collector as it is, even with ``MCPKIT_FREEZE_GC_AT_STARTUP`` set (a setting of the
    ``mcpkit`` command's)."""
    count = await frozen_over_stdio([str(host_program), how], environment("1"))
    assert count == 0


#: Request headers past ``max_header_bytes``'s default (64 KiB): ``mcpkit run`` answers 431.
LARGE_HEADERS = {**POST_HEADERS, "x-large": "a" * (80 * 1024)}


def answer_to_large_headers(url: str) -> int:
    with httpx.Client(timeout=10) as http:
        return http.post(url, json=TOOLS_CALL, headers=LARGE_HEADERS).status_code


@pytest.mark.parametrize("how", ["run_http_server", "serve_http", "app.run-http"])
def test_a_program_of_the_users_serving_http_keeps_its_collector_and_uvicorns_protocol(
    host_program, how
):
    """``run_http_server``, ``serve_http`` and ``app.run("http")`` live in the user's
    program: they leave its collector as it is, and uvicorn serves with the protocol it
    picks (no header watch: large headers reach the app, as under ``uvicorn app:app``)."""

    # serve_http and run_http_server cannot name a port they were given as 0: one chosen
    # here, another should it be taken meanwhile
    def start(port: int) -> Announced:
        command = [sys.executable, str(host_program), how, str(port)]
        return launch(command, banner=HOST_BANNER, env=environment("1"))

    served = on_a_free_port(start)
    try:
        count = frozen_over_http(served.url)
        status = answer_to_large_headers(served.url)
    finally:
        served.stop()
    assert count == 0
    assert status == 200


@pytest.mark.parametrize(
    "setting", ["", "false"], ids=["default", "MCPKIT_FREEZE_GC_AT_STARTUP=false"]
)
def test_mcpkit_run_over_http_freezes_the_collector_unless_told_not_to(host_program, setting):
    """``mcpkit run -t http`` is the program: it freezes what start-up left alive, unless
    ``freeze_gc_at_startup`` is false."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcpkit", "run", "host.py", "-t", "http", "--port", "0"]
        + ["--stateless"],
        cwd=host_program.parent,
        env=environment(setting),
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        banner = proc.stderr.readline()
        assert banner.startswith("mcpkit: serving"), banner
        url = banner.split(" on ", 1)[1].strip()
        count = frozen_over_http(url)
        status = answer_to_large_headers(url)
    finally:
        proc.terminate()
        proc.communicate(timeout=20)
    assert (count > 0) is (setting == "")
    assert status == 431  # the program bounds request headers


@pytest.mark.parametrize("setting", ["", "0"], ids=["default", "MCPKIT_FREEZE_GC_AT_STARTUP=0"])
async def test_mcpkit_run_on_stdio_freezes_the_collector_unless_told_not_to(host_program, setting):
    """``mcpkit run`` on stdio is the program too: the same freeze, the same setting."""
    count = await frozen_over_stdio(
        ["-m", "mcpkit", "run", str(host_program)], environment(setting)
    )
    assert (count > 0) is (setting == ""), count


#: ``python -c COUNTED REPORT mcpkit-arguments...``: the ``mcpkit`` command, writing what its
#: process's freeze count grew by to the file REPORT as it exits.
COUNTED = (
    "import atexit, gc, runpy, sys\n"
    "at_start = gc.get_freeze_count()\n"
    "report = sys.argv.pop(1)\n"
    "atexit.register(lambda: open(report, 'w').write(str(gc.get_freeze_count() - at_start)))\n"
    "sys.argv[0] = 'mcpkit'\n"
    "runpy.run_module('mcpkit', run_name='__main__')\n"
)


@pytest.mark.parametrize("setting", ["", "0"], ids=["default", "MCPKIT_FREEZE_GC_AT_STARTUP=0"])
async def test_mcpkit_proxy_freezes_its_collector_and_leaves_its_backends(
    host_program, tmp_path, setting
):
    """``mcpkit proxy`` is the program: it freezes its own collector unless told not to; its
    backend, a program of the user's calling ``app.run()``, keeps its own unfrozen."""
    report = tmp_path / "proxy-freeze-count"
    backend = shlex.join([sys.executable, str(host_program), "app.run"])
    arguments = ["-c", COUNTED, str(report), "proxy", "--transport", "stdio", backend]
    backend_count = await frozen_over_stdio(arguments, environment(setting), protocol_mode="legacy")
    assert backend_count == 0
    async with asyncio.timeout(10):
        while not report.exists() or not report.read_text():
            await asyncio.sleep(0.05)
    assert (int(report.read_text()) > 0) is (setting == "")


def test_serve_stdio_gives_the_program_its_stdout_and_signals_back(tmp_path):
    """While it serves, what the program prints goes to stderr (the protocol owns stdout);
    once it returns, ``sys.stdout`` and the SIGINT/SIGTERM handlers are the program's again."""
    program = tmp_path / "program.py"
    program.write_text(
        "import asyncio, signal, sys\n"
        "from mcpkit import McpServerApp, serve_stdio\n"
        "before = sys.stdout, signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)\n"
        "asyncio.run(serve_stdio(McpServerApp('quiet')))\n"
        "after = sys.stdout, signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)\n"
        "print('same' if after == before else f'changed: {before} -> {after}')\n"
    )
    done = subprocess.run(
        [sys.executable, str(program)],
        input=b"",  # no request: the input ends at once, and so does serving
        capture_output=True,
        timeout=30,
        env=environment(),
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == b"same\n", (done.stdout, done.stderr)
