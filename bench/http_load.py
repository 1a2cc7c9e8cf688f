"""HTTP load: mcpkit's Streamable HTTP server against a bare ASGI ceiling and peer SDKs,
every server under the same uvicorn, loaded by wrk.

    python bench/http_load.py [--duration S] [--connections 16] [--rounds R] [--only NAME...]
                              [--scenarios NAME...] [--json PATH] [--profile SCENARIO]

Servers (bench/servers/http_*.py, each the same ``add(a, b)`` tool):
  bare      a bare ASGI app answering a fixed tools/call result: the ceiling
  mcpkit    mcpkit's ``create_asgi_app`` (project venv)
  official  the official SDK's ``MCPServer.streamable_http_app`` (bench/.venv-peers)
  fastmcp   ``FastMCP.http_app`` (bench/.venv-peers)
  lauren    lauren-mcp's Streamable HTTP controller (bench/.venv-peers)

Scenarios (bench/lua/*.lua):
  call-stateless  POST tools/call, no session; servers stateless with JSON responses
  call-session    16 sessions (initialize + initialized), then POST tools/call on them
  churn           initialize -> tools/call -> DELETE, a session per cycle; rate = cycles/s

Each server runs as ``taskset -c 1 <python> -m uvicorn ... --workers 1 --log-level warning
--no-access-log --loop uvloop --http httptools`` (``--loop asyncio --http h11`` for all when
either venv lacks uvloop or httptools), wrk as ``taskset -c 0 wrk -t1 -c16``. Rounds
interleave servers and scenarios; each round runs every server once per scenario, and the
ratios are taken inside a round, then the median over rounds is reported.

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
import re
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
    if PROJECT_PY.exists() and Path(sys.prefix).resolve() != (ROOT / ".venv").resolve() and not os.environ.get("BENCH_REEXEC"):
        os.environ["BENCH_REEXEC"] = "1"
        os.execv(str(PROJECT_PY), [str(PROJECT_PY), __file__, *sys.argv[1:]])
    sys.exit("bench/http_load.py needs httpx: run it with the project venv (.venv/bin/python)")

sys.path.insert(0, str(HERE))
from _pinning import pin_self, pinned  # noqa: E402

PEERS = HERE / ".venv-peers"
PEERS_PY = PEERS / "bin" / "python"
EXTRAS = PEERS / "project-extras"
SERVERS_DIR = HERE / "servers"
LUA_DIR = HERE / "lua"

#: name -> (venv, module:app)
SERVERS: dict[str, tuple[str, str]] = {
    "bare": ("project", "http_bare:app"),
    "mcpkit": ("project", "http_mcpkit:app"),
    "official": ("peers", "http_official:app"),
    "fastmcp": ("peers", "http_fastmcp:app"),
    "lauren": ("peers", "http_lauren:app"),
}
PEER_NAMES = ("official", "fastmcp", "lauren")
#: what each peer needs in bench/.venv-peers (latest that installs, except the pinned official SDK)
PEER_REQUIREMENTS = {"official": ["mcp==2.3.0"], "fastmcp": ["fastmcp"], "lauren": ["lauren-mcp"]}
PEER_DISTRIBUTIONS = {"official": "mcp", "fastmcp": "fastmcp", "lauren": "lauren-mcp"}
BASE_REQUIREMENTS = ["uvicorn[standard]"]

#: name -> (server mode, wrk script, what the rate counts)
SCENARIOS: dict[str, tuple[str, str, str]] = {
    "call-stateless": ("stateless", "call_stateless.lua", "calls/s"),
    "call-session": ("stateful", "call_session.lua", "calls/s"),
    "churn": ("stateful", "churn.lua", "cycles/s"),
}

ACCEPT_HEADERS = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
    "MCP-Protocol-Version": "2025-11-25",
}
CALL = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 1, "b": 2}}}
INIT = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}},
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}

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
    return subprocess.run([str(python), "-m", "pip", "install", "-q", *args], check=False).returncode == 0


def _versions(python: Path, distributions: list[str]) -> dict[str, str | None]:
    code = (
        "import json, sys\nfrom importlib import metadata\nout = {}\n"
        "for d in sys.argv[1:]:\n"
        "    try: out[d] = metadata.version(d)\n"
        "    except metadata.PackageNotFoundError: out[d] = None\n"
        "print(json.dumps(out))"
    )
    done = subprocess.run([str(python), "-c", code, *distributions], capture_output=True, text=True, check=False)
    return json.loads(done.stdout) if done.returncode == 0 else dict.fromkeys(distributions)


def ensure_peers(wanted: list[str], extra: list[str], upgrade: bool) -> dict[str, str]:
    """Creates/fills bench/.venv-peers; returns peer -> installed version (missing peers absent)."""
    if not PEERS_PY.exists():
        log(f"creating {PEERS.relative_to(ROOT)}")
        subprocess.run([sys.executable, "-m", "venv", str(PEERS)], check=True)
        _pip(PEERS_PY, ["--upgrade", "pip"])
    distributions = ["uvicorn", "uvloop", "httptools", *(PEER_DISTRIBUTIONS[p] for p in wanted), *extra]
    have = _versions(PEERS_PY, distributions)

    def satisfied(peer: str) -> bool:
        version = have.get(PEER_DISTRIBUTIONS[peer])
        return version == "2.3.0" if peer == "official" else version is not None

    missing = [p for p in wanted if not satisfied(p)]
    base_missing = any(have.get(d) is None for d in ("uvicorn", "uvloop", "httptools"))
    extra_missing = [d for d in extra if have.get(d) is None]
    if upgrade or missing or base_missing or extra_missing:
        todo = wanted if upgrade else missing
        requirements = [*BASE_REQUIREMENTS, *extra, *(r for p in todo for r in PEER_REQUIREMENTS[p])]
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
    return subprocess.run([str(python), "-c", f"import {modules}"], env=env, capture_output=True, check=False).returncode == 0


def project_env() -> dict[str, str]:
    env = dict(os.environ)
    if EXTRAS.exists():
        env["PYTHONPATH"] = str(EXTRAS)
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
        if PEERS_PY.exists() or need_peers:
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
        env = project_env() if venv == "project" else peers_env()
        env["BENCH_MODE"] = mode
        self.name = name
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.log = tempfile.NamedTemporaryFile(prefix=f"bench-{name}-", suffix=".log", delete=False)
        command = [
            str(python), "-m", "uvicorn", "--app-dir", str(SERVERS_DIR), target,
            "--host", "127.0.0.1", "--port", str(self.port), "--workers", "1",
            "--log-level", "warning", "--no-access-log", "--lifespan", "on", *flags,
        ]
        self.command = pinned(command, SERVER_CPU)
        self.proc = subprocess.Popen(self.command, env=env, stdout=self.log, stderr=subprocess.STDOUT, cwd=str(HERE))

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
            return " | ".join(Path(self.log.name).read_text(errors="replace").strip().splitlines()[-lines:])
        except OSError:
            return ""

    def cpu_seconds(self) -> float:
        try:
            fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, IndexError, ValueError):
            return float("nan")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
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


def _check_call(response: httpx.Response) -> str | None:
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
    return None


def preflight(url: str, mode: str) -> str | None:
    """None when the server answers the scenario's exchange correctly, else what was wrong."""
    try:
        with httpx.Client(timeout=10.0) as client:
            if mode == "stateless":
                return _check_call(client.post(url, json=CALL, headers=ACCEPT_HEADERS))
            r = client.post(url, json=INIT, headers=ACCEPT_HEADERS)
            session = r.headers.get("mcp-session-id")
            if r.status_code != 200 or not session:
                return f"initialize answered {r.status_code} without a session id: {r.text[:200]}"
            headers = {**ACCEPT_HEADERS, "Mcp-Session-Id": session}
            r = client.post(url, json=INITIALIZED, headers=headers)
            if r.status_code not in (200, 202, 204):
                return f"notifications/initialized answered {r.status_code}"
            problem = _check_call(client.post(url, json=CALL, headers=headers))
            if problem:
                return problem
            r = client.delete(url, headers=headers)
            if not 200 <= r.status_code < 300:
                return f"DELETE answered {r.status_code}"
            return None
    except httpx.HTTPError as exc:
        return f"{type(exc).__name__}: {exc}"


