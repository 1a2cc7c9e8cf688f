"""One thread of a store's own for its blocking calls (SQLite's): a call waiting on another
process's lock never holds a thread of the loop's default executor, which the host shares;
closing joins it, so none of the store's outlives it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")


class OwnThread:
    """Runs a store's blocking calls, one at a time, on one thread named ``name``."""

    __slots__ = ("_executor",)

    def __init__(self, name: str) -> None:
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=name)

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._executor, fn, *args)

    async def aclose(self, last: Callable[[], object]) -> None:
        """Run ``last`` (closing the connection) there, then join the thread: idle by then,
        it ends at once."""
        await self.run(last)
        self._executor.shutdown(wait=True)


__all__ = ["OwnThread"]
