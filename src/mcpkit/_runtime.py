"""Runtime helpers every layer may use: process-level tuning applied by the servers mcpkit
runs itself (``mcpkit run``), the event loop they run on, and running a coroutine eagerly
up to its first suspension."""

from __future__ import annotations

import gc
from collections.abc import Awaitable, Coroutine, Generator
from types import CoroutineType
from typing import Any


def freeze_startup_objects() -> None:
    """Move everything alive after start-up (modules, the catalog, schemas) out of the
    garbage collector's reach, so collections scan only what requests create."""
    gc.collect()
    gc.freeze()


def run_async(main: Any) -> Any:
    """Run a coroutine on uvloop when it is installed (a dependency on CPython outside
    Windows), else asyncio."""
    try:
        import uvloop
    except ImportError:
        import asyncio

        return asyncio.run(main)
    return uvloop.run(main)


def start_eagerly(awaitable: Awaitable[Any]) -> tuple[bool, Any]:
    """Run a coroutine in the caller's task up to its first suspension: ``(True, result)``
    when it finished without suspending, else ``(False, rest)``, where awaiting ``rest``
    runs it on exactly as ``await`` would have. An exception it raises before suspending
    propagates from here.

    The hot paths use this to skip bookkeeping that only a suspended coroutine needs
    (deadlines, cancellation tracking, disconnect watches): most requests never suspend.
    Any other awaitable is returned as ``(False, awaitable)``."""
    if type(awaitable) is not CoroutineType:
        return False, awaitable
    try:
        pending = awaitable.send(None)
    except StopIteration as done:
        return True, done.value
    return False, _Resumed(awaitable, pending)


class _Resumed:
    """The rest of a coroutine stepped by hand until it suspended on ``pending``."""

    __slots__ = ("coro", "pending")

    def __init__(self, coro: Coroutine[Any, Any, Any], pending: Any) -> None:
        self.coro = coro
        self.pending = pending

    def __await__(self) -> Generator[Any, Any, Any]:
        coro, pending = self.coro, self.pending
        while True:
            try:
                sent = yield pending
            except GeneratorExit:
                coro.close()
                raise
            except BaseException as exc:  # handed on (a cancellation too), as await would
                try:
                    pending = coro.throw(exc)
                except StopIteration as done:
                    return done.value
            else:
                try:
                    pending = coro.send(sent)
                except StopIteration as done:
                    return done.value