# --- wrk -------------------------------------------------------------------------------------


def run_wrk(wrk: str, url: str, script: str, seconds: float, connections: int) -> tuple[dict | None, str, float]:
    """wrk's BENCH_RESULT, its raw output, and the CPU seconds it used."""
    command = pinned(
        [wrk, "-t1", f"-c{connections}", f"-d{max(1, round(seconds))}s", "--timeout", "10s",
         "-s", str(LUA_DIR / script), url, "--", str(connections)],
        WRK_CPU,
    )
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    match = re.search(r"^BENCH_RESULT (\{.*\})$", done.stdout, re.M)
    return (json.loads(match.group(1)) if match else None), done.stdout + done.stderr, cpu


def measure(wrk: str, name: str, scenario: str, flags: list[str], args: argparse.Namespace) -> dict:
    mode, script, _unit = SCENARIOS[scenario]
    server = Server(name, mode, flags)
    row: dict = {"server": name, "scenario": scenario}
    try:
        problem = server.wait_ready()
        if problem is None:
            problem = preflight(server.url, mode)
        if problem is not None:
            row["wrong"] = problem
            return row
        if args.warmup > 0:
            run_wrk(wrk, server.url, script, args.warmup, args.connections)
        cpu0, t0 = server.cpu_seconds(), time.monotonic()
        result, raw, wrk_cpu = run_wrk(wrk, server.url, script, args.duration, args.connections)
        elapsed = time.monotonic() - t0
        server_cpu = server.cpu_seconds() - cpu0
        if result is None:
            row["wrong"] = f"wrk gave no result: {raw.strip()[-300:]} / server: {server.log_tail()}"
            return row
        seconds = result["duration_us"] / 1e6
        counted = result["cycles"] if scenario == "churn" else result["ok"]
        errors = sum(result.get(k, 0) for k in ("bad", "non200", "setup_bad", "lost"))
        errors += sum(result[k] for k in ("err_connect", "err_read", "err_write", "err_timeout"))
        row.update(
            rate=counted / seconds,
            requests_per_s=result["requests"] / seconds,
            errors=errors,
            server_cpu=server_cpu / elapsed,
            wrk_cpu=wrk_cpu / elapsed,
            wrk=result,
        )
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
                "requests_per_s_median": _median([r["requests_per_s"] for r in good]),
                "errors": sum(r["errors"] for r in good),
                "server_cpu_median": _median([r["server_cpu"] for r in good]),
                "wrk_cpu_median": _median([r["wrk_cpu"] for r in good]),
                "p50_ms_median": _median([r["wrk"]["lat_p50_us"] / 1000 for r in good]),
                "p99_ms_median": _median([r["wrk"]["lat_p99_us"] / 1000 for r in good]),
                "wrong": wrong[0] if wrong else None,
            }
        # ratios inside each round, then the median over rounds
        ratios: dict[str, list[float]] = {}
        best_names: list[str] = []
        for round_ in range(rounds):
            rates = {
                r["server"]: r["rate"] for r in rows
                if r["scenario"] == scenario and r["round"] == round_ and "rate" in r and "wrong" not in r
            }
            if "mcpkit" not in rates:
                continue
            for other, rate in rates.items():
                if other != "mcpkit" and rate > 0:
                    ratios.setdefault(f"mcpkit/{other}", []).append(rates["mcpkit"] / rate)
            peers = {p: rates[p] for p in PEER_NAMES if p in rates and rates[p] > 0}
            if peers:
                best = max(peers, key=peers.__getitem__)
                best_names.append(best)
                ratios.setdefault("mcpkit/best-peer", []).append(rates["mcpkit"] / peers[best])
        summary[scenario] = {
            "servers": per_server,
            "ratios": {k: {"median": _median(v), "min": min(v), "max": max(v), "rounds": len(v)} for k, v in ratios.items()},
            "best_peer": max(set(best_names), key=best_names.count) if best_names else None,
        }
    return summary


