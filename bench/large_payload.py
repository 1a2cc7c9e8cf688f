"""Large payloads over Streamable HTTP: a 5 MiB tool result and a 5 MiB resource, answered as
JSON and as SSE, by mcpkit and by a bare ASGI app writing the same bytes, in one run.

    .venv/bin/python bench/large_payload.py [--payload-mib 5] [--duration 5] [--rounds 3]
                                            [--connections 1] [--scenarios NAME ...]

Servers (bench/servers/http_large.py): ``mcpkit`` (``create_asgi_app``, stateless) and
``bare`` (reads the body, writes a prebuilt answer of the same bytes). Each runs under the
same uvicorn as bench/http_load.py (``--loop uvloop --http httptools`` when both import),
pinned to CPU 1; wrk (one thread, ``--connections``) on CPU 0. Both are served from
uvicorn's command line, on uvicorn's own protocol.

Scenarios: ``tool-json`` / ``resource-json`` (Accept: application/json; a JSON body) and
``tool-sse`` / ``resource-sse`` (the request carries a progressToken: the server sends one
progress event, so the answer is an SSE stream). mcpkit escapes the text for every answer.
Before each load every answer is checked once: the text that comes back must be the payload,
byte for byte.

Reported per scenario and server: answers/s and MiB/s of body; answers per second of server
CPU; the server's peak memory growth (VmHWM, reset through ``/proc/PID/clear_refs`` once the
server listens, minus VmRSS then) as a multiple of the payload; then mcpkit/bare inside
each round (median over rounds), against the targets: throughput ≥ 0.5 of bare (within
2x), peak ≤ 3x the payload. Nothing is written into the repository.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PROJECT_PY = ROOT / ".venv" / "bin" / "python"
if Path(sys.prefix).resolve() != (ROOT / ".venv").resolve() and PROJECT_PY.exists():
    os.execv(str(PROJECT_PY), [str(PROJECT_PY), *sys.argv])

import httpx

sys.path.insert(0, str(HERE))
from _pinning import pinned
from _uvicorn import stop_server, uvicorn_command

SERVERS_DIR = HERE / "servers"
EXTRAS = HERE / ".venv-peers" / "project-extras"
SERVER_CPU, WRK_CPU = 1, 0
SERVERS = {"bare": "http_large:bare_app", "mcpkit": "http_large:mcpkit_app"}
RESOURCE_URI = "big://text"
HEADERS = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
    "MCP-Protocol-Version": "2025-11-25",
}
SCENARIOS = ("tool-json", "tool-sse", "resource-json", "resource-sse")
#: Peak memory bound and throughput share of the issue's targets.
MAX_PEAK_MULTIPLE = 3.0
MIN_THROUGHPUT_RATIO = 0.5


def request_body(scenario: str) -> dict[str, Any]:
    kind, answer = scenario.split("-")
    if kind == "tool":
        params: dict[str, Any] = {"name": "big", "arguments": {}}
        method = "tools/call"
    else:
        params = {"uri": RESOURCE_URI}
        method = "resources/read"
    if answer == "sse":
        params["_meta"] = {"progressToken": 1}
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


def request_headers(scenario: str) -> dict[str, str]:
    headers = dict(HEADERS)
    if scenario.endswith("-json"):
        headers["Accept"] = "application/json"
    return headers


def expected_text(payload_bytes: int) -> str:
    os.environ["BENCH_PAYLOAD_BYTES"] = str(payload_bytes)
    sys.path.insert(0, str(SERVERS_DIR))
    import http_large  # the same text the servers build

    return http_large.TEXT


def server_env(payload_bytes: int) -> dict[str, str]:
    env = dict(os.environ)
    env["BENCH_PAYLOAD_BYTES"] = str(payload_bytes)
    if EXTRAS.exists():
        env["PYTHONPATH"] = str(EXTRAS)
    else:
        env.pop("PYTHONPATH", None)
    return env


def uvicorn_flags(env: dict[str, str]) -> list[str]:
    probe = subprocess.run(
        [str(PROJECT_PY), "-c", "import uvloop, httptools"], env=env, capture_output=True
    )
    if probe.returncode == 0:
        return ["--loop", "uvloop", "--http", "httptools"]
    return ["--loop", "asyncio", "--http", "h11"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Server:
    """One uvicorn process serving ``target`` (one of ``SERVERS``, or a variant)."""

    def __init__(self, name: str, target: str, flags: list[str], env: dict[str, str]) -> None:
        self.name = name
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.log = tempfile.NamedTemporaryFile(prefix=f"large-{name}-", suffix=".log")
        command = uvicorn_command(PROJECT_PY, target, self.port, flags)
        self.proc = subprocess.Popen(
            pinned(command, SERVER_CPU), env=env, stdout=self.log, stderr=subprocess.STDOUT
        )
        self._status = Path(f"/proc/{self.proc.pid}/status")

    def wait_ready(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self.log.seek(0)
                sys.exit(f"{self.name} exited: {self.log.read().decode(errors='replace')[-800:]}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.05)
        sys.exit(f"{self.name} did not listen within {timeout:.0f} s")

    def memory_kib(self, field: str) -> int:
        for line in self._status.read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
        raise RuntimeError(f"no {field} in {self._status}")

    def reset_peak(self) -> bool:
        """Reset VmHWM to the current RSS (Linux ``clear_refs`` 5); False where refused."""
        try:
            Path(f"/proc/{self.proc.pid}/clear_refs").write_text("5")
        except OSError:
            return False
        return True

    def cpu_seconds(self) -> float:
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def run_delay(self) -> float:
        """Seconds it was runnable but waiting for its core (schedstat): a busy machine."""
        return int(Path(f"/proc/{self.proc.pid}/schedstat").read_text().split()[1]) / 1e9

    def stop(self) -> None:
        stop_server(self.proc)
        self.log.close()


def answered_text(response: httpx.Response, scenario: str) -> str:
    """The payload text in an answer (raises ``ValueError`` when it is not one)."""
    if response.status_code != 200:
        raise ValueError(f"status {response.status_code}: {response.text[:200]}")
    content_type = response.headers.get("content-type", "")
    if scenario.endswith("-sse"):
        if not content_type.startswith("text/event-stream"):
            raise ValueError(f"not an SSE answer: {content_type}")
        frames = [f for f in response.content.split(b"\n\n") if f.strip()]
        datas = [
            b"\n".join(line[6:] for line in f.split(b"\n") if line.startswith(b"data: "))
            for f in frames
        ]
        messages = [json.loads(d) for d in datas if d]
        if [m.get("method") for m in messages] != ["notifications/progress", None]:
            raise ValueError(f"unexpected events: {[m.get('method') for m in messages]}")
        message = messages[-1]
    else:
        if not content_type.startswith("application/json"):
            raise ValueError(f"not a JSON answer: {content_type}")
        message = response.json()
    result = message["result"]
    item = (result["contents"] if scenario.startswith("resource") else result["content"])[0]
    return str(item["text"])


def preflight(url: str, scenario: str, text: str) -> None:
    with httpx.Client(timeout=30) as client:
        response = client.post(url, json=request_body(scenario), headers=request_headers(scenario))
    got = answered_text(response, scenario)
    if got != text:
        raise ValueError(f"payload differs ({len(got)} characters, expected {len(text)})")


def lua_script(scenario: str, directory: Path) -> Path:
    path = directory / f"{scenario}.lua"
    lines = ['wrk.method = "POST"', f"wrk.body = {json.dumps(json.dumps(request_body(scenario)))}"]
    lines += [
        f"wrk.headers[{json.dumps(k)}] = {json.dumps(v)}"
        for k, v in request_headers(scenario).items()
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


_REQUESTS = re.compile(r"(\d+) requests in ([\d.]+)(\w+)")
_NON_2XX = re.compile(r"Non-2xx or 3xx responses: (\d+)")
_SOCKET_ERRORS = re.compile(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)")
_UNIT_SECONDS = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0}


def run_wrk(wrk: str, url: str, script: Path, seconds: float, connections: int) -> dict[str, Any]:
    command = [wrk, "-t1", f"-c{connections}", f"-d{max(1, round(seconds))}s"]
    command += ["--timeout", "30s", "-s", str(script), url]
    out = subprocess.run(pinned(command, WRK_CPU), capture_output=True, text=True).stdout
    match = _REQUESTS.search(out)
    if match is None:
        raise RuntimeError(f"wrk printed no result: {out[-400:]}")
    requests = int(match.group(1))
    elapsed = float(match.group(2)) * _UNIT_SECONDS[match.group(3)]
    errors = sum(int(n) for n in (_SOCKET_ERRORS.search(out) or re.match("", "")).groups())
    non_2xx = _NON_2XX.search(out)
    errors += int(non_2xx.group(1)) if non_2xx else 0
    return {"requests": requests, "seconds": elapsed, "errors": errors}


def measure(
    name: str, scenario: str, text: str, args: argparse.Namespace, wrk: str, tmp: Path
) -> dict[str, Any]:
    env = server_env(args.payload_bytes)
    server = Server(name, SERVERS[name], args.flags, env)
    try:
        server.wait_ready()
        peak_reset = server.reset_peak()
        base_kib = server.memory_kib("VmRSS")
        preflight(server.url, scenario, text)
        script = lua_script(scenario, tmp)
        if args.warmup > 0:
            run_wrk(wrk, server.url, script, args.warmup, args.connections)
        cpu0, delay0 = server.cpu_seconds(), server.run_delay()
        result = run_wrk(wrk, server.url, script, args.duration, args.connections)
        cpu = server.cpu_seconds() - cpu0
        wait = (server.run_delay() - delay0) / result["seconds"]
        peak_kib = server.memory_kib("VmHWM")
    finally:
        server.stop()
    rate = result["requests"] / result["seconds"]
    return {
        "rate": rate,
        "mib_per_s": rate * args.payload_bytes / 2**20,
        "per_cpu_s": result["requests"] / cpu if cpu > 0 else None,
        "errors": result["errors"],
        "server_wait": wait,
        "peak_growth_bytes": (peak_kib - base_kib) * 1024,
        "peak_multiple": (peak_kib - base_kib) * 1024 / args.payload_bytes,
        "peak_reset": peak_reset,
    }


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--payload-mib", type=float, default=5.0, help="payload size (default 5)")
    parser.add_argument("--duration", type=float, default=5.0, help="seconds per run (default 5)")
    parser.add_argument("--warmup", type=float, default=1.0, help="seconds unmeasured first")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    parser.add_argument("--connections", type=int, default=1, help="wrk connections (default 1)")
    parser.add_argument("--scenarios", nargs="+", choices=SCENARIOS, default=list(SCENARIOS))
    parser.add_argument("--json", type=Path, help="also write the results here (outside the repo)")
    args = parser.parse_args()
    args.payload_bytes = int(args.payload_mib * 2**20)
    wrk = shutil.which("wrk")
    if wrk is None:
        sys.exit("wrk is needed: apt-get install -y wrk")
    args.flags = uvicorn_flags(server_env(args.payload_bytes))
    text = expected_text(args.payload_bytes)
    print(f"payload {args.payload_bytes:,} bytes; uvicorn {' '.join(args.flags)}; ", end="")
    print(f"wrk -c{args.connections} on CPU {WRK_CPU}, server on CPU {SERVER_CPU}")
    rows: dict[tuple[str, str], list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory(prefix="large-payload-") as tmp:
        for round_no in range(args.rounds):
            for scenario in args.scenarios:
                order = ["bare", "mcpkit"] if round_no % 2 == 0 else ["mcpkit", "bare"]
                for name in order:
                    row = measure(name, scenario, text, args, wrk, Path(tmp))
                    rows.setdefault((scenario, name), []).append(row)
                    print(
                        f"round {round_no + 1}/{args.rounds} {scenario:14} {name:7}"
                        f" {row['rate']:8.1f}/s {row['mib_per_s']:8.1f} MiB/s"
                        f"  per CPU-s {row['per_cpu_s'] or 0:8.1f}"
                        f"  peak +{row['peak_growth_bytes'] / 2**20:6.1f} MiB"
                        f" ({row['peak_multiple']:.2f}x)  errors {row['errors']}"
                        f"  server waited {row['server_wait']:.0%}"
                    )
    print()
    header = f"{'scenario':14} {'server':7} {'answers/s':>10} {'MiB/s':>8} {'per CPU-s':>10}"
    print(header + f" {'peak/payload':>13} {'errors':>7}")
    summary: dict[str, Any] = {"payload_bytes": args.payload_bytes, "scenarios": {}}
    for scenario in args.scenarios:
        for name in ("bare", "mcpkit"):
            runs = rows[(scenario, name)]
            rate = _median([r["rate"] for r in runs]) or 0.0
            per_cpu = _median([r["per_cpu_s"] for r in runs if r["per_cpu_s"]]) or 0.0
            peak = max(r["peak_multiple"] for r in runs)
            errors = sum(r["errors"] for r in runs)
            print(
                f"{scenario:14} {name:7} {rate:10.1f} {rate * args.payload_bytes / 2**20:8.1f}"
                f" {per_cpu:10.1f} {peak:12.2f}x {errors:7}"
            )
        ratios = [
            m["rate"] / b["rate"]
            for m, b in zip(rows[(scenario, "mcpkit")], rows[(scenario, "bare")], strict=True)
        ]
        cpu_ratios = [
            m["per_cpu_s"] / b["per_cpu_s"]
            for m, b in zip(rows[(scenario, "mcpkit")], rows[(scenario, "bare")], strict=True)
            if m["per_cpu_s"] and b["per_cpu_s"]
        ]
        summary["scenarios"][scenario] = {
            "ratio": _median(ratios),
            "ratio_per_cpu_s": _median(cpu_ratios),
            "mcpkit_peak_multiple": max(r["peak_multiple"] for r in rows[(scenario, "mcpkit")]),
            "runs": {name: rows[(scenario, name)] for name in ("bare", "mcpkit")},
        }
    print("\nmcpkit against bare (median of the per-round ratios) and the targets")
    met_all = True
    for scenario, entry in summary["scenarios"].items():
        ratio, cpu_ratio, peak = (
            entry["ratio"],
            entry["ratio_per_cpu_s"],
            entry["mcpkit_peak_multiple"],
        )
        met = ratio >= MIN_THROUGHPUT_RATIO and peak <= MAX_PEAK_MULTIPLE
        met_all = met_all and met
        print(
            f"  {scenario:14} throughput {ratio:.2f} of bare (per CPU-s {cpu_ratio or 0:.2f};"
            f" target >= {MIN_THROUGHPUT_RATIO})  peak {peak:.2f}x payload"
            f" (target <= {MAX_PEAK_MULTIPLE:.0f}x)  {'met' if met else 'NOT met'}"
        )
    if args.json is not None:
        args.json.write_text(json.dumps(summary, indent=1))
    sys.exit(0 if met_all else 1)


if __name__ == "__main__":
    main()
