"""Cold start: the time from spawning a server process to the first ``initialize`` result.

    python bench/coldstart.py [--runs N] [--only NAME...] [--json PATH]

Servers (the same ``add(a, b)`` tool everywhere, from bench/servers/):

  mcpkit stdio     ``mcpkit run bench/servers/mcpkit_stdio.py -t stdio`` (the venv's script)
  mcpkit http      ``mcpkit run bench/servers/mcpkit_stdio.py -t http --port P``
  bare stdio       a Python process that answers one fixed line: the stdio floor
  bare http        ``python -m uvicorn http_bare:app`` (bench/servers/http_bare.py): the HTTP floor
  official stdio   the official SDK (``mcp``, in the project venv): ``MCPServer.run("stdio")``
  official http    the same server, ``MCPServer.run("streamable-http", port=P)``

stdio: the clock starts just before the spawn; the initialize request is written to the
child's stdin at once (the pipe holds it until the server reads), and the clock stops when
the answer line arrives. HTTP: after the spawn the client tries to connect every millisecond;
on the first accepted connection it POSTs initialize, and the clock stops when the result is
in (a JSON body, or the first SSE ``data:`` event that carries it). Each run is a new process;
runs of the servers are interleaved so drift on a shared machine spreads over all of them.
The servers run without PYTHONDONTWRITEBYTECODE, and a first unmeasured round of each
refreshes stale bytecode caches: an installed package has its bytecode, and a module whose
cache is stale is compiled again at every start.

Prints the median and the range per server, the ratio of each median to the floor of its
transport (bare) and to the official SDK, and the targets (mcpkit stdio <= 150 ms, mcpkit
http <= 250 ms) as pass/fail. Nothing is written into the repository.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SERVERS_DIR = HERE / "servers"
BIN = Path(sys.executable).parent
#: the servers' environment: bytecode caches written and used, as in an installed package
ENV = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}

INITIALIZE = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "coldstart", "version": "1"},
        },
    }
).encode()

TARGETS_MS = {"mcpkit stdio": 150.0, "mcpkit http": 250.0}

BARE_STDIO = (
    "import sys\n"
    "sys.stdin.buffer.readline()\n"
    'sys.stdout.buffer.write(b\'{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25",'
    '"capabilities":{},"serverInfo":{"name":"bare","version":"0"}}}\\n\')\n'
    "sys.stdout.buffer.flush()\n"
    "sys.stdin.buffer.read()\n"
)
OFFICIAL_HTTP = (
    "import sys, logging\n"
    f"sys.path.insert(0, {str(SERVERS_DIR)!r})\n"
    "from official_stdio import server\n"
    "server.settings.log_level = 'WARNING'\n"
    "server.run('streamable-http', host='127.0.0.1', port=int(sys.argv[1]))\n"
)


def mcpkit_script() -> str:
    script = BIN / "mcpkit"
    return str(script) if script.exists() else "mcpkit"


def commands(port: int) -> dict[str, tuple[str, list[str]]]:
    mcpkit = mcpkit_script()
    server = str(SERVERS_DIR / "mcpkit_stdio.py")
    py = sys.executable
    return {
        "mcpkit stdio": ("stdio", [mcpkit, "run", server, "-t", "stdio"]),
        "mcpkit http": (
            "http",
            [mcpkit, "run", server, "-t", "http", "--host", "127.0.0.1", "--port", str(port)],
        ),
        "bare stdio": ("stdio", [py, "-c", BARE_STDIO]),
        "bare http": (
            "http",
            [
                py,
                "-m",
                "uvicorn",
                "--app-dir",
                str(SERVERS_DIR),
                "http_bare:app",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--log-level",
                "warning",
            ],
        ),
        "official stdio": ("stdio", [py, str(SERVERS_DIR / "official_stdio.py")]),
        "official http": ("http", [py, "-c", OFFICIAL_HTTP, str(port)]),
    }


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.stdin:
        try:
            proc.stdin.close()
        except OSError:
            pass
    if proc.poll() is None:
        proc.terminate()
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def time_stdio(command: list[str], timeout: float = 20.0) -> float:
    start = time.perf_counter()
    proc = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=ENV
    )
    try:
        assert proc.stdin and proc.stdout
        proc.stdin.write(INITIALIZE + b"\n")
        proc.stdin.flush()
        ready, _, _ = select.select([proc.stdout], [], [], timeout)
        line = proc.stdout.readline() if ready else b""
        elapsed = time.perf_counter() - start
        if b'"result"' not in line:
            raise RuntimeError(f"{command[0]}: no initialize result: {line[:200]!r}")
        return elapsed
    finally:
        stop(proc)


def _read_result(sock: socket.socket, deadline: float) -> bytes:
    """The bytes of the initialize result: a whole JSON body, or the SSE event carrying it."""
    data = b""
    while True:
        remaining = deadline - time.perf_counter()
        if remaining <= 0:
            raise TimeoutError(f"no initialize result: {data[:300]!r}")
        sock.settimeout(remaining)
        chunk = sock.recv(65536)
        if not chunk:
            raise RuntimeError(f"connection closed: {data[:300]!r}")
        data += chunk
        head, sep, body = data.partition(b"\r\n\r\n")
        if not sep:
            continue
        headers = head.lower()
        if b"content-length:" in headers:
            length = int(headers.split(b"content-length:", 1)[1].split(b"\r\n", 1)[0])
            if len(body) >= length:
                return body[:length]
            continue
        # chunked (SSE): the result is complete once a data: line of it ends
        for line in body.split(b"\n"):
            if line.startswith(b"data:") and b'"result"' in line:
                try:
                    json.loads(line[5:].strip())
                    return line
                except ValueError:
                    pass


def time_http(command: list[str], port: int, timeout: float = 20.0) -> float:
    request = (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        f"Accept: application/json, text/event-stream\r\nContent-Length: {len(INITIALIZE)}\r\n\r\n"
    ).encode() + INITIALIZE
    start = time.perf_counter()
    deadline = start + timeout
    proc = subprocess.Popen(
        command,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=ENV,
    )
    try:
        while True:
            sock = socket.socket()
            try:
                sock.connect(("127.0.0.1", port))
                break
            except OSError:
                sock.close()
                if proc.poll() is not None:
                    raise RuntimeError(
                        f"{command[0]} exited with {proc.returncode} before listening"
                    ) from None
                if time.perf_counter() > deadline:
                    raise TimeoutError("never listened") from None
                time.sleep(0.001)
        with sock:
            sock.sendall(request)
            body = _read_result(sock, deadline)
        elapsed = time.perf_counter() - start
        if b'"result"' not in body:
            raise RuntimeError(f"no initialize result: {body[:300]!r}")
        return elapsed
    finally:
        stop(proc)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15, help="runs per server (default 15)")
    parser.add_argument(
        "--only", nargs="*", help="servers to measure (names as in the table, e.g. 'mcpkit stdio')"
    )
    parser.add_argument(
        "--json", help="also write the results as JSON to this path (outside the repository)"
    )
    args = parser.parse_args()

    names = list(commands(0))
    if args.only:
        names = [name for name in names if name in args.only]
    times: dict[str, list[float]] = {name: [] for name in names}
    failed: dict[str, str] = {}
    # one warm-up run each: the first spawn pays for the disk and bytecode caches
    for round_index in range(args.runs + 1):
        for name in names:
            if name in failed:
                continue
            port = free_port()
            kind, command = commands(port)[name]
            try:
                elapsed = time_stdio(command) if kind == "stdio" else time_http(command, port)
            except Exception as exc:  # a server that cannot start is reported, not fatal
                failed[name] = f"{type(exc).__name__}: {exc}"
                continue
            if round_index:
                times[name].append(elapsed * 1000)

    medians = {name: statistics.median(values) for name, values in times.items() if values}
    print(
        f"cold start, spawn -> first initialize result, {args.runs} runs each "
        f"(python {sys.version.split()[0]}, {os.cpu_count()} cpus)\n"
    )
    print(
        f"{'server':<16}{'median ms':>10}{'min':>8}{'max':>8}{'x bare':>8}{'x official':>12}  target"
    )
    for name in names:
        if name in failed:
            print(f"{name:<16}  failed: {failed[name]}")
            continue
        values = times[name]
        median = medians[name]
        kind = name.split()[1]
        bare = medians.get(f"bare {kind}")
        official = medians.get(f"official {kind}")
        ratio_bare = f"{median / bare:.2f}" if bare else "-"
        ratio_official = f"{median / official:.2f}" if official else "-"
        target = TARGETS_MS.get(name)
        verdict = f"<= {target:.0f} ms {'pass' if median <= target else 'FAIL'}" if target else ""
        print(
            f"{name:<16}{median:>10.1f}{min(values):>8.1f}{max(values):>8.1f}{ratio_bare:>8}{ratio_official:>12}  {verdict}"
        )
    if args.json:
        Path(args.json).write_text(
            json.dumps({"runs_ms": times, "median_ms": medians, "failed": failed}, indent=2)
        )
    if any(name in medians and medians[name] > target for name, target in TARGETS_MS.items()):
        sys.exit(1)


if __name__ == "__main__":
    main()
