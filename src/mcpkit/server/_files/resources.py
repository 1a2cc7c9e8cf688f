"""``FileResource`` and ``DirectoryResource``: files served as resources, kept current.

``app.add_resource(FileResource("README.md"))`` serves one file; ``app.add_resource(
DirectoryResource("docs", pattern="**/*.md"))`` lists a directory's files as resources and
serves every other file under it through the template ``<uri_prefix>{+path}``, never a
byte outside the directory (``mcpkit.server._files.paths``). Subscribers hear
``notifications/resources/updated`` when their file changes; files appearing or going away
change the listing and send ``notifications/resources/list_changed``
(``mcpkit.server._files.watch``: polling, and only while someone listens). See docs/files.md.
"""

from __future__ import annotations

import logging
import os
import stat
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import quote

from mcpkit._exceptions import ProtocolError, ResourceNotFoundError
from mcpkit.protocol._uri_template import UriTemplate
from mcpkit.server._entries import ResourceEntry, ResourceTemplateEntry
from mcpkit.server._files.contents import (
    DEFAULT_MAX_CONCURRENT_FILE_READS,
    DEFAULT_MAX_FILE_BYTES,
    guess_mime_type,
    read_contents,
)
from mcpkit.server._files.paths import (
    check_relative,
    glob_regex,
    is_hidden,
    open_inside,
    resolve_inside,
)
from mcpkit.server._files.watch import (
    DEFAULT_MAX_WATCHED_FILES,
    DEFAULT_POLL_INTERVAL,
    PollingWatch,
    Signature,
    signature_of,
)

if TYPE_CHECKING:
    from mcpkit.server._catalog import McpCatalogManager
    from mcpkit.server._engine.engine import McpEngine

logger = logging.getLogger("mcpkit.server")

__all__ = [
    "DEFAULT_MAX_CONCURRENT_FILE_READS",
    "DEFAULT_MAX_FILE_BYTES",
    "DEFAULT_MAX_LISTED_FILES",
    "DEFAULT_MAX_WATCHED_FILES",
    "DEFAULT_POLL_INTERVAL",
    "DirectoryResource",
    "FileResource",
]

#: Files a ``DirectoryResource`` lists (and rescans); the rest stay readable by its template.
DEFAULT_MAX_LISTED_FILES = 1000


def _check_limits(max_bytes: int) -> None:
    if max_bytes < 0:
        raise ValueError("max_bytes must not be negative")


def _own_reads() -> threading.BoundedSemaphore:
    """The bound on reads of a resource no app serves yet; attached, it shares its app's."""
    return threading.BoundedSemaphore(DEFAULT_MAX_CONCURRENT_FILE_READS)


def _nameable(segments: tuple[str, ...]) -> bool:
    """Whether a URI can name the path: a name that is no UTF-8 comes from ``os.walk`` with
    surrogate escapes, which no percent-decoded URI gives back."""
    try:
        "/".join(segments).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class FileHost(Protocol):
    """What a file resource reads of the app serving it: the catalog and engine, and the
    semaphore bounding the files read at once."""

    @property
    def catalog(self) -> McpCatalogManager: ...

    @property
    def engine(self) -> McpEngine: ...

    @property
    def file_reads(self) -> threading.BoundedSemaphore: ...


