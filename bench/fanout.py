"""Fan-out: one notification reaching many open GET streams (one per session).

    python bench/fanout.py [--streams 10000] [--rounds 3] [--redis] [--json PATH]

One mcpkit process serves Streamable HTTP (sessions in memory). The client opens
``--streams`` sessions, each with its GET stream, on one connection apiece (raw sockets:
as little client work per stream as Python allows), then asks the server, over one more
session, to change its tool list (``notifications/tools/list_changed`` to every session)
and to update a resource every session subscribed to (``notifications/resources/updated``).
Reported per round: the time from the request until the *last* stream has the
notification, and the server's memory per open stream (RSS with the streams open, less
RSS with the same sessions and no stream, over the count).

``--redis``: two processes sharing a ``redis-server`` (sessions, events, bus), the
sessions split between them; the resource update is made on one and reaches the other's
streams through the bus. Targets: 10,000 streams in ≤ 1 s on one process, ≤ 2 s across two
with Redis, ≤ 4 KiB per open stream.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PROJECT_PY = ROOT / ".venv" / "bin" / "python"
sys.path.insert(0, str(HERE))
from _pinning import pin_self, pinned
from redis_stores import Redis, free_port, wait_port

SERVER_CPU, CLIENT_CPU = 1, 0
RESOURCE_URI = "bench://item"
#: Sessions set up at once (each its own connection): under the listen backlog.
SETUP_CONCURRENCY = 128
#: Seconds a round may wait for the last stream before it counts as failed.
DELIVERY_TIMEOUT = 60.0
PROTOCOL_VERSION = "2025-11-25"


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# --- the server (this file, run with --serve) --------------------------------------------------


def serve(port: int, redis_url: str | None) -> None:
    import importlib.util

    import uvicorn

    from mcpkit import McpServerApp, mcp_resource, mcp_server, mcp_tool
    from mcpkit.transports.http import StreamableHttpServerOptions, create_asgi_app

    grown = 0

    @mcp_server(name="bench-fanout")
    class Fanout:
        @mcp_tool()
        async def grow(self) -> int:
            """Add a tool: every session gets tools/list_changed."""
            nonlocal grown
            grown += 1

            async def extra() -> str:
                return "extra"

            app.tool(f"extra_{grown}", description="An added tool.")(extra)
            return grown

        @mcp_tool()
        async def poke(self) -> int:
            """Update the resource: every subscriber gets resources/updated."""
            return await app.subscriptions.notify_updated(RESOURCE_URI)

        @mcp_resource(RESOURCE_URI)
        def item(self) -> str:
            return "item"

    shared = {}
    if redis_url:
        from mcpkit.stores import redis_options

        shared = redis_options(redis_url)
    app = McpServerApp(Fanout)
    options = StreamableHttpServerOptions(endpoint="/mcp", max_sessions=1_000_000, **shared)
    fast = {}
    if importlib.util.find_spec("httptools") and importlib.util.find_spec("uvloop"):
        fast = {"loop": "uvloop", "http": "httptools"}
    uvicorn.run(
        create_asgi_app(app, options),
        host="127.0.0.1",
        port=port,
        log_level="warning",
        access_log=False,
        backlog=4096,
        timeout_keep_alive=3600,
        **fast,
    )


class Server:
    def __init__(self, redis_url: str | None) -> None:
        self.port = free_port()
        env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
        python = str(PROJECT_PY if PROJECT_PY.exists() else sys.executable)
        command = [python, __file__, "--serve", "--port", str(self.port)]
        if redis_url:
            command += ["--redis-url", redis_url]
        self.process = subprocess.Popen(pinned(command, SERVER_CPU), env=env)
        wait_port(self.port)

    def rss(self) -> int:
        """Resident memory in bytes (``/proc``)."""
        pid = self.process.pid
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        raise RuntimeError("no VmRSS")

    def close(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


# --- a raw HTTP/1.1 client, one connection per session ------------------------------------


class Connection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, port: int):
        self.reader, self.writer, self.port = reader, writer, port
        self.session_id = ""

    @classmethod
    async def open(cls, port: int) -> Connection:
        reader, writer = await asyncio.open_connection("127.0.0.1", port, limit=1 << 20)
        return cls(reader, writer, port)

    def _head(self, method: str, length: int | None, accept: str) -> bytes:
        lines = [
            f"{method} /mcp HTTP/1.1",
            f"host: 127.0.0.1:{self.port}",
            f"accept: {accept}",
            f"mcp-protocol-version: {PROTOCOL_VERSION}",
        ]
        if self.session_id:
            lines.append(f"mcp-session-id: {self.session_id}")
        if length is not None:
            lines += ["content-type: application/json", f"content-length: {length}"]
        return ("\r\n".join(lines) + "\r\n\r\n").encode()

    async def _response(self) -> tuple[int, dict[str, str], bytes]:
        head = await self.reader.readuntil(b"\r\n\r\n")
        status_line, *header_lines = head.decode("latin-1").split("\r\n")
        headers = {}
        for line in header_lines:
            if ":" in line:
                name, value = line.split(":", 1)
                headers[name.strip().lower()] = value.strip()
        body = b""
        if "content-length" in headers:
            body = await self.reader.readexactly(int(headers["content-length"]))
        elif headers.get("transfer-encoding") == "chunked":
            while True:
                size = int((await self.reader.readuntil(b"\r\n")).strip(), 16)
                body += await self.reader.readexactly(size + 2)
                if size == 0:
                    break
        return int(status_line.split()[1]), headers, body

    async def post(self, message: dict) -> tuple[int, dict[str, str], bytes]:
        body = json.dumps(message).encode()
        self.writer.write(self._head("POST", len(body), "application/json") + body)
        return await self._response()

    async def initialize(self) -> None:
        status, headers, body = await self.post(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": PROTOCOL_VERSION,
                    "capabilities": {},
                    "clientInfo": {"name": "bench-fanout", "version": "1"},
                },
            }
        )
        if status != 200:
            raise RuntimeError(f"initialize answered {status}: {body[:200]!r}")
        self.session_id = headers["mcp-session-id"]
        status, _, _ = await self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        if status != 202:
            raise RuntimeError(f"notifications/initialized answered {status}")

    async def subscribe(self) -> None:
        status, _, body = await self.post(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "resources/subscribe",
                "params": {"uri": RESOURCE_URI},
            }
        )
        if status != 200 or b'"result"' not in body:
            raise RuntimeError(f"resources/subscribe answered {status}: {body[:200]!r}")

    async def call(self, name: str) -> dict:
        status, _, body = await self.post(
            {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": name}}
        )
        if status != 200:
            raise RuntimeError(f"tools/call {name} answered {status}")
        return json.loads(body)

    async def open_stream(self) -> None:
        self.writer.write(self._head("GET", None, "text/event-stream"))
        head = await self.reader.readuntil(b"\r\n\r\n")
        if not head.startswith(b"HTTP/1.1 200"):
            raise RuntimeError(f"GET answered {head[:60]!r}")

    async def wait_for(self, method: bytes) -> float:
        """Read the stream until an event carries ``method``; when it arrived."""
        while True:
            chunk = await self.reader.readuntil(b"\n\n")
            if method in chunk:
                return time.perf_counter()

    def close(self) -> None:
        self.writer.close()


async def _bounded(count: int, make, limit: int = SETUP_CONCURRENCY) -> list:
    gate = asyncio.Semaphore(limit)

    async def one(i: int):
        async with gate:
            return await make(i)

    return await asyncio.gather(*(one(i) for i in range(count)))


async def one_round(servers: list[Server], streams: int) -> dict:
    async def session(i: int) -> Connection:
        connection = await Connection.open(servers[i % len(servers)].port)
        await connection.initialize()
        await connection.subscribe()
        return connection

    started = time.perf_counter()
    sessions = await _bounded(streams, session)
    log(f"  {streams:,} sessions in {time.perf_counter() - started:.1f} s")
    await asyncio.sleep(1)
    before = [s.rss() for s in servers]
    started = time.perf_counter()
    await _bounded(streams, lambda i: sessions[i].open_stream())
    log(f"  {streams:,} streams open in {time.perf_counter() - started:.1f} s")
    await asyncio.sleep(1)
    after = [s.rss() for s in servers]
    per_stream = (sum(after) - sum(before)) / streams
    trigger = await Connection.open(servers[0].port)
    await trigger.initialize()
    result = {"streams": streams, "bytes_per_stream": per_stream}
    for label, tool, method in (
        ("list_changed", "grow", b"notifications/tools/list_changed"),
        ("resource_updated", "poke", b"notifications/resources/updated"),
    ):
        waiting = [asyncio.ensure_future(s.wait_for(method)) for s in sessions]
        await asyncio.sleep(0.2)  # every reader waiting before the trigger
        sent = time.perf_counter()
        answer = await trigger.call(tool)
        if "result" not in answer:
            raise RuntimeError(f"{tool} failed: {answer}")
        arrivals = await asyncio.wait_for(asyncio.gather(*waiting), DELIVERY_TIMEOUT)
        result[label] = {
            "last_s": max(arrivals) - sent,
            "median_s": statistics.median(arrivals) - sent,
        }
        log(f"  {label}: the last of {streams:,} streams after {max(arrivals) - sent:.3f} s")
    for connection in [*sessions, trigger]:
        connection.close()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--streams", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--redis", action="store_true", help="two processes sharing Redis")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--redis-url", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.port, args.redis_url)
        return
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard < args.streams + 256:
        sys.exit(
            f"--streams {args.streams} needs {args.streams + 256} file descriptors; the limit is {hard}"
        )
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    pin_self(CLIENT_CPU)
    rounds = []
    for number in range(args.rounds):
        log(f"round {number + 1}")
        redis = Redis() if args.redis else None
        servers = [Server(redis.url if redis else None) for _ in range(2 if redis else 1)]
        try:
            rounds.append(asyncio.run(one_round(servers, args.streams)))
        finally:
            for server in servers:
                server.close()
            if redis is not None:
                redis.close()
    setup = f"{'2 processes + Redis' if args.redis else '1 process'}, {args.streams:,} streams"
    print(f"fan-out ({setup}), median of {len(rounds)} rounds:")
    for label in ("list_changed", "resource_updated"):
        lasts = [r[label]["last_s"] for r in rounds]
        print(
            f"  {label:<17} last stream after {statistics.median(lasts):.3f} s"
            f"  (range {min(lasts):.3f}-{max(lasts):.3f})"
        )
    per_stream = statistics.median(r["bytes_per_stream"] for r in rounds)
    print(f"  memory per open stream {per_stream / 1024:.2f} KiB")
    if args.json:
        args.json.write_text(json.dumps({"setup": setup, "rounds": rounds}, indent=2))


if __name__ == "__main__":
    main()
