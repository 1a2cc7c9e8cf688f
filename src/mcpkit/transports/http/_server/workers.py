"""Several worker processes serving one port: ``run_http_server(..., workers=N)``,
``serve_workers(build, workers=N)`` and ``mcpkit run --workers N``.

The supervisor (this process) binds and listens on the port; each worker is a fresh process
(``multiprocessing``'s *spawn*) that gets a copy of its listening socket, builds its own app
and options by calling ``build()``, and runs ``run_http_server`` on the socket, with its
graceful shutdown. On Linux each worker has a socket of its own on the port
(``SO_REUSEPORT``: the kernel spreads new connections evenly over them); elsewhere they all
accept on one socket, where the least busy worker tends to win each connection. Building in each worker, rather than copying the supervisor's objects,
gives every worker its own Redis connections and its own instance id on the message bus,
which the shared sessions route by.

What the supervisor does: it announces the server (``on_started``) once every worker has
started; it restarts a worker that dies after it started (at most ``MAX_RESTARTS`` within
``RESTART_WINDOW`` seconds: past that the workers crash in a loop and it stops them all);
it stops everything when a worker fails to start (exit code 3, as one process does). It
passes each SIGTERM or SIGINT it gets on to every worker, so the first one starts their
graceful shutdown and a second one ends the grace, as for one process. Workers run in their
own process group, so a terminal's Ctrl-C reaches the supervisor alone (and is passed on
once); a worker whose supervisor is gone shuts itself down.

What must be shared for several workers to serve one endpoint (``state_lost_across_workers``):
a Streamable HTTP session's requests may land on any worker, so handshake-era sessions need a
shared session store, event store and message bus (Redis: ``redis_options``); a legacy SSE
session's POSTs may land on a worker other than the one holding its stream, so legacy SSE
needs a message bus linking the processes. Without them ``WorkersNeedSharedStateError`` is
raised before anything is served. A WebSocket connection lives in the worker that accepted
it, and 2026-07-28 or ``stateless`` requests carry all they need: neither needs anything, but
for the ``requestState`` secret a 2026-07-28 call asking for input is retried with, which
the supervisor hands every worker (``McpEngine.share_request_state_secret``) when the app has none.
Bearer auth with DPoP needs its nonce keys and record of accepted proofs shared too: on the
server's Redis when it has one, else in a SQLite file (``FileDPoPState``) in a private
directory the supervisor makes for its workers (mode 0700, removed when it exits), unless
the config names its own ``dpop_store`` (``with_dpop_file``).
"""

from __future__ import annotations

import contextlib
import math
import os
import secrets
import shutil
import signal
import socket
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mcpkit._exceptions import MCPError
from mcpkit._runtime import AsTheProgram
from mcpkit.server._engine.engine import engine_of
from mcpkit.server._engine.shutdown import ABORT_SETTLE
from mcpkit.transports.http._options import StreamableHttpServerOptions

# multiprocessing is imported where workers start: a server of one process never needs it.
if TYPE_CHECKING:
    from multiprocessing.connection import Connection
    from multiprocessing.context import SpawnProcess

    from mcpkit.server._engine.engine import McpEngine, ServesAnEngine

#: Connections the kernel queues on the listening socket before a worker accepts them.
DEFAULT_BACKLOG = 2048
#: Seconds a worker may take to start (import the app, run its lifespans) before it is
#: taken as failed.
DEFAULT_START_TIMEOUT = 60.0
#: Seconds the supervisor waits for stopping workers beyond their own bound (the grace,
#: then ``ABORT_SETTLE``) before it kills them.
STOP_MARGIN = 5.0
#: Restarts of workers that died after starting, allowed within ``RESTART_WINDOW`` seconds;
#: one more and the supervisor stops them all (they crash in a loop).
MAX_RESTARTS = 10
RESTART_WINDOW = 60.0
#: Exit code of a server whose start-up failed (``run_http_server`` raises the same).
STARTUP_FAILED = 3

#: What each worker calls to get the app it serves and its options: a picklable callable
#: (a module-level function, or a ``functools.partial`` of one) run in the worker.
WorkerBuild = Callable[[], "tuple[McpEngine | ServesAnEngine, StreamableHttpServerOptions]"]

