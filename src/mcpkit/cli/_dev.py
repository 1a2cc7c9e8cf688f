"""``mcpkit dev``: serve a server over HTTP, restart it when its Python files change, and open
the MCP Inspector against it.

The server runs as a child process (``mcpkit run TARGET -t http``), so each restart imports
the code afresh; the port stays the same across restarts (with ``--port 0`` one free port
is chosen once), so the Inspector and other clients reconnect to the same URL. A server that
fails to start (a syntax error just saved) leaves ``mcpkit dev`` waiting for the next change.
Notes go to stderr as ``mcpkit dev: ...`` lines, or with ``--json`` to stdout as one JSON
object a line (``{"event": "serving" | "restarting" | "exited" | "inspector", ...}``)."""

from __future__ import annotations

import json
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from mcpkit.cli._errors import CliError
from mcpkit.cli._loader import _MODULE_NAME, TargetNotFoundError, split_target

#: The npm package of the MCP Inspector, run with npx.
INSPECTOR_PACKAGE = "@modelcontextprotocol/inspector"
#: The Inspector version run: one known to work with ``--transport streamable-http
#: --server-url``; an unpinned npx would fetch whatever is newest, flags changed or not.
INSPECTOR_VERSION = "0.22.0"
#: The oldest Node that version runs on (its package.json ``engines.node``: >=22.7.5).
INSPECTOR_NODE = (22, 7, 5)
#: Printed (once) when npx is not on PATH.
NO_NPX_HINT = (
    "the MCP Inspector needs Node.js: install Node 22.7.5 or later from https://nodejs.org"
    " (it brings npx), or pass --no-inspector; the server runs without it"
)
#: Seconds a starting server gets to accept connections before it is reported as stuck.
START_TIMEOUT = 30.0
#: Seconds running calls get to finish when the server restarts (its --shutdown-grace).
RESTART_GRACE = 1.0
#: Seconds a stopping server gets to exit before it is killed.
STOP_TIMEOUT = 10.0
#: Seconds between two checks of a starting server's port.
CONNECT_STEP = 0.05


class DevServer:
    """The supervisor of ``mcpkit dev``: the child server, the watcher and the Inspector."""

    def __init__(
        self,
        target: str,
        *,
        host: str,
        port: int,
        endpoint: str,
        inspector: bool,
        watch: list[Path],
        json_output: bool,
        polling: bool = False,
    ) -> None:
        self.target = target
        self.host = host
        self.port = port
        self.endpoint = endpoint
        self.inspector = inspector
        self.watch = watch
        self.json_output = json_output
        self.polling = polling
        self.child: subprocess.Popen[bytes] | None = None
        self.inspector_process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        shown = f"[{self.host}]" if ":" in self.host else self.host
        connect = {"0.0.0.0": "127.0.0.1", "::": "[::1]"}.get(self.host, shown)
        return f"http://{connect}:{self.port}{self.endpoint}"

    # notes --------------------------------------------------------------------------------

    def note(self, event: str, text: str, **fields: Any) -> None:
        if self.json_output:
            sys.stdout.write(json.dumps({"event": event, **fields}) + "\n")
            sys.stdout.flush()
        else:
            sys.stderr.write(f"mcpkit dev: {text}\n")
            sys.stderr.flush()

    # the child server ---------------------------------------------------------------------

    def _command(self) -> list[str]:
        return [
            sys.executable,
            "-m",
            "mcpkit",
            "run",
            self.target,
            "--transport",
            "http",
            "--host",
            self.host,
            "--port",
            str(self.port),
            "--endpoint",
            self.endpoint,
            "--shutdown-grace",
            str(RESTART_GRACE),
        ]

    def start(self) -> bool:
        """Start the server and wait until it accepts connections; False when it exited."""
        self.child = subprocess.Popen(self._command(), stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            code = self.child.poll()
            if code is not None:
                self.note(
                    "exited",
                    f"the server exited (code {code}); waiting for a change to restart it",
                    code=code,
                )
                return False
            if _accepts(self.host, self.port):
                self.note("serving", f"serving {self.target} at {self.url}", url=self.url)
                return True
            time.sleep(CONNECT_STEP)
        self.note(
            "exited",
            f"the server did not accept connections within {START_TIMEOUT:g} s; waiting for a change",
            code=None,
        )
        return False

    def stop(self) -> None:
        child, self.child = self.child, None
        if child is None or child.poll() is not None:
            return
        child.terminate()  # SIGTERM: a graceful shutdown (calls get RESTART_GRACE)
        try:
            child.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()

    # the Inspector ------------------------------------------------------------------------

    def open_inspector(self) -> None:
        npx = shutil.which("npx")
        if npx is None:
            self.note("inspector", NO_NPX_HINT, status="missing")
            return
        command = inspector_command(npx, self.url)
        self.inspector_process = subprocess.Popen(command, stdin=subprocess.DEVNULL)
        self.note(
            "inspector",
            f"opening the MCP Inspector on {self.url} (npx {command[2]})",
            status="started",
        )

    def close_inspector(self) -> None:
        process, self.inspector_process = self.inspector_process, None
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    # the loop -----------------------------------------------------------------------------

    def run(self) -> int:
        from mcpkit.cli._watch import make_watcher

        watcher = make_watcher(self.watch, polling=self.polling)
        shown = [_shown(path) for path in self.watch]
        previous = _stop_on_sigterm()
        try:
            self.note(
                "watching", f"reloading on changes to *.py in {', '.join(shown)}", paths=shown
            )
            started = self.start()
            if self.inspector:
                self.open_inspector()
            reported_exit = not started
            while True:
                changed = watcher.wait(CONNECT_STEP * 10)
                if changed:
                    names = sorted(_shown(Path(path)) for path in changed)
                    self.note(
                        "restarting", f"{', '.join(names)} changed; restarting", changed=names
                    )
                    self.stop()
                    reported_exit = not self.start()
                elif not reported_exit and self.child is not None:
                    code = self.child.poll()
                    if code is not None:
                        reported_exit = True
                        self.note(
                            "exited",
                            f"the server exited (code {code}); waiting for a change to restart it",
                            code=code,
                        )
        except KeyboardInterrupt:
            return 0
        finally:
            watcher.close()
            self.stop()
            self.close_inspector()
            if previous is not None:
                signal.signal(signal.SIGTERM, previous)


def inspector_command(npx: str, url: str) -> list[str]:
    """The command that opens the pinned MCP Inspector against the server at ``url``."""
    return [
        npx,
        "-y",
        f"{INSPECTOR_PACKAGE}@{INSPECTOR_VERSION}",
        "--transport",
        "streamable-http",
        "--server-url",
        url,
    ]


def check_node() -> None:
    """Refuse (exit 2) a Node older than the Inspector needs, before anything starts: npx
    would otherwise install it and fail in ways that do not say why. Nothing is checked
    when Node cannot be asked (no ``node`` on PATH): the missing npx is said later."""
    node = shutil.which("node")
    if node is None:
        return
    try:
        shown = subprocess.run(
            [node, "--version"], capture_output=True, text=True, timeout=10
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return
    found = _version_of(shown)
    if found is None or found >= INSPECTOR_NODE:
        return
    from mcpkit.cli._errors import EXIT_USAGE

    needed = ".".join(map(str, INSPECTOR_NODE))
    raise CliError(
        f"mcpkit dev needs Node >= {needed} (found {shown}); install a newer one from"
        " https://nodejs.org, or pass --no-inspector",
        code=EXIT_USAGE,
    )


def _version_of(text: str) -> tuple[int, ...] | None:
    """``(22, 7, 5)`` for ``v22.7.5``; None for what is no version."""
    parts = text.removeprefix("v").split(".")
    try:
        return tuple(int(part) for part in parts[:3])
    except ValueError:
        return None


def _stop_on_sigterm() -> Any:
    """SIGTERM ends ``mcpkit dev`` as Ctrl-C does: the server and the Inspector stopped
    first (the handler replaced, returned; None off the main thread)."""

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    try:
        return signal.signal(signal.SIGTERM, interrupt)
    except ValueError:  # not the main thread
        return None


def _accepts(host: str, port: int) -> bool:
    address = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(host, host)
    try:
        with socket.create_connection((address, port), timeout=1):
            return True
    except OSError:
        return False


def _shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd())) or "."
    except ValueError:
        return str(path)