class FileResource:
    """One file served as a resource.

    ``uri`` defaults to the file's ``file://`` URI; ``mime_type`` to what its name suggests.
    A textual type is served as ``text`` (decoded with ``encoding``), another as a base64
    ``blob``; with no type known, the bytes decide (UTF-8 without NUL: text). A file larger
    than ``max_bytes`` is refused (-32603), never cut short. The file must exist when this is
    made; if it goes away later, reading it is -32002 (resource not found). Reads wait their
    turn among the app's ``max_concurrent_file_reads``.

    With ``watch`` (the default), subscribers get ``notifications/resources/updated`` when
    the file changes, polled every ``poll_interval`` seconds while anyone is subscribed.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        uri: str | None = None,
        mime_type: str | None = None,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        max_bytes: int = DEFAULT_MAX_FILE_BYTES,
        encoding: str = "utf-8",
        watch: bool = True,
        poll_interval: float = DEFAULT_POLL_INTERVAL,
    ) -> None:
        _check_limits(max_bytes)
        real = Path(path).resolve(strict=True)
        if not stat.S_ISREG(real.stat().st_mode):
            raise ValueError(f"FileResource needs a regular file, and {path!r} is not one")
        #: The file's real path (symlinks resolved when this was made).
        self.path = real
        self.uri = uri or real.as_uri()
        self.mime_type = mime_type or guess_mime_type(real.name)
        self.name = name or real.name
        self.title = title
        self.description = description
        self.max_bytes = max_bytes
        self.encoding = encoding
        self.watch = watch
        self.poll_interval = poll_interval
        self._app: FileHost | None = None
        self._watch: PollingWatch | None = None
        self._reads = _own_reads()

    def read(self) -> dict[str, Any]:
        """The file's contents now: ``{"text" | "blob": ..., "mimeType": ...}`` (blocking,
        waiting for a turn among the app's concurrent file reads)."""
        with self._reads:
            fd = open_inside(self.path.parent, self.path, self.uri)
            return read_contents(fd, self.max_bytes, self.uri, self.mime_type, self.encoding)

    def attach(self, app: FileHost) -> None:
        """Register with ``app`` (what ``app.add_resource`` calls)."""
        if self._app is not None:
            raise RuntimeError(f"{self.uri} is already served by an app")
        self._app = app
        self._reads = app.file_reads
        app.catalog.register_resource(
            ResourceEntry(
                uri=self.uri,
                name=self.name,
                fn=self.read,
                title=self.title,
                description=self.description,
                mime_type=self.mime_type,
                size=self.path.stat().st_size,
            )
        )
        if self.watch:
            self._watch = PollingWatch(
                app.engine,
                owns=lambda uri: uri == self.uri,
                signature=lambda uri: signature_of(self.path),
                poll_interval=self.poll_interval,
                max_watched=1,
            )
            self._watch.attach()

    def detach(self) -> None:
        """Stop serving: the resource leaves the app's catalog, the watch stops."""
        if self._app is None:
            return
        self._app.catalog.unregister_resource(self.uri)
        if self._watch is not None:
            self._watch.detach()
        self._app = self._watch = None

    @property
    def watching(self) -> PollingWatch | None:
        """The watch following this file's subscribers (None without ``watch``)."""
        return self._watch


