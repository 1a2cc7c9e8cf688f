"""HTTP load: mcpkit's Streamable HTTP server against a bare ASGI ceiling and peer SDKs,
every server under the same uvicorn, loaded by wrk.

    python bench/http_load.py [--duration S] [--connections 16] [--rounds R] [--only NAME...]
                              [--scenarios NAME...] [--mcpkit-source worktree|REV]
                              [--retries N] [--max-wait F] [--json PATH] [--profile SCENARIO]

Servers (bench/servers/http_*.py, each the same ``add(a, b)`` tool):
  bare      a bare ASGI app answering a fixed tools/call result: the ceiling
  mcpkit    mcpkit's ``create_asgi_app`` (project venv), default options, on uvicorn's
            protocol as the command line chose it: what ``uvicorn app:app`` users get
  mcpkit-run  the same app as ``mcpkit run -t http`` serves it, by its code (uvicorn's
            protocol with its request headers bounded, its uvicorn settings, and the GC
            freeze of the program)
  bare-run  the bare app served the same way (the header watch, the same uvicorn
            settings): the ceiling of ``mcpkit-run``
  baseline  ``mcpkit`` of git revision ``--baseline REV``: before and after a change, both
            against ``bare``
  official  the official SDK's ``MCPServer.streamable_http_app`` (bench/.venv-peers)
  fastmcp   ``FastMCP.http_app`` (bench/.venv-peers)
  lauren    lauren-mcp's Streamable HTTP controller (bench/.venv-peers)

Scenarios (bench/lua/*.lua):
  call-stateless  POST tools/call, no session; servers stateless with JSON responses
  call-session    16 sessions (initialize + initialized), then POST tools/call on them
  churn           initialize -> tools/call -> DELETE, a session per cycle; rate = cycles/s
  call-modern     POST tools/call in the 2026-07-28 era (no initialize; _meta and Mcp-Method /
                  Mcp-Name headers), servers stateless; peers without that era are skipped (n/a)

Each server runs as ``taskset -c 1 <python> -m uvicorn ... --workers 1 --log-level warning
--no-access-log --loop uvloop --http httptools`` (``--loop asyncio --http h11`` for all when
either venv lacks uvloop or httptools), wrk as ``taskset -c 0 wrk -t1 -c16``. Rounds
interleave servers and scenarios; each round runs every server once per scenario, and the
ratios are taken inside a round, then the median over rounds is reported. The machine may be
shared: a run in which the server or wrk waited more than --max-wait of the time for its core
(schedstat) is "disturbed" and measured again (--retries), and the report gives the ratios of
all rounds, of undisturbed pairs only, and per second of server CPU.

The peers live in their own venv, bench/.venv-peers (created and filled here on first use),
so their dependencies never touch the project's. The project venv's mcpkit and bare servers
get httptools from bench/.venv-peers/project-extras when the project venv lacks it.

Nothing is written into the repository: results are printed (a table, then JSON);
``--json PATH`` also writes the JSON to a path outside it.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PROJECT_PY = ROOT / ".venv" / "bin" / "python"

# The runner needs httpx (the pre-flight check): use the project venv when started elsewhere.
try:
    import httpx
except ImportError:  # pragma: no cover - depends on how it was started
    if (
        PROJECT_PY.exists()
        and Path(sys.prefix).resolve() != (ROOT / ".venv").resolve()
        and not os.environ.get("BENCH_REEXEC")
    ):
        os.environ["BENCH_REEXEC"] = "1"
        os.execv(str(PROJECT_PY), [str(PROJECT_PY), *sys.argv])
    sys.exit("the HTTP benches need httpx: run them with the project venv (.venv/bin/python)")

sys.path.insert(0, str(HERE))
from _pinning import pin_self, pinned
from _uvicorn import stop_server, uvicorn_command
from _wrk import bench_result, wrk_command

PEERS = HERE / ".venv-peers"
PEERS_PY = PEERS / "bin" / "python"
EXTRAS = PEERS / "project-extras"
SERVERS_DIR = HERE / "servers"

#: name -> (venv, module:app)
SERVERS: dict[str, tuple[str, str]] = {
    "bare": ("project", "http_bare:app"),
    "mcpkit": ("project", "http_mcpkit:app"),
    # the same app served by serve_http, as `mcpkit run -t http` does (a script, not uvicorn's CLI)
    "mcpkit-run": ("project", "http_mcpkit_served.py"),
    # the bare app on that same protocol and settings: what serving that way gives any ASGI app
    "bare-run": ("project", "http_bare_served.py"),
    # mcpkit of another revision (--baseline REV): before and after a change in one run
    "baseline": ("project", "http_mcpkit:app"),
    "official": ("peers", "http_official:app"),
    "fastmcp": ("peers", "http_fastmcp:app"),
    "lauren": ("peers", "http_lauren:app"),
}
PEER_NAMES = ("official", "fastmcp", "lauren")
#: The servers of mcpkit of --baseline REV.
BASELINES = ("baseline",)
#: Each mcpkit row and the bare app served the same way (server, protocol, settings): the
#: ratio that tells what mcpkit costs, whatever the serving gives every app.
SAME_SERVING = {
    "mcpkit": "bare",
    "mcpkit-run": "bare-run",
    "baseline": "bare",
}
#: The mcpkit rows not served from uvicorn's command line, each compared with bare too.
ALSO_AGAINST_BARE = ("mcpkit-run",)
#: The targets the report checks: mcpkit's rate as a share of bare's (the second speed
#: round: every call scenario, and churn), times the fastest peer, and churn cycles per second.
SHARE_OF_BARE = 0.70
CHURN_SHARE_OF_BARE = 0.60
TIMES_FASTEST_PEER = 2
CHURN_MIN_RATE = 5000
#: what each peer needs in bench/.venv-peers (latest that installs, except the pinned official SDK)
PEER_REQUIREMENTS = {"official": ["mcp==2.3.0"], "fastmcp": ["fastmcp"], "lauren": ["lauren-mcp"]}
PEER_DISTRIBUTIONS = {"official": "mcp", "fastmcp": "fastmcp", "lauren": "lauren-mcp"}
BASE_REQUIREMENTS = ["uvicorn[standard]"]

#: name -> (server mode, wrk script, what the rate counts)
SCENARIOS: dict[str, tuple[str, str, str]] = {
    "call-stateless": ("stateless", "call_stateless.lua", "calls/s"),
    "call-session": ("stateful", "call_session.lua", "calls/s"),
    "churn": ("stateful", "churn.lua", "cycles/s"),
    "call-modern": ("stateless", "call_modern.lua", "calls/s"),
}
#: scenario -> {server: why it is not run}: a server that doesn't speak the scenario's protocol
#: is skipped (and listed as such), not measured as wrong
NOT_APPLICABLE: dict[str, dict[str, str]] = {
    "call-modern": {
        "lauren": "lauren-mcp speaks the handshake era only (its versions end at 2025-11-25): it answers a "
        "2026-07-28 request with a handshake-era result, without resultType",
    },
}

ACCEPT_HEADERS = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
    "MCP-Protocol-Version": "2025-11-25",
}
CALL = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "add", "arguments": {"a": 1, "b": 2}},
}
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
# 2026-07-28: no initialize; every request names its era in _meta and mirrors method and name
# into headers (SEP-2243), which the servers check against the body
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
}
CALL_MODERN = {**CALL, "params": {**CALL["params"], "_meta": MODERN_META}}
MODERN_HEADERS = {
    **ACCEPT_HEADERS,
    "MCP-Protocol-Version": "2026-07-28",
    "Mcp-Method": "tools/call",
    "Mcp-Name": "add",
}

SERVER_CPU, WRK_CPU = 1, 0


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# --- setup: wrk, the peers' venv, httptools for the project venv ----------------------------


def ensure_wrk() -> str:
    wrk = shutil.which("wrk")
    if wrk:
        return wrk
    log("wrk is missing; install it with: apt-get install -y wrk")
    if os.geteuid() == 0 and shutil.which("apt-get"):
        log("running as root: apt-get update && apt-get install -y wrk")
        subprocess.run("apt-get update && apt-get install -y wrk", shell=True, check=False)
        wrk = shutil.which("wrk")
        if wrk:
            return wrk
    sys.exit("wrk is required: apt-get install -y wrk")


def _pip(python: Path, args: list[str]) -> bool:
    log(f"$ {python} -m pip install {' '.join(args)}")
    return (
        subprocess.run([str(python), "-m", "pip", "install", "-q", *args], check=False).returncode
        == 0
    )


def _versions(python: Path, distributions: list[str]) -> dict[str, str | None]:
    code = (
        "import json, sys\nfrom importlib import metadata\nout = {}\n"
        "for d in sys.argv[1:]:\n"
        "    try: out[d] = metadata.version(d)\n"
        "    except metadata.PackageNotFoundError: out[d] = None\n"
        "print(json.dumps(out))"
    )
    done = subprocess.run(
        [str(python), "-c", code, *distributions], capture_output=True, text=True, check=False
    )
    return json.loads(done.stdout) if done.returncode == 0 else dict.fromkeys(distributions)


def ensure_peers(wanted: list[str], extra: list[str], upgrade: bool) -> dict[str, str]:
    """Creates/fills bench/.venv-peers; returns peer -> installed version (missing peers absent)."""
    if not PEERS_PY.exists():
        log(f"creating {PEERS.relative_to(ROOT)}")
        subprocess.run([sys.executable, "-m", "venv", str(PEERS)], check=True)
        _pip(PEERS_PY, ["--upgrade", "pip"])
    distributions = [
        "uvicorn",
        "uvloop",
        "httptools",
        *(PEER_DISTRIBUTIONS[p] for p in wanted),
        *extra,
    ]
    have = _versions(PEERS_PY, distributions)

    def satisfied(peer: str) -> bool:
        version = have.get(PEER_DISTRIBUTIONS[peer])
        return version == "2.3.0" if peer == "official" else version is not None

    missing = [p for p in wanted if not satisfied(p)]
    base_missing = any(have.get(d) is None for d in ("uvicorn", "uvloop", "httptools"))
    extra_missing = [d for d in extra if have.get(d) is None]
    if upgrade or missing or base_missing or extra_missing:
        todo = wanted if upgrade else missing
        requirements = [
            *BASE_REQUIREMENTS,
            *extra,
            *(r for p in todo for r in PEER_REQUIREMENTS[p]),
        ]
        flags = ["--upgrade"] if upgrade else []
        if not _pip(PEERS_PY, [*flags, *requirements]):
            log("installing the peers together failed; trying one at a time")
            _pip(PEERS_PY, [*flags, *BASE_REQUIREMENTS, *extra])
            for peer in todo:
                if not _pip(PEERS_PY, [*flags, *PEER_REQUIREMENTS[peer]]):
                    log(f"could not install {peer} ({' '.join(PEER_REQUIREMENTS[peer])}): skipped")
        have = _versions(PEERS_PY, distributions)
    return {p: str(have[PEER_DISTRIBUTIONS[p]]) for p in wanted if satisfied(p)}


def _imports(python: Path, modules: str, env: dict[str, str]) -> bool:
    return (
        subprocess.run(
            [str(python), "-c", f"import {modules}"], env=env, capture_output=True, check=False
        ).returncode
        == 0
    )


#: set by use_mcpkit_snapshot(): a folder holding src/mcpkit of one git revision
MCPKIT_SNAPSHOT: Path | None = None
#: set by --baseline: the folder of the revision the ``baseline`` server runs
BASELINE_SNAPSHOT: Path | None = None


def use_mcpkit_snapshot(revision: str) -> str:
    """Serve mcpkit from ``revision`` (``git archive`` into a temp folder, ahead of the editable
    install on PYTHONPATH), so edits to the work tree during a run don't change what is measured.
    Returns the commit."""
    global MCPKIT_SNAPSHOT
    commit, MCPKIT_SNAPSHOT = snapshot(revision)
    return commit


def use_baseline_snapshot(revision: str) -> str:
    """The ``baseline`` server runs mcpkit of ``revision``; returns the commit."""
    global BASELINE_SNAPSHOT
    commit, BASELINE_SNAPSHOT = snapshot(revision)
    return commit


def snapshot(revision: str) -> tuple[str, Path]:
    """``src/mcpkit`` of ``revision`` in a temp folder: the short commit and the folder."""
    commit = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", revision],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    folder = Path(tempfile.mkdtemp(prefix=f"bench-mcpkit-{commit}-"))
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", commit, "src/mcpkit"], capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive.stdout, check=True)
    return commit, folder


def drop_mcpkit_snapshot() -> None:
    for folder in (MCPKIT_SNAPSHOT, BASELINE_SNAPSHOT):
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)


def project_env(source: Path | None = None) -> dict[str, str]:
    """The project venv's environment, mcpkit from ``source`` (default: --mcpkit-source)."""
    env = dict(os.environ)
    source = source or MCPKIT_SNAPSHOT
    paths = [str(source / "src")] if source is not None else []
    if EXTRAS.exists():
        paths.append(str(EXTRAS))
    if paths:
        env["PYTHONPATH"] = os.pathsep.join(paths)
    else:
        env.pop("PYTHONPATH", None)
    return env


