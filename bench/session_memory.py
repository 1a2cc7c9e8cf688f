"""Memory per idle Streamable HTTP session: the server's RSS before and after N sessions.

    python bench/session_memory.py [--sessions 5000] [--servers mcpkit official ...]
                                   [--connections 32] [--warm 200]

Each server runs stateful under the same uvicorn as bench/http_load.py (taskset -c 1, one
worker, uvloop + httptools where installed). A client on CPU 0 opens ``--warm`` sessions
first (so lazy imports, caches and the allocator's first arenas are paid for before the
baseline), waits, reads the server's VmRSS from /proc/PID/status, then opens ``--sessions``
more — each an ``initialize`` plus ``notifications/initialized`` over a pool of keep-alive
connections, none ever closed — and reads VmRSS again at the half and at the end.
Bytes per session = RSS growth / sessions (also shown for each half, as a linearity check).
Nothing is written into the repository.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import http_load
import httpx
from _pinning import pin_self
from http_load import (
    ACCEPT_HEADERS,
    CALL,
    INIT,
    INITIALIZED,
    PEER_NAMES,
    SERVERS,
    Server,
    check_call,
    ensure_fast_http,
    ensure_peers,
    preflight,
)

TARGET_BYTES = 3 * 1024  # the project's goal for mcpkit: <= 3 KiB per idle session


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


async def open_sessions(url: str, count: int, connections: int, opened: list[str]) -> int:
    """Opens ``count`` sessions (initialize + initialized), appending their ids to ``opened``;
    returns how many failed."""
    limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
    failures = 0
    next_index = 0

    async with httpx.AsyncClient(limits=limits, timeout=30.0) as client:

        async def worker() -> None:
            nonlocal failures, next_index
            while next_index < count:
                next_index += 1
                try:
                    r = await client.post(url, json=INIT, headers=ACCEPT_HEADERS)
                    session = r.headers.get("mcp-session-id")
                    if r.status_code != 200 or not session:
                        failures += 1
                        continue
                    r = await client.post(
                        url, json=INITIALIZED, headers={**ACCEPT_HEADERS, "Mcp-Session-Id": session}
                    )
                    if r.status_code not in (200, 202, 204):
                        failures += 1
                    else:
                        opened.append(session)
                except httpx.HTTPError:
                    failures += 1

        await asyncio.gather(*(worker() for _ in range(connections)))
    return failures


def settle() -> None:
    time.sleep(1.5)


def measure(name: str, flags: list[str], args: argparse.Namespace) -> dict:
    server = Server(name, "stateful", flags)
    try:
        problem = server.wait_ready() or preflight(server.url, "call-session")
        if problem:
            return {"server": name, "wrong": problem}
        pid = server.proc.pid
        warm: list[str] = []
        opened: list[str] = []
        failures = asyncio.run(open_sessions(server.url, args.warm, args.connections, warm))
        settle()
        before = rss_bytes(pid)
        half = args.sessions // 2
        failures += asyncio.run(open_sessions(server.url, half, args.connections, opened))
        settle()
        middle = rss_bytes(pid)
        failures += asyncio.run(
            open_sessions(server.url, args.sessions - half, args.connections, opened)
        )
        settle()
        after = rss_bytes(pid)
        if server.proc.poll() is not None:
            return {"server": name, "wrong": f"server exited: {server.log_tail()}"}
        # the sessions are still there: the oldest and newest measured ones answer a call
        for session in (opened[0], opened[-1]):
            with httpx.Client(timeout=10.0) as client:
                problem = check_call(
                    client.post(
                        server.url, json=CALL, headers={**ACCEPT_HEADERS, "Mcp-Session-Id": session}
                    )
                )
            if problem:
                return {"server": name, "wrong": f"a measured session no longer answers: {problem}"}
        made = args.sessions  # failures are reported; a failed session adds (almost) nothing
        return {
            "server": name,
            "sessions": made,
            "failures": failures,
            "rss_before": before,
            "rss_after": after,
            "bytes_per_session": (after - before) / made,
            "bytes_per_session_first_half": (middle - before) / half,
            "bytes_per_session_second_half": (after - middle) / (made - half),
        }
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--sessions", type=int, default=5000, help="idle sessions measured (default 5000)"
    )
    parser.add_argument(
        "--warm", type=int, default=200, help="sessions opened before the baseline (default 200)"
    )
    parser.add_argument(
        "--connections",
        type=int,
        default=32,
        help="keep-alive connections of the client (default 32)",
    )
    parser.add_argument(
        "--servers",
        nargs="+",
        choices=[s for s in SERVERS if s != "bare"],
        default=["mcpkit", "official"],
    )
    parser.add_argument("--http", choices=["auto", "httptools", "h11"], default="auto")
    parser.add_argument(
        "--mcpkit-source",
        default="worktree",
        metavar="REV",
        help="serve mcpkit from the work tree (default) or a snapshot of git revision REV",
    )
    args = parser.parse_args()
    try:
        run(args)
    finally:
        http_load.drop_mcpkit_snapshot()


def run(args: argparse.Namespace) -> None:
    if args.sessions < 2:
        sys.exit("--sessions: at least 2")
    if args.sessions + args.warm + 10 > 10_000:
        print(
            "note: mcpkit and the official SDK cap sessions at 10,000 by default", file=sys.stderr
        )

    pin_self(http_load.WRK_CPU)
    wanted_peers = [s for s in args.servers if s in PEER_NAMES]
    versions = ensure_peers(wanted_peers, [], upgrade=False) if wanted_peers else {}
    servers = [s for s in args.servers if s not in PEER_NAMES or s in versions]
    flags = ensure_fast_http(args.http, bool(wanted_peers))
    source = "work tree"
    if args.mcpkit_source != "worktree":
        source = f"git {http_load.use_mcpkit_snapshot(args.mcpkit_source)} (snapshot)"
    print(
        f"mcpkit served from the {source}; uvicorn {' '.join(flags)}; {args.sessions:,} sessions after {args.warm} warm-up sessions"
    )

    results = []
    print(
        f"{'server':<9} {'sessions':>8} {'failed':>6} {'RSS before':>11} {'RSS after':>10} {'bytes/session':>13} {'1st half':>9} {'2nd half':>9}"
    )
    for name in servers:
        r = measure(name, flags, args)
        results.append(r)
        if "wrong" in r:
            print(f"{name:<9} not measured: {r['wrong'][:200]}")
            continue
        print(
            f"{name:<9} {r['sessions']:>8,} {r['failures']:>6} {r['rss_before'] / 2**20:>8.1f} MiB {r['rss_after'] / 2**20:>6.1f} MiB"
            f" {r['bytes_per_session']:>13,.0f} {r['bytes_per_session_first_half']:>9,.0f} {r['bytes_per_session_second_half']:>9,.0f}"
        )
    mine = next((r for r in results if r["server"] == "mcpkit" and "bytes_per_session" in r), None)
    if mine:
        verdict = "met" if mine["bytes_per_session"] <= TARGET_BYTES else "NOT met"
        print(
            f"\ntarget: mcpkit <= 3 KiB per idle session ... {mine['bytes_per_session'] / 1024:.2f} KiB  {verdict}"
        )
    print(
        json.dumps(
            {
                "mcpkit_source": source,
                "versions": versions,
                "uvicorn_flags": flags,
                "results": results,
            }
        )
    )


if __name__ == "__main__":
    main()