_READY = b"ready"
#: The file, in the supervisor's runtime directory, where workers keep their DPoP state.
DPOP_FILE = "dpop.sqlite"


class WorkersNeedSharedStateError(MCPError, ValueError):
    """Several workers were asked for a server whose sessions would each live in one worker:
    a request landing on another would not find its session. ``lost`` names what would be
    lost (``"Streamable HTTP sessions"``, ``"legacy SSE sessions"``). A ``ValueError`` too:
    the options are wrong for the number of workers."""

    def __init__(self, workers: int, lost: tuple[str, ...]) -> None:
        self.workers = workers
        self.lost = lost
        super().__init__(
            f"workers={workers} would lose sessions: {' and '.join(lost)} live in one worker"
            " each; share them through Redis (session_store, event_store and message_bus from"
            " mcpkit.stores.redis_options(url)), or serve none (stateless=True,"
            " enable_legacy_sse=False)"
        )


def state_lost_across_workers(options: StreamableHttpServerOptions) -> tuple[str, ...]:
    """What several workers serving with ``options`` would lose, each worker keeping its
    own: empty when nothing (a stateless server without legacy SSE, or shared stores)."""
    from mcpkit.stores._bus import InProcessMessageBus
    from mcpkit.stores._events import InMemoryEventStore
    from mcpkit.stores._sessions import InMemorySessionStore
    from mcpkit.stores._sqlite import FileEventStore
    from mcpkit.transports.http._streamable.sessions import StreamableSessionStore

    bus = options.message_bus
    bus_links_processes = bus is not None and not isinstance(bus, InProcessMessageBus)
    lost: list[str] = []
    if not options.stateless:
        sessions = options.session_store
        if isinstance(sessions, StreamableSessionStore):
            sessions = sessions.backend
        events = options.event_store
        # An SQLite event store feeds listeners of its own process only: a GET held by one
        # worker would not hear what another stores.
        shared = (
            sessions is not None
            and not isinstance(sessions, InMemorySessionStore)
            and events is not None
            and not isinstance(events, (InMemoryEventStore, FileEventStore))
            and bus_links_processes
        )
        if not shared:
            lost.append("Streamable HTTP sessions")
    if options.enable_legacy_sse and not bus_links_processes:
        lost.append("legacy SSE sessions")
    return tuple(lost)


def check_workers(options: StreamableHttpServerOptions, workers: int) -> None:
    """Raise ``WorkersNeedSharedStateError`` when ``workers`` processes serving with
    ``options`` would lose sessions; ``ValueError`` for fewer than one worker."""
    if workers < 1:
        raise ValueError(f"workers must be at least 1, not {workers}")
    if workers > 1:
        lost = state_lost_across_workers(options)
        if lost:
            raise WorkersNeedSharedStateError(workers, lost)


# --- the programmatic form: an app defined at module level --------------------------------


@dataclass(frozen=True)
class ModuleApp:
    """A ``WorkerBuild`` for an app that is a module-level name: each worker imports the
    module (the main script too, as ``multiprocessing`` re-runs it) and takes the name."""

    module: str
    name: str
    options: StreamableHttpServerOptions = field(default_factory=StreamableHttpServerOptions)

    def __call__(self) -> tuple[McpEngine | ServesAnEngine, StreamableHttpServerOptions]:
        import importlib

        module = sys.modules.get(self.module) or importlib.import_module(self.module)
        return getattr(module, self.name), self.options


def module_app(app: McpEngine | ServesAnEngine, options: StreamableHttpServerOptions) -> ModuleApp:
    """The ``ModuleApp`` that rebuilds ``app`` in each worker; ``TypeError`` saying what to do
    instead when ``app`` is no module's global or ``options`` cannot go to a worker."""
    import pickle

    for store in ("session_store", "event_store", "message_bus"):
        if getattr(options, store) is not None:
            raise TypeError(
                f"workers > 1 with options.{store} set: each worker needs its own stores and bus"
                " (their connections and instance id are per process); build them in a"
                " module-level function returning (app, options) and pass it to serve_workers"
            )
    try:
        pickle.dumps(options)
    except Exception as exc:
        raise TypeError(
            f"workers > 1: the options cannot be sent to the workers ({exc}); build them in a"
            " module-level function returning (app, options) and pass it to serve_workers"
        ) from exc
    main = sys.modules.get("__main__")
    modules = [("__main__", main), *sorted(sys.modules.items(), key=lambda item: item[0])]
    for module_name, module in modules:
        if module is None or module_name.startswith("mcpkit."):
            continue
        for name, value in list(getattr(module, "__dict__", {}).items()):
            if value is app and not name.startswith("__"):
                return ModuleApp(module_name, name, options)
    raise TypeError(
        "workers > 1 builds the app in each worker process, which imports it: define it at"
        " module level (app = McpServerApp(...)), or use `mcpkit run FILE --workers N`"
    )


