"""The live catalog of tools, resources, resource templates, prompts and completions.

Seeded from the decorated server classes at start-up and changeable at run time; every
change after ``set_broadcast_fn`` pushes the matching ``notifications/*/list_changed``.
Changes may come from the event loop or from a sync tool in a worker thread: the tables
change under a lock, and the notification is handed to the loop the app serves on.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Coroutine, Iterable
from typing import TYPE_CHECKING, Any, Literal

from mcpkit.server._access import match_template, step_up_needed, usable
from mcpkit.server._entries import (
    CompletionEntry,
    PromptEntry,
    ResourceEntry,
    ResourceTemplateEntry,
    ToolEntry,
)
from mcpkit.server._session_view import MAX_CATALOG_RULES, SessionView
from mcpkit.server._ui_meta import opens_ui
from mcpkit.server._versions import ToolVersions, VersionPick, version_spec
from mcpkit.server.transforms._tool import transformed

if TYPE_CHECKING:
    from mcpkit.auth._types import AuthInfo

logger = logging.getLogger("mcpkit.server")

BroadcastFn = Callable[[str], Coroutine[Any, Any, object]]
#: Told the method of every change (``notifications/tools/list_changed`` ..., or
#: ``COMPLETIONS_CHANGED``) in the thread that made it: how a mounting app follows it.
ChangeListener = Callable[[str], None]
#: What change listeners hear when a completion is added or removed (no notification).
COMPLETIONS_CHANGED = "completions"
OnConflict = Literal["replace", "error", "ignore"]


class McpCatalogManager:
    """Holds what the server offers; mutations fire list_changed once broadcasting is on.

    Its size: register, replace, remove, look up and list each of the five kinds of entry
    (tools, resources, templates, prompts, completions), and tell listeners of changes: the
    catalog's whole API, each method a few lines over its tables."""

    def __init__(self) -> None:
        self._tools: dict[str, ToolEntry] = {}
        self._resources: dict[str, ResourceEntry] = {}
        self._templates: dict[str, ResourceTemplateEntry] = {}
        self._prompts: dict[str, PromptEntry] = {}
        #: Each list's table, and how many of its entries carry an ``auth`` requirement
        #: (kept by ``_set`` and ``_pop``: while none does, the list is the same for all).
        self._kinds: dict[str, dict[str, Any]] = {
            "tools": self._tools,
            "resources": self._resources,
            "resourceTemplates": self._templates,
            "prompts": self._prompts,
        }
        self._restricted = dict.fromkeys(self._kinds, 0)
        #: Entries served that are UI pages or tools naming one (``_ui_meta.opens_ui``).
        self._ui_entries = 0
        #: Each list's entries registered but set aside (``enabled=False``, ``disable``):
        #: absent from every list and lookup until ``set_enabled`` serves them again.
        self._set_aside: dict[str, dict[str, Any]] = {kind: {} for kind in self._kinds}
        #: Tool transformations by the name of the tool they apply to (``transforms``):
        #: applied whenever a tool of that name is registered.
        self._tool_transforms: dict[str, Any] = {}
        #: What ``set_enabled`` said, kept for entries registered later (a mount's or a
        #: proxy's refreshed tools): the last rule naming an entry decides.
        self._rules = SessionView(MAX_CATALOG_RULES)
        #: The versions of the tools registered with ``version=`` (``_versions``).
        self.tool_versions = ToolVersions(lambda entry: self._rules.shows(entry, entry.name))
        self._completions: list[CompletionEntry] = []
        self._broadcast: BroadcastFn | None = None
        self._pending: set[asyncio.Task[object]] = set()
        self._tool_list: list[dict[str, Any]] | None = None
        self._entry_builder: Any = None
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._listeners: list[ChangeListener] = []

    def add_change_listener(self, listener: ChangeListener) -> None:
        """Call ``listener(method)`` after every change, broadcasting or not."""
        self._listeners = [*self._listeners, listener]

    def remove_change_listener(self, listener: ChangeListener) -> None:
        """Stop telling ``listener`` of changes."""
        self._listeners = [fn for fn in self._listeners if fn != listener]  # bound methods: ==

    def _tell_listeners(self, method: str) -> None:
        for listener in self._listeners:
            try:
                listener(method)
            except Exception:  # one broken follower must not undo the change
                logger.warning("a catalog change listener failed", exc_info=True)

    def set_broadcast_fn(self, fn: BroadcastFn | None) -> None:
        """Where list_changed notifications go (the app's connections); None: nowhere."""
        self._broadcast = fn

    def set_entry_builder(self, builder: Any) -> None:
        """Lets ``register_*`` accept plain functions (the app installs its builder)."""
        self._entry_builder = builder

    def bind_loop(self, loop: asyncio.AbstractEventLoop) -> None:
        """The loop that broadcasts changes made outside it (from worker threads)."""
        self._loop = loop

    def _changed(self, method: str) -> None:
        self._tell_listeners(method)
        if self._broadcast is None:
            return
        try:
            self._loop = asyncio.get_running_loop()
        except RuntimeError:  # a worker thread (a sync tool), or no loop yet
            loop = self._loop
            if loop is None or loop.is_closed():
                return  # nobody is connected to tell
            try:
                loop.call_soon_threadsafe(self._schedule, method)
            except RuntimeError:  # the loop closed meanwhile
                pass
            return
        self._schedule(method)

    async def announced(self) -> None:
        """Return once the list_changed broadcasts scheduled so far have run."""
        if self._pending:
            await asyncio.gather(*self._pending, return_exceptions=True)

    def _schedule(self, method: str) -> None:
        assert self._broadcast is not None
        task = asyncio.get_running_loop().create_task(self._broadcast(method))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    def _put(self, kind: str, key: str, entry: Any, on_conflict: OnConflict) -> bool:
        if key in self._kinds[kind]:
            if on_conflict == "error":
                raise ValueError(f"{key!r} is already registered")
            if on_conflict == "ignore":
                return False
        self._set(kind, key, entry)
        return True

    def _set(self, kind: str, key: str, entry: Any) -> None:
        """Put ``entry`` at ``key`` of the list ``kind`` (under the lock): served, or set
        aside when it is not ``enabled``."""
        table = self._kinds[kind]
        verdict = self._rules.verdict(entry, key) if self._rules.rules else None
        if verdict is not None:
            entry.enabled = verdict
        if entry.enabled:
            old = table.get(key)
            table[key] = entry
            self._set_aside[kind].pop(key, None)
        else:
            old = table.pop(key, None)
            self._set_aside[kind][key] = entry
        self._restricted[kind] += (entry.enabled and entry.auth is not None) - (
            old is not None and old.auth is not None
        )
        self._ui_entries += (entry.enabled and opens_ui(kind, entry)) - (
            old is not None and opens_ui(kind, old)
        )

    def _pop(self, kind: str, key: str) -> Any:
        """Take the entry at ``key`` out of the list ``kind`` (under the lock); None if none."""
        entry = self._kinds[kind].pop(key, None)
        if entry is not None and entry.auth is not None:
            self._restricted[kind] -= 1
        if entry is not None and opens_ui(kind, entry):
            self._ui_entries -= 1
        aside = self._set_aside[kind].pop(key, None)
        return entry if entry is not None else aside

    # tools ------------------------------------------------------------------------------

    def register_tool(
        self,
        meta: ToolEntry | Callable[..., Any],
        *,
        on_conflict: OnConflict = "replace",
        **spec: Any,
    ) -> ToolEntry:
        """Add a tool (a ``ToolEntry`` or a function, described as ``@mcp_tool`` would)."""
        entry = meta if isinstance(meta, ToolEntry) else self._entry_builder.tool(meta, **spec)
        if entry.version is not None:  # one of several: the one to serve under the name
            with self._lock:
                entry = self.tool_versions.add(entry)
            on_conflict = "replace"
        elif entry.name in self.tool_versions.by_name:  # unversioned: the versions go
            self.tool_versions.forget(entry.name)
        change = self._tool_transforms.get(entry.name)
        if change is not None:
            entry = transformed(entry, change)
        with self._lock:
            added = self._put("tools", entry.name, entry, on_conflict)
            if added:
                self._tool_list = None
        if added:
            self._changed("notifications/tools/list_changed")
        return entry

    def unregister_tool(self, name: str) -> bool:
        """Remove a tool; False when there was none of that name. Clients hear list_changed."""
        with self._lock:
            change = self._tool_transforms.get(name)
            if self._pop("tools", name) is None and (
                change is None or self._pop("tools", change.name or name) is None
            ):
                return False
            self._tool_list = None
            self.tool_versions.forget(name)
        self._changed("notifications/tools/list_changed")
        return True

    def transform_tool(self, name: str, change: Any) -> None:
        """Serve the tool ``name`` as ``change`` (a ``ToolTransform``) has it, now and
        whenever a tool of that name is registered; clients hear ``list_changed``."""
        entry = self._tools.get(name)
        made = transformed(entry, change) if entry is not None else None  # a bad one: raised
        with self._lock:
            self._tool_transforms[name] = change
            if made is None:
                return
            self._pop("tools", name)
            self._set("tools", made.name, made)
            self._tool_list = None
        self._changed("notifications/tools/list_changed")

    def use_tool_version(self, name: str, version: str | None) -> None:
        """Serve ``version`` of the tool ``name`` (None: the highest again); clients hear
        ``list_changed``. ``KeyError`` for a version not registered."""
        versions = self.tool_versions.by_name.get(name, {})
        if version is not None and version not in versions:
            raise KeyError(f"tool {name!r} has no version {version!r}: {sorted(versions)}")
        if version is None:
            self.tool_versions.pinned.pop(name, None)
        else:
            self.tool_versions.pinned[name] = version
        if versions:
            self.register_tool(self.tool_versions.served(name))

    def registered_tool(self, name: str) -> ToolEntry | None:
        """What was registered under ``name``, as registered: a transformed tool's
        original (served under the transform's name), else ``get_tool(name)``."""
        change = self._tool_transforms.get(name)
        if change is None:
            return self._tools.get(name)
        served = self._tools.get(change.name or name)
        original = served.original if served is not None else None
        return original if original is not None and original.name == name else None

    def get_tool(self, name: str) -> ToolEntry | None:
        """The tool of that name, if any."""
        return self._tools.get(name)

    def header_params_of(self, name: str, auth: AuthInfo | None = None) -> Any:
        """The ``x-mcp-header`` parameters of the tool ``name`` as the caller ``auth`` sees
        it (none for an unknown one, or one its ``auth`` requirement hides from the caller:
        its headers are checked as an unknown tool's)."""
        tool = self._tools.get(name)
        if tool is None:
            return ()
        params = tool.header_params
        if params and tool.auth is not None and usable(tool, auth) is None:
            return ()
        return params

    def step_up_of(
        self, method: str, params: dict[str, Any] | None, auth: AuthInfo | None
    ) -> tuple[str, ...] | None:
        """The scopes the signed-in caller ``auth`` must step up to before this request (a
        ``tools/call``, ``prompts/get`` or ``resources/read`` of a component whose
        requirement is ``require_scopes(..., step_up=True)``); None otherwise. What the HTTP
        transport asks before it runs a request, to answer 403 ``insufficient_scope``."""
        if auth is None or not params:
            return None
        entry: Any = None
        if method == "tools/call" and self.restricts("tools"):
            name = params.get("name")
            entry = self._tools.get(name) if type(name) is str else None
        elif method == "prompts/get" and self.restricts("prompts"):
            name = params.get("name")
            entry = self.get_prompt(name) if type(name) is str else None
        elif method == "resources/read":
            uri = params.get("uri")
            if type(uri) is not str:
                return None
            entry = self.get_resource(uri) if self.restricts("resources") else None
            if entry is None and self.restricts("resourceTemplates"):
                found = match_template(self, uri, auth)
                entry = found[0] if found is not None else None
        return None if entry is None else step_up_needed(entry, auth)

    def list_tools(self) -> list[ToolEntry]:
        """Every tool, in registration order."""
        return list(self._tools.values())

    def tool_wire_list(self) -> list[dict[str, Any]]:
        """Wire descriptions of every tool, cached until the next change."""
        tools = self._tool_list
        if tools is None:
            with self._lock:
                tools = self._tool_list = [entry.to_wire() for entry in self._tools.values()]
        return tools

    # resources --------------------------------------------------------------------------

    def register_resource(
        self,
        meta: ResourceEntry | ResourceTemplateEntry | Callable[..., Any],
        *,
        on_conflict: OnConflict = "replace",
        **spec: Any,
    ) -> ResourceEntry | ResourceTemplateEntry:
        """Add a resource or a resource template (chosen by whether the URI has ``{...}``)."""
        entry = (
            meta
            if isinstance(meta, (ResourceEntry, ResourceTemplateEntry))
            else self._entry_builder.resource(meta, **spec)
        )
        with self._lock:
            if isinstance(entry, ResourceTemplateEntry):
                added = self._put("resourceTemplates", entry.uri_template, entry, on_conflict)
            else:
                added = self._put("resources", entry.uri, entry, on_conflict)
        if added:
            self._changed("notifications/resources/list_changed")
        return entry

    def replace_resources(
        self, remove: Iterable[str] = (), add: Iterable[ResourceEntry] = ()
    ) -> bool:
        """Drop the resources at the URIs in ``remove`` and add (or replace) ``add``, as one
        change: a single ``list_changed`` however many there are. True if anything changed."""
        with self._lock:
            removed = [self._pop("resources", uri) for uri in remove]
            added = list(add)
            for entry in added:
                self._set("resources", entry.uri, entry)
        changed = bool(added) or any(entry is not None for entry in removed)
        if changed:
            self._changed("notifications/resources/list_changed")
        return changed

    def unregister_resource(self, name: str) -> bool:
        """Remove a resource or template by URI, URI template or name."""
        for kind in ("resources", "resourceTemplates"):
            with self._lock:
                table = self._kinds[kind]
                key = (
                    name
                    if name in table
                    else next((k for k, e in table.items() if e.name == name), None)
                )
                if key is not None:
                    self._pop(kind, key)
            if key is not None:
                self._changed("notifications/resources/list_changed")
                return True
        return False

    def get_resource(self, uri: str) -> ResourceEntry | None:
        """The resource of that exact URI, if any."""
        return self._resources.get(uri)

    def match_template(self, uri: str) -> tuple[ResourceTemplateEntry, dict[str, Any]] | None:
        """The first template matching ``uri``, with its variables' values; None when none
        matches."""
        for entry in list(self._templates.values()):
            values = entry.template.match(uri)
            if values is not None:
                return entry, values
        return None

    def list_resources(self) -> list[ResourceEntry]:
        """Every resource, in registration order."""
        return list(self._resources.values())

    def list_resource_templates(self) -> list[ResourceTemplateEntry]:
        """Every resource template, in registration order."""
        return list(self._templates.values())

    # prompts ----------------------------------------------------------------------------

    def register_prompt(
        self,
        meta: PromptEntry | Callable[..., Any],
        *,
        on_conflict: OnConflict = "replace",
        **spec: Any,
    ) -> PromptEntry:
        """Register a prompt (an entry, or a function built into one); ``on_conflict`` decides
        about a name already taken. Clients hear list_changed."""
        entry = meta if isinstance(meta, PromptEntry) else self._entry_builder.prompt(meta, **spec)
        with self._lock:
            added = self._put("prompts", entry.name, entry, on_conflict)
        if added:
            self._changed("notifications/prompts/list_changed")
        return entry

    def unregister_prompt(self, name: str) -> bool:
        """Remove a prompt; False when there was none of that name. Clients hear list_changed."""
        with self._lock:
            if self._pop("prompts", name) is None:
                return False
        self._changed("notifications/prompts/list_changed")
        return True

    def get_prompt(self, name: str) -> PromptEntry | None:
        """The prompt of that name, if any."""
        return self._prompts.get(name)

    def list_prompts(self) -> list[PromptEntry]:
        """Every prompt, in registration order."""
        return list(self._prompts.values())

    # completions ------------------------------------------------------------------------

    def register_completion(self, entry: CompletionEntry) -> None:
        """Add a completion provider (for a prompt's or a template's argument)."""
        with self._lock:
            self._completions = [*self._completions, entry]
        self._tell_listeners(COMPLETIONS_CHANGED)

    def unregister_completion(self, entry: CompletionEntry) -> bool:
        """Remove a completion provider (the entry ``register_completion`` was given)."""
        with self._lock:
            kept = [known for known in self._completions if known is not entry]
            removed = len(kept) != len(self._completions)
            self._completions = kept
        if removed:
            self._tell_listeners(COMPLETIONS_CHANGED)
        return removed

    def list_completions(self) -> list[CompletionEntry]:
        """Every completion provider, in registration order."""
        return list(self._completions)

    def find_completion(self, ref_type: str, ref: str, argument: str) -> CompletionEntry | None:
        """The provider for ``argument`` of the prompt or template ``ref``, if any."""
        for entry in self._completions:
            if (
                entry.ref_type == ref_type
                and entry.ref == ref
                and entry.argument in (None, argument)
            ):
                return entry
        return None

    def set_enabled(
        self,
        enabled: bool,
        names: Iterable[str] = (),
        tags: Iterable[str] = (),
        version: VersionPick = None,
    ) -> int:
        """Serve (``enabled``) or set aside the entries named in ``names`` (a tool's or
        prompt's name, a resource's URI or name, a template's URI template or name) or
        carrying any of ``tags``; with ``version``, only those versions of them (of every
        versioned tool, without names or tags): the highest version still served is then
        the one under the name. How many moved; each list that changed sends its
        ``list_changed`` once."""
        rule = SessionView(1)
        rule.add(enabled, names, tags, version_spec(version))
        moved = 0
        changed: list[str] = []
        with self._lock:
            self._rules.add(*rule.rules[0])
            for kind, table in self._kinds.items():
                source = self._set_aside[kind] if enabled else table
                moving = [
                    (key, entry)
                    for key, entry in source.items()
                    if rule.verdict(entry, key) is not None
                ]
                for key, entry in moving:
                    entry.enabled = enabled
                    self._set(kind, key, entry)
                if moving:
                    moved += len(moving)
                    kind_name = "resources" if kind == "resourceTemplates" else kind
                    changed.append(f"notifications/{kind_name}/list_changed")
                    if kind == "tools":
                        self._tool_list = None
        for method in dict.fromkeys(changed):
            self._changed(method)
        for name, versions in list(self.tool_versions.by_name.items()):
            if any(rule.verdict(entry, name) is not None for entry in versions.values()):
                self.register_tool(self.tool_versions.served(name))
        return moved

    def set_aside(self, kind: str) -> dict[str, Any]:
        """The entries of the list ``kind`` set aside (disabled), by key: what a session's
        view may show all the same (``_session_view``)."""
        return self._set_aside[kind]

    @property
    def serves_ui(self) -> bool:
        """Whether a UI page, or a tool that names one, is served: the app then announces
        the MCP Apps extension."""
        return self._ui_entries > 0

    def restricts(self, kind: str) -> bool:
        """Whether the list ``kind`` (``"tools"``, ``"resources"``, ``"resourceTemplates"``
        or ``"prompts"``) holds an entry with an ``auth`` requirement, so differs by caller."""
        return self._restricted[kind] > 0

    @property
    def has_completions(self) -> bool:
        """Whether any completion provider is registered (the ``completions`` capability)."""
        return bool(self._completions)
