"""Sequential tools/call round trips over stdio: mcpkit's server against the official SDK's,
driven by the same minimal blocking client, client and server on separate CPUs.

    python bench/stdio_roundtrip.py [--calls N] [--rounds R]

Prints calls/s per server (best of R rounds) and the ratio. A second line measures
mcpkit's own ``McpClient`` against mcpkit's server.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

import msgspec

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _pinning import pin_self, pinned

HERE = Path(__file__).resolve().parent
SERVERS = {
    "mcpkit": [sys.executable, "-m", "mcpkit", "run", str(HERE / "servers" / "mcpkit_stdio.py")],
    "official mcp": [sys.executable, str(HERE / "servers" / "official_stdio.py")],
}

encode = msgspec.json.encode
decode = msgspec.json.decode


class PipeClient:
    """A blocking newline-JSON client: as little client overhead as Python allows."""

    def __init__(self, command: list[str]) -> None:
        self.proc = subprocess.Popen(
            pinned(command, 1), stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        assert self.proc.stdin and self.proc.stdout
        self.out = self.proc.stdin.fileno()
        self.reader = self.proc.stdout

    def send(self, message: dict) -> None:
        os.write(self.out, encode(message) + b"\n")

    def call(self, message: dict) -> dict:
        self.send(message)
        return decode(self.reader.readline())

    def initialize(self) -> None:
        reply = self.call(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
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


def measure(command: list[str], calls: int) -> float:
    client = PipeClient(command)
    try:
        client.initialize()
        request = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "tools/call",
            "params": {"name": "add", "arguments": {"a": 1, "b": 2}},
        }
        for i in range(200):  # warm-up
            request["id"] = i + 1
            client.call(request)
        start = time.perf_counter()
        for i in range(calls):
            request["id"] = i + 1000
            reply = client.call(request)
        elapsed = time.perf_counter() - start
        assert reply["result"]["content"][0]["text"] == "3", reply
        return calls / elapsed
    finally:
        client.close()


async def measure_mcpkit_client(calls: int) -> float:
    from mcpkit import McpClient, StdioClientTransportOptions

    command = pinned(SERVERS["mcpkit"], 1)
    options = StdioClientTransportOptions(command=command[0], arguments=command[1:])
    async with McpClient.stdio(options) as client:
        for _ in range(200):
            await client.call_tool("add", {"a": 1, "b": 2})
        start = time.perf_counter()
        for _ in range(calls):
            result = await client.call_tool("add", {"a": 1, "b": 2})
        elapsed = time.perf_counter() - start
        assert result.content[0].text == "3"
        return calls / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    pin_self(0)
    best: dict[str, float] = {}
    for _round in range(args.rounds):
        for name, command in SERVERS.items():  # interleaved: the machine is noisy
            rate = measure(command, args.calls)
            best[name] = max(best.get(name, 0.0), rate)
    for name, rate in best.items():
        print(f"stdio tools/call  {name:<14} {rate:>9,.0f} calls/s")
    print(f"ratio mcpkit / official mcp: {best['mcpkit'] / best['official mcp']:.1f}x")
    try:
        import uvloop

        own = uvloop.run(measure_mcpkit_client(args.calls))
    except ImportError:
        own = asyncio.run(measure_mcpkit_client(args.calls))
    print(f"stdio tools/call  mcpkit server + mcpkit McpClient {own:,.0f} calls/s")


if __name__ == "__main__":
    main()
