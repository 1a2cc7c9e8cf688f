"""Polling for file changes, only while someone listens.

A watch polls (``os.stat``, in a worker thread) every ``poll_interval`` seconds, and only
while it has work: a resource URI it owns has a subscriber (``resources/subscribe``, or a
``subscriptions/listen`` naming it), or, for a directory, a connection is open that hears
``list_changed``. With neither there is no task and no timer: nothing is spent. Polling, not
an OS notification API, because it needs no extra dependency, behaves the same on every
platform and filesystem (network mounts, containers short of inotify watches), and its cost is
bounded by ``max_watched`` subscribed files and the directory listing's own bound.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcpkit.server._engine.engine import McpEngine

logger = logging.getLogger("mcpkit.server")

#: Seconds between two polls of the watched files.
DEFAULT_POLL_INTERVAL = 1.0
#: Subscribed files one watch polls; subscriptions beyond it get no updates (logged).
DEFAULT_MAX_WATCHED_FILES = 1000

#: What tells one version of a file from the next: ``(mtime_ns, ctime_ns, size, inode)``;
#: None when the file is gone.
Signature = tuple[int, int, int, int] | None


def signature_of(path: Path | None) -> Signature:
    """The ``Signature`` of ``path`` (symlinks followed), or None when it is not there."""
    if path is None:
        return None
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_mtime_ns, info.st_ctime_ns, info.st_size, info.st_ino)


class PollingWatch:
    """Tells subscribers of the URIs ``owns`` claims when their file changes, and runs
    ``rescan`` (a directory's listing) each poll while connections are open.

    ``signature(uri)`` is the ``Signature`` of the file behind a URI (None when there is no
    file it may serve); it runs on the event loop once per new subscription (the baseline),
    then in a worker thread. ``rescan`` runs in a worker thread and returns what ``apply``
    then does on the loop.
    """

    def __init__(
        self,
        engine: McpEngine,
        *,
        owns: Callable[[str], bool],
        signature: Callable[[str], Signature],
        rescan: Callable[[], Any] | None = None,
        apply: Callable[[Any], None] | None = None,
        poll_interval: float = DEFAULT_POLL_INTERVAL,
        max_watched: int = DEFAULT_MAX_WATCHED_FILES,
    ) -> None:
        if not poll_interval > 0:
            raise ValueError("poll_interval must be a positive number of seconds")
        if max_watched < 1:
            raise ValueError("max_watched must be at least 1")
        self.engine = engine
        self.poll_interval = poll_interval
        self.max_watched = max_watched
        self._signature = signature
        self._owns = owns
        self._rescan = rescan
        self._apply = apply
        #: Subscribed URI -> the signature of its file last seen.
        self._watched: dict[str, Signature] = {}
        self._listening = False
        self._task: asyncio.Task[None] | None = None
        #: Polls done since the watch was made (how tests see that it runs, or does not).
        self.polls = 0

    @property
    def running(self) -> bool:
        """Whether a polling task is alive now."""
        return self._task is not None and not self._task.done()

    def attach(self) -> None:
        """Start following the app's subscriptions (and connections, with a ``rescan``)."""
        self.engine.subscriptions.add_watch_listener(self._on_subscription)
        if self._rescan is not None:
            self.engine.connections.add_count_listener(self._on_connections)
            self._listening = len(self.engine.connections) > 0
        self._update()

    def detach(self) -> None:
        """Stop following the app and stop polling."""
        self.engine.subscriptions.remove_watch_listener(self._on_subscription)
        self.engine.connections.remove_count_listener(self._on_connections)
        self._watched.clear()
        self._listening = False
        self._update()

    def _on_subscription(self, uri: str, subscribed: bool) -> None:
        if not self._owns(uri):
            return
        if not subscribed:
            self._watched.pop(uri, None)
        elif uri not in self._watched:
            if len(self._watched) >= self.max_watched:
                logger.warning(
                    "%s: not watched, %d files are already (max_watched)", uri, self.max_watched
                )
                return
            # The baseline is taken now, so a write right after subscribing is seen.
            self._watched[uri] = self._signature(uri)
        self._update()

    def _on_connections(self, count: int) -> None:
        self._listening = count > 0
        self._update()

    def _update(self) -> None:
        wanted = bool(self._watched) or self._listening
        if wanted and not self.running:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # changed outside a loop: the next change on one starts it
                return
            self._task = loop.create_task(self._run(), name="mcpkit file watch")
        elif not wanted and self._task is not None:
            self._task.cancel()
            self._task = None

    async def _run(self) -> None:
        try:
            while True:
                await asyncio.sleep(self.poll_interval)
                if self.engine.shutting_down.is_set():
                    return
                await self.poll()
        except asyncio.CancelledError:
            raise
        except Exception:  # a bug here must not be silent, nor take the server down
            logger.exception("the file watch stopped")

    async def poll(self) -> None:
        """Look once: ``notifications/resources/updated`` for every subscribed file that
        changed (or went away), then the rescan while connections are open."""
        self.polls += 1
        uris = list(self._watched)
        if uris:
            now = await asyncio.to_thread(lambda: [(uri, self._signature(uri)) for uri in uris])
            for uri, signature in now:
                if uri not in self._watched or self._watched[uri] == signature:
                    continue  # unsubscribed meanwhile, or unchanged
                self._watched[uri] = signature
                await self.engine.subscriptions.notify_updated(uri)
        if self._listening and self._rescan is not None and self._apply is not None:
            found = await asyncio.to_thread(self._rescan)
            self._apply(found)

    async def aclose(self) -> None:
        """``detach``, and wait for the polling task to end."""
        task = self._task
        self.detach()
        if task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await task