def peers_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    return env


def ensure_fast_http(choice: str, need_peers: bool) -> list[str]:
    """uvicorn's loop/http flags, the same for every server."""
    if choice == "h11":
        return ["--loop", "asyncio", "--http", "h11"]
    if not _imports(PROJECT_PY, "httptools", project_env()):
        if not PEERS_PY.exists():
            subprocess.run([sys.executable, "-m", "venv", str(PEERS)], check=True)
        log("the project venv lacks httptools: installing it into bench/.venv-peers/project-extras")
        _pip(PEERS_PY, ["--target", str(EXTRAS), "httptools"])
    ok = _imports(PROJECT_PY, "uvloop, httptools", project_env())
    if need_peers:
        ok = ok and _imports(PEERS_PY, "uvloop, httptools", peers_env())
    if ok:
        return ["--loop", "uvloop", "--http", "httptools"]
    if choice == "httptools":
        sys.exit("--http httptools: uvloop/httptools are not importable in every venv")
    log("uvloop/httptools missing in a venv: every server runs with --loop asyncio --http h11")
    return ["--loop", "asyncio", "--http", "h11"]


# --- one server ------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, name: str, mode: str, flags: list[str]) -> None:
        venv, target = SERVERS[name]
        python = PROJECT_PY if venv == "project" else PEERS_PY
        if name in BASELINES:
            env = project_env(BASELINE_SNAPSHOT)
        else:
            env = project_env() if venv == "project" else peers_env()
        env["BENCH_MODE"] = mode
        self.name = name
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.log = tempfile.NamedTemporaryFile(prefix=f"bench-{name}-", suffix=".log", delete=False)
        if target.endswith(".py"):  # a script that serves itself on the port it is given
            command = [str(python), str(SERVERS_DIR / target), str(self.port)]
        else:
            command = uvicorn_command(python, target, self.port, flags)
        self.command = pinned(command, SERVER_CPU)
        self.proc = subprocess.Popen(
            self.command, env=env, stdout=self.log, stderr=subprocess.STDOUT, cwd=str(HERE)
        )

    def wait_ready(self, timeout: float = 60.0) -> str | None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return f"exited with {self.proc.returncode}: {self.log_tail()}"
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return None
            except OSError:
                time.sleep(0.1)
        return f"did not listen within {timeout:.0f}s"

    def log_tail(self, lines: int = 8) -> str:
        try:
            return " | ".join(
                Path(self.log.name).read_text(errors="replace").strip().splitlines()[-lines:]
            )
        except OSError:
            return ""

    def cpu_seconds(self) -> float:
        try:
            fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, IndexError, ValueError):
            return float("nan")

    def run_delay(self) -> float:
        """Seconds the server's main thread was runnable but waiting for a CPU (schedstat)."""
        try:
            return int(Path(f"/proc/{self.proc.pid}/schedstat").read_text().split()[1]) / 1e9
        except (OSError, IndexError, ValueError):
            return float("nan")

    def stop(self) -> None:
        stop_server(self.proc)
        self.log.close()
        try:
            os.unlink(self.log.name)
        except OSError:
            pass


