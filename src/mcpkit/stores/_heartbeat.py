"""Calling a store's ``beat`` every so often, for as long as the store is open: how a task
store renews its runner's lease and looks for dead runners (``_task_runners.py``).

``ThreadHeartbeat`` beats in a thread of its own, so a blocked event loop does not stop it
(the SQLite store, whose calls are blocking ones anyway); ``LoopHeartbeat`` beats in an
asyncio task of the loop that started it (the Redis store, whose client is an asyncio one).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import weakref
from collections.abc import Awaitable, Callable

logger = logging.getLogger("mcpkit.stores")


class ThreadHeartbeat:
    """Calls ``beat()`` every ``interval`` seconds in a daemon thread, from ``start`` until
    ``stop``. ``beat`` is a bound method held weakly: a store dropped without being closed
    is not kept alive by its heartbeat, which then ends."""

    def __init__(self, beat: Callable[[], None], interval: float, name: str) -> None:
        self._beat = weakref.WeakMethod(beat)
        self._interval = interval
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        while not self._stopped.wait(self._interval) and self._once():
            pass

    def _once(self) -> bool:
        """One beat; False once the owner is gone (the method's reference ends with it)."""
        beat = self._beat()
        if beat is None:
            return False
        try:
            beat()
        except Exception:  # the next beat tries again
            logger.warning("a task store's heartbeat failed", exc_info=True)
        return True

    def stop(self, timeout: float = 5.0) -> None:
        """Stop beating; waits (at most ``timeout`` seconds) for a beat under way."""
        self._stopped.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout)


#: Longest ``LoopHeartbeat.stop`` waits for a beat under way to finish.
STOP_TIMEOUT = 5.0


class LoopHeartbeat:
    """Awaits ``beat()`` every ``interval`` seconds in an asyncio task of the loop that
    called ``start``, until ``stop`` (or until that loop ends).

    ``stop`` cancels the task only between beats: a beat under way (a Redis command, say)
    is let finish, for at most ``STOP_TIMEOUT`` seconds, since a client cancelled in the
    middle of a command may never answer the cancellation."""

    def __init__(self, beat: Callable[[], Awaitable[None]], interval: float, name: str) -> None:
        self._beat = beat
        self._interval = interval
        self._name = name
        self._task: asyncio.Task[None] | None = None
        self._beating = False
        self._stopping = False

    def running_here(self) -> bool:
        """Whether it beats on the running loop."""
        task = self._task
        return (
            task is not None and not task.done() and task.get_loop() is asyncio.get_running_loop()
        )

    def start(self) -> None:
        """Beat on the running loop (a heartbeat left on another loop is dropped)."""
        self._stopping = False
        self._task = asyncio.get_running_loop().create_task(self._run(), name=self._name)

    async def _run(self) -> None:
        while not self._stopping:
            await asyncio.sleep(self._interval)
            if self._stopping:
                return
            self._beating = True
            try:
                await self._beat()
            except Exception:  # the next beat tries again
                logger.warning("a task store's heartbeat failed", exc_info=True)
            finally:
                self._beating = False

    async def stop(self) -> None:
        task, self._task = self._task, None
        self._stopping = True
        if task is None or task.done():
            return
        loop = task.get_loop()
        if loop is not asyncio.get_running_loop():
            if not loop.is_closed() and not self._beating:  # it may run in another thread
                loop.call_soon_threadsafe(task.cancel)
            return
        if not self._beating:  # asleep between beats: it ends at once
            task.cancel()
        await asyncio.wait((task,), timeout=STOP_TIMEOUT)
        if task.done() and not task.cancelled():
            task.exception()  # retrieved: a beat's failure was logged already
