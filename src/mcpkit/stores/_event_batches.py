"""Group commit for an event store: the ``store_event`` calls made at the same moment (a
fan-out hands one notification to thousands of sessions in one turn of the event loop)
become one ``store_events`` batch, so a remote store pays one round trip per batch
instead of one per event.

One batch is in flight at a time; what arrives meanwhile waits for the next, so the
events keep the order they were submitted in (a session's events are numbered in that
order) and a lone event still goes out at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence

from mcpkit._exceptions import StoreUnavailableError
from mcpkit.stores._events import NewEvent

#: Events one batch (one round trip) carries at most.
DEFAULT_MAX_EVENT_BATCH = 500
#: Events that may wait for a batch at once; past it ``submit`` refuses (the store is too
#: slow for the load: the caller hears so as it would of an unreachable store).
DEFAULT_MAX_PENDING_EVENTS = 100_000

StoreBatch = Callable[[Sequence[NewEvent]], Awaitable[list[str | None]]]


class EventBatcher:
    """Collects events submitted together and stores them with ``store`` in batches of at
    most ``max_batch``, one batch at a time."""

    def __init__(
        self,
        store: StoreBatch,
        *,
        max_batch: int = DEFAULT_MAX_EVENT_BATCH,
        max_pending: int = DEFAULT_MAX_PENDING_EVENTS,
    ) -> None:
        self.store = store
        self.max_batch = max(1, max_batch)
        self.max_pending = max(1, max_pending)
        self._pending: list[tuple[NewEvent, asyncio.Future[str | None]]] = []
        self._flusher: asyncio.Task[None] | None = None

    @property
    def pending(self) -> int:
        """Events waiting for a batch (not the one in flight)."""
        return len(self._pending)

    async def submit(self, event: NewEvent) -> str | None:
        """Store ``event`` with the others submitted meanwhile; its id (None: its delivery
        was already stored). Raises what storing the batch raised."""
        if len(self._pending) >= self.max_pending:
            raise StoreUnavailableError(
                f"{self.max_pending} events are waiting for the event store already"
            )
        loop = asyncio.get_running_loop()
        future: asyncio.Future[str | None] = loop.create_future()
        self._pending.append((event, future))
        if self._flusher is None or self._flusher.done():
            # Started, not run: the calls already scheduled in this turn of the loop (the
            # rest of a fan-out) join the batch before it goes.
            self._flusher = loop.create_task(self._flush())
        return await future

    async def _flush(self) -> None:
        pending = self._pending
        while pending:
            batch = pending[: self.max_batch]
            del pending[: self.max_batch]
            try:
                ids = await self.store([event for event, _ in batch])
            except asyncio.CancelledError:
                for _, future in batch:
                    future.cancel()
                raise
            except BaseException as exc:
                for _, future in batch:
                    if not future.done():
                        future.set_exception(exc)
                continue
            for (_, future), event_id in zip(batch, ids, strict=True):
                if not future.done():  # its caller may have given up
                    future.set_result(event_id)

    async def aclose(self) -> None:
        """Stop the batch in flight (its callers see the cancellation) and those waiting."""
        flusher, self._flusher = self._flusher, None
        if flusher is not None and not flusher.done():
            flusher.cancel()
            await asyncio.gather(flusher, return_exceptions=True)
        for _, future in self._pending:
            future.cancel()
        self._pending.clear()
