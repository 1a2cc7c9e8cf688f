"""``mcpkit run``: the banner comes after the bind, a taken port is one error line, Ctrl-C
exits quietly (0 once serving: a graceful shutdown; 130 while loading); ``--version``;
the short parse of ``run`` agrees with the typer command."""

from __future__ import annotations

import errno
import io
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from mcpkit.cli._errors import CliError
from mcpkit.cli._run import parse_fast, run_server
from mcpkit.cli._run_options import DEFAULTS, FLAGS, VALUE_OPTIONS

ROOT = Path(__file__).resolve().parents[2]
SERVER_CODE = """
from mcpkit import McpServerApp, mcp_server, mcp_tool


@mcp_server(name="cli-run-test")
class Adder:
    @mcp_tool()
    def add(self, a: int, b: int) -> int:
        \"\"\"Add two integers.\"\"\"
        return a + b


app = McpServerApp(Adder)
"""
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
}


def spawn(*args: str, module: str = "mcpkit") -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", module, *args],
        cwd=ROOT,
        text=True,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def finish(proc: subprocess.Popen[str], timeout: float = 20) -> tuple[str, str]:
    try:
        return proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.communicate()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("cli_run") / "adder.py"
    path.write_text(SERVER_CODE)
    return str(path)


def listening_socket() -> socket.socket:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    return sock


# --------------------------------------------------------------------------- --version


