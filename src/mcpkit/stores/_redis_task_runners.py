"""The runners of the tasks in one Redis (``_task_runners.py``), for ``RedisTaskStore``:
which are alive, and which unfinished tasks the dead ones left.

Keys, under the hub's prefix:

- ``task-runner:<runner id>``: a runner's lease, its ``RunnerIdentity`` as JSON, expiring
  ``interval + grace`` seconds after its last renewal. Gone: the runner is dead (or
  closed); there: alive, unless this process can see that its process ended (same machine).
- ``task-runners``: the ids of the runners registered and not yet found dead.
- ``task-runs``: task id -> runner id, for every unfinished task some runner runs (kept by
  the store's create, update and delete scripts, in step with the records).
"""

from __future__ import annotations

import logging
import math
from typing import Any

import msgspec

from mcpkit.stores._redis import RedisHub
from mcpkit.stores._task_runners import RunnerIdentity, runner_alive

logger = logging.getLogger("mcpkit.stores")


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


class RedisTaskRunners:
    """This store's runner (its lease) and the dead runners' tasks."""

    def __init__(self, hub: RedisHub, interval: float, grace: float) -> None:
        self.hub = hub
        self.identity = RunnerIdentity.of_this_process()
        self.interval = interval
        self.grace = grace
        #: task id -> runner id of the unfinished tasks (the store's scripts keep it).
        self.runs_key = hub.key("task-runs")
        self._registry = hub.key("task-runners")
        self._leases = hub.key("task-runner", "")
        self._registered = False

    @property
    def registered(self) -> bool:
        """Whether this runner has registered (and not retired)."""
        return self._registered

    def _lease_key(self, runner_id: str) -> str:
        return self._leases + runner_id

    async def renew(self) -> None:
        """Register this runner, or renew its lease (saying so when it had lapsed)."""
        me, client = self.identity, self.hub.client
        lease_ms = math.ceil((self.interval + self.grace) * 1000)
        key = self._lease_key(me.runner_id)
        if self._registered and await self.hub.call(
            client.set(key, me.to_json(), px=lease_ms, xx=True)  # only while the lease holds
        ):
            return
        if self._registered:
            logger.warning(
                "this process's task lease had lapsed (no heartbeat for %g s): another "
                "instance may have failed the tasks it runs",
                self.interval + self.grace,
            )
        async with client.pipeline(transaction=True) as pipe:
            pipe.set(key, me.to_json(), px=lease_ms)
            pipe.sadd(self._registry, me.runner_id)
            await self.hub.call(pipe.execute())
        self._registered = True

    async def abandoned(self, *, always: bool) -> tuple[dict[str, str], list[str]]:
        """The unfinished tasks of runners not alive (task id -> runner id) and the runners
        found dead. Unless ``always``, tasks are looked for only when a registered runner
        was found dead (the runners are few, the tasks are not)."""
        client = self.hub.client
        registered = {_text(m) for m in await self.hub.call(client.smembers(self._registry))}
        alive = await self._alive(registered)
        dead = sorted(registered - alive)
        if not dead and not always:
            return {}, []
        runs = {
            _text(task): _text(runner)
            for task, runner in (await self.hub.call(client.hgetall(self.runs_key))).items()
        }
        alive |= await self._alive(set(runs.values()) - registered)
        orphans = {task: runner for task, runner in runs.items() if runner not in alive}
        return orphans, dead

    async def _alive(self, runner_ids: set[str]) -> set[str]:
        """Which of these runners live: a lease, and no sign here that its process ended."""
        mine = {self.identity.runner_id} & runner_ids
        others = sorted(runner_ids - mine)
        if not others:
            return mine
        leases = await self.hub.call(self.hub.client.mget([self._lease_key(r) for r in others]))
        alive = set(mine)
        for runner_id, lease in zip(others, leases, strict=True):
            if lease is None:
                continue
            try:
                who = RunnerIdentity.from_json(lease)
            except (msgspec.DecodeError, KeyError, TypeError, ValueError):
                who = RunnerIdentity(runner_id, None, 0, None)  # the lease alone decides
            if runner_alive(who, math.inf, self.identity):
                alive.add(runner_id)
        return alive

    async def forget(self, runner_ids: list[str]) -> None:
        """Drop dead runners (once their tasks are failed)."""
        if not runner_ids:
            return
        async with self.hub.client.pipeline(transaction=True) as pipe:
            pipe.srem(self._registry, *runner_ids)
            pipe.delete(*(self._lease_key(r) for r in runner_ids))
            await self.hub.call(pipe.execute())

    async def mine(self) -> list[str]:
        """The unfinished tasks this runner runs."""
        runs: dict[Any, Any] = await self.hub.call(self.hub.client.hgetall(self.runs_key))
        me = self.identity.runner_id
        return [_text(task) for task, runner in runs.items() if _text(runner) == me]

    async def retire(self) -> None:
        """This runner stops (its tasks failed already): its lease and entry go."""
        await self.forget([self.identity.runner_id])
        self._registered = False