# --- the sockets ------------------------------------------------------------------------


def bind_worker_sockets(host: str, port: int, count: int) -> list[socket.socket]:
    """Sockets for ``count`` workers on ``host:port`` (port 0: a free one, the same for all):
    on Linux ``count`` sockets sharing the port (``SO_REUSEPORT``), else one. ``OSError`` when
    the port is taken, by any process (a plain bind is tried first: a socket with
    ``SO_REUSEPORT`` alone would join another server's group of the same user)."""
    from mcpkit.transports.http._server.process import bind_http_socket, tcp_socket

    probe = bind_http_socket(host, port)
    if count == 1 or not (sys.platform.startswith("linux") and hasattr(socket, "SO_REUSEPORT")):
        return [probe]
    port = probe.getsockname()[1]
    family = probe.family
    probe.close()
    sockets: list[socket.socket] = []
    try:
        for _ in range(count):
            sock = tcp_socket(family)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            sock.bind((host, port))
    except BaseException:
        for sock in sockets:
            sock.close()
        raise
    return sockets


# --- the worker --------------------------------------------------------------------------


def _worker_main(
    build: WorkerBuild,
    sock: socket.socket,
    conn: Connection,
    uvicorn_options: dict[str, Any],
    state_secret: bytes,
    dpop_path: str,
    program: AsTheProgram | None,
) -> None:
    """A worker: its own process group (the supervisor passes signals on), a watch on the
    supervisor, then the app ``build`` makes, served on ``sock`` until shut down. Its DPoP
    state is in the supervisor's file at ``dpop_path`` when nothing else shares it."""
    import threading

    from mcpkit.transports.http._auth_layer import with_dpop_file
    from mcpkit.transports.http._server.process import serve_in_this_process

    if hasattr(os, "setpgid"):
        os.setpgid(0, 0)
    threading.Thread(target=_watch_supervisor, args=(conn,), daemon=True).start()
    app, options = build()
    engine_of(app).share_request_state_secret(state_secret)
    options, dpop_file = with_dpop_file(options, dpop_path)
    try:
        serve_in_this_process(
            app,
            options,
            sock=sock,
            on_started=lambda: conn.send_bytes(_READY),
            program=program,
            **uvicorn_options,
        )
    finally:
        if dpop_file is not None:
            import asyncio

            with contextlib.suppress(Exception):  # the supervisor removes the file anyway
                asyncio.run(dpop_file.close())


def _watch_supervisor(conn: Connection) -> None:
    """Block until the supervisor's end of the pipe closes (it exited, maybe killed), then
    shut this worker down as SIGTERM does."""
    with contextlib.suppress(EOFError, OSError):
        while True:
            conn.recv_bytes()
    with contextlib.suppress(OSError):
        os.kill(os.getpid(), signal.SIGTERM)


# --- the supervisor ----------------------------------------------------------------------


class _Worker:
    """One worker process and the supervisor's end of its pipe."""

    def __init__(self, process: SpawnProcess, conn: Connection, slot: int) -> None:
        self.process = process
        self.conn = conn
        #: Which of the supervisor's sockets it serves (its replacement serves the same).
        self.slot = slot
        self.ready = False
        self.started_at = time.monotonic()

    def signal(self, signum: int) -> None:
        if self.process.pid is not None and self.process.exitcode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.process.pid, signum)

    def close(self) -> None:
        self.conn.close()
        with contextlib.suppress(ValueError):
            self.process.close()


