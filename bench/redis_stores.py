"""What sharing sessions through Redis costs: stateful Streamable HTTP with the Redis
stores (``--redis-url``: sessions, events, bus) against the in-memory default.

    python bench/redis_stores.py [--duration S] [--connections 16] [--rounds R] [--json PATH]

One uvicorn process serves an ``add(a, b)`` tool (stateful) with either store; a real
``redis-server`` (no persistence) runs alongside. Scenarios:

  call-session  16 sessions, then POST tools/call on them over keep-alive (wrk and
                bench/lua/call_session.lua; with httpx when wrk is missing)
  churn         initialize -> tools/call -> DELETE, a new session per cycle (wrk,
                bench/lua/churn.lua): every cycle writes the session store
  spread        httpx, 16 sessions, each request to the next of *two* instances
                (round-robin, as behind a load balancer; Redis only: memory
                sessions cannot move). Compared with the same httpx load on one
                instance of each kind.

For each run: the rate, the server's CPU time per request (``/proc``) and how busy the server
was (below ~95% the load generator, not the server, set the rate: compare CPU per request
then), Redis's CPU time per request, latency percentiles. The server runs on CPU 1, wrk/httpx and Redis on CPU 0 when
the machine has two. Ratios are taken within a round; the median over rounds is reported.
Nothing is written into the repository.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import importlib.util
import json
import os
import shutil
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
EXTRAS = HERE / ".venv-peers" / "project-extras"  # httptools, when bench/http_load.py fetched it

sys.path.insert(0, str(HERE))
from _pinning import pinned
from _wrk import bench_result, wrk_command

SERVER_CPU, LOAD_CPU = 1, 0
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
HEADERS = {
    "accept": "application/json, text/event-stream",
    "content-type": "application/json",
    "mcp-protocol-version": "2025-11-25",
}


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# --- the server (this file, run with --serve) --------------------------------------------------


def serve(kind: str, port: int, redis_url: str) -> None:
    import uvicorn

    from mcpkit import McpServerApp, mcp_server, mcp_tool
    from mcpkit.transports.http import StreamableHttpServerOptions, create_asgi_app

    @mcp_server(name="bench-redis")
    class Bench:
        @mcp_tool()
        async def add(self, a: int, b: int) -> int:
            """Add two integers."""
            return a + b

    shared = {}
    if kind == "redis":
        from mcpkit.stores import redis_options

        shared = redis_options(redis_url)
    options = StreamableHttpServerOptions(port=port, endpoint="/mcp", **shared)
    fast = {}
    if importlib.util.find_spec("httptools") and importlib.util.find_spec("uvloop"):
        fast = {"loop": "uvloop", "http": "httptools"}
    uvicorn.run(
        create_asgi_app(McpServerApp(Bench), options),
        host="127.0.0.1",
        port=port,
        log_level="warning",
        access_log=False,
        **fast,
    )


# --- processes -----------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (and its reaped children), from /proc."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return sum(int(v) for v in fields[11:15]) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return float("nan")


class Redis:
    """A redis-server on a free loopback port, no persistence; pinned to ``cpu`` (None: not
    pinned)."""

    def __init__(self, cpu: int | None = LOAD_CPU) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            sys.exit("redis-server is required: apt-get install -y redis-server")
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix="mcpkit-bench-redis-")
        command = [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", ""]
        command += ["--appendonly", "no", "--dir", self.dir]
        self.process = subprocess.Popen(
            command if cpu is None else pinned(command, cpu),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_port(self.port)
        self.url = f"redis://127.0.0.1:{self.port}/0"

    def flush(self) -> None:
        with socket.create_connection(("127.0.0.1", self.port), timeout=2) as sock:
            sock.sendall(b"FLUSHALL\r\n")
            sock.recv(64)

    def close(self) -> None:
        self.process.kill()
        self.process.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def wait_port(port: int, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on port {port}")


class Server:
    def __init__(self, kind: str, redis_url: str) -> None:
        self.kind = kind
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        env = dict(
            os.environ,
            PYTHONPATH=os.pathsep.join(
                p for p in (str(ROOT / "src"), str(EXTRAS) if EXTRAS.exists() else "") if p
            ),
        )
        python = str(PROJECT_PY if PROJECT_PY.exists() else sys.executable)
        self.process = subprocess.Popen(
            pinned(
                [
                    python,
                    __file__,
                    "--serve",
                    kind,
                    "--port",
                    str(self.port),
                    "--redis-url",
                    redis_url,
                ],
                SERVER_CPU,
            ),
            env=env,
        )
        wait_port(self.port)

    def cpu(self) -> float:
        return cpu_seconds(self.process.pid)

    def close(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


# --- load ----------------------------------------------------------------------------------


def run_wrk(wrk: str, url: str, script: str, seconds: float, connections: int) -> dict | None:
    command = wrk_command(wrk, url, script, seconds, connections, LOAD_CPU)
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    raw = bench_result(done.stdout)
    if raw is None:
        log(done.stdout + done.stderr)
        return None
    good = raw.get("ok", 0) or raw.get("cycles", 0)
    return {
        "count": good,
        "errors": raw.get("bad", 0)
        + raw.get("non200", 0)
        + raw.get("err_status", 0)
        + raw.get("err_timeout", 0),
        "seconds": raw["duration_us"] / 1e6,
        "p50_ms": raw["lat_p50_us"] / 1000,
        "p99_ms": raw["lat_p99_us"] / 1000,
        "requests": raw["requests"],
    }


async def httpx_load(urls: list[str], seconds: float, connections: int) -> dict:
    """``connections`` sessions, each calling in a loop; request n of a session goes to
    ``urls[n % len(urls)]`` (round-robin across instances)."""
    import httpx

    latencies: list[float] = []
    errors = 0
    limits = httpx.Limits(
        max_connections=connections * len(urls), max_keepalive_connections=connections * len(urls)
    )
    async with httpx.AsyncClient(timeout=30, limits=limits) as http:

        async def session(worker: int) -> None:
            nonlocal errors
            first = urls[worker % len(urls)]
            reply = await http.post(first, json=INIT, headers=HEADERS)
            sid = reply.headers["mcp-session-id"]
            headers = dict(HEADERS, **{"mcp-session-id": sid})
            await http.post(
                urls[(worker + 1) % len(urls)],
                json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                headers=headers,
            )
            await ready.wait()
            n = worker
            while time.monotonic() < stop_at:
                started = time.perf_counter()
                response = await http.post(urls[n % len(urls)], json=CALL, headers=headers)
                n += 1
                if response.status_code != 200 or b'"text":"3"' not in response.content.replace(
                    b" ", b""
                ):
                    errors += 1
                latencies.append(time.perf_counter() - started)

        ready = asyncio.Event()
        stop_at = float("inf")
        tasks = [asyncio.create_task(session(i)) for i in range(connections)]
        await asyncio.sleep(0.5)
        begun = time.monotonic()
        stop_at = begun + seconds
        ready.set()
        await asyncio.gather(*tasks)
        elapsed = time.monotonic() - begun
    latencies.sort()
    return {
        "count": len(latencies) - errors,
        "errors": errors,
        "seconds": elapsed,
        "p50_ms": latencies[len(latencies) // 2] * 1000 if latencies else 0.0,
        "p99_ms": latencies[int(len(latencies) * 0.99)] * 1000 if latencies else 0.0,
        "requests": len(latencies),
    }


def measured(run, servers: list[Server], redis: Redis) -> dict:
    cpu0 = sum(s.cpu() for s in servers)
    redis0 = cpu_seconds(redis.process.pid)
    started = time.monotonic()
    result = run()
    if result is None:
        return {"wrong": "no result"}
    requests = max(1, result["requests"])
    server_cpu = sum(s.cpu() for s in servers) - cpu0
    result["rate"] = result["count"] / result["seconds"]
    result["server_util"] = server_cpu / (time.monotonic() - started) / len(servers)
    result["server_cpu_us"] = server_cpu / requests * 1e6
    result["redis_cpu_us"] = (cpu_seconds(redis.process.pid) - redis0) / requests * 1e6
    return result


def one_round(args: argparse.Namespace, redis: Redis, wrk: str | None) -> list[dict]:
    rows: list[dict] = []

    def record(kind: str, scenario: str, result: dict) -> None:
        rows.append({"stores": kind, "scenario": scenario, **result})
        rate = result.get("rate")
        log(
            f"  {kind:<7} {scenario:<13} "
            + (f"{rate:10.0f}/s" if rate else result.get("wrong", "?"))
        )

    for kind in ("memory", "redis"):
        redis.flush()
        server = Server(kind, redis.url)
        try:
            if wrk is not None:
                for scenario, script in (
                    ("call-session", "call_session.lua"),
                    ("churn", "churn.lua"),
                ):
                    if args.warmup > 0:
                        run_wrk(wrk, server.url, script, args.warmup, args.connections)
                    load = functools.partial(
                        run_wrk, wrk, server.url, script, args.duration, args.connections
                    )
                    record(kind, scenario, measured(load, [server], redis))
            load = functools.partial(
                asyncio.run, httpx_load([server.url], args.duration, args.connections)
            )
            record(kind, "httpx-one", measured(load, [server], redis))
        finally:
            server.close()
    redis.flush()
    pair = [Server("redis", redis.url), Server("redis", redis.url)]
    try:
        load = functools.partial(
            asyncio.run, httpx_load([s.url for s in pair], args.duration, args.connections)
        )
        record("redis", "spread", measured(load, pair, redis))
    finally:
        for server in pair:
            server.close()
    return rows


def report(rounds: list[list[dict]]) -> dict:
    table: dict[tuple[str, str], list[dict]] = {}
    for rows in rounds:
        for row in rows:
            table.setdefault((row["stores"], row["scenario"]), []).append(row)

    def med(key: tuple[str, str], field: str) -> float:
        values = [r[field] for r in table.get(key, []) if field in r]
        return statistics.median(values) if values else float("nan")

    print(
        f"\n{'stores':<7} {'scenario':<13} {'rate/s':>9} {'µs/req':>8} {'srv CPU µs':>10} {'srv busy':>8} {'redis CPU µs':>12} {'p50 ms':>7} {'p99 ms':>7} {'errors':>6}"
    )
    summary: dict = {"runs": {}, "ratios": {}}
    for stores, scenario in sorted(table, key=lambda k: (k[1], k[0])):
        key = (stores, scenario)
        rate = med(key, "rate")
        errors = sum(r.get("errors", 0) for r in table[key])
        print(
            f"{stores:<7} {scenario:<13} {rate:9.0f} {1e6 / rate if rate else float('nan'):8.1f} {med(key, 'server_cpu_us'):10.1f} {med(key, 'server_util'):8.0%} "
            f"{med(key, 'redis_cpu_us'):12.1f} {med(key, 'p50_ms'):7.2f} {med(key, 'p99_ms'):7.2f} {errors:6d}"
        )
        summary["runs"][f"{stores}/{scenario}"] = {
            f: med(key, f)
            for f in ("rate", "server_cpu_us", "server_util", "redis_cpu_us", "p50_ms", "p99_ms")
        }
    print()
    for scenario, base in (
        ("call-session", "memory"),
        ("churn", "memory"),
        ("httpx-one", "memory"),
        ("spread", None),
    ):
        redis_rows = table.get(("redis", scenario))
        base_key = ("memory", scenario) if base else ("redis", "httpx-one")
        base_rows = table.get(base_key)
        if not redis_rows or not base_rows:
            continue
        ratios = []
        for i in range(min(len(redis_rows), len(base_rows))):
            if redis_rows[i].get("rate") and base_rows[i].get("rate"):
                ratios.append(redis_rows[i]["rate"] / base_rows[i]["rate"])
        if not ratios:
            continue
        ratio = statistics.median(ratios)
        extra_us = 1e6 / med(("redis", scenario), "rate") - 1e6 / med(base_key, "rate")
        versus = f"{base_key[0]}/{base_key[1]}"
        print(
            f"redis/{scenario:<13} vs {versus:<20} throughput x{ratio:.2f}   wall cost per request {extra_us:+.1f} µs "
            f"(server CPU {med(('redis', scenario), 'server_cpu_us') - med(base_key, 'server_cpu_us'):+.1f} µs, "
            f"Redis CPU {med(('redis', scenario), 'redis_cpu_us'):.1f} µs)"
        )
        summary["ratios"][f"redis/{scenario} vs {versus}"] = {
            "throughput": ratio,
            "extra_us_per_request": extra_us,
        }
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--duration", type=float, default=8.0, help="seconds per measured run")
    parser.add_argument("--warmup", type=float, default=2.0, help="seconds of wrk warm-up per run")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--json", type=Path, help="also write the summary here (outside the repository)"
    )
    parser.add_argument("--serve", choices=("memory", "redis"), help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--redis-url", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.port, args.redis_url)
        return
    if args.json is not None and ROOT in args.json.resolve().parents:
        sys.exit("--json must point outside the repository")
    wrk = shutil.which("wrk")
    if wrk is None:
        log(
            "wrk not found (apt-get install -y wrk): call-session and churn are skipped, httpx load only"
        )
    redis = Redis()
    try:
        rounds = []
        for number in range(args.rounds):
            log(f"round {number + 1}/{args.rounds}")
            rounds.append(one_round(args, redis, wrk))
    finally:
        redis.close()
    summary = report(rounds)
    summary["settings"] = {
        "duration": args.duration,
        "connections": args.connections,
        "rounds": args.rounds,
        "wrk": bool(wrk),
    }
    print(json.dumps(summary, indent=2))
    if args.json is not None:
        args.json.write_text(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
