"""Soak run: mixed load against a live Streamable HTTP server subprocess, then a check that
it gives back what the load took.

The server is examples/everything.py behind tests/fuzz/_soak_server.py, with a short
session idle timeout (and SSE keep-alive) so that abandoned sessions and dropped streams
are reaped within the run. Workers loop over: calls in a kept session (checked), sessions
opened and abandoned, sessions opened and DELETEd, GET streams opened and dropped mid-stream,
slow calls dropped mid-stream, slow calls cancelled with notifications/cancelled, stateless
2026-07-28 calls, and 2026-07-28 subscriptions/listen streams dropped.

The server's RSS (/proc/PID/status VmRSS) and descriptors (/proc/PID/fd) are read at start,
after a warm-up (load, then expiry), during the load, and after the load has stopped and
its sessions have expired: descriptors must be back to their warm level (sockets closed),
RSS within a tolerance of its warm level.

    python bench/soak.py [--duration 600] [--warmup 30] [--workers 8] [--idle-timeout 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import httpx

from tests.fuzz._server import ServerProcess

MODERN = "2026-07-28"
_ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
_META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "mcpkit-soak", "version": "1"},
}


@dataclass
class Sample:
    rss: int
    fds: dict[str, int]

    def __str__(self) -> str:
        sockets = self.fds["socket"]
        return f"RSS {self.rss / 1e6:6.1f} MB, fds {self.fds['total']} ({sockets} sockets)"


@dataclass
class SoakReport:
    duration: float
    idle_timeout: float
    start: Sample | None = None
    warm: Sample | None = None
    peak_rss: int = 0
    peak_fds: int = 0
    after: Sample | None = None
    actions: Counter[str] = field(default_factory=Counter)
    requests: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    tracebacks: list[str] = field(default_factory=list)

    def rss_growth(self) -> float:
        assert self.warm is not None and self.after is not None
        return (self.after.rss - self.warm.rss) / self.warm.rss

    def format(self) -> str:
        lines = [
            f"soak: {self.duration:.0f} s of load, session idle timeout {self.idle_timeout} s",
            f"  start:            {self.start}",
            f"  after warm-up:    {self.warm}",
            f"  peak under load:  RSS {self.peak_rss / 1e6:6.1f} MB, fds {self.peak_fds}",
            f"  after expiry:     {self.after}",
        ]
        if self.warm and self.after:
            lines.append(
                f"  RSS after/warm: {self.rss_growth():+.1%}; "
                f"fds after-warm: {self.after.fds['total'] - self.warm.fds['total']:+d}"
            )
        lines.append(f"  HTTP requests done: {self.requests}")
        lines.append("  actions: " + ", ".join(f"{k} {v}" for k, v in sorted(self.actions.items())))
        errors = ", ".join(f"{k} {v}" for k, v in sorted(self.errors.items())) or "none"
        lines.append(f"  errors by kind: {errors}")
        if self.tracebacks:
            lines.append(f"  server tracebacks: {len(self.tracebacks)}")
        return "\n".join(lines)


class Worker:
    """One client: its own connection pool and its own kept session."""

    def __init__(self, url: str, report: SoakReport, rng: random.Random) -> None:
        self.url = url
        self.report = report
        self.rng = rng
        self.client = httpx.AsyncClient(timeout=httpx.Timeout(15.0, connect=5.0))
        self.session: str | None = None
        self.ids = 0

    def next_id(self) -> int:
        self.ids += 1
        return self.ids

    def error(self, kind: str) -> None:
        self.report.errors[kind] += 1

    async def post(
        self, body: dict[str, Any], session: str | None, **headers: str
    ) -> httpx.Response:
        h = dict(_ACCEPT, **headers)
        if session is not None:
            h["mcp-session-id"] = session
            h["mcp-protocol-version"] = "2025-11-25"
        self.report.requests += 1
        return await self.client.post(self.url, content=json.dumps(body), headers=h)

    async def open_session(self) -> str | None:
        init = {
            "jsonrpc": "2.0",
            "id": self.next_id(),
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "mcpkit-soak", "version": "1"},
            },
        }
        response = await self.post(init, None)
        session: str | None = response.headers.get("mcp-session-id")
        if response.status_code != 200 or not session:
            self.error(f"initialize HTTP {response.status_code}")
            return None
        done = await self.post({"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
        if done.status_code != 202:
            self.error(f"initialized HTTP {done.status_code}")
        return session

    async def call(self, session: str | None, a: int, b: int) -> bool:
        """tools/call calculate in ``session`` (None: stateless 2026-07-28), checked."""
        params: dict[str, Any] = {"name": "calculate", "arguments": {"a": a, "b": b}}
        headers: dict[str, str] = {}
        if session is None:
            params["_meta"] = _META
            headers = {
                "mcp-protocol-version": MODERN,
                "mcp-method": "tools/call",
                "mcp-name": "calculate",
            }
        body = {"jsonrpc": "2.0", "id": self.next_id(), "method": "tools/call", "params": params}
        response = await self.post(body, session, **headers)
        if response.status_code == 404 and session is not None:
            # Idle past the timeout while this worker did other things: expiry at work.
            self.report.actions["kept session expired"] += 1
            return False
        try:
            result = response.json()["result"]
        except (ValueError, KeyError, TypeError):
            self.error(f"call HTTP {response.status_code}: {response.text[:80]}")
            return False
        if result.get("structuredContent") != {"result": float(a + b)}:
            self.error("call: wrong result")
            return False
        return True

    # -- actions --------------------------------------------------------------------------

    async def kept_call(self) -> None:
        if self.session is None:
            self.session = await self.open_session()
        if self.session is not None and not await self.call(self.session, *self._operands()):
            self.session = None

    async def abandoned_session(self) -> None:
        session = await self.open_session()
        if session is not None:
            await self.call(session, *self._operands())  # and never heard of again

    async def deleted_session(self) -> None:
        session = await self.open_session()
        if session is None:
            return
        await self.call(session, *self._operands())
        self.report.requests += 1
        response = await self.client.delete(self.url, headers={"mcp-session-id": session})
        if response.status_code not in (200, 204):
            self.error(f"DELETE HTTP {response.status_code}")

    async def dropped_get(self) -> None:
        session = self.session or await self.open_session()
        if session is None:
            return
        headers = {
            "accept": "text/event-stream",
            "mcp-session-id": session,
            "mcp-protocol-version": "2025-11-25",
        }
        self.report.requests += 1
        request = self.client.build_request("GET", self.url, headers=headers)
        response = await self.client.send(request, stream=True)
        try:
            if response.status_code == 200:
                # Read a little (the priming event, a keep-alive), then drop the stream.
                with_timeout = asyncio.timeout(self.rng.uniform(0.05, 0.5))
                try:
                    async with with_timeout:
                        async for _ in response.aiter_raw():
                            pass
                except TimeoutError:
                    pass
            elif response.status_code == 404:
                self.report.actions["kept session expired"] += 1
                self.session = None
            elif response.status_code != 409:  # 409: this session's GET stream is taken
                self.error(f"GET HTTP {response.status_code}")
        finally:
            await response.aclose()

    async def dropped_call(self, *, cancel: bool) -> None:
        """A slow call whose SSE answer is dropped mid-stream, or cancelled first."""
        session = self.session if not cancel and self.session else await self.open_session()
        if session is None:
            return
        rid = self.next_id()
        body = {
            "jsonrpc": "2.0",
            "id": rid,
            "method": "tools/call",
            "params": {"name": "slow_compute", "arguments": {"seconds": 0.5}},
        }
        headers = {**_ACCEPT, "mcp-session-id": session, "mcp-protocol-version": "2025-11-25"}
        self.report.requests += 1
        request = self.client.build_request(
            "POST", self.url, content=json.dumps(body), headers=headers
        )
        response = await self.client.send(request, stream=True)
        try:
            if cancel:
                await asyncio.sleep(0.05)
                note = {
                    "jsonrpc": "2.0",
                    "method": "notifications/cancelled",
                    "params": {"requestId": rid, "reason": "soak"},
                }
                answer = await self.post(note, session)
                if answer.status_code != 202:
                    self.error(f"cancel HTTP {answer.status_code}")
                # The cancelled call's stream must end (with or without its reply).
                try:
                    async with asyncio.timeout(5.0):
                        async for _ in response.aiter_raw():
                            pass
                except TimeoutError:
                    self.error("a cancelled call's SSE answer did not end")
            else:
                await asyncio.sleep(self.rng.uniform(0.0, 0.3))
        finally:
            await response.aclose()

    async def modern_call(self) -> None:
        await self.call(None, *self._operands())

    async def dropped_listen(self) -> None:
        body = {
            "jsonrpc": "2.0",
            "id": self.next_id(),
            "method": "subscriptions/listen",
            "params": {"_meta": _META, "notifications": {"toolsListChanged": True}},
        }
        headers = {**_ACCEPT, "mcp-protocol-version": MODERN, "mcp-method": "subscriptions/listen"}
        self.report.requests += 1
        request = self.client.build_request(
            "POST", self.url, content=json.dumps(body), headers=headers
        )
        response = await self.client.send(request, stream=True)
        try:
            if response.status_code != 200:
                self.error(f"listen HTTP {response.status_code}")
            await asyncio.sleep(self.rng.uniform(0.05, 0.3))
        finally:
            await response.aclose()

    def _operands(self) -> tuple[int, int]:
        return self.rng.randint(-1000, 1000), self.rng.randint(-1000, 1000)

    ACTIONS = [
        ("kept call", 50),
        ("abandoned session", 6),
        ("deleted session", 6),
        ("dropped GET stream", 5),
        ("dropped slow call", 3),
        ("cancelled slow call", 3),
        ("modern call", 25),
        ("dropped listen", 2),
    ]

    async def run(self, until: float) -> None:
        names = [name for name, _ in self.ACTIONS]
        weights = [weight for _, weight in self.ACTIONS]
        actions = {
            "kept call": self.kept_call,
            "abandoned session": self.abandoned_session,
            "deleted session": self.deleted_session,
            "dropped GET stream": self.dropped_get,
            "dropped slow call": lambda: self.dropped_call(cancel=False),
            "cancelled slow call": lambda: self.dropped_call(cancel=True),
            "modern call": self.modern_call,
            "dropped listen": self.dropped_listen,
        }
        while time.monotonic() < until:
            name = self.rng.choices(names, weights)[0]
            try:
                await actions[name]()
                self.report.actions[name] += 1
            except httpx.HTTPError as exc:
                self.error(f"{name}: {type(exc).__name__}")
                self.session = None

    async def aclose(self) -> None:
        await self.client.aclose()


async def _load(url: str, report: SoakReport, seconds: float, workers: int, seed: int) -> None:
    until = time.monotonic() + seconds
    pool = [Worker(url, report, random.Random(seed + i)) for i in range(workers)]
    try:
        await asyncio.gather(*(w.run(until) for w in pool))
    finally:
        for worker in pool:
            await worker.aclose()


async def _sample_peaks(server: ServerProcess, report: SoakReport, stop: asyncio.Event) -> None:
    while not stop.is_set():
        report.peak_rss = max(report.peak_rss, server.rss())
        report.peak_fds = max(report.peak_fds, server.fds()["total"])
        try:
            async with asyncio.timeout(0.5):
                await stop.wait()
        except TimeoutError:
            pass


async def _settle(server: ServerProcess, idle_timeout: float, target: int | None) -> Sample:
    """Wait for the load's sessions to expire (idle timeout plus the reaper's period) and
    for descriptors to come back to ``target``; then sample."""
    reaper = max(1.0, min(60.0, idle_timeout / 4))
    await asyncio.sleep(idle_timeout + reaper + 1.0)
    deadline = time.monotonic() + idle_timeout + 5.0
    while target is not None and server.fds()["total"] > target and time.monotonic() < deadline:
        await asyncio.sleep(0.25)
    return Sample(server.rss(), server.fds())


async def soak(
    *,
    duration: float,
    warmup: float,
    workers: int = 8,
    idle_timeout: float = 3.0,
    seed: int = 1,
) -> SoakReport:
    report = SoakReport(duration, idle_timeout)
    server = ServerProcess.soak(idle_timeout)
    await server.start()
    try:
        report.start = Sample(server.rss(), server.fds())
        # Warm-up: the same load, then expiry, so that lazy imports, caches and the
        # allocator's arenas are paid for before the level everything is compared with.
        await _load(server.url, report, warmup, workers, seed)
        report.warm = await _settle(server, idle_timeout, report.start.fds["total"])
        stop = asyncio.Event()
        sampler = asyncio.create_task(_sample_peaks(server, report, stop))
        await _load(server.url, report, duration, workers, seed + 1000)
        stop.set()
        await sampler
        report.after = await _settle(server, idle_timeout, report.warm.fds["total"])
    finally:
        await server.stop()
        report.tracebacks = server.tracebacks()
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=600.0, help="seconds of load")
    parser.add_argument("--warmup", type=float, default=30.0, help="seconds of warm-up load")
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--idle-timeout", type=float, default=5.0)
    parser.add_argument("--rss-tolerance", type=float, default=0.10)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    report = asyncio.run(
        soak(
            duration=args.duration,
            warmup=args.warmup,
            workers=args.workers,
            idle_timeout=args.idle_timeout,
            seed=args.seed,
        )
    )
    print(report.format())
    assert report.warm is not None and report.after is not None
    leaked_fds = report.after.fds["total"] - report.warm.fds["total"]
    ok = leaked_fds <= 0 and report.rss_growth() <= args.rss_tolerance and not report.tracebacks
    print(f"soak: {'ok' if ok else 'FAILED'} (RSS tolerance {args.rss_tolerance:.0%})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
