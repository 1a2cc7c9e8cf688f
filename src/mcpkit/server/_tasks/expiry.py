"""TTL expiry of tasks: a background sweep deletes from the store the tasks past their
``ttlMs``.

What becomes of an expired task's run and watchers is the owner's ``on_expired``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from mcpkit.server._tasks.wire import TaskSettings

logger = logging.getLogger("mcpkit.server.tasks")


class TaskExpiry:
    """Sweeps expired tasks every ``sweep_interval`` seconds, from the first task created
    on a loop until ``stop``."""

    def __init__(self, settings: TaskSettings, on_expired: Callable[[str], None]) -> None:
        self._settings = settings
        self._on_expired = on_expired
        self._sweeper: asyncio.Task[None] | None = None

    def ensure_sweeping(self) -> None:
        """Start the sweeper on the running loop unless it already sweeps there."""
        loop = asyncio.get_running_loop()
        if self._sweeper is None or self._sweeper.done() or self._sweeper.get_loop() is not loop:
            self._sweeper = loop.create_task(self._sweep_forever(), name="mcp-task-sweeper")

    async def _sweep_forever(self) -> None:
        while True:
            await asyncio.sleep(self._settings.sweep_interval)
            try:
                await self.sweep()
            except Exception:
                logger.exception("sweeping expired tasks failed")

    async def sweep(self) -> list[str]:
        """Delete the tasks past their TTL (``on_expired`` for each); returns their ids."""
        expired = await self._settings.store.purge_expired()
        for task_id in expired:
            self._on_expired(task_id)
        return expired

    def stop(self) -> None:
        """Stop the sweeper; the next task created starts it again."""
        if self._sweeper is not None:
            self._sweeper.cancel()
            self._sweeper = None
