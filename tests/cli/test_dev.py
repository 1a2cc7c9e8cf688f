"""``mcpkit dev``: the server restarts when its file changes (a tool added appears on the
next ``tools/list`` over HTTP), a broken save waits for the next one, the Inspector step
says in one line how to get npx when it is missing, Ctrl-C stops everything."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcpkit import McpClient
from mcpkit.cli._watch import PollingWatcher
from tests.environment import child_environment

SERVER = '''
from mcpkit import McpServerApp, mcp_tool


@mcp_tool
def first() -> str:
    """The first tool."""
    return "one"


app = McpServerApp(first, name="dev-test")
'''
ADDED_TOOL = '''

@app.tool()
def second() -> str:
    """Added while mcpkit dev runs."""
    return "two"
'''

#: Seconds to wait for one event of mcpkit dev (a start is a fresh interpreter).
EVENT_TIMEOUT = 20.0


class Dev:
    """A running ``mcpkit dev``: its stdout and stderr lines, read by threads into queues."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc
        self.out: queue.Queue[str] = queue.Queue()
        self.err: queue.Queue[str] = queue.Queue()
        self.err_lines: list[str] = []
        for stream, sink in ((proc.stdout, self.out), (proc.stderr, self.err)):
            threading.Thread(target=self._pump, args=(stream, sink), daemon=True).start()

    @staticmethod
    def _pump(stream: Any, sink: queue.Queue[str]) -> None:
        for line in stream:
            sink.put(line)

    def event(self, name: str) -> dict[str, Any]:
        """The next JSON event named ``name`` (the ones before it are skipped)."""
        deadline = time.monotonic() + EVENT_TIMEOUT
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self.out.get(timeout=left)
            except queue.Empty:
                break
            event = json.loads(line)  # every stdout line is JSON
            if event["event"] == name:
                return event
        pytest.fail(f"no {name!r} event from mcpkit dev; stderr: {self.stderr()}")

    def stderr_line(self, containing: str) -> str:
        deadline = time.monotonic() + EVENT_TIMEOUT
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self.err.get(timeout=left)
            except queue.Empty:
                break
            self.err_lines.append(line)
            if containing in line:
                return line
        pytest.fail(f"no stderr line with {containing!r}; stderr: {self.stderr()}")

    def stderr(self) -> str:
        while not self.err.empty():
            self.err_lines.append(self.err.get())
        return "".join(self.err_lines)


def dev_env(path: str | None = None, **extra: str) -> dict[str, str]:
    env = child_environment(**extra)
    if path is not None:
        env["PATH"] = path
    return env


@contextlib.contextmanager
def spawn_dev(folder: Path, *args: str, path: str | None = None, **env: str) -> Iterator[Dev]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcpkit", "dev", "server.py", *args],
        cwd=folder,
        env=dev_env(path, MCPKIT_PORT="0", **env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        yield Dev(proc)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "server.py").write_text(SERVER)
    return tmp_path


