"""What tracing costs a ``tools/call`` in the dispatcher, in process (no sockets).

    python bench/otel_dispatch.py [--calls N] [--rounds R] [--only off api-noop sdk]

Prints microseconds per call for: ``off`` (no telemetry: the default), and, when
``mcpkit.otel`` and the OpenTelemetry SDK are installed, ``api-noop`` (instrumented, no
provider configured: OpenTelemetry's no-op tracer and meter) and ``sdk`` (an SDK tracer and
meter recording every span and point, exporting nowhere). Run it against another revision
with ``PYTHONPATH=<a checkout's src>`` to compare the ``off`` line before and after a change.
The median of the rounds is printed.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import Any

from mcpkit import McpServerApp, mcp_tool
from mcpkit.protocol import JsonRpcRequest
from mcpkit.server import TransportBinding


@mcp_tool()
async def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


async def per_call_us(app: McpServerApp, calls: int) -> float:
    dispatch = app.dispatcher.dispatch
    params = {"name": "add", "arguments": {"a": 2, "b": 3}}

    async def run() -> None:
        for i in range(calls):
            response = await dispatch(
                JsonRpcRequest(i, "tools/call", params), TransportBinding(connection_key="b")
            )
            assert response is not None and "result" in response, response

    task = asyncio.ensure_future(run())  # dispatch() must run inside a task
    started = time.perf_counter()
    await task
    return (time.perf_counter() - started) / calls * 1e6


def modes() -> dict[str, Any]:
    """Each mode's setup: app -> None."""
    found: dict[str, Any] = {"off": lambda app: None}
    try:
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.trace import TracerProvider

        from mcpkit.otel import instrument
    except ImportError:
        return found
    found["api-noop"] = instrument
    tracer_provider, meter_provider = TracerProvider(), MeterProvider()
    found["sdk"] = lambda app: instrument(
        app, tracer_provider=tracer_provider, meter_provider=meter_provider
    )
    return found


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--only", nargs="+", help="modes to run (default: every one available)")
    args = parser.parse_args()
    setups = {name: setup for name, setup in modes().items() if not args.only or name in args.only}
    results: dict[str, list[float]] = {name: [] for name in setups}
    for _ in range(args.rounds):  # interleaved, so drift hits every mode alike
        for name, setup in setups.items():
            app = McpServerApp(add)
            setup(app)
            await per_call_us(app, 500)  # warm up
            results[name].append(await per_call_us(app, args.calls))
    for name, samples in results.items():
        print(f"{name:9} {statistics.median(samples):7.2f} us/call  (min {min(samples):.2f})")


if __name__ == "__main__":
    asyncio.run(main())