class WorkerSupervisor:
    """Runs ``workers`` processes serving ``sockets`` (one shared by all, or one each, from
    ``bind_worker_sockets``; see the module's docstring); ``run()`` returns once they have all
    stopped, or raises ``SystemExit(3)`` when one fails to start."""

    def __init__(
        self,
        build: WorkerBuild,
        workers: int,
        sockets: list[socket.socket],
        *,
        on_started: Callable[[], Any] | None = None,
        shutdown_grace: float = 5.0,
        start_timeout: float = DEFAULT_START_TIMEOUT,
        uvicorn_options: dict[str, Any] | None = None,
        program: AsTheProgram | None = None,
    ) -> None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1, not {workers}")
        if len(sockets) not in (1, workers):
            raise ValueError(f"{len(sockets)} sockets for {workers} workers: give 1 or {workers}")
        self.build = build
        self.count = workers
        self.sockets = sockets
        self.on_started = on_started
        self.shutdown_grace = shutdown_grace
        self.start_timeout = start_timeout
        self.uvicorn_options = uvicorn_options or {}
        #: What each worker does to its process (``mcpkit run``'s workers: it is the program).
        self.program = program
        #: One ``requestState`` secret for every worker (those whose app has none chosen).
        self.state_secret = secrets.token_bytes(32)
        #: The private directory of the workers' shared files (their DPoP state), made by
        #: ``run()`` and removed when it returns.
        self.runtime_dir: str | None = None
        import multiprocessing

        self.workers: list[_Worker] = []
        self._context = multiprocessing.get_context("spawn")
        self._signals: list[int] = []
        self._restarts: list[float] = []
        self._announced = False
        self._stop_deadline: float | None = None

    @property
    def pids(self) -> list[int]:
        """The pids of the workers running now."""
        return [w.process.pid for w in self.workers if w.process.pid is not None]

    def _spawn(self, slot: int) -> _Worker:
        assert self.runtime_dir is not None
        mine, theirs = self._context.Pipe()
        sock = self.sockets[slot % len(self.sockets)]
        dpop_path = os.path.join(self.runtime_dir, DPOP_FILE)
        process = self._context.Process(
            target=_worker_main,
            args=(
                self.build,
                sock,
                theirs,
                self.uvicorn_options,
                self.state_secret,
                dpop_path,
                self.program,
            ),
            name="mcpkit-worker",
        )
        process.start()
        theirs.close()  # the worker's copy is its own; ours closing tells it we are gone
        return _Worker(process, mine, slot)

    def _on_signal(self, signum: int, frame: Any) -> None:
        self._signals.append(signum)

    def run(self) -> None:
        """Start the workers and supervise them until they have stopped."""
        for sock in self.sockets:
            sock.listen(DEFAULT_BACKLOG)  # connections queue while the workers start
        wake_read, wake_write = socket.socketpair()
        wake_read.setblocking(False)
        wake_write.setblocking(False)
        previous = {
            signum: signal.signal(signum, self._on_signal)
            for signum in (signal.SIGINT, signal.SIGTERM)
        }
        previous_wakeup = signal.set_wakeup_fd(wake_write.fileno(), warn_on_full_buffer=False)
        failed = False
        try:
            # Private to this user (mkdtemp makes it 0700; said again against an odd umask).
            self.runtime_dir = tempfile.mkdtemp(prefix="mcpkit-workers-")
            os.chmod(self.runtime_dir, 0o700)
            self.workers = [self._spawn(slot) for slot in range(self.count)]
            failed = self._supervise(wake_read)
        finally:
            signal.set_wakeup_fd(previous_wakeup)
            for signum, handler in previous.items():
                signal.signal(signum, handler)
            wake_read.close()
            wake_write.close()
            try:
                self._stop_all_now()
            finally:
                if self.runtime_dir is not None:
                    shutil.rmtree(self.runtime_dir, ignore_errors=True)
                    self.runtime_dir = None
        if failed:
            raise SystemExit(STARTUP_FAILED)

    def _supervise(self, wake: socket.socket) -> bool:
        """The supervisor's loop; True when it stopped because a worker failed to start."""
        from multiprocessing.connection import wait

        failed = False
        while self.workers:
            waiting: list[Any] = [wake]
            for worker in self.workers:
                waiting += [worker.process.sentinel, worker.conn]
            wait(waiting, timeout=0.5)
            with contextlib.suppress(BlockingIOError, OSError):
                wake.recv(512)
            while self._signals:
                self._stopping(self._signals.pop(0))
            for worker in list(self.workers):
                if not worker.ready and worker.conn.poll():
                    with contextlib.suppress(EOFError, OSError):
                        worker.ready = worker.conn.recv_bytes() == _READY
                if worker.process.exitcode is not None:
                    failed = self._exited(worker) or failed
                elif not worker.ready and self._stop_deadline is None:
                    if time.monotonic() - worker.started_at > self.start_timeout:
                        sys.stderr.write(
                            f"mcpkit: worker {worker.process.pid} did not start within"
                            f" {self.start_timeout:g} s\n"
                        )
                        worker.process.kill()
            if not self._announced and self.workers and all(w.ready for w in self.workers):
                self._announced = True
                if self.on_started is not None and self._stop_deadline is None:
                    self.on_started()
            if self._stop_deadline is not None and time.monotonic() > self._stop_deadline:
                for worker in self.workers:
                    worker.signal(signal.SIGKILL if hasattr(signal, "SIGKILL") else signal.SIGTERM)
        return failed

    def _stopping(self, signum: int) -> None:
        """A signal for the supervisor: every worker gets it (the first starts the graceful
        shutdown, the second ends the grace)."""
        if self._stop_deadline is None:
            grace = self.shutdown_grace
            bound = math.inf if math.isinf(grace) else grace + ABORT_SETTLE + STOP_MARGIN
            self._stop_deadline = time.monotonic() + bound
        for worker in self.workers:
            worker.signal(signum)

    def _exited(self, worker: _Worker) -> bool:
        """A worker exited: dropped when stopping; else restarted if it had started, or every
        worker stopped (True) if it had not."""
        self.workers.remove(worker)
        code, pid = worker.process.exitcode, worker.process.pid
        worker.close()
        if self._stop_deadline is not None:
            return False
        if not worker.ready:
            sys.stderr.write(f"mcpkit: a worker failed to start (exit code {code})\n")
            self._stopping(signal.SIGTERM)
            return True
        now = time.monotonic()
        self._restarts = [t for t in self._restarts if now - t < RESTART_WINDOW]
        if len(self._restarts) >= MAX_RESTARTS:
            sys.stderr.write(
                f"mcpkit: workers died {MAX_RESTARTS} times within {RESTART_WINDOW:g} s; stopping\n"
            )
            self._stopping(signal.SIGTERM)
            return True
        self._restarts.append(now)
        sys.stderr.write(f"mcpkit: worker {pid} died (exit code {code}); restarting\n")
        self.workers.append(self._spawn(worker.slot))
        return False

    def _stop_all_now(self) -> None:
        """On the way out: whatever still runs (the supervisor itself failed) is stopped."""
        for worker in self.workers:
            worker.signal(signal.SIGTERM)
        for worker in self.workers:
            worker.process.join(self.shutdown_grace + ABORT_SETTLE + STOP_MARGIN)
            if worker.process.exitcode is None:
                worker.process.kill()
                worker.process.join(STOP_MARGIN)
            worker.close()
        self.workers = []


