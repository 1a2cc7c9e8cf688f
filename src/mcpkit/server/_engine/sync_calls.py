"""Running the functions behind tools, resources, prompts and completions.

A coroutine function runs on the event loop. A plain (sync) function runs in a worker
thread of the app's bounded pool, so one that blocks (``time.sleep``, a database driver, a
file) delays nobody else; ``run_in_thread=False`` on its decorator runs it inline instead,
for functions too fast for the thread hop to pay off. Which of the three applies is decided
once, when the entry is built, not per call.

Cancellation: when the request is cancelled (or its ``timeout`` passes) the coroutine that
awaits the thread is cancelled and the request ends at once; a call still waiting for a free
thread never starts, but one already running in a thread cannot be interrupted by Python and
finishes on its own, its result discarded.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

#: Sync functions of one app running at once in worker threads; further calls wait for a
#: free thread. 32 is the ceiling the standard library puts on its own default pool: enough
#: for sync functions that mostly wait (I/O, sleeps, drivers), while bounding the memory
#: of thread stacks and the GIL contention of CPU-bound ones.
DEFAULT_MAX_SYNC_WORKERS = 32

#: Seconds stopping an app waits for its worker threads to end. An idle one ends at once; one
#: still running a sync function cannot be stopped by Python, and is left to finish on its own.
WORKERS_EXIT_WAIT = 1.0
#: Seconds between two looks at whether the worker threads have ended.
_EXIT_POLL = 0.005

logger = logging.getLogger(__name__)

#: How a call to an entry's function runs (``entry.call_mode``).
ASYNC = "async"  # a coroutine function: awaited on the event loop
THREAD = "thread"  # a sync function: run in a worker thread, the caller awaits it
INLINE = "inline"  # a sync function with run_in_thread=False: called on the event loop


def is_coroutine_callable(fn: Any) -> bool:
    """Whether calling ``fn`` gives a coroutine: coroutine functions, bound methods and
    ``functools.partial`` of them, and objects with an ``async def __call__``."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    if inspect.iscoroutinefunction(fn):
        return True
    if (
        inspect.isfunction(fn)
        or inspect.ismethod(fn)
        or inspect.isbuiltin(fn)
        or isinstance(fn, type)
    ):
        return False
    return callable(fn) and inspect.iscoroutinefunction(type(fn).__call__)


def call_mode(fn: Any, run_in_thread: bool = True) -> str:
    if is_coroutine_callable(fn):
        return ASYNC
    return THREAD if run_in_thread else INLINE


class SyncWorkers:
    """The app's pool of worker threads for sync functions: made on first use, at most
    ``max_workers`` threads, closed when the app stops (and made again if it restarts)."""

    def __init__(
        self,
        max_workers: int = DEFAULT_MAX_SYNC_WORKERS,
        on_loop: Callable[[asyncio.AbstractEventLoop], None] | None = None,
    ) -> None:
        if max_workers < 1:
            raise ValueError("max_sync_workers must be at least 1")
        self.max_workers = max_workers
        self._executor: ThreadPoolExecutor | None = None
        #: The threads of the pool open now (each adds itself as it starts).
        self._threads: set[threading.Thread] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._on_loop = on_loop

    @property
    def open(self) -> bool:
        return self._executor is not None

    def _open(self) -> ThreadPoolExecutor:
        threads = self._threads = set()
        executor = self._executor = ThreadPoolExecutor(
            self.max_workers,
            thread_name_prefix="mcpkit-sync",
            initializer=lambda: threads.add(threading.current_thread()),
        )
        return executor

    async def run(self, fn: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
        """``fn(**kwargs)`` in a worker thread, in a copy of the caller's context (context
        variables read the same there); an awaitable it returns is awaited here."""
        loop = asyncio.get_running_loop()
        if loop is not self._loop:
            self._loop = loop
            if self._on_loop is not None:
                self._on_loop(loop)
        executor = self._executor or self._open()
        context = contextvars.copy_context()
        value = await loop.run_in_executor(executor, functools.partial(context.run, fn, **kwargs))
        if inspect.isawaitable(value):
            value = await value
        return value

    def close(self) -> None:
        """Stop taking calls: waiting ones are cancelled, running ones finish on their own
        (nothing waits for them here: ``aclose`` does)."""
        executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=False, cancel_futures=True)

    async def aclose(self, wait: float = WORKERS_EXIT_WAIT) -> None:
        """``close``, then wait (up to ``wait`` seconds, without blocking the loop) for the
        threads to end, so that an app stopped leaves no thread of its own behind in its
        host's process, save one still running a sync function."""
        threads = self._threads
        self.close()
        deadline = time.monotonic() + wait
        while True:
            running = [thread for thread in threads if thread.is_alive()]
            if not running:
                return
            if time.monotonic() >= deadline:
                logger.warning(
                    "%d worker thread(s) still running a sync function after the app stopped;"
                    " left to finish on their own",
                    len(running),
                )
                return
            await asyncio.sleep(_EXIT_POLL)


async def call_entry(entry: Any, kwargs: dict[str, Any], workers: SyncWorkers) -> Any:
    """Call an entry's function as its ``call_mode`` says."""
    mode = entry.call_mode
    if mode == ASYNC:
        return await entry.fn(**kwargs)
    if mode == INLINE:
        value = entry.fn(**kwargs)
        return await value if inspect.isawaitable(value) else value
    return await workers.run(entry.fn, kwargs)
