"""What one tools/call costs inside mcpkit's ASGI app, with no socket and no HTTP parser:
the app of ``servers/http_mcpkit.py`` driven in process by a minimal ASGI caller, in µs per
call, for a stateless POST, a POST in a session and a 2026-07-28 POST; ``churn`` is a whole
session per cycle (initialize, initialized, tools/call, DELETE), in µs per cycle.

HTTP load (``http_load.py``) measures what a user sees; this measures mcpkit's own share of
it, steadier on a noisy machine (no second process, no kernel in the loop), so a change's
cost shows in one run: ``--baseline REV`` runs mcpkit of that git revision beside the work
tree, the two alternating round by round, each round in a fresh process.

    .venv/bin/python bench/asgi_calls.py [--calls 20000] [--rounds 5] [--baseline REV]
    .venv/bin/python bench/asgi_calls.py --instructions [--baseline REV]

``--instructions`` counts instead of timing: each scenario runs under valgrind's callgrind
(Debian's ``valgrind``) twice, for 200 and 1,200 calls, and the difference gives the
instructions one call executes. That figure does not move with the machine's load, so a
change of a few percent shows at once; the ``bare`` row (the ceiling app of
``servers/http_bare.py`` driven the same way) is what the caller itself costs, and the
``mcpkit's own`` column subtracts it.

Every answer is checked (status 200 and the result ``3``); nothing is written into the
repository.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PROJECT_PY = ROOT / ".venv" / "bin" / "python"
SCENARIOS = ("stateless", "session", "modern", "churn")
#: HTTP requests per unit of a scenario (a churn cycle is four), for subtracting the caller.
REQUESTS = {"churn": 4}
#: Calls per counted run (--instructions): the two runs differ by ``COUNTED[1] - COUNTED[0]``.
COUNTED = (200, 1200)

CALL = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "add", "arguments": {"a": 1, "b": 2}},
}
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "0"},
}


def _headers(pairs: dict[str, str]) -> list[tuple[bytes, bytes]]:
    return [(k.encode(), v.encode()) for k, v in pairs.items()]


BASE_HEADERS = {
    "host": "127.0.0.1:8000",
    "accept": "application/json, text/event-stream",
    "content-type": "application/json",
}


async def post(
    app: Any, body: bytes, headers: dict[str, str], method: str = "POST"
) -> tuple[int, dict, bytes]:
    """One POST (or ``method``) through ``app``: its status, response headers and body."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "query_string": b"",
        "root_path": "",
        "headers": _headers({**headers, "content-length": str(len(body))}),
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }
    done = asyncio.get_running_loop().create_future()
    first = True

    async def receive() -> dict[str, Any]:
        nonlocal first
        if first:
            first = False
            return {"type": "http.request", "body": body, "more_body": False}
        await done
        return {"type": "http.disconnect"}

    status = 0
    answer_headers: dict = {}
    chunks: list[bytes] = []

    async def send(message: dict[str, Any]) -> None:
        nonlocal status, answer_headers
        if message["type"] == "http.response.start":
            status = message["status"]
            answer_headers = {k.decode(): v.decode() for k, v in message.get("headers", [])}
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False) and not done.done():
                done.set_result(None)

    await app(scope, receive, send)
    if not done.done():
        done.set_result(None)
    return status, answer_headers, b"".join(chunks)


def _check(status: int, body: bytes) -> None:
    if status != 200 or b'"text":"3"' not in body:
        raise SystemExit(f"wrong answer: {status} {body[:300]!r}")


