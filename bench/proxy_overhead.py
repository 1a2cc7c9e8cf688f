"""Per-call latency of tools/call through ``mcpkit proxy`` (Streamable HTTP front, stdio
backend) against the same tool served directly over Streamable HTTP, in the same run.

    python bench/proxy_overhead.py [--calls N] [--rounds R]

Both servers run as ``mcpkit`` processes on 127.0.0.1; one ``McpClient`` per server makes
N sequential ``add`` calls per round, rounds interleaved (the machine is noisy). Prints the
median per-call latency of each and the ratio proxy / direct (target: at most 2x).
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from mcpkit.client import McpClient

HERE = Path(__file__).resolve().parent
SERVER = str(HERE / "servers" / "mcpkit_stdio.py")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def _serving(args: list[str]) -> Iterator[str]:
    port = _free_port()
    command = [
        sys.executable,
        "-m",
        "mcpkit",
        *args[:1],
        "--transport",
        "http",
        "--port",
        str(port),
        *args[1:],
    ]
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    break
            if proc.poll() is not None:
                raise RuntimeError(f"{' '.join(command)} exited with {proc.returncode}")
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(10)


async def _round(client: McpClient, calls: int) -> float:
    """Seconds per call, over ``calls`` sequential calls (each reply checked)."""
    start = time.perf_counter()
    for index in range(calls):
        result = await client.call_tool("add", {"a": index, "b": 1})
        if result.is_error:
            raise RuntimeError(f"add failed: {result}")
    return (time.perf_counter() - start) / calls


async def _measure(direct_url: str, proxy_url: str, calls: int, rounds: int) -> None:
    async with (
        McpClient.http(direct_url, protocol_mode="legacy") as direct,
        McpClient.http(proxy_url, protocol_mode="legacy") as proxied,
    ):
        for client in (direct, proxied):  # warm up both paths
            await _round(client, max(calls // 10, 10))
        times: dict[str, list[float]] = {"direct": [], "proxy": []}
        for _ in range(rounds):
            times["direct"].append(await _round(direct, calls))
            times["proxy"].append(await _round(proxied, calls))
    direct_ms = statistics.median(times["direct"]) * 1000
    proxy_ms = statistics.median(times["proxy"]) * 1000
    print(f"direct (HTTP):                 {direct_ms:.3f} ms/call")
    print(f"proxy (HTTP front, stdio back): {proxy_ms:.3f} ms/call")
    print(f"ratio proxy/direct: {proxy_ms / direct_ms:.2f}x (target <= 2x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    backend = [sys.executable, "-m", "mcpkit", "run", SERVER]
    with _serving(["run", SERVER]) as direct_url, _serving(["proxy", *backend]) as proxy_url:
        asyncio.run(_measure(direct_url, proxy_url, args.calls, args.rounds))


if __name__ == "__main__":
    main()
