"""Sequential tools/call round trips over stdio: mcpkit's server (on uvloop, as ``mcpkit run``
serves it, and on the stdlib asyncio loop) against the official SDK's and lauren-mcp's,
driven by the same minimal blocking client, client and server on separate CPUs. Every
server's ``add`` tool is async; every reply is checked.

    python bench/stdio_roundtrip.py [--calls N] [--rounds R] [--only NAME ...]

Prints, per server, the median calls/s of R rounds with the range and the server's CPU
time per call (Linux), and the ratios of mcpkit (uvloop) to each peer. Rounds interleave the servers (the machine is noisy). A last
line measures mcpkit's own ``McpClient`` against mcpkit's server. The peers live in
bench/.venv-peers (``http_load.py`` creates and fills it); a peer that cannot be installed
is left out with a note.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import msgspec

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _pinning import pin_self, pinned

HERE = Path(__file__).resolve().parent
SERVERS_DIR = HERE / "servers"
PEERS_PY = HERE / ".venv-peers" / "bin" / "python"
MCPKIT = "mcpkit (uvloop)"
SERVERS: dict[str, list[str]] = {
    MCPKIT: [sys.executable, "-m", "mcpkit", "run", str(SERVERS_DIR / "mcpkit_stdio.py")],
    "mcpkit (asyncio)": [sys.executable, str(SERVERS_DIR / "mcpkit_stdio.py"), "asyncio"],
    "official mcp": [sys.executable, str(SERVERS_DIR / "official_stdio.py")],
    "lauren-mcp": [str(PEERS_PY), str(SERVERS_DIR / "lauren_stdio.py")],
}
WARM_UP = 200

encode = msgspec.json.encode
decode = msgspec.json.decode


class PipeClient:
    """A blocking newline-JSON client: as little client overhead as Python allows."""

    def __init__(self, command: list[str]) -> None:
        env = dict(os.environ)
        env.pop("PYTHONPATH", None)
        self.proc = subprocess.Popen(
            pinned(command, 1), stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env
        )
        assert self.proc.stdin and self.proc.stdout
        self.out = self.proc.stdin.fileno()
        self.reader = self.proc.stdout

    def send(self, message: dict) -> None:
        os.write(self.out, encode(message) + b"\n")

    def call(self, message: dict) -> dict:
        self.send(message)
        line = self.reader.readline()
        if not line:
            raise RuntimeError(f"the server exited (status {self.proc.wait()})")
        return decode(line)

    def initialize(self) -> None:
        reply = self.call(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "bench", "version": "1"},
                },
            }
        )
        assert "result" in reply, reply
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def close(self) -> None:
        self.proc.stdin.close()  # type: ignore[union-attr]
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def check(reply: dict, request_id: int, a: int, b: int) -> None:
    """The reply answers this request with the right sum (text content)."""
    if reply.get("id") != request_id or "result" not in reply:
        raise AssertionError(f"request {request_id} got {reply}")
    text = reply["result"]["content"][0]["text"]
    if text != str(a + b):
        raise AssertionError(f"request {request_id}: {a} + {b} answered {text!r}")


def cpu_ns(pid: int) -> int | None:
    """Nanoseconds process ``pid`` has run on a CPU (Linux schedstat); None elsewhere."""
    try:
        with open(f"/proc/{pid}/schedstat") as stat:
            return int(stat.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def measure(command: list[str], calls: int) -> tuple[float, float | None]:
    """Calls/s, and the server's CPU time per call in microseconds (None: not measurable).
    The rate is bound by the wake-ups of two processes; the CPU time is the server's own
    work, the steadier figure on a noisy machine."""
    client = PipeClient(command)
    try:
        client.initialize()
        request = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "tools/call",
            "params": {"name": "add", "arguments": {"a": 1, "b": 2}},
        }
        arguments = request["params"]["arguments"]  # type: ignore[index]
        for i in range(WARM_UP):
            request["id"] = i + 1
            arguments["a"] = i
            check(client.call(request), i + 1, i, 2)
        cpu_before = cpu_ns(client.proc.pid)
        start = time.perf_counter()
        for i in range(calls):  # the check is a dict lookup or two: part of any client's work
            request["id"] = i + 1000
            arguments["a"] = i
            check(client.call(request), i + 1000, i, 2)
        rate = calls / (time.perf_counter() - start)
        cpu_after = cpu_ns(client.proc.pid)
        if cpu_before is None or cpu_after is None:
            return rate, None
        return rate, (cpu_after - cpu_before) / calls / 1000
    finally:
        client.close()


async def measure_mcpkit_client(calls: int) -> float:
    from mcpkit import McpClient, StdioClientTransportOptions

    command = pinned(SERVERS[MCPKIT], 1)
    options = StdioClientTransportOptions(command=command[0], arguments=command[1:])
    async with McpClient.stdio(options) as client:
        for i in range(WARM_UP):
            await client.call_tool("add", {"a": i, "b": 2})
        start = time.perf_counter()
        for i in range(calls):
            result = await client.call_tool("add", {"a": i, "b": 2})
            if result.content[0].text != str(i + 2):
                raise AssertionError(f"call {i} answered {result.content[0].text!r}")
        return calls / (time.perf_counter() - start)


def available(names: list[str]) -> list[str]:
    """The servers that can run here; installs the peers' venv when a peer is wanted."""
    if "lauren-mcp" in names and not PEERS_PY.exists():
        from http_load import ensure_peers

        ensure_peers(["lauren"], [], upgrade=False)
    kept = []
    for name in names:
        probe = {
            "lauren-mcp": [str(PEERS_PY), "-c", "import lauren_mcp"],
            "official mcp": [sys.executable, "-c", "import mcp.server.mcpserver"],
        }.get(name)
        if probe is not None and (
            not Path(probe[0]).exists() or subprocess.run(probe, capture_output=True).returncode
        ):
            print(f"{name}: not installed, left out", file=sys.stderr)
            continue
        kept.append(name)
    return kept


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", nargs="+", choices=list(SERVERS), default=list(SERVERS))
    parser.add_argument("--no-client", action="store_true", help="skip the McpClient line")
    args = parser.parse_args()
    names = available(args.only)
    pin_self(0)
    rates: dict[str, list[float]] = {name: [] for name in names}
    cpu: dict[str, list[float]] = {name: [] for name in names}
    for _round in range(args.rounds):
        for name in names:  # interleaved: the machine is noisy
            rate, per_call = measure(SERVERS[name], args.calls)
            rates[name].append(rate)
            if per_call is not None:
                cpu[name].append(per_call)
    median = {name: statistics.median(values) for name, values in rates.items()}
    median_cpu = {name: statistics.median(values) for name, values in cpu.items() if values}
    for name, values in rates.items():
        used = f"  server CPU {median_cpu[name]:.1f} µs/call" if name in median_cpu else ""
        print(
            f"stdio tools/call  {name:<17} {median[name]:>9,.0f} calls/s"
            f"  (range {min(values):,.0f}-{max(values):,.0f}, {len(values)} rounds){used}"
        )
    if MCPKIT in median:
        for name in names:
            if name != MCPKIT:
                line = f"ratio {MCPKIT} / {name}: {median[MCPKIT] / median[name]:.2f}x calls/s"
                if MCPKIT in median_cpu and name in median_cpu:
                    line += f", {median_cpu[name] / median_cpu[MCPKIT]:.2f}x less server CPU"
                print(line)
    if not args.no_client and MCPKIT in names:
        try:
            import uvloop

            own = uvloop.run(measure_mcpkit_client(args.calls))
        except ImportError:
            own = asyncio.run(measure_mcpkit_client(args.calls))
        print(f"stdio tools/call  mcpkit server + mcpkit McpClient {own:,.0f} calls/s")


if __name__ == "__main__":
    main()