def watched_roots(target: str) -> list[Path]:
    """What ``mcpkit dev`` watches by default: the folder of a file target, or for a
    ``MODULE:OBJECT`` target the folder its top package is found in (else the working one).
    A target that names nothing is a ``TargetNotFoundError`` here, before anything starts."""
    file_part, _ = split_target(target)
    path = Path(file_part)
    if path.exists():
        return [path.resolve().parent if path.is_file() else path.resolve()]
    if not _MODULE_NAME.match(file_part) or file_part.endswith(".py"):
        raise TargetNotFoundError(file_part, path.resolve())
    import importlib.util

    top = file_part.partition(".")[0]
    cwd = str(Path.cwd())
    added = cwd not in sys.path
    if added:
        sys.path.insert(0, cwd)
    try:
        spec = importlib.util.find_spec(top)
    finally:
        if added:
            sys.path.remove(cwd)
    if spec is None or not spec.origin:
        missing = TargetNotFoundError(file_part, path.resolve())
        missing.args = (f"no such file or module: {file_part}",)
        raise missing
    origin = Path(spec.origin).resolve()
    # a package: the folder holding it; a single module: its own folder
    return [origin.parent.parent if origin.name == "__init__.py" else origin.parent]


def _check_bindable(host: str, port: int) -> None:
    """The one error line of ``mcpkit run`` for a port taken, before anything starts."""
    from mcpkit.cli._errors import bind_error
    from mcpkit.transports.http._server.serve import bind_http_socket

    try:
        bind_http_socket(host, port).close()
    except OSError as exc:
        raise bind_error(host, port, exc) from exc


def free_port(host: str) -> int:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


def run_dev(
    target: str,
    *,
    host: str,
    port: int,
    endpoint: str,
    inspector: bool,
    watch: list[str],
    json_output: bool,
    polling: bool = False,
) -> int:
    """``mcpkit dev``: see the module's docstring. ``polling``: scan the files' modification
    times instead of the OS's change events."""
    if not 0 <= port <= 65535:
        from mcpkit.cli._errors import EXIT_USAGE

        raise CliError(
            f"port {port} is out of range",
            "a port is 0 to 65535 (0: any free one)",
            code=EXIT_USAGE,
        )
    roots = [Path(item).resolve() for item in watch] if watch else watched_roots(target)
    for root in roots:
        if not root.exists():
            raise CliError(f"no such folder to watch: {root}", "name an existing one with --watch")
    if inspector:
        check_node()
    if port == 0:
        port = free_port(host)
    else:
        _check_bindable(host, port)
    server = DevServer(
        target,
        host=host,
        port=port,
        endpoint=endpoint,
        inspector=inspector,
        watch=roots,
        json_output=json_output,
        polling=polling,
    )
    return server.run()