# --- the pre-flight check --------------------------------------------------------------------


def _messages(response: httpx.Response) -> list[dict]:
    """The JSON-RPC messages of a response: a JSON body or SSE ``data:`` lines."""
    kind = response.headers.get("content-type", "")
    if kind.startswith("text/event-stream"):
        out = []
        for line in response.text.splitlines():
            if line.startswith("data:") and line[5:].strip():
                out.append(json.loads(line[5:]))
        return out
    value = response.json()
    return value if isinstance(value, list) else [value]


def check_call(response: httpx.Response, modern: bool = False) -> str | None:
    """None when ``response`` carries add(1, 2)'s result; ``modern``: in the 2026-07-28 shape."""
    if response.status_code != 200:
        return f"tools/call answered {response.status_code}: {response.text[:200]}"
    try:
        replies = [m for m in _messages(response) if m.get("id") == 1]
    except ValueError:
        return f"tools/call answered an unparsable body: {response.text[:200]}"
    if not replies or "result" not in replies[0]:
        return f"tools/call answered without a result: {response.text[:200]}"
    result = replies[0]["result"]
    texts = [c.get("text") for c in result.get("content", []) if c.get("type") == "text"]
    if result.get("isError") or texts != ["3"]:
        return f"tools/call answered the wrong result: {json.dumps(result)[:200]}"
    if modern and result.get("resultType") != "complete":
        return f'tools/call answered without resultType "complete" (not the 2026-07-28 shape): {json.dumps(result)[:200]}'
    return None


class SetupFailed(Exception):
    """The server refused the handshake a scenario needs (the message says how)."""