async def measure(scenario: str, calls: int, warmup: int = 2000) -> float:
    """µs per call of ``scenario`` over ``calls`` calls (after ``warmup`` more)."""
    os.environ["BENCH_MODE"] = "stateless" if scenario == "stateless" else "stateful"
    sys.path.insert(0, str(HERE / "servers"))
    if scenario == "bare":
        import http_bare  # the ceiling http_load.py compares with

        app = http_bare.app
    else:
        import http_mcpkit  # the same app http_load.py serves

        app = http_mcpkit.app
    headers = {**BASE_HEADERS, "mcp-protocol-version": "2025-11-25"}
    call = dict(CALL)
    if scenario == "churn":
        return await _measure_churn(app, headers, calls, warmup)
    if scenario == "session":
        headers["mcp-session-id"] = await _open_session(app, headers)
    elif scenario == "modern":
        headers.update(
            {"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "add"}
        )
        call["params"] = {**CALL["params"], "_meta": MODERN_META}  # type: ignore[dict-item]
    body = json.dumps(call).encode()

    async def one_call() -> None:
        status, _, answer = await post(app, body, headers)
        _check(status, answer)

    return await _timed(one_call, calls, warmup)


async def _timed(step: Callable[[], Awaitable[None]], count: int, warmup: int) -> float:
    """µs per ``step`` over ``count`` of them, after ``warmup`` more."""
    for _ in range(min(warmup, count)):
        await step()
    started = time.perf_counter()
    for _ in range(count):
        await step()
    return (time.perf_counter() - started) / count * 1e6


INITIALIZE = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "0"},
        },
    }
).encode()
INITIALIZED = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode()


async def _open_session(app: Any, headers: dict[str, str]) -> str:
    """initialize + initialized; the new session's id."""
    status, answer_headers, _ = await post(app, INITIALIZE, headers)
    session_id: str = answer_headers["mcp-session-id"]
    status, _, _ = await post(app, INITIALIZED, {**headers, "mcp-session-id": session_id})
    if status != 202:
        raise SystemExit(f"initialized answered {status}")
    return session_id


async def _measure_churn(app: Any, headers: dict[str, str], cycles: int, warmup: int) -> float:
    """µs per cycle of initialize, initialized, tools/call and DELETE (as http_load's churn)."""
    body = json.dumps(CALL).encode()

    async def cycle() -> None:
        session = {**headers, "mcp-session-id": await _open_session(app, headers)}
        status, _, answer = await post(app, body, session)
        _check(status, answer)
        status, _, _ = await post(app, b"", session, "DELETE")
        if status != 200:
            raise SystemExit(f"DELETE answered {status}")

    return await _timed(cycle, cycles, warmup)


def child(scenario: str, calls: int, warmup: int) -> None:
    try:
        import uvloop

        runner = uvloop.run
    except ImportError:
        runner = asyncio.run
    print(json.dumps({"us": runner(measure(scenario, calls, warmup))}))


def snapshot(revision: str) -> Path:
    folder = Path(tempfile.mkdtemp(prefix="bench-asgi-"))
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", revision, "src/mcpkit"], capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive.stdout, check=True)
    return folder


def _child_run(
    source: Path | None, scenario: str, calls: int, warmup: int, prefix: list[str]
) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    if prefix:  # counted: the same string hashes (and dict layouts) in every run
        env["PYTHONHASHSEED"] = "0"
    if source is not None:
        env["PYTHONPATH"] = str(source / "src")
    python = PROJECT_PY if PROJECT_PY.exists() else Path(sys.executable)
    command = [str(python), __file__, "--child", scenario, "--calls", str(calls)]
    out = subprocess.run(
        [*prefix, *command, "--warmup", str(warmup)], env=env, capture_output=True, text=True
    )
    if out.returncode != 0:
        raise SystemExit(f"{scenario} failed:\n{out.stderr[-2000:]}{out.stdout[-500:]}")
    return out


def run_child(source: Path | None, scenario: str, calls: int) -> float:
    out = _child_run(source, scenario, calls, 2000, [])
    return float(json.loads(out.stdout.strip().splitlines()[-1])["us"])


