"""``LoopHeartbeat.stop`` never cancels a beat under way: a Redis command cancelled in the
middle may never answer the cancellation, and the heartbeat (with the loop's shutdown,
which cancels what is left) hung on it. Between beats it stops at once."""

from __future__ import annotations

import asyncio

from mcpkit.stores._heartbeat import LoopHeartbeat


async def test_a_beat_under_way_finishes_before_the_heartbeat_stops() -> None:
    began, release = asyncio.Event(), asyncio.Event()
    finished: list[bool] = []

    async def beat() -> None:
        began.set()
        try:
            await release.wait()
            finished.append(True)
        except asyncio.CancelledError:
            finished.append(False)
            raise

    heartbeat = LoopHeartbeat(beat, 0.01, "test-heartbeat")
    heartbeat.start()
    async with asyncio.timeout(5):
        await began.wait()
        stopping = asyncio.ensure_future(heartbeat.stop())
        await asyncio.sleep(0.05)
        assert not stopping.done()  # waiting for the beat, not cancelling it
        release.set()
        await stopping
    assert finished == [True]
    assert not heartbeat.running_here()


async def test_between_beats_it_stops_at_once() -> None:
    beats: list[int] = []

    async def beat() -> None:
        beats.append(1)

    heartbeat = LoopHeartbeat(beat, 30.0, "test-heartbeat")
    heartbeat.start()
    await asyncio.sleep(0)
    async with asyncio.timeout(1):
        await heartbeat.stop()
    assert beats == []
