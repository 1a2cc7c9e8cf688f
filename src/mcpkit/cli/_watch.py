"""Which Python files under some folders changed: ``watchfiles`` when installed
(``mcpkit[reload]``: the OS's file events), else a scan of modification times.

Both give the same thing: ``wait(timeout)`` blocks until files changed (their paths) or
``timeout`` seconds passed (an empty set), so the caller can check on its server between."""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Protocol

#: Folders never watched: tools' caches and environments, not the server's code.
IGNORED_DIRS = frozenset(
    {
        "__pycache__",
        ".git",
        ".hg",
        ".venv",
        "venv",
        ".tox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".hypothesis",
        "node_modules",
    }
)
#: Seconds between two scans of the polling watcher.
POLL_INTERVAL = 0.3
#: Files the polling watcher tracks at most; past it, the rest go unwatched (a folder that
#: large is not one server's code: name the right one with --watch).
MAX_WATCHED_FILES = 20_000
#: Milliseconds watchfiles gathers events for before reporting them (an editor's save is
#: often several writes).
DEBOUNCE_MS = 150


class Watcher(Protocol):
    def wait(self, timeout: float) -> set[str]:
        """Paths changed since the last call, waiting up to ``timeout`` seconds for one."""
        ...

    def close(self) -> None: ...


def _is_source(path: str) -> bool:
    return path.endswith(".py")


class PollingWatcher:
    """Scans the ``*.py`` files under ``roots`` every ``interval`` seconds."""

    def __init__(self, roots: Iterable[Path], *, interval: float = POLL_INTERVAL) -> None:
        self.roots = [Path(root) for root in roots]
        self.interval = interval
        self._seen = self._scan()

    def _files(self) -> Iterator[str]:
        count = 0
        for root in self.roots:
            if root.is_file():
                yield str(root)
                continue
            for folder, dirs, files in os.walk(root):
                dirs[:] = [name for name in dirs if name not in IGNORED_DIRS]
                for name in files:
                    if _is_source(name):
                        count += 1
                        if count > MAX_WATCHED_FILES:
                            return
                        yield os.path.join(folder, name)

    def _scan(self) -> dict[str, int]:
        seen: dict[str, int] = {}
        for path in self._files():
            try:
                seen[path] = os.stat(path).st_mtime_ns
            except OSError:  # removed between the listing and the stat
                pass
        return seen

    def wait(self, timeout: float) -> set[str]:
        deadline = time.monotonic() + timeout
        while True:
            now = self._scan()
            changed = {
                path
                for path in now.keys() | self._seen.keys()
                if now.get(path) != self._seen.get(path)
            }
            self._seen = now
            if changed:
                return changed
            left = deadline - time.monotonic()
            if left <= 0:
                return set()
            time.sleep(min(self.interval, left))

    def close(self) -> None:
        pass


class EventWatcher:
    """``watchfiles``: the OS's change events for ``*.py`` files under ``roots``."""

    def __init__(self, roots: Iterable[Path], *, step_ms: int = 50) -> None:
        import threading

        import watchfiles

        class SourceFilter(watchfiles.DefaultFilter):
            def __call__(self, change: Any, path: str) -> bool:
                return _is_source(path) and super().__call__(change, path)

        self._stop = threading.Event()
        self._events = watchfiles.watch(
            *[str(root) for root in roots],
            watch_filter=SourceFilter(ignore_dirs=tuple(IGNORED_DIRS)),
            debounce=DEBOUNCE_MS,
            step=step_ms,
            stop_event=self._stop,
            rust_timeout=int(POLL_INTERVAL * 1000),
            yield_on_timeout=True,
            raise_interrupt=True,  # Ctrl-C (and SIGTERM, see _dev) while waiting ends it
        )
        # The OS watch starts with the generator's first step: take it now, so a save made
        # right after the server comes up (before the first wait) is not missed.
        self._pending = {path for _, path in next(self._events, set())}

    def wait(self, timeout: float) -> set[str]:
        if self._pending:
            pending, self._pending = self._pending, set()
            return pending
        deadline = time.monotonic() + timeout
        while True:
            try:
                changes = next(self._events)
            except StopIteration:  # closed
                return set()
            if changes:
                return {path for _, path in changes}
            if time.monotonic() >= deadline:
                return set()

    def close(self) -> None:
        self._stop.set()


def make_watcher(roots: Iterable[Path], *, polling: bool = False) -> Watcher:
    """An ``EventWatcher`` when watchfiles is installed (and ``polling`` is False), else a
    ``PollingWatcher``."""
    roots = list(roots)
    if not polling:
        try:
            return EventWatcher(roots)
        except ImportError:
            pass
    return PollingWatcher(roots)
