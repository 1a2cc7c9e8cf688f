"""Who hears of a task's status changes: the watchers of each task, and the
``subscriptions/listen`` request (``notifications.taskIds``) that registers them and streams
``notifications/tasks``.

Does not decide when a status changes; ``TaskRecords`` calls ``notify`` after each change.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from mcpkit._exceptions import InvalidParamsError
from mcpkit.server._engine.listen_request import Subscription
from mcpkit.server._tasks.wire import MissingTasksExtensionError, declares_tasks, detailed_task

if TYPE_CHECKING:
    from mcpkit.protocol._jsonrpc import JsonRpcRequest
    from mcpkit.server._engine.binding import TransportBinding
    from mcpkit.server._engine.engine import McpEngine
    from mcpkit.stores._tasks import TaskRecord

logger = logging.getLogger("mcpkit.server.tasks")

#: Task ids one ``subscriptions/listen`` may watch.
MAX_LISTEN_TASK_IDS = 1000
#: How long one listener may take to accept a status notification before it is skipped.
NOTIFY_TIMEOUT = 5.0

Deliver = Callable[[dict[str, Any]], Awaitable[None]]
#: What a watcher is sent of a record: ``detailed_task`` (SEP-2663), or the 2025-11-25 Task.
Shape = Callable[["TaskRecord"], dict[str, Any]]


class TaskWatchers:
    """The watchers of each task (by listener key) in this process; a slow or failing one
    is skipped, never waited on past ``NOTIFY_TIMEOUT``."""

    def __init__(self) -> None:
        self._watchers: dict[str, dict[str, tuple[Deliver, Shape]]] = {}

    def watch(self, task_id: str, key: str, deliver: Deliver, shape: Shape = detailed_task) -> None:
        """Call ``deliver(shape(record))`` whenever the task's status changes."""
        self._watchers.setdefault(task_id, {})[key] = (deliver, shape)

    def unwatch(self, key: str, task_ids: list[str]) -> None:
        """Stop the listener ``key`` watching ``task_ids``."""
        for task_id in task_ids:
            watchers = self._watchers.get(task_id)
            if watchers is not None:
                watchers.pop(key, None)
                if not watchers:
                    del self._watchers[task_id]

    def forget(self, task_id: str) -> None:
        """Drop every watcher of a task that is gone (expired)."""
        self._watchers.pop(task_id, None)

    async def notify(self, record: TaskRecord) -> None:
        """Send the task, in each watcher's shape, to its watchers, one after the other."""
        watchers = self._watchers.get(record.task_id)
        if not watchers:
            return
        payloads: dict[Shape, dict[str, Any]] = {}
        for key, (deliver, shape) in list(watchers.items()):
            payload = payloads.get(shape)
            if payload is None:
                payload = payloads[shape] = shape(record)
            try:
                async with asyncio.timeout(NOTIFY_TIMEOUT):
                    await deliver(payload)
            except Exception:
                logger.warning(
                    "could not send a task status notification to %s", key, exc_info=True
                )


class TaskSubscription(Subscription):
    """``subscriptions/listen`` plus ``notifications.taskIds``: ``notifications/tasks`` for
    the listed tasks the caller may see (acknowledged in ``taskIds``), starting with each
    one's current state."""

    def __init__(
        self,
        engine: McpEngine,
        request: JsonRpcRequest,
        binding: TransportBinding,
        lookup: Callable[[str, TransportBinding], Awaitable[TaskRecord | None]],
        watchers: TaskWatchers,
    ) -> None:
        super().__init__(engine, request, binding)
        self.lookup = lookup
        self.watchers = watchers
        self.requested_ids: list[str] = []
        self.task_ids: list[str] = []
        if "taskIds" not in self.filter:
            return
        ids = self.filter["taskIds"]
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            raise InvalidParamsError(
                'subscriptions/listen: "notifications.taskIds" must be a list of task ids',
                {"field": "notifications.taskIds"},
            )
        if len(ids) > MAX_LISTEN_TASK_IDS:
            raise InvalidParamsError(f"at most {MAX_LISTEN_TASK_IDS} task ids per subscription")
        if not declares_tasks(binding):
            raise MissingTasksExtensionError()
        self.requested_ids = list(dict.fromkeys(ids))

    async def _deliver_task(self, payload: dict[str, Any]) -> None:
        tagged = self._tagged("notifications/tasks", payload)
        await self.binding.send_notification("notifications/tasks", tagged["params"])

    async def prepare(self) -> None:
        if not self.requested_ids:
            return
        for task_id in self.requested_ids:
            if await self.lookup(task_id, self.binding) is not None:
                self.task_ids.append(task_id)
        self.acknowledged["taskIds"] = list(self.task_ids)

    def attach(self) -> None:
        super().attach()
        for task_id in self.task_ids:
            self.watchers.watch(task_id, self.key, self._deliver_task)

    async def started(self) -> None:
        for task_id in self.task_ids:  # where each task stands now
            record = await self.lookup(task_id, self.binding)
            if record is not None:
                await self._deliver_task(detailed_task(record))

    def detach(self) -> None:
        super().detach()
        self.watchers.unwatch(self.key, self.task_ids)