def open_session(client: httpx.Client, url: str) -> dict[str, str]:
    """initialize, then notifications/initialized: the headers of the new session's requests."""
    r = client.post(url, json=INIT, headers=ACCEPT_HEADERS)
    session = r.headers.get("mcp-session-id")
    if r.status_code != 200 or not session:
        raise SetupFailed(
            f"initialize answered {r.status_code} without a session id: {r.text[:200]}"
        )
    headers = {**ACCEPT_HEADERS, "Mcp-Session-Id": session}
    r = client.post(url, json=INITIALIZED, headers=headers)
    if r.status_code not in (200, 202, 204):
        raise SetupFailed(f"notifications/initialized answered {r.status_code}")
    return headers


def preflight(url: str, scenario: str) -> str | None:
    """None when the server answers the scenario's exchange correctly, else what was wrong."""
    mode = SCENARIOS[scenario][0]
    try:
        with httpx.Client(timeout=10.0) as client:
            if scenario == "call-modern":
                return check_call(
                    client.post(url, json=CALL_MODERN, headers=MODERN_HEADERS), modern=True
                )
            if mode == "stateless":
                return check_call(client.post(url, json=CALL, headers=ACCEPT_HEADERS))
            headers = open_session(client, url)
            problem = check_call(client.post(url, json=CALL, headers=headers))
            if problem:
                return problem
            r = client.delete(url, headers=headers)
            if not 200 <= r.status_code < 300:
                return f"DELETE answered {r.status_code}"
            return None
    except SetupFailed as exc:
        return str(exc)
    except httpx.HTTPError as exc:
        return f"{type(exc).__name__}: {exc}"


def cpu_busy() -> dict[int, float]:
    """Busy seconds per CPU since boot (/proc/stat: all but idle and iowait)."""
    out = {}
    tick = os.sysconf("SC_CLK_TCK")
    try:
        for line in Path("/proc/stat").read_text().splitlines():
            name, *values = line.split()
            if name.startswith("cpu") and name != "cpu":
                v = [int(x) for x in values]
                out[int(name[3:])] = (sum(v[:8]) - v[3] - v[4]) / tick
    except (OSError, ValueError):
        pass
    return out


# --- wrk -------------------------------------------------------------------------------------