@pytest.mark.parametrize("module", ["mcpkit", "mcpkit.cli"])
def test_version(module):
    from mcpkit import __version__

    done = subprocess.run(
        [sys.executable, "-m", module, "--version"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"mcpkit {__version__}\n"


def test_help_lists_the_global_options_and_every_command():
    done = subprocess.run(
        [sys.executable, "-m", "mcpkit", "--help"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    for word in ("--version", "--debug", "run", "inspect", "call"):
        assert word in done.stdout
    for command in ("run", "inspect", "call"):
        done = subprocess.run(
            [sys.executable, "-m", "mcpkit", command, "--help"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0 and "Usage: mcpkit " + command in done.stdout, done.stderr


@pytest.mark.parametrize("command", ["run", "inspect", "call", "dev"])
def test_help_says_a_module_names_the_target_too(command):
    done = subprocess.run(
        [sys.executable, "-m", "mcpkit", command, "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert done.returncode == 0, done.stderr
    assert "MODULE:OBJECT" in done.stdout


# --------------------------------------------------------------------------- HTTP: bind, banner


def test_banner_comes_after_the_bind_and_names_the_bound_port(server):
    proc = spawn("run", server, "-t", "http", "--port", "0")
    try:
        banner = proc.stderr.readline()
        assert banner.startswith("mcpkit: serving cli-run-test on http://127.0.0.1:"), banner
        port = int(banner.rsplit(":", 1)[1].split("/", 1)[0])
        assert port != 0 and banner.endswith(f":{port}/mcp\n")
        # The banner is printed once connections are accepted: connecting cannot be refused.
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            pass
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = finish(proc)
    assert proc.returncode == 0, err  # a graceful shutdown (test_shutdown.py)
    assert "Traceback" not in err and err.strip() == ""


def test_taken_port_is_one_error_line_and_no_banner(server):
    with listening_socket() as taken:
        port = taken.getsockname()[1]
        proc = spawn("run", server, "-t", "http", "--port", str(port))
        out, err = finish(proc)
    assert proc.returncode == 1
    assert err.splitlines() == [
        f"error: port {port} on 127.0.0.1 is in use",
        f"hint: choose another with --port, or stop what listens on {port}",
    ]


def test_serve_http_raises_on_a_taken_port_before_serving(server):
    from mcpkit.cli._loader import load_app
    from mcpkit.transports.http import StreamableHttpServerOptions, serve_http

    with listening_socket() as taken:
        port = taken.getsockname()[1]
        with pytest.raises(OSError) as caught:
            serve_http(load_app(server), StreamableHttpServerOptions(host="127.0.0.1", port=port))
    assert caught.value.errno == errno.EADDRINUSE


# --------------------------------------------------------------------------- stdio, Ctrl-C


def test_stdio_answers_initialize_and_exits_0_at_end_of_input(server):
    proc = spawn("run", server)
    out, err = proc.communicate(json.dumps(INITIALIZE) + "\n", timeout=30)
    assert proc.returncode == 0, err
    assert json.loads(out.splitlines()[0])["result"]["serverInfo"]["name"] == "cli-run-test"


def test_a_print_while_the_file_is_imported_goes_to_stderr_not_to_the_client(tmp_path):
    noisy = tmp_path / "noisy.py"
    noisy.write_text('print("loading the noisy server")\n' + SERVER_CODE)
    proc = spawn("run", str(noisy))
    out, err = proc.communicate(json.dumps(INITIALIZE) + "\n", timeout=30)
    assert proc.returncode == 0, err
    assert json.loads(out.splitlines()[0])["result"]["serverInfo"]["name"] == "cli-run-test"
    assert "loading the noisy server" in err


class FakeStdin(io.StringIO):
    def __init__(self, terminal: bool) -> None:
        super().__init__()
        self.terminal = terminal

    def isatty(self) -> bool:
        return self.terminal


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The apps ``mcpkit run`` went on to serve (on stdio or HTTP), served by no one."""
    import mcpkit.transports._stdio
    import mcpkit.transports.http._server.process

    apps: list[Any] = []

    async def serve_stdio_as(app: Any, *args: Any, **kwargs: Any) -> None:
        apps.append(app)

    def serve_in_this_process(app: Any, *args: Any, **kwargs: Any) -> None:
        apps.append(app)

    monkeypatch.setattr(mcpkit.transports._stdio, "serve_stdio_as", serve_stdio_as)
    monkeypatch.setattr(
        mcpkit.transports.http._server.process, "serve_in_this_process", serve_in_this_process
    )
    return apps


@pytest.mark.parametrize("terminal", [True, False], ids=["terminal", "piped"])
def test_stdio_on_a_terminal_says_it_waits_for_a_client(
    server, served, monkeypatch, capsys, terminal
):
    monkeypatch.setattr(sys, "stdin", FakeStdin(terminal))
    assert run_server(server) == 0
    assert len(served) == 1
    said = "mcpkit: serving cli-run-test on stdio; waiting for a client (Ctrl-C to stop)\n"
    assert capsys.readouterr().err == (said if terminal else "")


def test_ws_without_a_websocket_library_is_refused_before_serving(server, served, monkeypatch):
    import importlib.util

    find_spec = importlib.util.find_spec

    def without_websockets(name: str, *args: Any) -> Any:
        return None if name in ("websockets", "wsproto") else find_spec(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", without_websockets)
    with pytest.raises(CliError) as caught:
        run_server(server, transport="ws", port=0)
    assert caught.value.message.startswith("the WebSocket transport needs a WebSocket library")
    assert caught.value.hint == "pip install 'mcpkit[ws]'"
    assert served == []


def test_ctrl_c_on_stdio_shuts_down_quietly_with_exit_0(server):
    proc = spawn("run", server)
    try:
        proc.stdin.write(json.dumps(INITIALIZE) + "\n")  # type: ignore[union-attr]
        proc.stdin.flush()  # type: ignore[union-attr]
        assert "result" in proc.stdout.readline()  # type: ignore[union-attr]
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = finish(proc)
    assert proc.returncode == 0  # served, then shut down gracefully (test_shutdown.py)
    assert err == ""


def test_ctrl_c_while_loading_exits_130_quietly(tmp_path):
    slow = tmp_path / "slow.py"
    slow.write_text(
        "import sys, time\nsys.stderr.write('loading\\n'); sys.stderr.flush()\ntime.sleep(30)\n"
    )
    proc = spawn("run", str(slow))
    try:
        assert proc.stderr.readline() == "loading\n"  # type: ignore[union-attr]
        time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = finish(proc)
    assert proc.returncode == 130
    assert err == ""


# --------------------------------------------------------------------------- the short parse


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["run", "a.py"], {}),
        (["--debug", "run", "a.py"], {}),
        (
            ["run", "a.py:app", "-t", "http", "--port", "8000"],
            {"target": "a.py:app", "transport": "http", "port": 8000},
        ),
        (
            ["run", "-thttp", "a.py", "--port=9", "--host=0.0.0.0"],
            {"transport": "http", "port": 9, "host": "0.0.0.0"},
        ),
        (
            ["run", "--transport", "sse", "--endpoint", "/x", "a.py"],
            {"transport": "sse", "endpoint": "/x"},
        ),
        (
            ["run", "a.py", "--stateless", "--redis-url", "redis://h:6379/0"],
            {"stateless": True, "redis_url": "redis://h:6379/0"},
        ),
        (["run", "a.py", "--stateless", "--no-stateless"], {"stateless": False}),
        (["run", "--", "-odd.py"], {"target": "-odd.py"}),
        (["run", "a.py", "--shutdown-grace", "1.5"], {"shutdown_grace": 1.5}),
        (["run", "a.py", "--shutdown-grace=0"], {"shutdown_grace": 0.0}),
    ],
)
def test_parse_fast_takes_plain_run_command_lines(argv, expected):
    assert parse_fast(argv) == {"target": "a.py", **DEFAULTS, **expected}


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["--version"],
        ["call", "a.py", "x"],
        ["run"],
        ["run", "--help"],
        ["run", "a.py", "-h"],
        ["run", "a.py", "b.py"],
        ["run", "a.py", "--port"],
        ["run", "a.py", "--port", "eighty"],
        ["run", "a.py", "--port", "-1"],
        ["run", "a.py", "--shutdown-grace", "soon"],
        ["run", "a.py", "--shutdown-grace", "-1"],
        ["run", "a.py", "--shutdown-grace", "nan"],
        ["run", "a.py", "-t", "pigeon"],
        ["run", "a.py", "-t=http"],
        ["run", "a.py", "--nosuch"],
        ["--nosuch", "run", "a.py"],
    ],
)
def test_parse_fast_leaves_everything_else_to_typer(argv):
    assert parse_fast(argv) is None


def test_parse_fast_knows_exactly_the_options_of_the_typer_run_command():
    import typer

    from mcpkit.cli._commands import app

    command = typer.main.get_command(app).commands["run"]  # type: ignore[attr-defined]
    options: set[str] = set()
    defaults = {}
    for param in command.params:
        if param.param_type_name == "option":
            options.update(param.opts, param.secondary_opts)
            defaults[param.name] = param.default
    assert options - {"--help"} == set(VALUE_OPTIONS) | set(FLAGS)
    assert {name: getattr(value, "value", value) for name, value in defaults.items()} == DEFAULTS