def count_instructions(source: Path | None, scenario: str) -> int:
    """Instructions one call of ``scenario`` executes (callgrind, the difference of two runs:
    start-up, imports and the warm-up cancel out)."""
    counts = []
    for calls in COUNTED:
        out = _child_run(
            source,
            scenario,
            calls,
            100,
            ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"],
        )
        found = re.search(r"Collected : (\d+)", out.stderr)
        if found is None:
            raise SystemExit(f"no instruction count from valgrind:\n{out.stderr[-1000:]}")
        counts.append(int(found.group(1)))
    return round((counts[1] - counts[0]) / (COUNTED[1] - COUNTED[0]))


def instructions(scenarios: list[str], sources: dict[str, Path | None]) -> None:
    if shutil.which("valgrind") is None:
        raise SystemExit("--instructions needs valgrind (apt-get install valgrind)")
    floor = count_instructions(None, "bare")
    print(f"\n{'scenario':<10} {'source':<22} {'instructions/call':>18} {'mcpkit own':>11}")
    print(f"{'bare':<10} {'(the caller alone)':<22} {floor:18,}")
    for scenario in scenarios:
        own: dict[str, int] = {}
        for name, source in sources.items():
            total = count_instructions(source, scenario)
            own[name] = total - floor * REQUESTS.get(scenario, 1)
            print(f"{scenario:<10} {name:<22} {total:18,} {own[name]:11,}")
        if len(own) == 2:
            work, base = own.values()
            print(f"{'':<10} mcpkit's own, work tree / baseline: {work / base:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=20_000, help="calls per round (20,000)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds per source (5)")
    parser.add_argument("--scenarios", nargs="+", choices=SCENARIOS, default=list(SCENARIOS))
    parser.add_argument("--baseline", metavar="REV", help="also run mcpkit of git revision REV")
    parser.add_argument(
        "--instructions", action="store_true", help="count instructions per call (valgrind)"
    )
    parser.add_argument("--child", choices=(*SCENARIOS, "bare"), help=argparse.SUPPRESS)
    parser.add_argument("--warmup", type=int, default=2000, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.calls, args.warmup)
        return
    base = snapshot(args.baseline) if args.baseline else None
    try:
        sources: dict[str, Path | None] = {"work tree": None}
        if base is not None:
            sources[f"baseline {args.baseline}"] = base
        if args.instructions:
            instructions(args.scenarios, sources)
            return
        results: dict[tuple[str, str], list[float]] = {}
        for round_ in range(args.rounds):
            for scenario in args.scenarios:
                # alternate which source goes first: a slow phase of the machine hits both
                names = list(sources) if round_ % 2 == 0 else list(reversed(sources))
                for name in names:
                    us = run_child(sources[name], scenario, args.calls)
                    results.setdefault((scenario, name), []).append(us)
                    print(
                        f"round {round_ + 1}/{args.rounds} {scenario:<10} {name:<22} {us:7.2f} µs/call",
                        file=sys.stderr,
                    )
        print(f"\n{'scenario':<10} {'source':<22} {'µs/call median':>15} {'[min..max]':>18}")
        for scenario in args.scenarios:
            for name in sources:
                values = results[(scenario, name)]
                print(
                    f"{scenario:<10} {name:<22} {statistics.median(values):15.2f} "
                    f"{f'[{min(values):.2f}..{max(values):.2f}]':>18}"
                )
            if base is not None:
                ratios = [
                    w / b
                    for w, b in zip(
                        results[(scenario, "work tree")],
                        results[(scenario, f"baseline {args.baseline}")],
                        strict=True,
                    )
                ]
                # The minimums: noise only adds time, so they are the steadiest figures.
                least = min(results[(scenario, "work tree")]) / min(
                    results[(scenario, f"baseline {args.baseline}")]
                )
                print(
                    f"{'':<10} work tree / baseline: per round, median"
                    f" {statistics.median(ratios):.3f}; of the minimums {least:.3f}"
                )
    finally:
        if base is not None:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
