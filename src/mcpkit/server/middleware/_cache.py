"""``ResponseCache``: answers repeated calls of cacheable tools and resource reads from a
bounded, expiring table, forgetting what a catalog change or a resource update outdates."""

from __future__ import annotations

import copy
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from mcpkit.server._decorators import set_metadata
from mcpkit.server._engine.middleware import CallNext, Middleware, MiddlewareContext
from mcpkit.server.middleware._common import (
    KIND_OF_METHOD,
    canonical_arguments,
    identity_of,
    is_error_result,
)

if TYPE_CHECKING:
    from mcpkit.server._host import CatalogHost

#: Seconds a cached answer is served.
DEFAULT_CACHE_TTL = 60.0
#: Answers kept at once; the least recently used goes first.
DEFAULT_CACHE_MAX_ENTRIES = 1024
#: The metadata key ``cacheable`` sets (read by ``ResponseCache``).
CACHE_METADATA = "mcpkit.cache"

_KIND_OF_CHANGE: Mapping[str, str] = MappingProxyType(
    {
        "notifications/tools/list_changed": "tool",
        "notifications/resources/list_changed": "resource",
        "notifications/prompts/list_changed": "prompt",
    }
)

CacheKey = tuple[str, str, str, str | None]


@dataclass(frozen=True, slots=True)
class CachePolicy:
    """What ``cacheable`` says about one tool, resource or prompt."""

    enabled: bool = True
    ttl: float | None = None
    per_identity: bool | None = None


def cacheable(
    enabled: bool = True, *, ttl: float | None = None, per_identity: bool | None = None
) -> Callable[[Any], Any]:
    """Mark a tool (resource, prompt, or every member of a server class) for
    ``ResponseCache``: ``ttl`` and ``per_identity`` override the cache's own for it;
    ``cacheable(False)`` keeps it out even where the cache would take it."""
    if ttl is not None and not ttl > 0:
        raise ValueError("ttl must be a positive number of seconds")
    return set_metadata(CACHE_METADATA, CachePolicy(enabled, ttl, per_identity))


@dataclass(slots=True)
class _Entry:
    value: Any
    expires: float