@pytest.fixture
def no_npx(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A PATH with nothing on it (the server runs by sys.executable's absolute path)."""
    return str(tmp_path_factory.mktemp("empty_path"))


def tool_names(url: str) -> list[str]:
    async def main() -> list[str]:
        async with McpClient.http(url) as client:
            return sorted(tool.name for tool in await client.list_tools())

    return asyncio.run(main())


def port_of(url: str) -> int:
    return int(url.rsplit(":", 1)[1].split("/", 1)[0])


def refused(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return False
    except OSError:
        return True


@pytest.mark.parametrize("watcher", ["events", "polling"])
def test_a_tool_added_to_the_file_appears_after_the_reload(project, watcher):
    extra = ["--polling"] if watcher == "polling" else []
    with spawn_dev(project, "--no-inspector", "--json", *extra) as dev:
        url = dev.event("serving")["url"]
        assert tool_names(url) == ["first"]
        with (project / "server.py").open("a") as file:
            file.write(ADDED_TOOL)
        assert dev.event("restarting")["changed"] == ["server.py"]
        assert dev.event("serving")["url"] == url  # the same port across restarts
        assert tool_names(url) == ["first", "second"]


def test_a_broken_save_waits_for_the_fix(project):
    with spawn_dev(project, "--no-inspector", "--json") as dev:
        url = dev.event("serving")["url"]
        (project / "server.py").write_text(SERVER + "\ndef broken(:\n")
        dev.event("restarting")
        assert dev.event("exited")["code"] == 1
        assert "SyntaxError" in dev.stderr_line("error: server.py")
        (project / "server.py").write_text(SERVER + ADDED_TOOL)
        assert dev.event("serving")["url"] == url
        assert tool_names(url) == ["first", "second"]


def test_without_npx_one_line_says_how_to_get_it_and_the_server_runs(project, no_npx):
    with spawn_dev(project, path=no_npx) as dev:  # the Inspector step on, as by default
        line = dev.stderr_line("Inspector")
        assert line.startswith("mcpkit dev: the MCP Inspector needs Node.js")
        assert "https://nodejs.org" in line and "--no-inspector" in line
        serving = next(item for item in dev.err_lines if "mcpkit dev: serving" in item)
        url = serving.rsplit(" at ", 1)[1].strip()
        assert tool_names(url) == ["first"]
        assert sum("Inspector" in item for item in dev.err_lines) == 1
        hints = [item for item in dev.stderr().splitlines() if "Inspector" in item]
        assert len(hints) == 1


def test_without_npx_in_json_mode_the_event_says_missing(project, no_npx):
    with spawn_dev(project, "--json", path=no_npx) as dev:
        dev.event("serving")
        assert dev.event("inspector")["status"] == "missing"


def test_dev_reads_its_settings_from_the_environment_and_flags_win(project):
    with spawn_dev(project, "--no-inspector", "--json", MCPKIT_ENDPOINT="/from-env") as dev:
        url = dev.event("serving")["url"]
        assert url.endswith("/from-env") and tool_names(url) == ["first"]
    with spawn_dev(
        project, "--no-inspector", "--json", "--endpoint", "/flag", MCPKIT_ENDPOINT="/env"
    ) as dev:
        assert dev.event("serving")["url"].endswith("/flag")


def test_ctrl_c_stops_the_server_and_exits_0(project):
    with spawn_dev(project, "--no-inspector", "--json") as dev:
        port = port_of(dev.event("serving")["url"])
        assert not refused(port)
        dev.proc.send_signal(signal.SIGINT)
        assert dev.proc.wait(timeout=20) == 0
        assert refused(port)


def test_a_missing_file_is_one_error_line(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "mcpkit", "dev", "nosuch.py", "--no-inspector"],
        cwd=tmp_path,
        env=dev_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert done.stderr.splitlines()[0] == "error: no such file: nosuch.py"
    assert len(done.stderr.splitlines()) == 2


def test_the_polling_watcher_sees_edits_additions_and_removals(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "notes.txt").write_text("not code\n")
    cache = tmp_path / "__pycache__"
    cache.mkdir()
    watcher = PollingWatcher([tmp_path], interval=0.01)
    assert watcher.wait(0.05) == set()
    (tmp_path / "notes.txt").write_text("changed, but not code\n")
    (cache / "b.py").write_text("ignored\n")
    assert watcher.wait(0.05) == set()
    os.utime(tmp_path / "a.py", ns=(1, 1))
    assert watcher.wait(1) == {str(tmp_path / "a.py")}
    (tmp_path / "c.py").write_text("y = 2\n")
    assert watcher.wait(1) == {str(tmp_path / "c.py")}
    (tmp_path / "c.py").unlink()
    assert watcher.wait(1) == {str(tmp_path / "c.py")}


# --------------------------------------------------------------------------- the Inspector's pin


def fake_tools(folder: Path, node_version: str, record: Path | None = None) -> str:
    """A PATH holding a ``node`` that prints ``node_version`` and, with ``record``, an ``npx``
    that writes its arguments there (one a line) and exits."""
    folder.mkdir(exist_ok=True)
    scripts = {"node": f"#!/bin/sh\necho {node_version}\n"}
    if record is not None:
        scripts["npx"] = f'#!/bin/sh\nfor arg in "$@"; do echo "$arg"; done > {record}\n'
    for name, text in scripts.items():
        (folder / name).write_text(text)
        (folder / name).chmod(0o755)
    return str(folder)


def test_a_node_older_than_the_inspector_needs_is_refused_in_one_line(project, tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "mcpkit", "dev", "server.py"],
        cwd=project,
        env=dev_env(fake_tools(tmp_path / "bin", "v20.11.1")),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "error: mcpkit dev needs Node >= 22.7.5 (found v20.11.1); install a newer one from"
        " https://nodejs.org, or pass --no-inspector"
    ]
    assert done.stdout == ""


def test_without_the_inspector_an_old_node_does_not_matter(project, tmp_path):
    path = fake_tools(tmp_path / "bin", "v18.0.0")
    with spawn_dev(project, "--no-inspector", "--json", path=path) as dev:
        assert tool_names(dev.event("serving")["url"]) == ["first"]


def test_npx_runs_the_pinned_inspector_against_the_server(project, tmp_path):
    record = tmp_path / "npx-arguments"
    with spawn_dev(project, "--json", path=fake_tools(tmp_path / "bin", "v22.7.5", record)) as dev:
        url = dev.event("serving")["url"]
        assert dev.event("inspector")["status"] == "started"
        deadline = time.monotonic() + EVENT_TIMEOUT
        # the script writes its six arguments a line at a time: wait for the last one
        while not record.exists() or record.read_text().count("\n") < 6:
            assert time.monotonic() < deadline, "npx never ran"
            time.sleep(0.05)
    assert record.read_text().splitlines() == [
        "-y",
        "@modelcontextprotocol/inspector@0.22.0",
        "--transport",
        "streamable-http",
        "--server-url",
        url,
    ]


def test_the_pin_is_an_exact_version():
    from mcpkit.cli._dev import INSPECTOR_VERSION, inspector_command

    assert all(part.isdigit() for part in INSPECTOR_VERSION.split("."))
    command = inspector_command("npx", "http://127.0.0.1:1/mcp")
    assert command[2] == f"@modelcontextprotocol/inspector@{INSPECTOR_VERSION}"