def _schedstat_wait(pid: int) -> float | None:
    try:
        return int(Path(f"/proc/{pid}/schedstat").read_text().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return None


def run_wrk(
    wrk: str,
    url: str,
    script: str,
    seconds: float,
    connections: int,
    script_args: tuple[str, ...] = (),
) -> tuple[dict | None, str, float, float]:
    """wrk's BENCH_RESULT, its raw output, the CPU seconds it used, and the seconds it was
    runnable but waiting for its core (read from schedstat while it runs)."""
    command = wrk_command(wrk, url, script, seconds, connections, WRK_CPU, script_args)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait = 0.0
    while proc.poll() is None:  # wrk's output is a few lines: the pipes cannot fill
        wait = _schedstat_wait(proc.pid) or wait
        time.sleep(0.1)
    stdout, stderr = proc.communicate()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return bench_result(stdout), stdout + stderr, cpu, wait


def load_once(wrk: str, server: Server, scenario: str, args: argparse.Namespace) -> dict:
    """One measured wrk run against a running server."""
    _mode, script, _unit = SCENARIOS[scenario]
    cpu0, delay0, busy0, t0 = server.cpu_seconds(), server.run_delay(), cpu_busy(), time.monotonic()
    result, raw, wrk_cpu, wrk_wait = run_wrk(
        wrk, server.url, script, args.duration, args.connections
    )
    elapsed = time.monotonic() - t0
    server_cpu = server.cpu_seconds() - cpu0
    server_wait = server.run_delay() - delay0
    busy1 = cpu_busy()
    if result is None:
        return {"wrong": f"wrk gave no result: {raw.strip()[-300:]} / server: {server.log_tail()}"}
    # what else ran on each core meanwhile: the noise of a shared machine
    other = {
        core: max(0.0, busy1.get(core, 0.0) - busy0.get(core, 0.0) - mine) / elapsed
        for core, mine in ((SERVER_CPU, server_cpu), (WRK_CPU, wrk_cpu))
    }
    seconds = result["duration_us"] / 1e6
    counted = result["cycles"] if scenario == "churn" else result["ok"]
    errors = sum(
        result.get(k, 0) for k in ("bad", "non200", "setup_bad", "lost")
    )  # `codes`: which statuses
    errors += sum(result[k] for k in ("err_connect", "err_read", "err_write", "err_timeout"))
    noise = max(server_wait, wrk_wait) / elapsed
    return {
        "rate": counted / seconds,
        # the same work per second of server CPU: what a call costs, robust to a busy machine
        "rate_per_cpu_s": counted / server_cpu if server_cpu > 0 else None,
        "requests_per_s": result["requests"] / seconds,
        "errors": errors,
        "server_cpu": server_cpu / elapsed,
        "server_wait": server_wait / elapsed,
        "wrk_cpu": wrk_cpu / elapsed,
        "wrk_wait": wrk_wait / elapsed,
        "other_on_server_cpu": other[SERVER_CPU],
        "other_on_wrk_cpu": other[WRK_CPU],
        "noise": noise,
        "disturbed": noise > args.max_wait,
        "wrk": result,
    }


def measure(wrk: str, name: str, scenario: str, flags: list[str], args: argparse.Namespace) -> dict:
    mode, script, _unit = SCENARIOS[scenario]
    server = Server(name, mode, flags)
    row: dict = {"server": name, "scenario": scenario}
    try:
        problem = server.wait_ready()
        if problem is None:
            problem = preflight(server.url, scenario)
        if problem is not None:
            row["wrong"] = problem
            return row
        if args.warmup > 0:
            run_wrk(wrk, server.url, script, args.warmup, args.connections)
        samples = []
        for attempt in range(1 + args.retries):
            sample = load_once(wrk, server, scenario, args)
            samples.append(sample)
            if "wrong" in sample or not sample["disturbed"]:
                break
            if attempt < args.retries:
                log(
                    f"    {scenario} {name}: disturbed (server waited {sample['server_wait']:.0%}, wrk {sample['wrk_wait']:.0%}"
                    f" of the run for a core): again"
                )
        good = [s for s in samples if "wrong" not in s]
        if not good:
            row.update(samples[-1])
            return row
        row.update(min(good, key=lambda s: s["noise"]))
        row["attempts"] = len(samples)
        if server.proc.poll() is not None:
            row["wrong"] = f"server died under load: {server.log_tail()}"
        return row
    finally:
        server.stop()


# --- the report ------------------------------------------------------------------------------


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def summarize(rows: list[dict], scenarios: list[str], servers: list[str], rounds: int) -> dict:
    summary: dict = {}
    for scenario in scenarios:
        per_server = {}
        for name in servers:
            mine = [r for r in rows if r["scenario"] == scenario and r["server"] == name]
            good = [r for r in mine if "rate" in r and "wrong" not in r]
            wrong = [r["wrong"] for r in mine if "wrong" in r]
            per_server[name] = {
                "rate_median": _median([r["rate"] for r in good]),
                "rate_min": min((r["rate"] for r in good), default=None),
                "rate_max": max((r["rate"] for r in good), default=None),
                "rate_median_undisturbed": _median([r["rate"] for r in good if not r["disturbed"]]),
                "requests_per_s_median": _median([r["requests_per_s"] for r in good]),
                "rate_per_cpu_s_median": _median(
                    [r["rate_per_cpu_s"] for r in good if r["rate_per_cpu_s"]]
                ),
                "errors": sum(r["errors"] for r in good),
                "server_cpu_median": _median([r["server_cpu"] for r in good]),
                "wrk_cpu_median": _median([r["wrk_cpu"] for r in good]),
                "server_wait_median": _median([r["server_wait"] for r in good]),
                "wrk_wait_median": _median([r["wrk_wait"] for r in good]),
                "disturbed_runs": sum(1 for r in good if r["disturbed"]),
                "runs": len(good),
                "other_on_server_cpu_median": _median([r["other_on_server_cpu"] for r in good]),
                "other_on_wrk_cpu_median": _median([r["other_on_wrk_cpu"] for r in good]),
                "statuses": ",".join(
                    r["wrk"].get("codes", "") for r in good if r["wrk"].get("codes")
                ),
                "p50_ms_median": _median([r["wrk"]["lat_p50_us"] / 1000 for r in good]),
                "p99_ms_median": _median([r["wrk"]["lat_p99_us"] / 1000 for r in good]),
                "wrong": wrong[0] if wrong else None,
                "not_applicable": NOT_APPLICABLE.get(scenario, {}).get(name),
            }
        entry: dict = {"servers": per_server}
        for metric, key, clean in (
            ("rate", "ratios", False),
            ("rate_per_cpu_s", "ratios_per_cpu_s", False),
            ("rate", "ratios_undisturbed", True),
        ):
            # ratios inside each round, then the median over rounds; `clean`: only pairs of runs
            # that were both undisturbed (and best-peer only when every peer's run was)
            ratios: dict[str, list[float]] = {}
            best_names: list[str] = []
            for round_ in range(rounds):
                measured = {
                    r["server"]: r
                    for r in rows
                    if r["scenario"] == scenario
                    and r["round"] == round_
                    and r.get(metric)
                    and "wrong" not in r
                }
                rates = {
                    name: r[metric]
                    for name, r in measured.items()
                    if not (clean and r.get("disturbed"))
                }
                for served, ceiling in SAME_SERVING.items():  # served the same way
                    if served != "mcpkit" and rates.get(served) and rates.get(ceiling):
                        ratios.setdefault(f"{served}/{ceiling}", []).append(
                            rates[served] / rates[ceiling]
                        )
                for served in ALSO_AGAINST_BARE:  # against uvicorn's command line too
                    if rates.get(served) and rates.get("bare"):
                        ratios.setdefault(f"{served}/bare", []).append(
                            rates[served] / rates["bare"]
                        )
                if "mcpkit" not in rates:
                    continue
                for other, rate in rates.items():
                    if other != "mcpkit" and rate > 0:
                        ratios.setdefault(f"mcpkit/{other}", []).append(rates["mcpkit"] / rate)
                peers = {p: rates[p] for p in PEER_NAMES if p in rates and rates[p] > 0}
                if clean and any(p in measured and p not in rates for p in PEER_NAMES):
                    peers = {}
                if peers:
                    best = max(peers, key=peers.__getitem__)
                    best_names.append(best)
                    ratios.setdefault("mcpkit/best-peer", []).append(rates["mcpkit"] / peers[best])
            entry[key] = {
                k: {"median": _median(v), "min": min(v), "max": max(v), "rounds": len(v)}
                for k, v in ratios.items()
            }
            entry[key.replace("ratios", "best_peer")] = (
                max(set(best_names), key=best_names.count) if best_names else None
            )
        summary[scenario] = entry
    return summary


def _fmt(value: float | None, spec: str = ",.0f") -> str:
    return "-" if value is None else format(value, spec)


def print_report(summary: dict, scenarios: list[str], servers: list[str], rounds: int) -> None:
    print()
    print(
        f"rate = median over {rounds} round(s), [min..max]; req/s = all HTTP requests; errors = non-200, wrong bodies,"
    )
    print(
        "socket errors; srv / wrk = CPU used by the server / wrk (share of one core), each followed by its wait ="
    )
    print(
        "share of the run it was runnable but its core was taken by other work; dist = runs still disturbed"
    )
    print(
        "(wait > --max-wait) after the retries, of all runs; p50/p99 = wrk latency; per CPU-s = rate per"
    )
    print("second of server CPU")
    header = (
        f"{'scenario':<15} {'server':<9} {'rate':>10} {'unit':<8} {'[min..max]':>19} {'req/s':>8} {'errors':>6} "
        f"{'srv':>5} {'wait':>5} {'wrk':>5} {'wait':>5} {'dist':>4} {'p50 ms':>7} {'p99 ms':>7} {'per CPU-s':>9}"
    )
    print(header)
    print("-" * len(header))
    for scenario in scenarios:
        unit = SCENARIOS[scenario][2]
        for name in servers:
            s = summary[scenario]["servers"][name]
            if s["not_applicable"]:
                print(f"{scenario:<15} {name:<9} n/a: {s['not_applicable']}")
                continue
            if s["rate_median"] is None:
                print(f"{scenario:<15} {name:<9} {'not measured: ' + (s['wrong'] or 'no result')}")
                continue
            spread = f"[{_fmt(s['rate_min'])}..{_fmt(s['rate_max'])}]"
            print(
                f"{scenario:<15} {name:<9} {_fmt(s['rate_median']):>10} {unit:<8} {spread:>19} "
                f"{_fmt(s['requests_per_s_median']):>8} {s['errors']:>6} {_fmt(s['server_cpu_median'], '.0%'):>5} "
                f"{_fmt(s['server_wait_median'], '.0%'):>5} "
                f"{_fmt(s['wrk_cpu_median'], '.0%'):>5} {_fmt(s['wrk_wait_median'], '.0%'):>5} "
                f"{str(s['disturbed_runs']) + '/' + str(s['runs']):>4} {_fmt(s['p50_ms_median'], '.2f'):>7} {_fmt(s['p99_ms_median'], '.2f'):>7} "
                f"{_fmt(s['rate_per_cpu_s_median']):>9}"
            )
            if s["statuses"]:
                print(f"{'':<25} (unexpected statuses, code:count: {s['statuses'][:150]})")
            if s["wrong"]:
                print(f"{'':<25} (a round failed: {s['wrong'][:150]})")
    keys = ["mcpkit/bare", "mcpkit/best-peer", *(f"mcpkit/{p}" for p in PEER_NAMES)]
    if "baseline" in servers:
        keys.append("mcpkit/baseline")
    if "mcpkit-run" in servers:
        keys.append("mcpkit/mcpkit-run")
    for served, ceiling in SAME_SERVING.items():
        if served != "mcpkit" and served in servers and ceiling in servers:
            keys.append(f"{served}/{ceiling}")
    for served in ALSO_AGAINST_BARE:
        if served in servers and "bare" in servers:
            keys.append(f"{served}/bare")
    for key, best_key, title in (
        (
            "ratios",
            "best_peer",
            "ratios of mcpkit's rate, taken within each round (median [min..max])",
        ),
        (
            "ratios_undisturbed",
            "best_peer_undisturbed",
            "the same, from undisturbed pairs only (both runs of the pair waited <= --max-wait for their cores)",
        ),
        (
            "ratios_per_cpu_s",
            "best_peer_per_cpu_s",
            "ratios of mcpkit's rate per server CPU-second (cost per call; less sensitive to a busy machine)",
        ),
    ):
        print()
        print(title)
        print(f"{'scenario':<15} " + " ".join(f"{k:>24}" for k in keys))
        for scenario in scenarios:
            ratios = summary[scenario][key]
            cells = []
            for k in keys:
                r = ratios.get(k)
                if r is None:
                    cells.append(f"{'-':>24}")
                    continue
                text = f"{r['median']:.2f} [{r['min']:.2f}..{r['max']:.2f}]"
                if k == "mcpkit/best-peer" and summary[scenario][best_key]:
                    text = f"{summary[scenario][best_key]}: {text}"
                cells.append(f"{text:>24}")
            print(f"{scenario:<15} " + " ".join(cells))
    print()
    print("targets (all rounds | undisturbed pairs only | per server CPU-second)")

    def trio(scenario: str, ratio: str) -> list[float | None]:
        return [
            summary[scenario][k].get(ratio, {}).get("median")
            for k in ("ratios", "ratios_undisturbed", "ratios_per_cpu_s")
        ]

    def show(values: list[float | None], spec: str) -> str:
        return " | ".join("-" if v is None else format(v, spec) for v in values)

    def verdict(values: list[float | None], floor: float) -> str:
        return "met" if min(v for v in values if v is not None) >= floor else "NOT met"

    # call-modern: the 2026-07-28 issue's targets (the peer to beat is the official SDK in that era)
    for scenario in ("call-stateless", "call-session", "call-modern", "churn"):
        if scenario not in summary:
            continue
        share = CHURN_SHARE_OF_BARE if scenario == "churn" else SHARE_OF_BARE
        best = trio(scenario, "mcpkit/best-peer")
        for served in ("mcpkit", *ALSO_AGAINST_BARE):
            bare = trio(scenario, f"{served}/{SAME_SERVING[served]}")
            if bare[0] is not None:
                label = f"{scenario}: {served} >= {share:.0%} of {SAME_SERVING[served]} "
                print(f"  {label:.<46} {show(bare, '.0%')}  {verdict(bare, share)}")
        if best[0] is not None and scenario != "churn":
            label = f"{scenario}: mcpkit >= {TIMES_FASTEST_PEER}x fastest peer "
            print(f"  {label:.<46} {show(best, '.2f')}  {verdict(best, TIMES_FASTEST_PEER)}")
    if "churn" in summary:
        s = summary["churn"]["servers"].get("mcpkit", {})
        rates = [
            s.get("rate_median"),
            s.get("rate_median_undisturbed"),
            s.get("rate_per_cpu_s_median"),
        ]
        if rates[0] is not None:
            label = f"churn: mcpkit >= {CHURN_MIN_RATE:,} cycles/s "
            print(f"  {label:.<46} {show(rates, ',.0f')}  {verdict(rates, CHURN_MIN_RATE)}")
    print("  memory per idle session: see bench/session_memory.py")


# --- profiling -------------------------------------------------------------------------------


def profile(wrk: str, name: str, scenario: str, flags: list[str], args: argparse.Namespace) -> None:
    """One server (mcpkit unless ``--only`` names another) under ``scenario``'s load with
    py-spy attached: where its CPU goes, by package, function and line."""
    py_spy = PEERS / "bin" / "py-spy"
    if not py_spy.exists():
        ensure_peers([], ["py-spy"], upgrade=False)
    if name in NOT_APPLICABLE.get(scenario, {}):
        sys.exit(f"{name} is not applicable to {scenario}: {NOT_APPLICABLE[scenario][name]}")
    mode, script, unit = SCENARIOS[scenario]
    server = Server(name, mode, flags)
    out = tempfile.NamedTemporaryFile(prefix="bench-pyspy-", suffix=".txt", delete=False)
    out.close()
    try:
        problem = server.wait_ready() or preflight(server.url, scenario)
        if problem:
            sys.exit(f"{name} is not answering {scenario}: {problem}")
        run_wrk(wrk, server.url, script, args.warmup or 2, args.connections)
        spy = subprocess.Popen(
            pinned(
                [
                    str(py_spy),
                    "record",
                    "--pid",
                    str(server.proc.pid),
                    "--format",
                    "raw",
                    "--rate",
                    "200",
                    "--nonblocking",
                    "--duration",
                    str(int(args.duration)),
                    "--output",
                    out.name,
                ],
                WRK_CPU,
            ),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        cpu0 = server.cpu_seconds()
        result, _raw, _cpu, _wait = run_wrk(
            wrk, server.url, script, args.duration, args.connections
        )
        server_cpu = server.cpu_seconds() - cpu0
        spy.wait(args.duration + 30)
        per_request_us = None
        if result:
            counted = result["cycles"] if scenario == "churn" else result["ok"]
            per_request_us = server_cpu / result["requests"] * 1e6 if result["requests"] else None
            print(
                f"{name} {scenario} under py-spy: {counted / (result['duration_us'] / 1e6):,.0f} {unit},"
                f" {per_request_us:.1f} µs of server CPU per HTTP request"
            )
        print_profile(Path(out.name), args.top, per_request_us)
    finally:
        server.stop()
        if args.profile_out:
            shutil.move(out.name, args.profile_out)
            log(f"py-spy's raw stacks: {args.profile_out}")
        else:
            os.unlink(out.name)


def _frame_parts(frame: str) -> tuple[str, str, str]:
    """py-spy's ``function (file:line)`` -> (function, file, line)."""
    name, _, where = frame.rpartition(" (")
    file, _, line = where.rstrip(")").rpartition(":")
    return name, file, line


def _area(file: str) -> str:
    for key in ("mcpkit/", "uvicorn/", "asyncio/", "msgspec/", "httptools/", "uvloop/"):
        if file.startswith(key) or f"/{key}" in file:
            return key.rstrip("/")
    return "other"


def print_profile(path: Path, top: int, per_request_us: float | None = None) -> None:
    own_line: dict[str, int] = {}
    own_fn: dict[str, int] = {}
    total_fn: dict[str, int] = {}
    areas: dict[str, int] = {}
    samples = 0
    for line in path.read_text().splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        frames = [
            f for f in stack.split(";") if " (" in f and not f.startswith(("process ", "thread "))
        ]
        if not frames:
            continue
        count = int(count_text)
        samples += count
        leaf = frames[-1]
        name, file, _ = _frame_parts(leaf)
        own_line[leaf] = own_line.get(leaf, 0) + count
        own_fn[f"{name} ({file})"] = own_fn.get(f"{name} ({file})", 0) + count
        areas[_area(file)] = areas.get(_area(file), 0) + count
        seen = set()
        for frame in frames:
            n, f, _ = _frame_parts(frame)
            key = f"{n} ({f})"
            if key not in seen:
                seen.add(key)
                total_fn[key] = total_fn.get(key, 0) + count
    if not samples:
        print("py-spy recorded no samples")
        return
    print(f"{samples} samples of the server's main thread while on CPU")
    print(
        "\nown time by package (the innermost Python frame; time in C code called from Python counts for its caller;"
    )
    print("'asyncio' = the event loop itself, uvloop's C code included)")
    for area, count in sorted(areas.items(), key=lambda kv: -kv[1]):
        us = f"  ~{count / samples * per_request_us:5.1f} µs/request" if per_request_us else ""
        print(f"  {count / samples:6.1%}  {area:<10}{us}")
    print(f"\ntop {top} functions by own time")
    for key, count in sorted(own_fn.items(), key=lambda kv: -kv[1])[:top]:
        print(f"  {count / samples:6.1%}  {key}")
    print(f"\ntop {top} lines by own time (file:line is the line running)")
    for frame, count in sorted(own_line.items(), key=lambda kv: -kv[1])[:top]:
        print(f"  {count / samples:6.1%}  {frame}")
    print(f"\ntop {top} mcpkit functions by total time (the function and everything it called)")
    mine = [
        (k, c) for k, c in total_fn.items() if _area(k.rpartition(" (")[2].rstrip(")")) == "mcpkit"
    ]
    for key, count in sorted(mine, key=lambda kv: -kv[1])[:top]:
        print(f"  {count / samples:6.1%}  {key}")


# --- main ------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--duration",
        type=float,
        default=10.0,
        help="seconds measured per server and scenario (default 10)",
    )
    parser.add_argument(
        "--warmup",
        type=float,
        default=2.0,
        help="seconds of unmeasured load first (default 2; 0 = none)",
    )
    parser.add_argument("--connections", type=int, default=16, help="wrk connections (default 16)")
    parser.add_argument(
        "--max-wait",
        type=float,
        default=0.10,
        help="a run is 'disturbed' when the server or wrk waited longer than this share of it for "
        "their core (other work on the machine); default 0.10",
    )
    parser.add_argument(
        "--retries",
        type=int,
        default=2,
        help="measure a disturbed run again, up to this many times, keeping the least disturbed (default 2)",
    )
    parser.add_argument(
        "--rounds", type=int, default=3, help="interleaved rounds; medians are reported (default 3)"
    )
    parser.add_argument(
        "--only", nargs="+", choices=list(SERVERS), help="servers to run (default: all)"
    )
    parser.add_argument(
        "--scenarios", nargs="+", choices=list(SCENARIOS), help="scenarios to run (default: all)"
    )
    parser.add_argument(
        "--http",
        choices=["auto", "httptools", "h11"],
        default="auto",
        help="uvicorn HTTP stack for every server (auto: uvloop+httptools where both venvs have them)",
    )
    parser.add_argument(
        "--mcpkit-source",
        default="worktree",
        metavar="REV",
        help="serve mcpkit from the work tree (default) or from git revision REV, e.g. HEAD "
        "(a snapshot: edits made during the run don't change what is measured)",
    )
    parser.add_argument(
        "--baseline",
        metavar="REV",
        help="also serve mcpkit of git revision REV as the server 'baseline' and print its "
        "ratio to the bare app beside mcpkit's: a change's cost measured within each round",
    )
    parser.add_argument(
        "--upgrade-peers", action="store_true", help="reinstall the peers at their latest versions"
    )
    parser.add_argument(
        "--json", type=Path, help="also write the JSON results here (a path outside the repository)"
    )
    parser.add_argument(
        "--profile",
        choices=list(SCENARIOS),
        help="instead: profile mcpkit (or the first --only server) under this scenario with py-spy",
    )
    parser.add_argument(
        "--top", type=int, default=25, help="frames shown by --profile (default 25)"
    )
    parser.add_argument(
        "--profile-out",
        type=Path,
        help="keep py-spy's raw (collapsed) stacks here, outside the repository",
    )
    args = parser.parse_args()
    for option, value in (("--json", args.json), ("--profile-out", args.profile_out)):
        if value is not None and (value.resolve() == ROOT or ROOT in value.resolve().parents):
            sys.exit(f"{option}: results stay out of the repository; give a path outside it")

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # run the finally blocks: stop servers
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        run(args)
    finally:
        drop_mcpkit_snapshot()


def run(args: argparse.Namespace) -> None:
    wrk = ensure_wrk()
    pin_self(WRK_CPU)
    servers = args.only or [s for s in SERVERS if s not in BASELINES]
    if args.baseline and not args.only:
        servers.extend(BASELINES)
    if any(s in BASELINES for s in servers) and not args.baseline:
        sys.exit("the baseline servers need --baseline REV")
    scenarios = args.scenarios or list(SCENARIOS)
    wanted_peers = [s for s in servers if s in PEER_NAMES]
    peer_versions = ensure_peers(wanted_peers, [], args.upgrade_peers) if wanted_peers else {}
    for peer in wanted_peers:
        if peer not in peer_versions:
            log(f"{peer}: not installed, skipped")
    servers = [s for s in servers if s not in PEER_NAMES or s in peer_versions]
    flags = ensure_fast_http(args.http, bool(wanted_peers))

    if args.mcpkit_source != "worktree":
        mcpkit_source = f"git {use_mcpkit_snapshot(args.mcpkit_source)} (snapshot)"
    else:
        head = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=False,
        )
        dirty = subprocess.run(
            ["git", "-C", str(ROOT), "status", "--porcelain", "src"],
            capture_output=True,
            text=True,
            check=False,
        )
        mcpkit_source = (
            "work tree at "
            + head.stdout.strip()
            + (" + uncommitted src changes" if dirty.stdout.strip() else "")
        )
    log(f"mcpkit served from the {mcpkit_source}")
    if args.baseline:
        log(f"baseline: mcpkit of git {use_baseline_snapshot(args.baseline)} (snapshot)")

    if args.profile:
        profile(wrk, (args.only or ["mcpkit"])[0], args.profile, flags, args)
        return

    versions = {
        "mcpkit": _versions(PROJECT_PY, ["mcpkit"]).get("mcpkit"),
        "mcpkit source": mcpkit_source,
        "uvicorn (project)": _versions(PROJECT_PY, ["uvicorn"]).get("uvicorn"),
        **(
            {"uvicorn (peers)": _versions(PEERS_PY, ["uvicorn"]).get("uvicorn")}
            if wanted_peers
            else {}
        ),
        **{p: v for p, v in peer_versions.items()},
    }
    log(f"versions: {versions}")
    log(f"uvicorn flags: {' '.join(flags)}; server on CPU {SERVER_CPU}, wrk on CPU {WRK_CPU}")
    for scenario in scenarios:
        for name in servers:
            if name in NOT_APPLICABLE.get(scenario, {}):
                log(f"{scenario}: {name} not applicable, skipped: {NOT_APPLICABLE[scenario][name]}")
    started = _dt.datetime.now().astimezone()
    load_before = os.getloadavg()
    rows: list[dict] = []
    for round_ in range(args.rounds):
        for scenario in scenarios:
            shift = round_ % len(servers)
            for name in servers[shift:] + servers[:shift]:
                if name in NOT_APPLICABLE.get(scenario, {}):
                    continue
                row = measure(wrk, name, scenario, flags, args)
                row["round"] = round_
                rows.append(row)
                if "wrong" in row:
                    log(
                        f"round {round_ + 1}/{args.rounds} {scenario:<15} {name:<9} WRONG: {row['wrong'][:300]}"
                    )
                else:
                    log(
                        f"round {round_ + 1}/{args.rounds} {scenario:<15} {name:<9} {row['rate']:>9,.0f} {SCENARIOS[scenario][2]}"
                        f"  errors {row['errors']}  server CPU {row['server_cpu']:.0%} (wait {row['server_wait']:.0%})"
                        f"  wrk CPU {row['wrk_cpu']:.0%} (wait {row['wrk_wait']:.0%})"
                        + ("  DISTURBED" if row["disturbed"] else "")
                    )
    summary = summarize(rows, scenarios, servers, args.rounds)
    print_report(summary, scenarios, servers, args.rounds)
    document = {
        "date": started.isoformat(timespec="seconds"),
        "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]),
        "machine": {
            "cpus": os.cpu_count(),
            "loadavg_before": load_before,
            "loadavg_after": os.getloadavg(),
        },
        "config": {
            "duration_s": args.duration,
            "warmup_s": args.warmup,
            "connections": args.connections,
            "rounds": args.rounds,
            "uvicorn_flags": flags,
            "server_cpu": SERVER_CPU,
            "wrk_cpu": WRK_CPU,
        },
        "versions": versions,
        "summary": summary,
        "runs": rows,
    }
    text = json.dumps(document, indent=1, default=str)
    print(
        f"\nJSON (bench/results/http-{started:%Y-%m-%d}.json, not written: results stay out of git)"
    )
    print(text)
    if args.json is not None:
        args.json.write_text(text)
        log(f"wrote {args.json}")


if __name__ == "__main__":
    main()
