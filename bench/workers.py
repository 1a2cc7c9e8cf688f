"""Workers: ``mcpkit run --workers N`` at N=1 and N=2 under the same wrk load, and the ratio,
beside the same ratio for the bare app of ``http_load.py`` (the ceiling: what N workers can
give on this machine at all).

    python bench/workers.py [--duration S] [--warmup S] [--rounds R] [--connections 16]
                            [--scenarios call-modern call-session] [--workers 1 2]
                            [--servers mcpkit bare] [--pipeline D]

The server is ``mcpkit run bench/servers/http_mcpkit.py -t http`` (the ``add`` tool of
``http_load.py``), with ``--stateless`` and legacy SSE off for ``call-modern`` (2026-07-28,
nothing shared), and ``--redis-url`` on a redis-server of the bench's own for ``call-session``
(16 handshake-era sessions; wrk's script hands each free session to whichever connection asks,
so one session's calls reach either worker). The load, the Lua scenarios, the pre-flight check
and the result line are ``http_load.py``'s. ``bare`` is ``servers/http_bare.py`` under
``uvicorn --workers N`` (uvloop and httptools when they import): it shares nothing, and
answers both scenarios with fixed bodies.

Pinning: wrk runs on CPU 0, as in ``http_load.py``; the server is not pinned at either N (on
a shared machine a pinned N=1 would be held to a core others may be using, flattering the
ratio), so the workers share the cores with wrk, which is what several workers on this machine
get. Rounds interleave N=1 and N=2; the ratio is taken inside each round and the median over
rounds is reported, with the calls per second of server CPU (what a call costs, whatever else
runs) and the CPU the rest of the machine used meanwhile, in cores: the noise to report. A run
during which that passed ``--max-other`` is measured again (``--retries``), the least disturbed
one kept.

``--pipeline D`` sends D requests per write (HTTP/1.1 pipelining, which uvicorn serves in
order): wrk then spends a fraction of its CPU per call, and on a machine with few cores the
workers get the cores wrk would take. For call-session the sessions are opened before the load
(one per connection) and each write carries D calls of one of them
(``lua/call_session_pipelined.lua``).

mcpkit is served from a copy of the work tree's ``src/mcpkit`` taken at the start, so edits
made while the bench runs do not change what it measures (``--live-tree``: the tree itself).

Nothing is written into the repository: the results are printed.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
import http_load as load
from _pinning import pin_self
from _uvicorn import uvicorn_command
from redis_stores import Redis

SERVER_FILE = load.SERVERS_DIR / "http_mcpkit.py"
BARE_APP = "http_bare:app"
SCENARIOS = ("call-modern", "call-session")
SERVER_KINDS = ("mcpkit", "bare")


def _cpu_of(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    found.append(int(entry.name))
            except (OSError, IndexError, ValueError):
                pass
    return found


class WorkersServer:
    """``mcpkit run --workers N`` serving the bench's ``add`` tool, or (``bare``) the bare app
    under ``uvicorn --workers N``."""

    def __init__(
        self, kind: str, workers: int, scenario: str, redis: Redis | None, flags: list[str]
    ) -> None:
        self.kind = kind
        self.workers = workers
        self.port = load.free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        env = load.project_env()
        env = {k: v for k, v in env.items() if not k.startswith("MCPKIT_")}
        if kind == "bare":
            command = uvicorn_command(load.PROJECT_PY, BARE_APP, self.port, flags, workers)
        else:
            command = [str(load.PROJECT_PY), "-m", "mcpkit", "run", str(SERVER_FILE), "-t", "http"]
            command += ["--port", str(self.port), "--workers", str(workers)]
            if scenario == "call-modern":
                command.append("--stateless")
                env["MCPKIT_ENABLE_LEGACY_SSE"] = "false"
            else:
                assert redis is not None
                command += ["--redis-url", redis.url]
        if shutil.which("taskset"):  # not the bench's own affinity (CPU 0): every core
            command = ["taskset", "-c", f"0-{(os.cpu_count() or 1) - 1}", *command]
        self.log = tempfile.NamedTemporaryFile(prefix="bench-workers-", suffix=".log", delete=False)
        self.proc = subprocess.Popen(command, env=env, stdout=self.log, stderr=subprocess.STDOUT)

    def wait_ready(self, timeout: float = 60.0) -> str | None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return f"exited with {self.proc.returncode}: {self.log_tail()}"
            if self._serving():
                return None
            time.sleep(0.1)
        return f"did not start within {timeout:.0f} s"

    def _serving(self) -> bool:
        if self.kind != "bare":  # mcpkit's banner: every worker serves
            return b"serving" in Path(self.log.name).read_bytes()
        # uvicorn says nothing at --log-level warning: its workers are there and one answers
        if self.workers > 1 and len(_children(self.proc.pid)) < self.workers:
            return False
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port), 1):
            return True
        return False

    def log_tail(self) -> str:
        return " | ".join(Path(self.log.name).read_text(errors="replace").splitlines()[-6:])

    def cpu_seconds(self) -> float:
        """CPU of the supervisor and its workers (the resource tracker too: next to nothing)."""
        return _cpu_of(self.proc.pid) + sum(self.per_child().values())

    def per_child(self) -> dict[int, float]:
        """CPU seconds of each child process (the workers, and the resource tracker)."""
        return {pid: _cpu_of(pid) for pid in _children(self.proc.pid)}

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        os.unlink(self.log.name)


def measure(
    wrk: str,
    kind: str,
    workers: int,
    scenario: str,
    redis: Redis | None,
    flags: list[str],
    args: argparse.Namespace,
) -> dict:
    """One server at one N under one scenario: warm up, then one measured wrk run."""
    _mode, script, _unit = load.SCENARIOS[scenario]
    script_args: tuple[str, ...] = ()
    if redis is not None:
        redis.flush()
    server = WorkersServer(kind, workers, scenario, redis, flags)
    run = {"server": kind, "workers": workers, "scenario": scenario}
    try:
        problem = server.wait_ready() or load.preflight(server.url, scenario)
        if problem:
            return {**run, "wrong": problem}
        if args.pipeline > 1:
            script, script_args = _pipelined(scenario, server.url, args)
        if args.warmup > 0:
            load.run_wrk(wrk, server.url, script, args.warmup, args.connections, script_args)
        cpu0, busy0, t0 = server.cpu_seconds(), load.cpu_busy(), time.monotonic()
        children0 = server.per_child()
        redis0 = _cpu_of(redis.process.pid) if redis is not None else 0.0
        result, raw, wrk_cpu, _wait = load.run_wrk(
            wrk, server.url, script, args.duration, args.connections, script_args
        )
        elapsed = time.monotonic() - t0
        server_cpu = server.cpu_seconds() - cpu0
        children = {p: c - children0.get(p, 0.0) for p, c in server.per_child().items()}
        # how the load spread over the workers: each one's CPU, in cores (the rest is ~0)
        spread = sorted(
            (c / elapsed for c in children.values() if c > 0.01 * elapsed), reverse=True
        )
        redis_cpu = (_cpu_of(redis.process.pid) - redis0) if redis is not None else 0.0
        busy = sum(load.cpu_busy().values()) - sum(busy0.values())
        if result is None:
            return {**run, "wrong": raw.strip()[-300:]}
        errors = sum(result.get(k, 0) for k in ("bad", "non200", "setup_bad", "lost"))
        errors += sum(result[k] for k in ("err_connect", "err_read", "err_write", "err_timeout"))
        if server.proc.poll() is not None:
            return {**run, "wrong": "server died under load"}
        return {
            **run,
            "rate": result["ok"] / (result["duration_us"] / 1e6),
            "rate_per_cpu_s": result["ok"] / server_cpu if server_cpu > 0 else None,
            "worker_cpu": spread if workers > 1 else [server_cpu / elapsed],
            "errors": errors,
            "server_cpu": server_cpu / elapsed,
            "wrk_cpu": wrk_cpu / elapsed,
            "redis_cpu": redis_cpu / elapsed,
            # what the rest of the machine ran meanwhile, in cores: the noise
            "other_cpu": max(0.0, busy - server_cpu - wrk_cpu - redis_cpu) / elapsed,
            "p50_ms": result["lat_p50_us"] / 1000,
            "p99_ms": result["lat_p99_us"] / 1000,
        }
    finally:
        server.stop()


def _pipelined(scenario: str, url: str, args: argparse.Namespace) -> tuple[str, tuple[str, ...]]:
    """The wrk script and its arguments for ``--pipeline``: call-modern's own script with the
    depth; for call-session, the sessions opened here first (one per connection), then
    ``call_session_pipelined.lua``, which pipelines calls on them."""
    depth = str(args.pipeline)
    if scenario == "call-modern":
        return "call_modern.lua", (depth,)
    return "call_session_pipelined.lua", (depth, *open_sessions(url, args.connections))


def open_sessions(url: str, count: int) -> list[str]:
    """``count`` handshake-era sessions (``http_load.open_session``): their ids."""
    with httpx.Client(timeout=10.0) as client:
        return [load.open_session(client, url)["Mcp-Session-Id"] for _ in range(count)]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--duration", type=float, default=8.0, help="seconds measured (8)")
    parser.add_argument("--warmup", type=float, default=2.0, help="seconds of warm-up (2)")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (3)")
    parser.add_argument("--connections", type=int, default=16, help="wrk connections (16)")
    parser.add_argument("--scenarios", nargs="+", choices=SCENARIOS, default=list(SCENARIOS))
    parser.add_argument("--workers", nargs=2, type=int, default=[1, 2], metavar=("BASE", "N"))
    parser.add_argument(
        "--pipeline",
        type=int,
        default=1,
        help="requests per write (HTTP/1.1 pipelining); more than 1 leaves wrk a fraction of the"
        " CPU per call, so the workers get the cores (1: none)",
    )
    parser.add_argument(
        "--max-other",
        type=float,
        default=0.25,
        help="a run during which the rest of the machine used more cores than this is measured"
        " again (0.25)",
    )
    parser.add_argument(
        "--retries", type=int, default=2, help="measurements again of a disturbed run (2)"
    )
    parser.add_argument(
        "--live-tree", action="store_true", help="serve the work tree itself, not a copy of it"
    )
    parser.add_argument(
        "--servers",
        nargs="+",
        choices=SERVER_KINDS,
        default=list(SERVER_KINDS),
        help="mcpkit, and the bare app as the ceiling (both)",
    )
    args = parser.parse_args()
    if not args.live_tree:
        copy = Path(tempfile.mkdtemp(prefix="bench-workers-mcpkit-"))
        shutil.copytree(
            load.ROOT / "src" / "mcpkit",
            copy / "src" / "mcpkit",
            ignore=shutil.ignore_patterns("__pycache__"),
        )
        load.MCPKIT_SNAPSHOT = copy  # project_env() puts it first on PYTHONPATH
    wrk = load.ensure_wrk()
    flags = load.ensure_fast_http("auto", need_peers=False) if "bare" in args.servers else []
    pin_self(load.WRK_CPU)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    # not pinned, as the workers are not
    redis = Redis(cpu=None) if "call-session" in args.scenarios else None
    base, many = args.workers
    rows: list[dict] = []
    try:
        for round_ in range(args.rounds):
            for scenario in args.scenarios:
                for kind in args.servers:
                    order = (base, many) if round_ % 2 == 0 else (many, base)
                    for workers in order:
                        take = partial(measure, wrk, kind, workers, scenario, redis, flags, args)
                        row = steadiest(take, f"{scenario} {kind} N={workers}", args)
                        row["round"] = round_
                        rows.append(row)
                        _log_row(round_, row)
    finally:
        if redis is not None:
            redis.close()
        load.drop_mcpkit_snapshot()
    print(
        f"\nN worker processes (mcpkit run --workers N; bare: uvicorn --workers N),"
        f" {args.connections} connections, {args.duration:g} s x {args.rounds} rounds,"
        f" {os.cpu_count()} CPUs"
        + (f", {args.pipeline} requests pipelined per write" if args.pipeline > 1 else "")
    )
    print(
        f"{'scenario':<14}{'server':<8}{'N=' + str(base):>10}{'N=' + str(many):>10}{'ratio':>8}"
        f"{'per round':>20}{'calls/CPU-s N=1, N=2':>24}{'other CPU':>11}"
    )
    summary: dict[str, dict] = {}
    for scenario in args.scenarios:
        for kind in args.servers:
            found = _summary(rows, kind, scenario, base, many)
            if found is None:
                print(f"{scenario:<14}{kind:<8} no complete round")
                continue
            summary.setdefault(scenario, {})[kind] = found
            shown = " ".join(f"{r:.2f}" for r in found["ratios"])
            per_cpu = found["rate_per_cpu_s"]
            costs = f"{per_cpu[base]:,.0f}, {per_cpu[many]:,.0f}"
            print(
                f"{scenario:<14}{kind:<8}{found['rates'][base]:>10,.0f}"
                f"{found['rates'][many]:>10,.0f}{found['ratio']:>7.2f}x{shown:>20}{costs:>24}"
                f"{found['other_cpu_median']:>9.2f} c"
            )
    print("\nJSON (not written: results stay out of git)")
    print(json.dumps({"summary": summary, "runs": rows}, indent=1, default=str))


def steadiest(take: Callable[[], dict], label: str, args: argparse.Namespace) -> dict:
    """``take()``'s run, taken again while the rest of the machine used more than
    ``--max-other`` cores (up to ``--retries`` times); the least disturbed one is kept."""
    row = take()
    for _ in range(args.retries):
        if "wrong" in row or row["other_cpu"] <= args.max_other:
            break
        load.log(f"{label}: disturbed (other work used {row['other_cpu']:.2f} cores): again")
        again = take()
        if "wrong" in again or again["other_cpu"] < row["other_cpu"]:
            row = again
    return row


def _log_row(round_: int, row: dict) -> None:
    name = f"round {round_ + 1} {row['scenario']:<12} {row['server']:<6} N={row['workers']}"
    if "wrong" in row:
        load.log(f"{name}: WRONG {row['wrong']}")
        return
    load.log(
        f"{name}: {row['rate']:>8,.0f} calls/s  errors {row['errors']}  server CPU"
        f" {row['server_cpu']:.2f}  wrk {row['wrk_cpu']:.2f}  redis {row['redis_cpu']:.2f}"
        f"  other {row['other_cpu']:.2f} cores  per worker "
        + "/".join(f"{c:.2f}" for c in row["worker_cpu"])
    )


def _summary(rows: list[dict], kind: str, scenario: str, base: int, many: int) -> dict | None:
    """One server's figures under one scenario: the median rates, the N/base ratio taken
    inside each round, calls per server CPU-second, the machine's other load. None without
    a complete round."""
    mine = [r for r in rows if r["server"] == kind and r["scenario"] == scenario and "rate" in r]
    ratios: list[float] = []
    rates: dict[int, list[float]] = {base: [], many: []}
    for round_ in sorted({r["round"] for r in mine}):
        pair = {r["workers"]: r for r in mine if r["round"] == round_}
        for n in (base, many):
            if n in pair:
                rates[n].append(pair[n]["rate"])
        if base in pair and many in pair:
            ratios.append(pair[many]["rate"] / pair[base]["rate"])
    if not ratios:
        return None
    per_cpu = {
        n: statistics.median(
            [r["rate_per_cpu_s"] for r in mine if r["workers"] == n and r["rate_per_cpu_s"]]
            or [0.0]
        )
        for n in (base, many)
    }
    return {
        "rates": {n: statistics.median(v) for n, v in rates.items()},
        "ratio": statistics.median(ratios),
        "ratios": ratios,
        "rate_per_cpu_s": per_cpu,
        "other_cpu_median": statistics.median([r["other_cpu"] for r in mine]),
    }


if __name__ == "__main__":
    main()