def serve_workers(
    build: WorkerBuild,
    workers: int,
    *,
    sock: socket.socket | None = None,
    host: str | None = None,
    port: int | None = None,
    on_started: Callable[[], Any] | None = None,
    start_timeout: float = DEFAULT_START_TIMEOUT,
    **uvicorn_options: Any,
) -> None:
    """Serve with ``workers`` processes on one port until SIGTERM or SIGINT: each worker
    calls ``build()`` (a picklable, module-level callable returning ``(app, options)``) and
    serves that app. ``build`` is also called here first, to check the options
    (``WorkersNeedSharedStateError`` when sessions would be lost) and to bind the socket
    (``sock``, else ``host``/``port``, else the options' own) before any worker starts;
    the app it returns here is not started. ``on_started()`` runs once all workers serve."""
    app, options = build()
    check_workers(options, workers)
    sockets = (
        [sock]
        if sock is not None
        else bind_worker_sockets(
            host if host is not None else options.host or "0.0.0.0",
            port if port is not None else options.port,
            workers,
        )
    )
    WorkerSupervisor(
        build,
        workers,
        sockets,
        on_started=on_started,
        shutdown_grace=engine_of(app).shutdown_grace,
        start_timeout=start_timeout,
        uvicorn_options=uvicorn_options,
    ).run()
