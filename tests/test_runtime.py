"""``start_eagerly``: a coroutine run in the caller's task up to its first suspension, its
rest awaited exactly as ``await`` would have run it (values, exceptions, cancellation)."""

from __future__ import annotations

import asyncio

import pytest

from mcpkit._runtime import start_eagerly


async def returns_at_once() -> str:
    return "done"


async def waits(event: asyncio.Event, log: list[str]) -> str:
    log.append("started")
    await event.wait()
    log.append("resumed")
    return "after the wait"


async def test_a_coroutine_that_never_suspends_finishes_in_the_call() -> None:
    assert start_eagerly(returns_at_once()) == (True, "done")


async def test_a_coroutine_that_suspends_runs_to_there_and_its_rest_is_awaited() -> None:
    event, log = asyncio.Event(), []
    finished, rest = start_eagerly(waits(event, log))
    assert not finished and log == ["started"]  # ran up to its wait, in this task
    asyncio.get_running_loop().call_soon(event.set)
    assert await rest == "after the wait"
    assert log == ["started", "resumed"]


async def test_an_exception_before_suspending_comes_from_the_call() -> None:
    async def fails() -> None:
        raise ValueError("at once")

    with pytest.raises(ValueError, match="at once"):
        start_eagerly(fails())


async def test_an_exception_after_suspending_comes_from_the_await() -> None:
    async def fails_later() -> None:
        await asyncio.sleep(0)
        raise KeyError("later")

    finished, rest = start_eagerly(fails_later())
    assert not finished
    with pytest.raises(KeyError, match="later"):
        await rest


async def test_cancelling_the_awaiting_task_reaches_the_coroutine() -> None:
    seen: list[str] = []

    async def cleans_up() -> None:
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            seen.append("cancelled inside")
            raise

    async def runner() -> None:
        finished, rest = start_eagerly(cleans_up())
        assert not finished
        await rest

    task = asyncio.create_task(runner())
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert seen == ["cancelled inside"]


async def test_a_coroutine_may_catch_the_cancellation_and_return() -> None:
    async def shrugs() -> str:
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            return "caught"
        return "slept"

    async def runner() -> str:
        finished, rest = start_eagerly(shrugs())
        result: str = await rest
        return result

    task = asyncio.create_task(runner())
    await asyncio.sleep(0.01)
    task.cancel()
    assert await task == "caught"


async def test_other_awaitables_are_handed_back_to_await() -> None:
    future = asyncio.get_running_loop().create_future()
    finished, rest = start_eagerly(future)
    assert not finished and rest is future
    future.set_result(5)
    assert await rest == 5