class ResponseCache(Middleware):
    """Middleware that serves repeated calls from memory: app-wide, or on the components it
    is attached to.

    What is cached: calls marked ``@cacheable()``; resource reads (``resources=True``, the
    default); prompts with ``prompts=True``; tools annotated ``readOnlyHint`` with
    ``read_only_tools=True`` (that needs ``attach(app)``, which knows the annotations; a
    read-only tool may still answer differently each time, hence off by default). The key
    is the kind, the name (tool, prompt, or resource URI) and the arguments as canonical
    JSON; with ``per_identity`` also the authenticated principal (``context.auth``), so one
    user's answer never reaches another; turn it on whenever answers depend on who asks.
    App-wide the cache runs before the app checks who may call what, so there the principal
    is always part of the key (and the session, when it has its own view of the catalog);
    ``@cacheable`` marks are read there through ``attach(app)``.

    Never cached: exceptions, JSON-RPC errors, ``isError`` results, requests for client
    input (2026-07-28), calls run as tasks. Answers live ``ttl`` seconds (``DEFAULT_CACHE_TTL``); at most
    ``max_entries`` are kept (``DEFAULT_CACHE_MAX_ENTRIES``, least recently used dropped).
    ``attach(app)`` also forgets: every tool answer on ``tools/list_changed`` (likewise
    resources and prompts), and a resource's answers when ``notify_updated(uri)`` announces
    it changed. Values are copied in and out, so a caller can't alter a cached one.
    Concurrent misses for one key each run the call (no coalescing).
    """

    def __init__(
        self,
        *,
        ttl: float = DEFAULT_CACHE_TTL,
        max_entries: int = DEFAULT_CACHE_MAX_ENTRIES,
        per_identity: bool = False,
        resources: bool = True,
        prompts: bool = False,
        read_only_tools: bool = False,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not ttl > 0:
            raise ValueError("ttl must be a positive number of seconds")
        if max_entries < 1:
            raise ValueError("max_entries must be at least 1")
        self.ttl = ttl
        self.max_entries = max_entries
        self.per_identity = per_identity
        self.resources = resources
        self.prompts = prompts
        self.read_only_tools = read_only_tools
        self.clock = clock
        self.hits = 0
        self.misses = 0
        self._entries: OrderedDict[CacheKey, _Entry] = OrderedDict()
        self._lock = threading.Lock()
        self._app: CatalogHost | None = None

    def __len__(self) -> int:
        return len(self._entries)

    # following an app ------------------------------------------------------------------

    def attach(self, app: CatalogHost) -> ResponseCache:
        """Follow ``app``: forget answers its catalog changes and resource updates outdate,
        and read tool annotations (``read_only_tools``). Returns the cache."""
        if self._app is app:
            return self
        self._app = app
        app.catalog.add_change_listener(self._catalog_changed)
        app.engine.subscriptions.add_update_forwarder(self._resource_updated)
        return self

    def detach(self) -> None:
        """Stop following the attached app."""
        app, self._app = self._app, None
        if app is not None:
            app.catalog.remove_change_listener(self._catalog_changed)
            app.engine.subscriptions.remove_update_forwarder(self._resource_updated)

    def _catalog_changed(self, method: str) -> None:
        kind = _KIND_OF_CHANGE.get(method)
        if kind is not None:
            self.invalidate(kind)

    async def _resource_updated(self, uri: str) -> None:
        self.invalidate("resource", uri)

    # the table -------------------------------------------------------------------------

    def invalidate(self, kind: str | None = None, name: str | None = None) -> int:
        """Forget cached answers: all, those of a kind (``tool``, ``resource``,
        ``prompt``), or of one name of it. Returns how many went."""
        with self._lock:
            doomed = [
                key
                for key in self._entries
                if (kind is None or key[0] == kind) and (name is None or key[1] == name)
            ]
            for key in doomed:
                del self._entries[key]
        return len(doomed)

    def clear(self) -> None:
        """Forget everything."""
        self.invalidate()

    def _get(self, key: CacheKey) -> tuple[bool, Any]:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return False, None
            if self.clock() >= entry.expires:
                del self._entries[key]
                return False, None
            self._entries.move_to_end(key)
            return True, entry.value

    def _put(self, key: CacheKey, value: Any, ttl: float) -> None:
        with self._lock:
            self._entries[key] = _Entry(value, self.clock() + ttl)
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)

    # the middleware --------------------------------------------------------------------

    def _policy(self, context: MiddlewareContext, kind: str, name: str) -> CachePolicy | None:
        marked = context.get_metadata(CACHE_METADATA)
        if context.component is None:  # app-wide: the mark is on the catalog's entry
            marked = self._marked(kind, name)
        if isinstance(marked, CachePolicy):
            return marked if marked.enabled else None
        if kind == "resource" and self.resources:
            return CachePolicy()
        if kind == "prompt" and self.prompts:
            return CachePolicy()
        if kind == "tool" and self.read_only_tools and self._read_only(name):
            return CachePolicy()
        return None

    def _marked(self, kind: str, name: str) -> Any:
        if self._app is None:
            return None
        catalog = self._app.catalog
        entry: Any = (
            catalog.get_tool(name)
            if kind == "tool"
            else catalog.get_prompt(name)
            if kind == "prompt"
            else catalog.get_resource(name)
        )
        return entry.pipeline.metadata.get(CACHE_METADATA) if entry is not None else None

    def _read_only(self, name: str) -> bool:
        if self._app is None:
            return False
        entry = self._app.catalog.get_tool(name)
        return bool(entry is not None and (entry.annotations or {}).get("readOnlyHint") is True)

    def _caller(self, context: MiddlewareContext, policy: CachePolicy) -> str | None:
        """The part of the key that says who asked: None when anyone may share the answer."""
        if context.component is None:  # app-wide: before any access check
            session = context.binding.session
            own_view = session is not None and session.visibility is not None
            return f"{identity_of(context) or ''}|{context.session_id if own_view else ''}"
        per_identity = self.per_identity if policy.per_identity is None else policy.per_identity
        return (identity_of(context) or "") if per_identity else None

    async def on_call_tool(self, context: MiddlewareContext, call_next: CallNext) -> Any:
        """Answer from the table when a fresh answer is there, else call and keep the answer."""
        kind, name = KIND_OF_METHOD[context.method], context.name
        policy = self._policy(context, kind, name) if name is not None else None
        if policy is None or name is None or "task" in (context.params or {}):
            return await call_next(context)
        key: CacheKey = (kind, name, canonical_arguments(context), self._caller(context, policy))
        found, value = self._get(key)
        if found:
            self.hits += 1
            return _copied(value)
        self.misses += 1
        value = await call_next(context)
        if not is_error_result(value) and not _incomplete(value):
            self._put(key, _copied(value), policy.ttl or self.ttl)
        return value

    on_read_resource = on_call_tool
    on_get_prompt = on_call_tool


def _incomplete(value: Any) -> bool:
    """A 2026-07-28 answer that is not the call's result (it asks the client for input)."""
    return isinstance(value, dict) and value.get("resultType") not in (None, "complete")


def _copied(value: Any) -> Any:
    try:
        return copy.deepcopy(value)
    except Exception:  # not copyable: shared as it is
        return value
