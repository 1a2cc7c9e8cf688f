"""One object per event loop, for state that an owner (an app's handler) keeps for each loop
it is served on: sweeper tasks belong to one loop, and an app may be served by several (one
per thread)."""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class PerLoop(Generic[T]):
    """``get(loop)``: the ``T`` of ``loop``, made by ``factory`` on first use there, dropped
    when the loop is collected. Looked up by the loop's id, checked against a weak reference
    (an id may be reused once its loop is gone)."""

    __slots__ = ("__weakref__", "_factory", "_lock", "_of")

    def __init__(self, factory: Callable[[], T]) -> None:
        self._factory = factory
        self._of: dict[int, tuple[weakref.ref[asyncio.AbstractEventLoop], T]] = {}
        self._lock = threading.Lock()  # loops of several threads add theirs

    def get(self, loop: asyncio.AbstractEventLoop) -> T:
        entry = self._of.get(id(loop))
        if entry is not None and entry[0]() is loop:
            return entry[1]
        return self._add(loop)

    def _add(self, loop: asyncio.AbstractEventLoop) -> T:
        key = id(loop)
        owner = weakref.ref(self)

        def forget(ref: weakref.ref[asyncio.AbstractEventLoop]) -> None:
            self_ = owner()
            if self_ is not None:
                with self_._lock:
                    if self_._of.get(key, (None,))[0] is ref:
                        del self_._of[key]

        value = self._factory()
        with self._lock:
            self._of[key] = (weakref.ref(loop, forget), value)
        return value

    def values(self) -> list[T]:
        """The ``T`` of every loop still alive."""
        with self._lock:
            entries = list(self._of.values())
        return [value for ref, value in entries if ref() is not None]

    def __len__(self) -> int:
        return len(self._of)
