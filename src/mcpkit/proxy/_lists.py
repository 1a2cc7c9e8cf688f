"""The backend's lists (tools, prompts, resources and their templates) read into the front
catalog: every page, only the lists the backend declared (the lifecycle: both sides use
only negotiated capabilities), and again when it announces a change (a 2026-07-28 backend
announces them only inside a ``subscriptions/listen``, kept open here)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from functools import partial
from types import MappingProxyType
from typing import Any

from mcpkit._exceptions import McpCallError, ProtocolError
from mcpkit.client import McpClient
from mcpkit.protocol._versions import Era
from mcpkit.proxy._backend import BackendConnection
from mcpkit.proxy._pool import BackendPool

logger = logging.getLogger("mcpkit.proxy")

#: The backend's lists the front serves, each its capability's name.
CATALOG_KINDS = ("tools", "prompts", "resources")
#: The method and result key of each list (read-only).
_LIST_OF = MappingProxyType(
    {
        "tools": ("tools/list", "tools"),
        "prompts": ("prompts/list", "prompts"),
        "resources": ("resources/list", "resources"),
        "resourceTemplates": ("resources/templates/list", "resourceTemplates"),
    }
)
#: Pages of one backend list read before the proxy stops (a backend looping its cursor).
DEFAULT_MAX_BACKEND_PAGES = 1000
#: Seconds before reopening a 2026-07-28 backend's ``subscriptions/listen`` (doubled to 30).
LISTEN_RETRY_DELAY = 2.0

#: Puts one kind into the front catalog: (kind, items, resource templates, whether the
#: backend offers completions).
CatalogSink = Callable[[str, list[dict[str, Any]], list[dict[str, Any]], bool], None]


def offers(client: McpClient, capability: str) -> bool:
    """Whether the backend declared ``capability`` (``tools``, ``completions``, ...); one
    resumed without an ``initialize`` result is taken to offer everything."""
    info = client.server_info
    return info is None or getattr(info.capabilities, capability, None) is not None


async def _request(client: McpClient, *, method: str, params: dict[str, Any]) -> Any:
    return await client.request(method, params)


class BackendLists:
    """Reads the backend's lists from ``pool``'s connections into ``sink``."""

    def __init__(self, pool: BackendPool, sink: CatalogSink) -> None:
        self._pool = pool
        self._sink = sink
        #: The re-read under way of each (kind, connection), and those announced changed
        #: again meanwhile (read once more when it ends).
        self._rereading: dict[tuple[str, BackendConnection], asyncio.Task[None]] = {}
        self._again: set[tuple[str, BackendConnection]] = set()

    def changed(self, kind: str, connection: BackendConnection) -> asyncio.Task[None] | None:
        """The backend announced a change of ``kind`` on ``connection``: the re-read started,
        or None when one is under way, which then reads once more. A backend flooding
        ``list_changed`` costs at most two reads, never a task and a read each."""
        key = (kind, connection)
        running = self._rereading.get(key)
        if running is not None and not running.done():  # done: cancelled before it ran
            self._again.add(key)
            return None
        task = asyncio.ensure_future(self._reread(key))
        self._rereading[key] = task
        return task

    async def _reread(self, key: tuple[str, BackendConnection]) -> None:
        try:
            while True:
                self._again.discard(key)
                await self.refresh(*key)
                if key not in self._again:
                    return
        finally:
            self._again.discard(key)
            self._rereading.pop(key, None)

    async def refresh_all(self) -> None:
        for kind in CATALOG_KINDS:
            await self.refresh(kind)

    async def refresh(self, kind: str, connection: BackendConnection | None = None) -> None:
        """Re-read one list (from ``connection``, the shared one by default); a kind the
        backend does not declare is not asked for: the front serves none."""
        source = connection or self._pool.shared
        try:
            client = await source.client()
            if not offers(client, kind):
                self._sink(kind, [], [], False)
                return
            listed = await self._list(*_LIST_OF[kind], source)
            templates: list[dict[str, Any]] = []
            if kind == "resources":
                templates = await self._list(*_LIST_OF["resourceTemplates"], source)
            self._sink(kind, listed, templates, offers(client, "completions"))
        except (ProtocolError, McpCallError) as exc:
            logger.warning("could not read the backend's %s: %s", kind, exc.message)

    async def _list(
        self, method: str, key: str, connection: BackendConnection
    ) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        cursor: str | None = None
        for _ in range(DEFAULT_MAX_BACKEND_PAGES):
            params = {"cursor": cursor} if cursor else {}
            page = await connection.run(partial(_request, method=method, params=params))
            items.extend(item for item in page.get(key, []) if isinstance(item, dict))
            cursor = page.get("nextCursor")
            if not cursor:
                break
        return items

    async def follow_changes(self) -> None:
        """A 2026-07-28 backend tells of list changes only inside a ``subscriptions/listen``:
        keep one open on the shared connection (its notes reach ``list_changed`` through the
        client's callback), opened again after the connection is remade, the lists re-read
        then (what changed meanwhile was told to nobody)."""
        reopened = False
        delay = LISTEN_RETRY_DELAY
        while True:
            try:
                client = await self._pool.shared.client()
                if client.era is not Era.MODERN:
                    return  # the handshake era sends them unasked
                offered = {kind: offers(client, kind) for kind in CATALOG_KINDS}
                if not any(offered.values()):
                    return
                async with client.listen(
                    tools_list_changed=offered["tools"],
                    prompts_list_changed=offered["prompts"],
                    resources_list_changed=offered["resources"],
                ) as stream:
                    delay = LISTEN_RETRY_DELAY
                    if reopened:
                        await self.refresh_all()
                    async for _note in stream:
                        pass
            except McpCallError as exc:  # the backend refuses it: nothing will be told
                logger.warning("the backend's subscriptions/listen failed: %s", exc.message)
                return
            except Exception:
                logger.debug("the backend's subscriptions/listen ended", exc_info=True)
            reopened = True
            await asyncio.sleep(delay)
            delay = min(delay * 2, 30.0)  # a backend that stays down is not restarted each time
