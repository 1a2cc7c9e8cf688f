"""``PerLoop``: each event loop gets an object of its own, the same one on every call in
that loop, dropped when the loop is collected; the request watch of an app served by two
loops keeps each loop's requests apart."""

from __future__ import annotations

import asyncio
import gc
import threading

from mcpkit.transports.http._per_loop import PerLoop
from mcpkit.transports.http._request_watch import RequestWatch


def test_each_loop_has_its_own_object_until_it_is_collected():
    made: list[object] = []
    per_loop: PerLoop[object] = PerLoop(lambda: made.append(object()) or made[-1])
    seen: dict[int, tuple[object, object]] = {}

    async def look(index: int) -> None:
        loop = asyncio.get_running_loop()
        seen[index] = (per_loop.get(loop), per_loop.get(loop))

    threads = [threading.Thread(target=asyncio.run, args=(look(i),)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    (first, again), (second, _) = seen[0], seen[1]
    assert first is again and first is not second and len(made) == 2
    gc.collect()
    assert len(per_loop) == 0


def test_a_request_watch_sweeps_each_loops_requests_on_that_loop():
    watch = RequestWatch()
    sweepers: dict[int, tuple[asyncio.AbstractEventLoop, asyncio.AbstractEventLoop]] = {}
    ready = threading.Barrier(2)

    async def serve(index: int) -> None:
        loop = asyncio.get_running_loop()
        request = watch.enter(lambda: asyncio.sleep(3600), 30.0)  # type: ignore[arg-type,return-value]
        ready.wait(5)  # both loops hold a request at once
        sweeper = watch.of(loop).sweeper
        assert sweeper is not None
        sweepers[index] = (loop, sweeper.get_loop())
        watch.leave(request)
        sweeper.cancel()

    threads = [threading.Thread(target=asyncio.run, args=(serve(i),)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert len(sweepers) == 2
    assert all(loop is sweeper_loop for loop, sweeper_loop in sweepers.values())