def _fmt(value: float | None, spec: str = ",.0f") -> str:
    return "-" if value is None else format(value, spec)


def print_report(summary: dict, scenarios: list[str], servers: list[str], rounds: int) -> None:
    print()
    print(f"rate = median over {rounds} round(s); [min..max]; req/s = all HTTP requests; CPU = share of one core")
    header = f"{'scenario':<15} {'server':<9} {'rate':>10} {'unit':<8} {'[min..max]':>19} {'req/s':>8} {'errors':>6} {'srv CPU':>7} {'wrk CPU':>7} {'p50 ms':>7} {'p99 ms':>7}"
    print(header)
    print("-" * len(header))
    for scenario in scenarios:
        unit = SCENARIOS[scenario][2]
        for name in servers:
            s = summary[scenario]["servers"][name]
            if s["rate_median"] is None:
                print(f"{scenario:<15} {name:<9} {'not measured: ' + (s['wrong'] or 'no result')}")
                continue
            spread = f"[{_fmt(s['rate_min'])}..{_fmt(s['rate_max'])}]"
            print(
                f"{scenario:<15} {name:<9} {_fmt(s['rate_median']):>10} {unit:<8} {spread:>19} "
                f"{_fmt(s['requests_per_s_median']):>8} {s['errors']:>6} {_fmt(s['server_cpu_median'], '.0%'):>7} "
                f"{_fmt(s['wrk_cpu_median'], '.0%'):>7} {_fmt(s['p50_ms_median'], '.2f'):>7} {_fmt(s['p99_ms_median'], '.2f'):>7}"
            )
            if s["wrong"]:
                print(f"{'':<25} (a round failed: {s['wrong'][:150]})")
    print()
    print("ratios of mcpkit's rate, taken within each round (median [min..max])")
    keys = ["mcpkit/bare", "mcpkit/best-peer", *(f"mcpkit/{p}" for p in PEER_NAMES)]
    print(f"{'scenario':<15} " + " ".join(f"{k:>22}" for k in keys))
    for scenario in scenarios:
        ratios = summary[scenario]["ratios"]
        cells = []
        for k in keys:
            r = ratios.get(k)
            if r is None:
                cells.append(f"{'-':>22}")
                continue
            text = f"{r['median']:.2f} [{r['min']:.2f}..{r['max']:.2f}]"
            if k == "mcpkit/best-peer" and summary[scenario]["best_peer"]:
                text = f"{summary[scenario]['best_peer']}: {text}"
            cells.append(f"{text:>22}")
        print(f"{scenario:<15} " + " ".join(cells))
    print()
    print("targets")
    for scenario in ("call-stateless", "call-session"):
        if scenario not in summary:
            continue
        ratios = summary[scenario]["ratios"]
        bare = ratios.get("mcpkit/bare")
        best = ratios.get("mcpkit/best-peer")
        if bare:
            print(f"  {scenario}: mcpkit >= 50% of bare ........ {bare['median']:.0%}  {'met' if bare['median'] >= 0.5 else 'NOT met'}")
        if best:
            print(f"  {scenario}: mcpkit >= 2x fastest peer .... {best['median']:.2f}x  {'met' if best['median'] >= 2 else 'NOT met'}")
    if "churn" in summary:
        rate = summary["churn"]["servers"].get("mcpkit", {}).get("rate_median")
        if rate is not None:
            print(f"  churn: mcpkit >= 5,000 cycles/s ......... {rate:,.0f}  {'met' if rate >= 5000 else 'NOT met'}")
    print("  memory per idle session: see bench/session_memory.py")


