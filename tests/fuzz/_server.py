"""A live server as a subprocess, for the fuzzer and the soak run: ``python -m mcpkit run
examples/everything.py`` on stdio or HTTP (or tests/fuzz/_soak_server.py, which takes
options the CLI has no flag for), its stderr kept, its RSS and descriptors read from /proc.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import re
import signal
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EVERYTHING = ROOT / "examples" / "everything.py"
SOAK_SERVER = Path(__file__).resolve().parent / "_soak_server.py"
_BANNER = re.compile(r"serving .* on (http://\S+)")
#: Output lines that mean the server hit an unexpected exception.
_TRACEBACK = re.compile(r"Traceback \(most recent call last\)|Exception in ASGI application")
#: The log line a tool's own exception comes under: handled (the client got an isError
#: result), its traceback logged for the server's author, not an unexpected one.
_TOOL_RAISED = "the client got an isError result"
_CHAINED = ("During handling of the above exception", "The above exception was the direct cause")


class ServerProcess:
    """One server subprocess. ``argv`` follows the interpreter: ``-m mcpkit run ...`` or a
    script path. For HTTP, ``start`` waits for the banner and ``url`` is the endpoint."""

    def __init__(self, argv: list[str], *, http: bool) -> None:
        self.argv = argv
        self.http = http
        self.proc: asyncio.subprocess.Process | None = None
        self.url = ""
        self.stderr: list[str] = []
        self._stderr_task: asyncio.Task[None] | None = None

    @classmethod
    def everything(cls, transport: str = "stdio") -> ServerProcess:
        argv = ["-m", "mcpkit", "run", str(EVERYTHING)]
        if transport != "stdio":
            argv += ["--transport", transport, "--port", "0"]
        return cls(argv, http=transport != "stdio")

    @classmethod
    def soak(cls, idle_timeout: float) -> ServerProcess:
        return cls([str(SOAK_SERVER), "--idle-timeout", str(idle_timeout)], http=True)

    async def start(self, timeout: float = 20.0) -> None:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        env.pop("MCPKIT_DEBUG", None)
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable,
            *self.argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=ROOT,
            env=env,
            limit=64 * 1024 * 1024,  # a reply can echo a 5 MB argument back
            preexec_fn=_die_with_parent,
        )
        banner: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._stderr_task = asyncio.create_task(self._read_stderr(banner))
        if self.http:
            try:
                async with asyncio.timeout(timeout):
                    self.url = await banner
            except TimeoutError:
                await self.stop()
                raise RuntimeError(f"server did not start: {''.join(self.stderr)}") from None

    async def _read_stderr(self, banner: asyncio.Future[str]) -> None:
        assert self.proc is not None and self.proc.stderr is not None
        while line := await self.proc.stderr.readline():
            text = line.decode("utf-8", "replace")
            self.stderr.append(text)
            found = _BANNER.search(text)
            if found and not banner.done():
                banner.set_result(found.group(1))
        if not banner.done():
            if self.http:
                banner.set_exception(RuntimeError("server exited before serving"))
            else:
                banner.cancel()  # stdio prints no banner

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc is not None and self.proc.returncode is None

    def tracebacks(self) -> list[str]:
        """The stderr lines that start an unexpected exception's report."""
        return [line for line, starts in self._reports() if starts]

    def _reports(self) -> list[tuple[str, bool]]:
        """Each stderr line, and whether it starts an unexpected exception's report."""
        lines, previous, handled = [], "", False
        for line in self.stderr:
            starts = False
            if _TRACEBACK.search(line):
                # a chained section ("During handling ...", "The above exception ...") is
                # part of the report before it
                if not previous.startswith(_CHAINED):
                    handled = _TOOL_RAISED in previous
                starts = not handled
            lines.append((line, starts))
            if line.strip():
                previous = line
        return lines

    def exceptions(self) -> list[str]:
        """Each traceback on stderr, shortened to its innermost frame and its exception."""
        found, frame, inside = [], "", False
        for line, starts in self._reports():
            if starts:
                inside, frame = True, ""
            elif _TRACEBACK.search(line):  # a tool's own, handled: not reported
                inside = False
            elif inside and line.startswith("  File "):
                frame = line.strip()
            elif inside and not line.startswith(" ") and not line.startswith("During handling"):
                found.append(f"{line.strip()} at {frame}")
                inside = False
        return found

    def rss(self) -> int:
        """Resident set size in bytes (VmRSS)."""
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        raise RuntimeError("no VmRSS")

    def fds(self) -> dict[str, int]:
        """Open descriptors by kind (socket, pipe, file, other) and in all."""
        counts = {"socket": 0, "pipe": 0, "file": 0, "other": 0}
        fd_dir = Path(f"/proc/{self.pid}/fd")
        for entry in fd_dir.iterdir():
            try:
                target = os.readlink(entry)
            except OSError:
                continue  # closed while listed
            kind = target.split(":", 1)[0] if ":[" in target else "file"
            counts[kind if kind in counts else "other"] += 1
        counts["total"] = sum(counts.values())
        return counts

    async def stop(self, timeout: float = 10.0) -> int | None:
        """Close stdin (a stdio server's end of input), then SIGTERM, then SIGKILL."""
        proc = self.proc
        if proc is None:
            return None
        if proc.returncode is None:
            if proc.stdin is not None:
                with contextlib.suppress(Exception):
                    proc.stdin.close()
            if self.http:
                proc.terminate()
            try:
                async with asyncio.timeout(timeout):
                    await proc.wait()
            except TimeoutError:
                proc.kill()
                await proc.wait()
        if self._stderr_task is not None:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(2):
                    await self._stderr_task
        return proc.returncode


def _die_with_parent() -> None:
    """In the child, before exec: SIGTERM when the fuzzer dies (a killed test run), so no
    server is left behind (Linux prctl PR_SET_PDEATHSIG; elsewhere nothing)."""
    try:
        libc = ctypes.CDLL(None)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