class DirectoryResource:
    """The files under a directory, served as resources.

    The files matching ``pattern`` (a glob on their ``/``-separated path under ``root``:
    ``**/*`` every file, ``*.md`` the top level's Markdown, ``**/*.py``) are listed, up to
    ``max_files`` of them, each at ``uri_prefix`` + its quoted path. The template
    ``uri_prefix{+path}`` serves any matching file, listed or not. Dot-files and
    dot-directories are left out unless ``include_hidden``.

    Reads are confined to ``root``: a path with ``..``, ``.`` or empty segments, an absolute
    path, a backslash or a NUL, percent-encoded or not, is -32602 (invalid params); a symlink
    leading outside (or, hidden files excluded, to a dot-file or into a dot-directory), a
    missing file or one the pattern excludes is -32002 (not found).

    With ``watch`` (the default): subscribers of a file's URI get
    ``notifications/resources/updated`` when it changes; while any connection is open, the
    directory is rescanned every ``poll_interval`` seconds, and files added or removed
    change the listing (one ``list_changed`` per rescan that found changes). Nobody
    subscribed and nobody connected: no polling at all. ``refresh()`` rescans on demand.
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        uri_prefix: str | None = None,
        pattern: str = "**/*",
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        include_hidden: bool = False,
        max_bytes: int = DEFAULT_MAX_FILE_BYTES,
        max_files: int = DEFAULT_MAX_LISTED_FILES,
        encoding: str = "utf-8",
        watch: bool = True,
        poll_interval: float = DEFAULT_POLL_INTERVAL,
        max_watched: int = DEFAULT_MAX_WATCHED_FILES,
    ) -> None:
        _check_limits(max_bytes)
        if max_files < 0:
            raise ValueError("max_files must not be negative")
        real = Path(root).resolve(strict=True)
        if not real.is_dir():
            raise NotADirectoryError(f"DirectoryResource needs a directory, not {root!r}")
        #: The directory's real path: nothing outside it is ever read.
        self.root = real
        prefix = uri_prefix if uri_prefix is not None else real.as_uri()
        self.uri_prefix = prefix if prefix.endswith("/") else prefix + "/"
        self.template = UriTemplate(self.uri_prefix + "{+path}")
        self.pattern = pattern
        self._matches = glob_regex(pattern)
        self.name = name or real.name or "files"
        self.title = title
        self.description = description
        self.mime_type = mime_type
        self.include_hidden = include_hidden
        self.max_bytes = max_bytes
        self.max_files = max_files
        self.encoding = encoding
        self.watch = watch
        self.poll_interval = poll_interval
        self.max_watched = max_watched
        #: Whether the last scan stopped at ``max_files`` (the rest are not listed).
        self.truncated = False
        self._warned = False  # of the truncation, once
        self._listed: dict[str, ResourceEntry] = {}
        self._app: FileHost | None = None
        self._watch: PollingWatch | None = None
        self._reads = _own_reads()

    # paths ------------------------------------------------------------------------------

    def uri_for(self, relative: str) -> str:
        """The URI of the file at ``relative`` (``/``-separated) under the root."""
        return self.uri_prefix + quote(relative, safe="/")

    def relative_of(self, uri: str) -> str | None:
        """The path under the root ``uri`` names (percent-decoded, not yet checked), or None
        when ``uri`` is not one of this directory's."""
        values = self.template.match(uri)
        path = values.get("path") if values is not None else None
        return path if isinstance(path, str) else None

    def _serves(self, segments: tuple[str, ...]) -> bool:
        return (self.include_hidden or not is_hidden(segments)) and bool(
            self._matches.fullmatch("/".join(segments))
        )

    def locate(self, relative: str, uri: str | None = None) -> Path:
        """The real path of the file served at ``relative``: ``InvalidParamsError`` for a
        path that tries to leave the root, ``ResourceNotFoundError`` for one that is not a
        file this resource serves."""
        uri = uri or self.uri_for(relative)
        segments = check_relative(relative, uri)
        if not self._serves(segments):
            raise ResourceNotFoundError(uri)
        return resolve_inside(self.root, segments, uri, include_hidden=self.include_hidden)

    # reading ----------------------------------------------------------------------------

    def read(self, relative: str, uri: str | None = None) -> dict[str, Any]:
        """The contents of the file at ``relative``: ``{"text" | "blob": ..., "mimeType":
        ...}`` (blocking; waits its turn among the app's ``max_concurrent_file_reads``); the
        errors of ``locate``, and -32603 past ``max_bytes``."""
        uri = uri or self.uri_for(relative)
        mime_type = self.mime_type or guess_mime_type(relative)
        with self._reads:  # a turn among the app's concurrent file reads
            fd = open_inside(self.root, self.locate(relative, uri), uri)
            return read_contents(fd, self.max_bytes, uri, mime_type, self.encoding)

    def _read_template(self, path: str, uri: str) -> dict[str, Any]:
        return self.read(path, uri)

    # listing ----------------------------------------------------------------------------

    def scan(self) -> dict[str, int]:
        """The files to list now: path under the root -> size, at most ``max_files``, in a
        stable order (blocking)."""
        found: dict[str, int] = {}
        self.truncated = False
        for directory, dirnames, filenames in os.walk(self.root, followlinks=False):
            base = Path(directory).relative_to(self.root).parts
            dirnames.sort()
            if not self.include_hidden:
                dirnames[:] = [d for d in dirnames if not d.startswith(".")]
            for filename in sorted(filenames):
                segments = (*base, filename)
                if not self._serves(segments) or not _nameable(segments):
                    continue
                try:
                    real = resolve_inside(
                        self.root, segments, "", include_hidden=self.include_hidden
                    )
                    size = real.stat().st_size
                except (ProtocolError, OSError):
                    continue  # a link out or to a dot-file, a FIFO, gone: not listed
                if len(found) >= self.max_files:
                    self.truncated = True
                    return found
                found["/".join(segments)] = size
        return found

    def _entry(self, relative: str, size: int) -> ResourceEntry:
        return ResourceEntry(
            uri=self.uri_for(relative),
            name=relative,
            fn=lambda: self.read(relative),
            mime_type=self.mime_type or guess_mime_type(relative),
            size=size,
        )

    def _apply(self, found: dict[str, int]) -> None:
        """Bring the app's catalog in line with a scan: one ``list_changed`` for all."""
        if self._app is None:
            return
        removed = [entry.uri for rel, entry in self._listed.items() if rel not in found]
        added = {
            rel: self._entry(rel, size) for rel, size in found.items() if rel not in self._listed
        }
        for rel, size in found.items():
            if (known := self._listed.get(rel)) is not None:
                known.size = size  # no list_changed for a size: updated tells subscribers
        self._listed = {rel: self._listed.get(rel) or added[rel] for rel in found}
        self._app.catalog.replace_resources(removed, added.values())
        if self.truncated and not self._warned:
            self._warned = True
            logger.warning(
                "%s: more than %d files match %r; the rest are readable by %s, not listed",
                self.root.name,
                self.max_files,
                self.pattern,
                self.template.template,
            )

    def refresh(self) -> None:
        """Rescan now and update the listing (blocking; from the loop or any thread)."""
        self._apply(self.scan())

    @property
    def listed(self) -> list[str]:
        """The URIs listed now."""
        return [entry.uri for entry in self._listed.values()]

    # serving ----------------------------------------------------------------------------

    def _signature(self, uri: str) -> Signature:
        relative = self.relative_of(uri)
        if relative is None:
            return None
        try:
            return signature_of(self.locate(relative, uri))
        except ProtocolError:
            return None  # not (or no longer) a file served here: no change to report

    def attach(self, app: FileHost) -> None:
        """Register with ``app`` (what ``app.add_resource`` calls): the listing, the
        template, and the watch."""
        if self._app is not None:
            raise RuntimeError(f"{self.uri_prefix} is already served by an app")
        self._app = app
        self._reads = app.file_reads
        self._apply(self.scan())
        app.catalog.register_resource(
            ResourceTemplateEntry(
                template=self.template,
                name=self.name,
                fn=self._read_template,
                title=self.title,
                description=self.description
                or f"Files under {self.name} matching {self.pattern!r}",
                mime_type=self.mime_type,
            )
        )
        if self.watch:
            self._watch = PollingWatch(
                app.engine,
                owns=lambda uri: self.relative_of(uri) is not None,
                signature=self._signature,
                rescan=self.scan,
                apply=self._apply,
                poll_interval=self.poll_interval,
                max_watched=self.max_watched,
            )
            self._watch.attach()

    def detach(self) -> None:
        """Stop serving: the listing and the template leave the catalog, the watch stops."""
        app = self._app
        if app is None:
            return
        if self._watch is not None:
            self._watch.detach()
        app.catalog.replace_resources([entry.uri for entry in self._listed.values()])
        app.catalog.unregister_resource(self.template.template)
        self._listed = {}
        self._app = self._watch = None

    @property
    def watching(self) -> PollingWatch | None:
        """The watch following subscribers and the listing (None without ``watch``)."""
        return self._watch