# --- profiling -------------------------------------------------------------------------------


def profile(wrk: str, scenario: str, flags: list[str], args: argparse.Namespace) -> None:
    """mcpkit under ``scenario``'s load with py-spy attached: the top frames by own and total time."""
    py_spy = PEERS / "bin" / "py-spy"
    if not py_spy.exists():
        ensure_peers([], ["py-spy"], upgrade=False)
    mode, script, _unit = SCENARIOS[scenario]
    server = Server("mcpkit", mode, flags)
    out = tempfile.NamedTemporaryFile(prefix="bench-pyspy-", suffix=".txt", delete=False)
    out.close()
    try:
        problem = server.wait_ready() or preflight(server.url, mode)
        if problem:
            sys.exit(f"mcpkit is not answering {scenario}: {problem}")
        run_wrk(wrk, server.url, script, args.warmup or 2, args.connections)
        spy = subprocess.Popen(
            pinned([str(py_spy), "record", "--pid", str(server.proc.pid), "--format", "raw", "--rate", "250",
                    "--nonblocking", "--duration", str(int(args.duration)), "--output", out.name], WRK_CPU),
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )
        result, _raw, _cpu = run_wrk(wrk, server.url, script, args.duration, args.connections)
        spy.wait(args.duration + 30)
        if result:
            counted = result["cycles"] if scenario == "churn" else result["ok"]
            print(f"mcpkit {scenario} under py-spy: {counted / (result['duration_us'] / 1e6):,.0f} {SCENARIOS[scenario][2]}")
        print_profile(Path(out.name), args.top)
    finally:
        server.stop()
        os.unlink(out.name)


