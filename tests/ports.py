"""Where the tests' servers listen, safely when tests run side by side (pytest-xdist).

A port probed free and closed again is anyone's until a server binds it, so no test does
that. A program that can be told port 0 is started so (``announced_server``) and read where
it listens from the line it writes once it does, its banner: mcpkit's ``mcpkit: serving
NAME on URL`` (``proxying`` for ``mcpkit proxy``, or ``--json``'s ``"url"``), uvicorn's
``Uvicorn running on URL``. A program that cannot name its port (redis-server, nginx, a
program that needs its own URL before it starts) gets one chosen here, and another when it
fails because the address is in use (``on_a_free_port``). A URL where nothing may listen is
``refused_port``'s, bound for the test's duration and never listening.

Standard library only: tests/docs/_snippet_fixtures.py imports it before anything else."""

from __future__ import annotations

import collections
import contextlib
import re
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from typing import IO, Any, Literal, TypeVar
from urllib.parse import urlsplit

T = TypeVar("T")

#: The lines that say where a server listens; the URL is the group ``url``.
BANNER = re.compile(
    r'(?:mcpkit: (?:serving|proxying) .* on |Uvicorn running on |"url": ")(?P<url>\w+://[^\s"]+)'
)
#: What a program says when its port is taken: the OS's words, Node's, mcpkit run's.
ADDRESS_IN_USE = re.compile(r"address already in use|EADDRINUSE|port \d+ on \S+ is in use", re.I)
#: Seconds a program gets to write its banner, and to stop when asked.
START_TIMEOUT = 30.0
STOP_TIMEOUT = 10.0
#: Lines of a program's output kept (its latest), and characters a failure shows.
OUTPUT_LINES_KEPT = 2000
OUTPUT_SHOWN = 4000
#: Ports tried by ``on_a_free_port`` before giving up.
ATTEMPTS = 5


class PortTaken(RuntimeError):
    """The program could not listen: its port was taken meanwhile."""


class Announced:
    """A started program, the URL its banner named (``""`` for a banner without one), and
    what it has written so far on the stream read."""

    def __init__(
        self, process: subprocess.Popen[bytes], stream: IO[bytes], banner: re.Pattern[str]
    ) -> None:
        self.process = process
        self.url = ""
        self._banner = banner
        self._lines: collections.deque[str] = collections.deque(maxlen=OUTPUT_LINES_KEPT)
        self._announced = threading.Event()
        self._ended = threading.Event()
        self._reader = threading.Thread(target=self._read, args=(stream,), daemon=True)

    @property
    def port(self) -> int:
        return urlsplit(self.url).port or 0

    def output(self) -> str:
        return "".join(self._lines)

    def stop(self) -> None:
        """SIGTERM, then SIGKILL should it take too long; idempotent."""
        stop_process(self.process)
        self._ended.wait(STOP_TIMEOUT)

    def _read(self, stream: IO[bytes]) -> None:
        try:
            for raw in stream:
                line = raw.decode("utf-8", "replace")
                self._lines.append(line)
                if not self._announced.is_set() and (found := self._banner.search(line)):
                    self.url = found.groupdict().get("url") or ""
                    self._announced.set()
        finally:
            stream.close()
            self._ended.set()

    def _wait(self, timeout: float, command: list[str]) -> None:
        """Until the banner; stopped, and the reason raised, if the program ends or takes
        longer than ``timeout`` seconds first."""
        self._reader.start()
        deadline = time.monotonic() + timeout
        while not self._announced.wait(0.05):
            if self._ended.is_set() or time.monotonic() > deadline:
                break
        if self._announced.is_set():
            return
        ended = self._ended.is_set()
        self.stop()
        said = self.output()[-OUTPUT_SHOWN:]
        how = f"exited with {self.process.returncode}" if ended else "wrote no banner"
        message = f"{' '.join(command)} {how} within {timeout:.0f} s:\n{said}"
        raise (PortTaken if ADDRESS_IN_USE.search(said) else RuntimeError)(message)


def stop_process(process: subprocess.Popen[Any], timeout: float = STOP_TIMEOUT) -> None:
    """SIGTERM, then SIGKILL should it take longer than ``timeout`` seconds; reaped."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout)


def launch(
    command: list[str],
    *,
    banner: re.Pattern[str] = BANNER,
    stream: Literal["stderr", "stdout", "both"] = "stderr",
    timeout: float = START_TIMEOUT,
    **popen: Any,
) -> Announced:
    """Start ``command`` and wait (``timeout`` seconds at most) for a line of ``stream``
    matching ``banner``. ``RuntimeError`` with the program's output if none comes, a
    ``PortTaken`` when that output says the address is in use. The caller stops it."""
    if stream == "both":
        popen.update(stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    else:
        popen[stream] = subprocess.PIPE
    process = subprocess.Popen(command, **popen)
    pipe = process.stdout if stream != "stderr" else process.stderr
    assert pipe is not None
    started = Announced(process, pipe, banner)
    started._wait(timeout, command)
    return started


@contextlib.contextmanager
def announced_server(command: list[str], **options: Any) -> Iterator[Announced]:
    """``launch(command, **options)`` for the block; stopped when it ends."""
    started = launch(command, **options)
    try:
        yield started
    finally:
        started.stop()


def on_a_free_port(start: Callable[[int], T], attempts: int = ATTEMPTS) -> T:
    """``start(port)`` on a port free a moment ago, and on another one while it raises
    ``PortTaken`` (``attempts`` ports at most): for programs that cannot be told port 0."""
    for attempt in range(1, attempts + 1):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = int(probe.getsockname()[1])
        try:
            return start(port)
        except PortTaken:
            if attempt == attempts:
                raise
    raise AssertionError("unreachable")


@contextlib.contextmanager
def refused_port() -> Iterator[int]:
    """A port of 127.0.0.1 that refuses connections for the block's duration: bound (without
    SO_REUSEADDR, so no server can bind it too) and never listening."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        yield int(holder.getsockname()[1])
