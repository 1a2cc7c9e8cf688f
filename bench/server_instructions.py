"""Instructions per request of a whole server process: uvicorn, its parser and event loop,
and the app, counted by callgrind, for the bare ASGI app and for mcpkit, both from uvicorn's
command line, and for mcpkit as ``mcpkit run -t http`` serves it (``mcpkit-run``: uvicorn's
protocol with its request headers bounded). The noise-free counterpart of
``http_load.py``'s ratios to bare, and what it takes to move them.

    python bench/server_instructions.py [--scenarios stateless session modern] [--requests 1000]

Each server runs under ``valgrind --tool=callgrind`` as ``http_load.py`` runs it (the same
``servers/http_*.py``, uvicorn with uvloop and httptools), and one keep-alive connection
sends it tools/call requests, every answer checked. Two runs differ only in how many
requests they send; the difference of their counts over the difference of the requests is
what one request costs the process, start-up and shutdown cancelled out. Callgrind counts
user-space instructions only: the kernel's share (the socket reads and writes, the same
for every server) is not in these figures, so the ratio printed here is a little below the
one ``http_load.py`` measures in CPU time.
"""

from __future__ import annotations

import argparse
import re
import shutil
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
from _uvicorn import SERVERS_DIR, uvicorn_command
from http_load import (
    ACCEPT_HEADERS,
    CALL,
    CALL_MODERN,
    MODERN_HEADERS,
    PROJECT_PY,
    SHARE_OF_BARE,
    check_call,
    ensure_fast_http,
    free_port,
    open_session,
    project_env,
)

SCENARIOS = ("stateless", "session", "modern")
#: The bare app and mcpkit from uvicorn's command line; mcpkit as ``mcpkit run -t http``
#: serves it (``serve_http``: uvicorn's protocol with its request headers bounded).
SERVER_NAMES = ("bare", "mcpkit", "mcpkit-run")
#: Requests of the shorter run; the longer sends ``--requests`` more.
BASE_REQUESTS = 200
#: Seconds a server under valgrind may take to start listening.
START_TIMEOUT = 120


def _wait_listening(url: str) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        try:
            httpx.get(url, timeout=5)
            return
        except httpx.TransportError:
            if time.monotonic() > deadline:
                raise SystemExit(f"no server listening at {url} after {START_TIMEOUT} s") from None
            time.sleep(0.2)


def _send_calls(url: str, scenario: str, requests: int) -> None:
    """``requests`` tools/call POSTs on one connection (a session opened first if need be),
    each answer checked as ``http_load.py``'s pre-flight checks it."""
    modern = scenario == "modern"
    with httpx.Client(timeout=60) as client:
        if scenario == "session":
            headers = open_session(client, url)
        else:
            headers = MODERN_HEADERS if modern else ACCEPT_HEADERS
        call = CALL_MODERN if modern else CALL
        for _ in range(requests):
            problem = check_call(client.post(url, json=call, headers=headers), modern=modern)
            if problem:
                raise SystemExit(f"{scenario}: {problem}")


def count(server: str, scenario: str, requests: int, flags: list[str]) -> int:
    """Instructions the whole server process executes while serving ``requests`` calls
    (and starting and stopping)."""
    port = free_port()
    env = {
        **project_env(),
        "BENCH_MODE": "stateful" if scenario == "session" else "stateless",
        "PYTHONHASHSEED": "0",
    }
    if server == "mcpkit-run":  # served as `mcpkit run -t http` serves it
        command = [str(PROJECT_PY), str(SERVERS_DIR / "http_mcpkit_served.py"), str(port)]
    else:
        command = uvicorn_command(PROJECT_PY, f"http_{server}:app", port, flags)
    process = subprocess.Popen(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *command],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        _wait_listening(url)
        _send_calls(url, scenario, requests)
    finally:
        process.send_signal(signal.SIGINT)
        _, errors = process.communicate(timeout=120)
    found = re.search(r"Collected : (\d+)", errors)
    if found is None:
        raise SystemExit(f"no instruction count from valgrind:\n{errors[-1500:]}")
    return int(found.group(1))


def per_request(scenario: str, requests: int, flags: list[str]) -> dict[str, float]:
    """Instructions per request of each server, its two runs side by side (two cores)."""
    runs = [(server, n) for server in SERVER_NAMES for n in (0, requests)]
    with ThreadPoolExecutor(2) as pool:
        counts = list(
            pool.map(lambda run: count(run[0], scenario, BASE_REQUESTS + run[1], flags), runs)
        )
    return {
        server: (counts[2 * i + 1] - counts[2 * i]) / requests
        for i, server in enumerate(SERVER_NAMES)
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenarios", nargs="+", choices=SCENARIOS, default=list(SCENARIOS))
    parser.add_argument("--requests", type=int, default=1000, help="requests counted (1,000)")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("this bench needs valgrind (apt-get install valgrind)")
    flags = ensure_fast_http("auto", need_peers=False)
    print(
        f"{'scenario':<10} {'bare':>9}"
        + "".join(f" {n:>15} {'bare/' + n:>20}" for n in SERVER_NAMES[1:])
    )
    for scenario in args.scenarios:
        measured = per_request(scenario, args.requests, flags)
        bare = measured["bare"]
        # 0.70 in instructions: what mcpkit's own share may be at most
        allowed = bare / SHARE_OF_BARE - bare
        cells = "".join(
            f" {measured[n]:15,.0f} {bare / measured[n]:20.3f}" for n in SERVER_NAMES[1:]
        )
        print(
            f"{scenario:<10} {bare:9,.0f}{cells}   "
            f"({SHARE_OF_BARE:.2f} would allow mcpkit {allowed:,.0f} of its own)"
        )
        sys.stdout.flush()


if __name__ == "__main__":
    main()