def print_profile(path: Path, top: int) -> None:
    own: dict[str, int] = {}
    total: dict[str, int] = {}
    samples = 0
    for line in path.read_text().splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        samples += count
        frames = stack.split(";")
        frames = [f for f in frames if not f.startswith("process ") and not f.startswith("thread ")]
        if not frames:
            continue
        own[frames[-1]] = own.get(frames[-1], 0) + count
        for frame in set(frames):
            total[frame] = total.get(frame, 0) + count
    if not samples:
        print("py-spy recorded no samples")
        return

    def short(frame: str) -> str:
        return frame.replace(str(ROOT) + "/", "").replace(str(PEERS) + "/", "").replace(
            str(ROOT / ".venv" / "lib" / "python3.11" / "site-packages") + "/", "site-packages/")

    print(f"{samples} samples (on-CPU, 250/s)")
    print(f"\ntop {top} by own time (the frame itself was running)")
    for frame, count in sorted(own.items(), key=lambda kv: -kv[1])[:top]:
        print(f"  {count / samples:6.1%}  {short(frame)}")
    print(f"\ntop {top} mcpkit frames by total time (the frame or its callees)")
    mine = [(f, c) for f, c in total.items() if "src/mcpkit/" in f]
    for frame, count in sorted(mine, key=lambda kv: -kv[1])[:top]:
        print(f"  {count / samples:6.1%}  {short(frame)}")


# --- main ------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=float, default=10.0, help="seconds measured per server and scenario (default 10)")
    parser.add_argument("--warmup", type=float, default=2.0, help="seconds of unmeasured load first (default 2; 0 = none)")
    parser.add_argument("--connections", type=int, default=16, help="wrk connections (default 16)")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds; medians are reported (default 3)")
    parser.add_argument("--only", nargs="+", choices=list(SERVERS), help="servers to run (default: all)")
    parser.add_argument("--scenarios", nargs="+", choices=list(SCENARIOS), help="scenarios to run (default: all)")
    parser.add_argument("--http", choices=["auto", "httptools", "h11"], default="auto",
                        help="uvicorn HTTP stack for every server (auto: uvloop+httptools where both venvs have them)")
    parser.add_argument("--upgrade-peers", action="store_true", help="reinstall the peers at their latest versions")
    parser.add_argument("--json", type=Path, help="also write the JSON results here (a path outside the repository)")
    parser.add_argument("--profile", choices=list(SCENARIOS), help="instead: profile mcpkit under this scenario with py-spy")
    parser.add_argument("--top", type=int, default=25, help="frames shown by --profile (default 25)")
    args = parser.parse_args()
    if args.json is not None:
        target = args.json.resolve()
        if target == ROOT or ROOT in target.parents:
            sys.exit("--json: results stay out of the repository; give a path outside it")

    wrk = ensure_wrk()
    pin_self(WRK_CPU)
    servers = args.only or list(SERVERS)
    scenarios = args.scenarios or list(SCENARIOS)
    wanted_peers = [s for s in servers if s in PEER_NAMES]
    peer_versions = ensure_peers(wanted_peers, [], args.upgrade_peers) if wanted_peers else {}
    for peer in wanted_peers:
        if peer not in peer_versions:
            log(f"{peer}: not installed, skipped")
    servers = [s for s in servers if s not in PEER_NAMES or s in peer_versions]
    flags = ensure_fast_http(args.http, bool(wanted_peers))

    if args.profile:
        profile(wrk, args.profile, flags, args)
        return

    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False)
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "src"], capture_output=True, text=True, check=False)
    versions = {
        "mcpkit": _versions(PROJECT_PY, ["mcpkit"]).get("mcpkit"),
        "mcpkit source": head.stdout.strip() + (" + uncommitted src changes" if dirty.stdout.strip() else ""),
        "uvicorn (project)": _versions(PROJECT_PY, ["uvicorn"]).get("uvicorn"),
        **({"uvicorn (peers)": _versions(PEERS_PY, ["uvicorn"]).get("uvicorn")} if wanted_peers else {}),
        **{p: v for p, v in peer_versions.items()},
    }
    log(f"versions: {versions}")
    log(f"uvicorn flags: {' '.join(flags)}; server on CPU {SERVER_CPU}, wrk on CPU {WRK_CPU}")
    started = _dt.datetime.now().astimezone()
    load_before = os.getloadavg()
    rows: list[dict] = []
    for round_ in range(args.rounds):
        for scenario in scenarios:
            shift = round_ % len(servers)
            for name in servers[shift:] + servers[:shift]:
                row = measure(wrk, name, scenario, flags, args)
                row["round"] = round_
                rows.append(row)
                if "wrong" in row:
                    log(f"round {round_ + 1}/{args.rounds} {scenario:<15} {name:<9} WRONG: {row['wrong'][:300]}")
                else:
                    log(
                        f"round {round_ + 1}/{args.rounds} {scenario:<15} {name:<9} {row['rate']:>9,.0f} {SCENARIOS[scenario][2]}"
                        f"  errors {row['errors']}  server CPU {row['server_cpu']:.0%}  wrk CPU {row['wrk_cpu']:.0%}"
                    )
    summary = summarize(rows, scenarios, servers, args.rounds)
    print_report(summary, scenarios, servers, args.rounds)
    document = {
        "date": started.isoformat(timespec="seconds"),
        "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]),
        "machine": {"cpus": os.cpu_count(), "loadavg_before": load_before, "loadavg_after": os.getloadavg()},
        "config": {
            "duration_s": args.duration, "warmup_s": args.warmup, "connections": args.connections,
            "rounds": args.rounds, "uvicorn_flags": flags, "server_cpu": SERVER_CPU, "wrk_cpu": WRK_CPU,
        },
        "versions": versions,
        "summary": summary,
        "runs": rows,
    }
    text = json.dumps(document, indent=1, default=str)
    print(f"\nJSON (bench/results/http-{started:%Y-%m-%d}.json, not written: results stay out of git)")
    print(text)
    if args.json is not None:
        args.json.write_text(text)
        log(f"wrote {args.json}")


if __name__ == "__main__":
    main()
